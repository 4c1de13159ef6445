"""Verbs of forbidding (the lexicon's prohibition_verb class) and denying words no rule placed
(fortekit.fol.caption.negation_denial).

The phrases are built for these tests from the rules' grammar (a resultative participle of a verb
of forbidding, a predicative participle after a gerund that names a sound, an attributive
modifier, a word V_audio grounds), with their own sounds and words. None is the wording of a
benchmark.
"""

from __future__ import annotations

import pytest

from fortekit.errors import NegationRulesError
from fortekit.fol.caption import parse_caption
from fortekit.fol.caption.negation_denial import DENIAL_REASON, unplaced_denials
from fortekit.fol.caption.negation_lexicon import load_negation_lexicon, parse_negation_lexicon
from fortekit.fol.predicates import predicates


def _symbols(text: str) -> set[str]:
    return {symbol.name for symbol in predicates(parse_caption(text).formula)}


# --- the lexicon -----------------------------------------------------------------------------------
def test_verbs_of_forbidding_come_from_wordnet() -> None:
    lexicon = load_negation_lexicon()
    forbidding = lexicon.lemmas("prohibition_verb")
    assert {"forbid", "prohibit", "disallow", "banish", "censor"} <= forbidding
    assert all(entry.source == "wordnet" for entry in lexicon.entries if entry.cls == "prohibition_verb")


def test_denying_classes_deny_by_their_own_sense() -> None:
    denying = load_negation_lexicon().denying_lemmas()
    assert {"remove", "omit", "forbid", "inaudible", "eliminate"} <= denying
    # words that deny only under a negation ("don't want B", "can't hear B") are not among them
    assert not {"want", "need", "hear", "include"} & denying


def test_a_class_flag_that_is_not_a_boolean_is_a_typed_error() -> None:
    text = '[classes.x]\njoins = "list:y"\ndenies = "yes"\n'
    with pytest.raises(NegationRulesError, match="E314"):
        parse_negation_lexicon(text)


# --- verbs of forbidding in the resultative participle ---------------------------------------------
@pytest.mark.parametrize(
    ("text", "kept", "excluded"),
    [
        ("a kettle whistling, the sirens censored", "Kettle", "Siren"),
        ("waves crashing with gulls banished", "Wave", "Gull"),
        ("an organ playing, trumpets prohibited", "Organ", "Trumpet"),
    ],
)
def test_a_forbidden_sound_is_excluded(text: str, kept: str, excluded: str) -> None:
    formula = str(parse_caption(text).formula)
    assert f"{kept}(x)" in formula
    assert f"¬∃y {excluded}(y)" in formula


# --- a denying word no rule placed -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "kept", "unsure", "word"),
    [
        ("a dog barking; honking is banned", "Dog", "Honking", "banned"),
        ("an engine idling; whistling is forbidden", "Engine", "Whistling", "forbidden"),
        ("birds singing, the crows are banished", "Bird", "Crow", "banished"),
    ],
)
def test_the_sound_an_unplaced_denying_word_bears_on_is_unsure(
    text: str, kept: str, unsure: str, word: str
) -> None:
    result = parse_caption(text)
    symbols = {symbol.name for symbol in predicates(result.formula)}
    assert kept in symbols
    assert unsure not in symbols  # neither asserted nor excluded
    assert "¬" not in str(result.formula)
    notes = [note for note in result.unresolved if note.reason == DENIAL_REASON]
    assert [note.cue for note in notes] == [word]
    assert result.text[slice(*notes[0].span)] == word


@pytest.mark.parametrize(
    "text",
    [
        "a muffled voice as a dog barks",  # attributive: a muffled voice is a voice
        "glass breaking while a dog barks",  # a word V_audio grounds is a sound event
        "a man finishes speaking as a dog barks",  # it bears on the caption's first sound
        "a truck idling as the horn is removed",  # an event of removing, grounded
    ],
)
def test_a_denying_word_that_describes_a_sound_leaves_every_sound_asserted(text: str) -> None:
    result = parse_caption(text)
    assert DENIAL_REASON not in [note.reason for note in result.unresolved]
    assert "¬" not in str(result.formula)


def test_the_first_sound_is_never_made_unsure() -> None:
    assert "Dog" in _symbols("a dog barking; honking is banned")
    variables, words, notes = unplaced_denials("a dog", parse_caption("a dog").predicates)
    assert (variables, words, notes) == (frozenset(), (), ())


def test_the_note_says_the_class_and_the_sound() -> None:
    note = next(note for note in parse_caption("birds singing, the crows are banished").unresolved
                if note.reason == DENIAL_REASON)
    assert (note.cue_class, note.scope, note.effect, note.resolved) == (
        "prohibition_verb", "crows", "unresolved", False)
    assert note.to_dict()["reason"] == DENIAL_REASON
