"""The `lexical` elaborator and the caption co-occurrence table it is driven by."""

from __future__ import annotations

import csv
import re

import pytest
from conftest import SHARED_DATA, require

from fortekit.errors import ElaborationError
from fortekit.plugins import available_elaborators, get_elaborator
from fortekit.vocab import ground
from fortekit.vocab.cooccurrence import build_cooccurrence, format_cooccurrence, load_cooccurrence

DESCRIPTORS = {"acoustic_property", "intensity", "temporal"}
EVENTS = {"sound_event", "negation_target"}


def _symbols(text: str, categories: set[str]) -> set[str]:
    """Symbols of the categories that the words ground to; descriptors are adjectives."""
    found = set()
    for word in re.findall(r"[a-z][a-z'-]*", text.lower()):
        entry = ground(word).entry
        if entry is None or ground(word).soft or entry.category.value not in categories:
            continue
        if categories is DESCRIPTORS and entry.pos != "ADJ":
            continue
        found.add(entry.symbol)
    return found


@pytest.fixture(scope="module")
def elaborator():  # type: ignore[no-untyped-def]
    return get_elaborator("lexical")


@pytest.fixture(scope="module")
def audiocaps_queries() -> list[str]:
    with require(SHARED_DATA / "audiocaps" / "val.csv").open(encoding="utf-8") as handle:
        return [row["caption"] for row in csv.DictReader(handle)][:150]


def test_registered_as_the_default(elaborator) -> None:  # type: ignore[no-untyped-def]
    assert "lexical" in available_elaborators()
    positives, negatives = elaborator.elaborate("birds chirping in the morning")
    assert len(positives) == 2 and len(negatives) == 3


def test_papers_example(elaborator) -> None:  # type: ignore[no-untyped-def]
    result = elaborator.elaborate("birds chirping in the morning")
    for text in (*result.positives, *result.negatives):
        assert text.endswith("birds chirping in the morning")
    added = [_symbols(text, DESCRIPTORS) for text in result.positives]
    assert all(1 <= len(symbols) <= 3 for symbols in added)


def test_negative_swaps_the_dimension_the_query_states(elaborator) -> None:  # type: ignore[no-untyped-def]
    result = elaborator.elaborate("a dog barking loudly")
    assert result.negatives[0] == "a dog barking softly"
    result = elaborator.elaborate("a quiet stream flowing continuously")
    assert "a loud stream flowing continuously" in result.negatives
    assert "a quiet stream flowing intermittently" in result.negatives


def test_rules_hold_on_real_queries(elaborator, audiocaps_queries: list[str]) -> None:  # type: ignore[no-untyped-def]
    for query in audiocaps_queries:
        result = elaborator.elaborate(query)
        events = _symbols(query, EVENTS)
        said = _symbols(query, DESCRIPTORS)
        assert len(result.positives) == 2 and len(result.negatives) == 3
        for text in (*result.positives, *result.negatives):
            assert _symbols(text, EVENTS) <= events, (query, text)  # no new sound source
            assert len(text.split()) <= max(20, len(query.split())), text
        for text in result.positives:
            assert said <= _symbols(text, DESCRIPTORS)
            assert len(_symbols(text, DESCRIPTORS) - said) <= 3
        for text in result.negatives:
            # one dimension: at most one descriptor swapped for another, or one added
            assert len(_symbols(text, DESCRIPTORS) ^ said) <= 2, (query, text)


def test_options_and_bad_input(elaborator) -> None:  # type: ignore[no-untyped-def]
    custom = get_elaborator("lexical", n_positives=3, n_negatives=1, descriptors_per_positive=1)
    positives, negatives = custom.elaborate("an engine idling")
    assert len(positives) == 3 and len(negatives) == 1
    assert len({len(text.split()) for text in positives}) == 1
    for bad in ["", "   "]:
        with pytest.raises(ElaborationError):
            elaborator.elaborate(bad)
    assert elaborator.elaborate("???").positives == ("???", "???")


def test_shipped_cooccurrence_table_is_reproducible() -> None:
    captions: list[str] = []
    with require(SHARED_DATA / "clotho" / "clotho_captions_development.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            captions.extend(row[f"caption_{i}"] for i in range(1, 6))
    with require(SHARED_DATA / "audiocaps" / "train.csv").open(encoding="utf-8") as f:
        captions.extend(row["caption"] for row in csv.DictReader(f))
    assert format_cooccurrence(build_cooccurrence(captions)) == format_cooccurrence(load_cooccurrence())
    assert load_cooccurrence().descriptors("Rain", limit=2) == ("Heavy", "Hard")
