"""Rules added after the first held-out measurement of issue 42 (docs/negation.md, "Added after
the issue-42 held-out measurement"): the absolute "with the B removed", clauses about the
search whose verb has no class, "no longer", and a negative prefix the tokenizer splits off.
Sound phrases are constructed for this file (a sitar, a walrus, a gong, a harmonica) and appear
in no benchmark query.
"""

from __future__ import annotations

import pytest
from caption_fixtures import parser

from fortekit.fol.caption.negation_search import SEARCH_REASON


def parts(text: str) -> tuple[set[str], set[str]]:
    """(excluded, asserted) predicate symbols of a parse."""
    result = parser().parse(text)
    excluded = {r.symbol for r in result.predicates if r.excluded}
    asserted = {r.symbol for r in result.predicates if not r.excluded and not r.negated}
    return excluded, asserted


@pytest.mark.parametrize(
    "text",
    ["a sitar droning with the walrus bellowing removed", "a sitar droning with the gong filtered out"],
)
def test_the_absolute_removes_its_own_noun_not_the_one_it_modifies(text: str) -> None:
    excluded, asserted = parts(text)
    assert "Sitar" in asserted and "Sitar" not in excluded
    assert excluded & {"Walrus", "Gong"}


@pytest.mark.parametrize(
    "text",
    [
        "a sitar droning, forget the gong",
        "a sitar droning; disregard the walruses",
        "a harmonica wheezing where you can discount the gong",
    ],
)
def test_the_object_of_an_unclassed_verb_about_the_search_is_not_asserted(text: str) -> None:
    result = parser().parse(text)
    _, asserted = parts(text)
    assert not asserted & {"Gong", "Walrus", "Bellowing"}, (text, asserted)
    assert asserted & {"Sitar", "Harmonica"}
    assert any(note.reason == SEARCH_REASON for note in result.scopes), result.scopes


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # a subject of the sound, or a sound event of V_audio, is a description, not an instruction
        ("a man plays a harmonica", {"Man", "Harmonica"}),
        ("you walk on gravel", {"Walking", "Gravel"}),
        # a base form that opens the query is a misread modifier, not an imperative
        ("slow footsteps on a wooden floor", {"Footstep", "Floor"}),
        # a cue on the object decides its polarity
        ("a sitar droning; you can make out no gong", {"Sitar"}),
    ],
)
def test_descriptions_are_not_clauses_about_the_search(text: str, kept: set[str]) -> None:
    result = parser().parse(text)
    _, asserted = parts(text)
    assert kept <= asserted, (text, asserted)
    assert not any(note.reason == SEARCH_REASON for note in result.scopes), result.scopes


def test_a_cue_on_the_object_still_excludes_it() -> None:
    excluded, _ = parts("a sitar droning; you can make out no gong")
    assert "Gong" in excluded


@pytest.mark.parametrize(
    "text",
    [
        "a sitar droning; the gong is no longer ringing",
        "a harmonica wheezing, and the walruses are no longer bellowing",
    ],
)
def test_no_longer_is_a_verbal_negation_not_a_determiner(text: str) -> None:
    excluded, asserted = parts(text)
    assert excluded & {"Gong", "Walrus"} and excluded & {"Ringing", "Bellowing"}, (text, excluded)
    assert asserted & {"Sitar", "Harmonica"}


@pytest.mark.parametrize(
    ("text", "kept", "never"),
    [
        ("a non-musical gong", "NonMusical", "Musical"),
        ("non-human walruses bellowing", "NonHuman", "Human"),
        ("a non-electric guitar strumming", "NonElectric", "Electric"),
    ],
)
def test_a_split_negative_prefix_stays_on_its_word(text: str, kept: str, never: str) -> None:
    _, asserted = parts(text)
    assert kept in asserted and never not in asserted, (text, asserted)


def test_a_split_prefix_on_a_stem_of_containing_excludes_its_object() -> None:
    """'non-inclusive of B' (docs/negation.md, "Affixal cues"): the object is excluded."""
    excluded, asserted = parts("a sitar droning, non-inclusive of a gong")
    assert "Gong" in excluded and "Sitar" in asserted
