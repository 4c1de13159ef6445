"""A negation's reach (fortekit.fol.caption.negation_reach), approximate negators of quantity and
presence, and the deictic adverbs of presence under a negated copula.

The phrases are built for these tests from the rules' grammar (a denied predicate of no sound, an
exclusion of a word of no sound, an unresolved cue, "hardly any", "not around"), with their own
sounds and words. None is the wording of a benchmark.
"""

from __future__ import annotations

import pytest
from caption_fixtures import scope_parts

from fortekit.fol.caption import parse_caption
from fortekit.fol.caption.negation_reach import REACH_REASON, UNPLACED_CUE_REASON

parts = scope_parts
APPROXIMATE = "approximate negator: a quantity or presence near none"


# --- a negation that denies nothing audible --------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "unsure", "kept"),
    [
        ("a kettle whistling, the sirens not permitted", "Siren", "Kettle"),  # the holder
        ("rain falling - not keen on sirens", "Siren", "Rain"),  # inside the predicate's complement
        ("an organ playing; trumpets: none", "Trumpet", "Organ"),  # an elliptical pronoun
    ],
)
def test_a_negation_of_nothing_audible_leaves_its_sound_unsure(text: str, unsure: str, kept: str) -> None:
    excluded, asserted, reasons = parts(text)
    assert kept in asserted
    assert unsure not in asserted
    # an older rule may exclude it outright ("the B not permitted" reads as a negated participle)
    assert REACH_REASON in reasons or unsure in excluded


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("a man speaks with no emotion as a dog barks", "Dog"),  # a later, separate segment
        ("a car passes with no one inside while a dog barks", "Dog"),
        ("birds chirp and a dog is not barking at the traffic", "Traffic"),  # a sound event denied
        ("the voice is not clear while a dog barks", "Voice"),  # a property of sound
    ],
)
def test_a_negation_of_something_audible_or_elsewhere_leaves_the_rest_asserted(text: str, kept: str) -> None:
    _, asserted, reasons = parts(text)
    assert kept in asserted
    assert REACH_REASON not in reasons


def test_the_first_sound_of_a_caption_is_never_made_unsure() -> None:
    _, asserted, _ = parts("a dog barking, not interested in the sirens")
    assert "Dog" in asserted and "Siren" not in asserted


def test_an_unresolved_cue_leaves_the_sound_after_it_unsure() -> None:
    excluded, asserted, reasons = parts("a bell ringing, omit: trumpets")
    assert "Bell" in asserted and "Trumpet" not in asserted
    assert UNPLACED_CUE_REASON in reasons or "Trumpet" in excluded


# --- approximate negators ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "unsure"),
    [
        ("a fountain splashing with scarcely any birds", "Bird"),
        ("an engine idling, the sirens hardly there", "Siren"),
        ("people chatting and barely a car", "Car"),
    ],
)
def test_an_approximate_negator_of_quantity_or_presence_is_unsure(text: str, unsure: str) -> None:
    excluded, asserted, reasons = parts(text)
    assert unsure not in asserted and unsure not in excluded
    assert APPROXIMATE in reasons


def test_an_approximator_of_degree_asserts_its_sound() -> None:
    _, asserted, reasons = parts("a barely audible voice over the wind")
    assert "Voice" in asserted and APPROXIMATE not in reasons


# --- deictic adverbs of presence --------------------------------------------------------------------
@pytest.mark.parametrize("adverb", ["around", "here", "about"])
def test_a_negated_copula_with_an_adverb_of_presence_excludes(adverb: str) -> None:
    excluded, asserted, _ = parts(f"a fountain splashing, but the sirens are not {adverb}")
    assert "Siren" in excluded and "Fountain" in asserted


def test_a_negated_copula_with_another_adverb_never_loses_its_negation() -> None:
    # "the radio isn't on" used to give Radio(x) with the negation dropped
    formula = str(parse_caption("a kettle whistling, but the radio isn't on").formula)
    assert "Radio(" not in formula or "¬" in formula


# --- multiword forms of the particle (*SEM 2012 cue annotations) ------------------------------------
@pytest.mark.parametrize("cue", ["by no means", "in no way"])
def test_multiword_particles_negate_what_follows(cue: str) -> None:
    excluded, asserted, _ = parts(f"an engine idling, and {cue} a siren")
    assert "Siren" in excluded and "Engine" in asserted


def test_a_multiword_particle_denies_a_property() -> None:
    formula = str(parse_caption("the engine is by no means quiet").formula)
    assert "¬Quiet(" in formula


# --- negative concord ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    ["an engine idling, and there ain't no sirens", "a fountain splashing; we don't want no sirens"],
)
def test_negative_concord_is_one_negation(text: str) -> None:
    excluded, asserted, _ = parts(text)
    assert "Siren" in excluded and "Siren" not in asserted


def test_litotes_still_cancels() -> None:
    _, asserted, _ = parts("an engine idling, not without sirens")
    assert "Siren" in asserted


# --- minimizers and response particles --------------------------------------------------------------
@pytest.mark.parametrize("minimizer", ["shred", "iota", "speck"])
def test_a_negated_minimizer_excludes_its_of_object(minimizer: str) -> None:
    excluded, asserted, _ = parts(f"an engine idling, and not a {minimizer} of sirens")
    assert "Siren" in excluded and "Engine" in asserted


@pytest.mark.parametrize("particle", ["nope", "nah"])
def test_a_response_particle_negates_the_verbless_phrase_before_it(particle: str) -> None:
    excluded, asserted, _ = parts(f"an engine idling; sirens: {particle}")
    assert "Siren" in excluded and "Engine" in asserted


def test_a_clause_before_a_response_particle_is_left_alone() -> None:
    _, asserted, _ = parts("the dog barks, nope")
    assert "Dog" in asserted
