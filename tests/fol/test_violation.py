"""The grounded violation check (fol/violation.py, vocab/entailment.py): violation judged by meaning.

Real captions parsed by the real parser, V_audio and WordNet; hypernymy in the right direction.
"""

from __future__ import annotations

import pytest

from fortekit.fol import parse_formula, predicates
from fortekit.fol.caption import parse_caption
from fortekit.fol.violation import Evidence, ViolationCheck, default_check, excluded_sounds
from fortekit.vocab.entailment import derive_entailment, load_entailment, parse_entailment


def caption(text: str) -> frozenset:  # type: ignore[type-arg]
    return predicates(parse_caption(text).formula)


@pytest.mark.parametrize("item", ["Speech", "a man speaking", "muffled speech", "people are talking",
                                  "A woman talks while a dog barks"])
def test_speech_in_any_wording_violates_no_people_talking(item: str) -> None:
    query = parse_caption("a dog barking without people talking").formula
    assert default_check().holds(query, caption(item)), item


@pytest.mark.parametrize("item", ["a dog barks loudly", "a dog barks while a man walks", "birds chirp",
                                  "a woman sings", "a crowd applauds"])
def test_other_sounds_do_not_violate_no_people_talking(item: str) -> None:
    query = parse_caption("a dog barking without people talking").formula
    assert not default_check().holds(query, caption(item)), item


def test_hypernymy_goes_in_the_right_direction() -> None:
    check = default_check()
    no_birds = parse_formula("∃x [Dog(x) ∧ ¬∃y Bird(y)]")
    no_crows = parse_formula("∃x [Bird(x) ∧ Singing(x) ∧ ¬∃y Crow(y)]")
    assert check.holds(no_birds, caption("a crow caws in the distance"))  # a crow is a bird
    assert not check.holds(no_crows, caption("birds sing in the trees"))  # a bird need not be a crow
    assert check.holds(no_crows, caption("a crow caws in the distance"))
    # "a rooster crows" is the verb: the cock's cry is not the bird the query excludes
    assert not check.holds(no_crows, caption("a rooster crows"))


def test_what_the_asked_for_sound_explains_is_no_evidence() -> None:
    check = default_check()
    dogs_no_animals = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y Animal(y)]")
    assert not check.holds(dogs_no_animals, caption("a dog barks"))  # the dog is what was asked for
    assert check.holds(dogs_no_animals, caption("a dog barks and a cat meows"))
    # sharing the source is not explaining the exclusion: the splashing must be witnessed
    water = parse_caption("water bubbling without water splashing").formula
    assert check.holds(water, caption("water splashes against the rocks"))
    assert not check.holds(water, caption("water bubbles in a stream"))


def test_a_source_doing_something_else_is_source_evidence_only() -> None:
    check = default_check()
    query = parse_caption("a cat meowing without dogs barking").formula
    judged = check.judge_formula(query, caption("a dog whimpers"))
    assert [j.evidence for j in judged] == [Evidence.SOURCE]
    assert not check.holds(query, caption("a dog whimpers"))


def test_compounds_and_derivation() -> None:
    check = default_check()
    assert check.holds(parse_formula("∃x [Rain(x) ∧ ¬∃y Thunder(y)]"), caption("a thunderstorm rages"))
    assert check.holds(parse_formula("∃x [Crowd(x) ∧ ¬∃y Applause(y)]"), caption("people are clapping"))
    assert check.holds(parse_formula("∃x [Engine(x) ∧ ¬∃y Hammer(y)]"), caption("someone is hammering"))


def test_a_denied_quality_or_an_unspecific_sound_is_not_judged() -> None:
    assert excluded_sounds(parse_formula("∃x [Music(x) ∧ ¬Loud(x)]")) == ()
    assert excluded_sounds(parse_formula("∃x [Rain(x) ∧ ¬∃y Something(y)]")) == ()
    assert [s.nouns for s in excluded_sounds(parse_formula("∃x [Water(x) ∧ Flowing(x) ∧ ¬Dripping(x)]"))] \
        == [("Water",)]


def test_a_caption_negation_is_not_evidence() -> None:
    query = parse_formula("∃x [Dog(x) ∧ ¬∃y Music(y)]")
    assert not default_check().holds(query, caption("a dog barks and there is no music"))


def test_the_shipped_table_is_what_wordnet_derives() -> None:
    from fortekit.vocab import load_vocabulary, load_wordnet

    derived = derive_entailment(list(load_vocabulary()), load_wordnet())
    shipped = load_entailment()
    assert dict(derived.above) == dict(shipped.above)
    assert dict(derived.kinds) == dict(shipped.kinds)


def test_a_check_over_a_table_of_its_own() -> None:
    table = parse_entailment("Raven\t\tBird\nBird\t\t\n")
    check = ViolationCheck(table)
    assert check.holds(parse_formula("∃x [Dog(x) ∧ ¬∃y Bird(y)]"), {"Raven"})
    assert check.table.below("Bird") == frozenset({"Bird", "Raven"})
