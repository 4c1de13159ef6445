"""An exclusion never denies what the same caption asserts (docs/negation.md, "Coherence"),
and the rules found by counting false negations on development captions (docs/parser.md,
"False negations on development captions").

The sentences are constructed for these tests (a foghorn, a goose, a dishwasher, a harp);
they follow the constructions of the captions, not their words.
"""

from __future__ import annotations

import pytest
from caption_fixtures import parser


def split(text: str) -> tuple[set[str], set[str], set[str]]:
    """(excluded, denied, asserted) predicate symbols of a parse."""
    result = parser().parse(text)
    excluded = {r.symbol for r in result.predicates if r.excluded}
    denied = {r.symbol for r in result.predicates if r.negated and not r.excluded}
    asserted = {r.symbol for r in result.predicates if not r.excluded and not r.negated}
    return excluded, denied, asserted


def test_a_pause_in_a_sequence_is_no_exclusion() -> None:
    """'A, then no A, then more A': the formula has no time; the scope is unresolved."""
    result = parser().parse("a foghorn sounding, then no foghorn, then the foghorn again")
    assert not any(r.excluded for r in result.predicates), str(result.formula)
    assert "Foghorn" in result.symbols
    assert [(n.resolved, n.reason) for n in result.scopes] == [
        (False, "sound asserted elsewhere in the caption")
    ]


def test_a_contrast_on_a_modifier_denies_the_modifier() -> None:
    """'a goose honks, not a young goose': the goose is there; it is not young (Horn 1989)."""
    excluded, denied, asserted = split("a goose honks over the lake, not a young goose")
    assert not excluded and "Goose" in asserted and "Young" in denied


def test_a_contrast_on_the_verb_denies_the_verb() -> None:
    for text in ("a goose honking, no goose hissing", "the geese are honking, but no geese are hissing"):
        excluded, denied, asserted = split(text)
        assert {"Goose", "Honking"} <= asserted and denied & {"Hissing", "Hiss"} and not excluded


def test_an_alterity_word_keeps_the_exclusion() -> None:
    excluded, _, asserted = split("a goose honking, no other geese")
    assert "Goose" in excluded and "Goose" in asserted


def test_a_ceasing_verb_whose_subject_goes_on_tells_a_sequence() -> None:
    """The subject is heard; the ended event may be heard before it ends: unresolved."""
    result = parser().parse("a dishwasher has stopped rinsing and is beeping loudly")
    assert not any(r.excluded or r.negated for r in result.predicates), str(result.formula)
    assert {"Dishwasher", "Beeping"} <= result.symbols and not result.symbols & {"Rinsing", "Rinse"}
    assert [n.reason for n in result.unresolved] == ["ceased event of a subject that goes on"]
    # a ceased sound of a subject that does nothing else stays an exclusion
    assert "Dishwasher" in split("the dishwasher has stopped, but a harp plays")[0]


@pytest.mark.parametrize(
    "text",
    [
        "stillness, except for the faint honking of a goose",  # an exceptive after a noun of silence
        "the pond is quiet except for the distant honking of geese",  # its noun after adjectives
    ],
)
def test_an_exceptive_after_silence_asserts_its_object(text: str) -> None:
    excluded, _, asserted = split(text)
    assert not excluded and "Goose" in asserted


def test_lack_of_as_a_noun_excludes_its_object() -> None:
    excluded, _, asserted = split("a dishwasher humming with a lack of clear rhythm")
    assert "Rhythm" in excluded and "Dishwasher" in asserted


def test_an_approximator_on_the_causative_verb_is_no_absence() -> None:
    """'almost making B inaudible': B is quiet, not absent (the approximator modifies the verb)."""
    excluded, _, asserted = split("a foghorn blares, nearly making the harp inaudible")
    assert not excluded and "Harp" in asserted
