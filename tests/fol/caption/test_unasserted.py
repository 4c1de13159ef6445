"""Sounds named without being asserted (fortekit.fol.caption.unasserted), the elliptical negation
after a sound (negation_reach), the verbs of shutting out, expelling and falling silent, and the
adjectives of not being perceived.

The phrases are built for these tests from the grammar each rule reads (a declarative sentence
then a question, a sign after a sound, a negation alone in its segment, a resultative participle
of a verb of a class), with their own sounds and words. None is the wording of a benchmark.
"""

from __future__ import annotations

import pytest

from fortekit.fol.caption import parse_caption
from fortekit.fol.caption.negation_lexicon import load_negation_lexicon
from fortekit.fol.caption.negation_reach import ELLIPTICAL_REASON
from fortekit.fol.caption.unasserted import (
    IRREALIS_REASON,
    QUESTION_REASON,
    SIGN_REASON,
    irrealis_sounds,
    questioned_sounds,
    signed_sounds,
    unasserted_sounds,
)
from fortekit.fol.predicates import predicates


def _symbols(text: str) -> set[str]:
    return {symbol.name for symbol in predicates(parse_caption(text).formula)}


def _reasons(text: str) -> list[str]:
    return [note.reason for note in parse_caption(text).unresolved]


# --- questions ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "a kettle whistling; a cat meowing? who would want that",
    "a train passing. Church bells? Hardly",
    "waves crashing\nthunder? perish the thought",
])
def test_a_sound_asked_about_beside_a_request_is_unsure(text: str) -> None:
    result = parse_caption(text)
    assert QUESTION_REASON in _reasons(text)
    names = {symbol.name for symbol in predicates(result.formula)}
    assert not names & {"Cat", "Bell", "ChurchBell", "Thunder"}
    assert names & {"Kettle", "Train", "Wave"}


@pytest.mark.parametrize("text", ["is that a kettle whistling?", "a cat meowing and a kettle whistling?",
                                  "any church bells ringing in the distance?"])
def test_a_query_that_is_a_question_is_a_request_for_what_it_names(text: str) -> None:
    assert QUESTION_REASON not in _reasons(text)
    assert _symbols(text) & {"Kettle", "Bell", "ChurchBell", "Cat"}


def test_a_question_does_not_undo_an_exclusion() -> None:
    # "no" placed the exclusion: the question rule reads asserted sounds only
    result = parse_caption("a kettle whistling; a cat? no")
    assert "¬" in str(result.formula) or "Cat" not in _symbols("a kettle whistling; a cat? no")


def test_captions_without_a_question_mark_are_untouched() -> None:
    text = "a kettle whistling while a cat meows"
    assert questioned_sounds(text, parse_caption(text).predicates) == (frozenset(), ())


# --- signs -------------------------------------------------------------------------------------------
def test_a_sign_after_a_later_sound_makes_it_unsure() -> None:
    text = "a kettle whistling \N{HEAVY CHECK MARK} a cat meowing \N{CROSS MARK}"
    result = parse_caption(text)
    assert SIGN_REASON in _reasons(text)
    assert "Cat" not in _symbols(text) and "Kettle" in _symbols(text)
    assert [note.cue for note in result.unresolved if note.reason == SIGN_REASON] == ["\N{CROSS MARK}"]


def test_a_sign_after_the_first_sound_alone_changes_nothing() -> None:
    text = "a kettle whistling \N{SMILING FACE WITH SMILING EYES}"
    assert signed_sounds(text, parse_caption(text).predicates) == (frozenset(), ())
    assert _symbols(text) >= {"Kettle"}


def test_ascii_punctuation_is_no_sign() -> None:
    text = "a kettle whistling & a cat meowing #"
    assert unasserted_sounds(text, parse_caption(text).predicates) == (frozenset(), ())


# --- the elliptical negation after a sound ----------------------------------------------------------
@pytest.mark.parametrize("text", ["a dog barking, fine; a cat meowing, not so much",
                                  "a dog barking and a cat meowing, not really"])
