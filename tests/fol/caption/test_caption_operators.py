"""The search-box prohibit operator ("rain -thunder"), read as the preposition of exclusion
(fortekit.fol.caption.pipeline.read_operators)."""

from __future__ import annotations

import pytest
from caption_fixtures import scope_parts

from fortekit.fol.caption import parse_caption
from fortekit.fol.caption.pipeline import checked_caption, read_operators


@pytest.mark.parametrize(
    ("text", "excluded", "asserted"),
    [
        ("an organ playing -trumpets", {"Trumpet"}, {"Organ"}),
        ("waves crashing on rocks -gulls -wind", {"Gull", "Wind"}, {"Wave", "Rock"}),
        ("-sirens, a crowd cheering", {"Siren"}, {"Crowd"}),
    ],
)
def test_a_prohibit_operator_excludes_its_term(text: str, excluded: set[str], asserted: set[str]) -> None:
    found_excluded, found_asserted, _ = scope_parts(text)
    assert excluded <= found_excluded
    assert asserted <= found_asserted


@pytest.mark.parametrize(
    "text",
    [
        "a traffic-free road at night",  # a hyphen inside a word
        "a tone at -5 dB",  # before a digit
        "a bell rings - a door closes",  # standing alone
        "high -pitched whirring of a drill",  # a hyphenated word of WordNet with a stray space
    ],
)
def test_other_hyphens_are_left_alone(text: str) -> None:
    assert read_operators(text) == (text, None)


def test_spans_point_at_the_operator_as_written() -> None:
    text = "an organ playing -trumpets"
    result = parse_caption(text)
    note = next(n for n in result.scopes if n.effect == "exclude")
    assert text[note.span[0]:note.span[1]] == "-"
    trumpet = next(r for r in result.predicates if r.symbol == "Trumpet")
    assert text[trumpet.span[0]:trumpet.span[1]] == "trumpets"


def test_the_fast_path_does_not_skip_the_operator() -> None:
    prepared = checked_caption("an organ playing -trumpets")
    assert prepared.text == "an organ playing without trumpets"
    assert prepared.offsets is not None and len(prepared.offsets) == len(prepared.text)


def test_offsets_compose_with_input_hygiene() -> None:
    text = "\x1b[1man organ\x1b[0m -trumpets"
    result = parse_caption(text)
    trumpet = next(r for r in result.predicates if r.symbol == "Trumpet")
    assert text[trumpet.span[0]:trumpet.span[1]] == "trumpets"


def test_operators_are_read_within_the_word_cap() -> None:
    # 100 kB of operators: read after the caps (and capped again), so the text stays bounded
    from fortekit.fol.caption.pipeline import MAX_WORDS

    prepared = checked_caption(("rain -thunder " * 8000)[:100_000])
    assert prepared.truncated
    assert len(prepared.text.split()) <= MAX_WORDS
    assert prepared.offsets is not None and len(prepared.offsets) >= len(prepared.text)
