"""Cue forms the first lexicon missed (docs/negation.md, "Cue forms of the cue-class benchmark").

One test per rule, each with sound phrases constructed for this file (a sitar, a walrus, a
typewriter, a gong, a harmonica: phrases no benchmark query and no other test uses), the
readings each rule must leave alone, and conjunctions with a word of distance that must stay
conjunctions. The classes themselves come from WordNet and NegEx
(``scripts/build_negation_lexicon.py``); the tests check that the derivation gives them.
"""

from __future__ import annotations

import pytest
from caption_fixtures import parser

from fortekit.fol.caption.negation_lexicon import load_negation_lexicon


def parts(text: str) -> tuple[set[str], set[str], set[str]]:
    """(excluded, denied, asserted) predicate symbols of a parse."""
    result = parser().parse(text)
    excluded = {r.symbol for r in result.predicates if r.excluded}
    denied = {r.symbol for r in result.predicates if r.negated and not r.excluded}
    asserted = {r.symbol for r in result.predicates if not r.excluded and not r.negated}
    return excluded, denied, asserted


def _excludes(text: str, excluded: set[str], asserted: set[str]) -> None:
    got_excluded, _, got_asserted = parts(text)
    assert excluded <= got_excluded, (text, got_excluded)
    assert asserted <= got_asserted, (text, got_asserted)
    assert not excluded & got_asserted, (text, got_asserted)


# --- the derivation ------------------------------------------------------------------------------
def test_the_new_classes_come_from_wordnet_and_negex() -> None:
    lexicon = load_negation_lexicon()
    # a phrasal verb is never read as an adjective: "cut out" is no longer dropped
    assert "cut out" in lexicon.lemmas("removal_verb")
    assert {"rule out", "winnow out"} <= lexicon.lemmas("omission_verb")  # rule_out.v.03, preclude.v.02
    # the double-object frame selects the sense: "spare me B" is "relieve from an experience"
    assert "spare" in lexicon.lemmas("sparing_verb") and "give" in lexicon.lemmas("giving_verb")
    assert {"disappear", "vanish"} <= lexicon.lemmas("ceasing_verb")
    assert {"show up", "turn up", "materialize"} <= lexicon.lemmas("appearance_verb")
    assert "reveal" in lexicon.lemmas("disclosure_verb") and "look for" in lexicon.lemmas("seeking_verb")
    evidential = lexicon.lemmas("evidential_noun")
    assert {"evidence", "indication", "proof", "clue"} <= evidential
    assert not {"symptom", "cough", "sneeze", "footprint"} & evidential  # indications, not defined as one
    published = {e.lemma: e for e in lexicon.entries if e.source == "negex"}
    assert {"finding", "suggestion", "rule out", "negative for"} <= set(published)


# --- NegEx triggers -------------------------------------------------------------------------------
def test_rule_out_excludes_its_object() -> None:
    _excludes("a sitar droning that rules out a walrus bellowing", {"Walrus", "Bellowing"}, {"Sitar"})


def test_negative_for_excludes_its_object() -> None:
    _excludes("a harmonica wheezing, negative for a gong reverberating", {"Gong"}, {"Harmonica"})


@pytest.mark.parametrize(
    "text",
    [
        "a typewriter clacking with no findings of a walrus bellowing",  # NegEx, read by its lemma
        "a typewriter clacking, no suggestion of a walrus bellowing",  # NegEx
        "a typewriter clacking and no proof of a walrus bellowing",  # WordNet: "any factual evidence"
    ],
)
def test_an_evidential_noun_is_filler(text: str) -> None:
    excluded, _, asserted = parts(text)
    assert {"Walrus", "Bellowing"} <= excluded and "Typewriter" in asserted
    assert not {"Finding", "Suggestion", "Proof"} & (excluded | asserted)


# --- a negative adverbial -------------------------------------------------------------------------
def test_a_fronted_negative_adverbial_with_inversion_negates_its_clause() -> None:
    _excludes("a harmonica wheezing; at no time is there a walrus bellowing", {"Walrus"}, {"Harmonica"})
    excluded, _, _ = parts("a harmonica wheezing; at no moment are there walruses bellowing")
    assert "Walrus" in excluded and "Moment" not in excluded