def test_a_negation_alone_after_a_sound_makes_that_sound_unsure(text: str) -> None:
    assert ELLIPTICAL_REASON in _reasons(text)
    assert "Cat" not in _symbols(text) and "Dog" in _symbols(text)


def test_a_negation_of_a_property_of_sound_is_not_elliptical() -> None:
    # "not loudly" says something of the talking (a grounded word): the man is still there
    text = "a dog barks and a man talks, not loudly"
    assert ELLIPTICAL_REASON not in _reasons(text)
    assert "Man" in _symbols(text)


# --- verbs of shutting out, expelling and falling silent (WordNet) -----------------------------------
def test_the_new_roots_bring_their_verbs_from_wordnet() -> None:
    lexicon = load_negation_lexicon()
    assert {"shut out", "keep out"} <= lexicon.lemmas("omission_verb")
    assert {"expel", "kick out", "throw out"} <= lexicon.lemmas("prohibition_verb")
    assert {"clam up", "cease", "call it a day"} <= lexicon.lemmas("ceasing_verb")
    # a word whose most frequent sense is another one stays out ("shut" is to close, "stop" to halt)
    assert "shut" not in lexicon.lemmas("omission_verb")
    assert "stop" not in lexicon.lemmas("ceasing_verb")


@pytest.mark.parametrize("text", ["a kettle whistling, with the cat shut out",
                                  "a kettle whistling, the cat kicked out"])
def test_a_sound_shut_out_or_expelled_is_excluded(text: str) -> None:
    formula = str(parse_caption(text).formula)
    assert "¬∃" in formula and "Cat" in formula and "Kettle" in formula


# --- modals and conditions ---------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "a kettle whistling; a cat meowing would spoil it",
    "a kettle whistling, unless a cat is meowing as well",
    "a kettle whistling; I might prefer silence to a cat meowing",
])
def test_a_sound_in_the_clause_of_a_modal_or_a_condition_is_unsure(text: str) -> None:
    assert IRREALIS_REASON in _reasons(text)
    assert "Cat" not in _symbols(text) and "Kettle" in _symbols(text)


@pytest.mark.parametrize("text", [
    "a man can be heard talking as a car horn honks",       # a modal of perception is evidential
    "a dog could be barking while birds chirp",            # the request itself is supposed
    "a man tears tape so that he can open the box",        # a clause of purpose
    "glass is tapped as if someone is knocking on a window",  # a comparison of manner
    "a tin can rattles while a dog barks",                 # a noun the tagger may take for a modal
    "a kettle whistling; a cat must be meowing as well",   # a modal of necessity commits to B
])
def test_evidential_modals_purpose_manner_and_nouns_are_not_irrealis(text: str) -> None:
    assert IRREALIS_REASON not in _reasons(text)


def test_irrealis_sounds_needs_the_tokens() -> None:
    result = parse_caption("a kettle whistling; a cat meowing would spoil it")
    assert irrealis_sounds(result.predicates, None) == (frozenset(), ())


# --- adjectives of not being perceived ----------------------------------------------------------------
def test_adjectives_of_not_being_perceived_come_from_wordnet_antonymy() -> None:
    absence = load_negation_lexicon().lemmas("absence_adjective")
    assert {"undetected", "unnoticed", "unobserved"} <= absence
    assert "unseen" not in absence  # a word of sight: an unseen bird is heard


def test_a_sound_left_undetected_is_excluded() -> None:
    formula = str(parse_caption("a kettle whistling, with the cat undetected").formula)
    assert "¬∃" in formula and "Cat" in formula


# --- "why not B": a suggestion, not a negation ----------------------------------------------------------
def test_why_not_suggests_what_follows() -> None:
    text = "a kettle whistling, and why not a cat meowing as well"
    formula = str(parse_caption(text).formula)
    assert "¬" not in formula and "Cat" in formula
    assert "¬∃" in str(parse_caption("a kettle whistling, not a cat meowing").formula)
