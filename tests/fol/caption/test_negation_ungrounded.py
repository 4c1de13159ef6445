"""A negated copula whose predicate names nothing audible, and prefixed antonyms of perceptible.

The phrases are built for these tests from the rules' grammar, with their own sounds and
predicates. None is the wording of a benchmark.
"""

from __future__ import annotations

import pytest
from caption_fixtures import parser, scope_parts

from fortekit.fol.caption.negation_scopes import UNGROUNDED_REASON

parts = scope_parts


@pytest.mark.parametrize(
    ("text", "unsure", "kept"),
    [
        ("birds chirping, the traffic is not welcome", "Traffic", "Bird"),
        ("a fountain splashing, but the children aren't part of it", "Child", "Fountain"),
    ],
)
def test_a_denied_inaudible_predicate_leaves_its_sound_unsure(text: str, unsure: str, kept: str) -> None:
    excluded, asserted, reasons = parts(text)
    assert kept in asserted
    assert unsure not in asserted and unsure not in excluded
    assert UNGROUNDED_REASON in reasons


@pytest.mark.parametrize(
    ("text", "denied", "kept"),
    [
        ("the bell is not metal", "Metal", "Bell"),  # a material: checked on the audio, denied
        ("the siren is not loud", "Loud", "Siren"),  # a property of the sound
    ],
)
def test_a_denied_audible_predicate_keeps_its_sound(text: str, denied: str, kept: str) -> None:
    result = parser().parse(text)
    assert kept in {r.symbol for r in result.predicates if not r.negated and not r.excluded}
    assert denied in {r.symbol for r in result.predicates if r.negated}


def test_a_prefixed_antonym_of_perceptible_is_an_absence_word() -> None:
    excluded, asserted, _ = parts("a kettle whistling, the traffic indiscernible")
    assert "Traffic" in excluded and "Kettle" in asserted