def test_a_negative_adverbial_without_inversion_negates_no_clause() -> None:
    _, _, asserted = parts("in no time the typewriter starts clacking")
    assert "Typewriter" in asserted


# --- negative implicatives with a complement that entails absence ---------------------------------
def test_failing_to_reveal_excludes_the_object() -> None:
    excluded, _, asserted = parts("a gong reverberating; listening fails to reveal a walrus bellowing")
    assert {"Walrus", "Bellowing"} <= excluded and "Gong" in asserted and "Reveal" not in asserted


def test_failing_to_appear_excludes_the_subject() -> None:
    _excludes("a sitar droning, where the walrus failed to turn up", {"Walrus"}, {"Sitar"})


def test_an_implicative_of_another_verb_still_denies_it() -> None:
    _, denied, asserted = parts("a typewriter fails to clack")
    assert "Typewriter" in asserted and denied


# --- verbs of removing and sparing ---------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "a gong reverberating, eliminating a walrus bellowing",  # a free participle
        "a gong reverberating; cut out the walrus bellowing",  # an imperative (tagged as a past)
        "a gong reverberating, the walrus bellowing filtered out",  # a past read as the participle
        "a gong reverberating, and spare me the walrus bellowing",  # double object
    ],
)
def test_a_subjectless_verb_of_removing_or_sparing_excludes_its_object(text: str) -> None:
    _excludes(text, {"Walrus"}, {"Gong"})


@pytest.mark.parametrize(
    "text",
    [
        "a man walking on gravel and removing a lid with a knife",  # a conjunct shares its subject
        "removing of a lid, then clanking of a pot",  # a gerund noun
        "a gardener spares the hedge",  # one object: "refrain from harming"
    ],
)
def test_a_verb_of_removing_with_a_subject_is_an_event(text: str) -> None:
    excluded, _, _ = parts(text)
    assert not excluded, text


def test_a_resultative_verb_of_disappearing_excludes_its_subject() -> None:
    _excludes(
        "a typewriter clacking, the walrus bellowing having vanished", {"Walrus", "Bellowing"}, {"Typewriter"}
    )


# --- un- + participle + by ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "a harmonica wheezing, unspoilt by a walrus bellowing",
        "a sitar droning unmuddied by a walrus bellowing",
    ],
)
def test_a_negatively_prefixed_participle_excludes_its_agent(text: str) -> None:
    excluded, _, asserted = parts(text)
    assert {"Walrus", "Bellowing"} <= excluded and not {"By", "Walrus"} & asserted


def test_a_prefixed_participle_of_feeling_keeps_its_agent() -> None:
    excluded, _, asserted = parts("a dog sleeping, unfazed by a walrus bellowing")
    assert "Walrus" in asserted and not excluded


# --- negated seeking and giving -------------------------------------------------------------------
def test_a_negated_verb_of_seeking_excludes_its_object() -> None:
    _excludes("a sitar droning, not looking for a walrus bellowing", {"Walrus"}, {"Sitar"})


def test_a_negated_verb_of_giving_to_the_speaker_excludes_its_object() -> None:
    _excludes("a sitar droning, don't give me a walrus bellowing", {"Walrus"}, {"Sitar"})


# --- controls: words of distance are no cues ------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "a harmonica wheezing while walruses are bellowing out on the ice",
        "a harmonica wheezing, and a walrus bellowing across the bay",
        "a harmonica wheezing; a walrus bellowing a great way off",
        "a harmonica wheezing, a walrus bellowing away in the distance",
        "a harmonica wheezing, with a walrus bellowing some way away",
    ],
)
def test_a_sound_at_a_distance_is_asserted(text: str) -> None:
    excluded, denied, asserted = parts(text)
    assert {"Harmonica", "Walrus", "Bellowing"} <= asserted and not excluded and not denied, text
