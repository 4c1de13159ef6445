"""Lessening, ending and separation (fortekit.fol.caption.negation_unplaced), the intransitive
"is lacking", and "so much as" inside a negated phrase.

The phrases are built for these tests from the rules' grammar (a resultative participle, a
separation of-phrase, a perfect), with their own sounds and verbs. None is the wording of a
benchmark.
"""

from __future__ import annotations

import pytest
from caption_fixtures import scope_parts

from fortekit.fol.caption.negation_unplaced import RESULT_REASON, SEPARATION_REASON

parts = scope_parts


# --- the resultative state of a verb of no class -------------------------------------------------
@pytest.mark.parametrize(
    ("text", "unsure", "kept"),
    [
        ("a kettle whistling, the dog weakened", "Dog", "Kettle"),  # absolute, no preposition
        ("a bell ringing with the traffic dampened", "Traffic", "Bell"),  # absolute with "with"
        ("an organ playing; the sirens have been quelled", "Siren", "Organ"),  # perfect
        ("a bell ringing, the traffic phased out", "Traffic", "Bell"),  # a phrasal verb of the class
    ],
)
def test_the_resultative_state_of_a_verb_of_lessening_is_unsure(text: str, unsure: str, kept: str) -> None:
    excluded, asserted, reasons = parts(text)
    assert kept in asserted
    assert unsure not in asserted and unsure not in excluded  # neither asserted nor excluded
    assert RESULT_REASON in reasons


@pytest.mark.parametrize(
    "text",
    [
        "a door is slammed and then a lid is put back on",  # the simple passive: an event
        "people talking with the door closed",  # a sound event of V_audio
        "a stopped car idling",  # an attributive participle
        "a train whistles but the sound has been distorted",  # a state that presupposes the sound
        "a man speaks, with his voice amplified",
        "a man kills a fly buzzing",  # the active: an event
    ],
)
def test_events_and_sound_verbs_keep_their_noun(text: str) -> None:
    _, _, reasons = parts(text)
    assert RESULT_REASON not in reasons


def test_a_verb_of_a_class_keeps_its_class() -> None:
    excluded, _, reasons = parts("a fan humming, with the birds removed")
    assert "Bird" in excluded and RESULT_REASON not in reasons


def test_a_state_of_a_thing_that_is_no_sound_is_left_alone() -> None:
    # only a sound class is made unsure: what a query leaves out is a sound
    _, _, reasons = parts("water dripping, the surface polished")
    assert RESULT_REASON not in reasons


# --- the of-phrase of separation ---------------------------------------------------------------
def test_the_of_phrase_of_separation_is_unsure() -> None:
    excluded, asserted, reasons = parts("a choir singing, purged of any traffic noise")
    assert "Choir" in asserted
    assert not {"Traffic", "TrafficNoise"} & (asserted | excluded)
    assert SEPARATION_REASON in reasons


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("a song composed of drums and a guitar", "Drum"),  # material: a stative verb
        ("a man accused of shouting", None),  # topic: a verb of communication
    ],
)
def test_of_phrases_of_material_and_topic_are_no_separation(text: str, kept: str | None) -> None:
    _, asserted, reasons = parts(text)
    assert SEPARATION_REASON not in reasons
    if kept is not None:
        assert kept in asserted


# --- the intransitive "is lacking", and "so much as" --------------------------------------------
def test_a_sound_that_is_lacking_is_absent() -> None:
    excluded, asserted, _ = parts("a train passing, but the horn is lacking")
    assert "Horn" in excluded and "Train" in asserted


def test_a_subject_that_lacks_something_is_there() -> None:
    excluded, asserted, _ = parts("a radio is lacking signal")
    assert "Radio" in asserted and "Radio" not in excluded


def test_so_much_as_is_inside_the_negated_phrase() -> None:
    excluded, asserted, _ = parts("a river flowing without so much as a single bird chirping")
    assert "Bird" in excluded and "River" in asserted


def test_so_before_a_clause_still_starts_a_new_one() -> None:
    excluded, asserted, _ = parts("no dogs barking, so the birds sing")
    assert "Dog" in excluded and "Bird" in asserted
