"""Negation that scopes over what is excluded, and coordination that keeps entities apart.

An entity a negation denies ("without N", "no N", "excluding N", "except for N",
"free of N", "nothing like N", "not N") is a clause of its own, ``¬∃y [..]``, whose
literals are positive; asserted entities stay under the outer ∃ (docs/annotation.md
"Negation"). Coordinated entities ("A and B", "A together with B", "A as well as B")
keep their own predicates and get no relation.
"""

from __future__ import annotations

import pytest
from caption_fixtures import parser

from fortekit.errors import OperatorError
from fortekit.fol import (
    Not,
    Polarity,
    Quant,
    Var,
    format_formula,
    o_attr,
    o_neg,
    o_rel,
    parse_formula,
    predicates,
)
from fortekit.fol.canonical import canonical
from fortekit.fol.caption.scoring import Scorer
from fortekit.verbalise import verbalise

EXPECTED = [
    # the examples
    ("a dog barking without people talking", "∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]"),
    ("birds chirping, excluding traffic", "∃x [Bird(x) ∧ Chirping(x) ∧ ¬∃y Traffic(y)]"),
    ("a crowd cheering with no sound of music", "∃x [Crowd(x) ∧ Cheering(x) ∧ ¬∃y Music(y)]"),
    ("music playing and nothing like speech", "∃x [Music(x) ∧ Playing(x) ∧ ¬∃y Speech(y)]"),
    ("only birds, not traffic", "∃x [Bird(x) ∧ ¬∃y Traffic(y)]"),
    # ', not N' after a clause with its own event ('contrastive-not' repair)
    ("only rain falling, not thunder", "∃x [Rain(x) ∧ Falling(x) ∧ ¬∃y Thunder(y)]"),
    ("only people talking, not music", "∃x [Person(x) ∧ Talking(x) ∧ ¬∃y Music(y)]"),
    ("only a piano playing, not a violin", "∃x [Piano(x) ∧ Playing(x) ∧ ¬∃y Violin(y)]"),
    ("only footsteps, not voices", "∃x [Footstep(x) ∧ ¬∃y Voice(y)]"),
    ("an engine running with no a horn", "∃x [Engine(x) ∧ Running(x) ∧ ¬∃y Horn(y)]"),
    ("people talking, and no wind at all", "∃x [Person(x) ∧ Talking(x) ∧ ¬∃y Wind(y)]"),
    ("insects buzzing, and no an aircraft at all", "∃x [Insect(x) ∧ Buzzing(x) ∧ ¬∃y Aircraft(y)]"),
    ("wind blowing with no an aircraft", "∃x [Wind(x) ∧ Blowing(x) ∧ ¬∃y Aircraft(y)]"),
    ("people talking with no water", "∃x [Person(x) ∧ Talking(x) ∧ ¬∃y Water(y)]"),
    ("a dog barking but no music", "∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y Music(y)]"),
    ("rain falling but there is no thunder", "∃x [Rain(x) ∧ Falling(x) ∧ ¬∃y Thunder(y)]"),
    ("a crowd, and no vehicles passing at all", "∃x [Crowd(x) ∧ ¬∃y [Vehicle(y) ∧ Passing(y)]]"),
    ("a car passing by without any horns honking", "∃x [Car(x) ∧ Passing(x) ∧ ¬∃y [Horn(y) ∧ Honking(y)]]"),
    ("a dog barks and nobody talks", "∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Someone(y) ∧ Talking(y)]]"),
    ("birds chirping except for cars", "∃x [Bird(x) ∧ Chirping(x) ∧ ¬∃y Car(y)]"),
    ("a quiet forest free of traffic noise", "∃x [Quiet(x) ∧ Forest(x) ∧ ¬∃y TrafficNoise(y)]"),
    ("a street with traffic but no sirens", "∃x ∃y [Street(x) ∧ With(x, y) ∧ Traffic(y) ∧ ¬∃z Siren(z)]"),
    ("a baby crying without people talking", "∃x [Baby(x) ∧ Crying(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]"),
    # a literal negation of an asserted entity's property stays literal
    ("water flowing, not dripping", "∃x [Water(x) ∧ Flowing(x) ∧ ¬Dripping(x)]"),
    ("a train passes without stopping", "∃x [Train(x) ∧ Passing(x) ∧ ¬Stopping(x)]"),
    # other concepts and wordings
    ("a cat meowing without any dogs", "∃x [Cat(x) ∧ Meowing(x) ∧ ¬∃y Dog(y)]"),
    ("an engine idling, excluding horns", "∃x [Engine(x) ∧ Idling(x) ∧ ¬∃y Horn(y)]"),
    ("only water, not wind", "∃x [Water(x) ∧ ¬∃y Wind(y)]"),
    ("birds chirping, and no music whatsoever", "∃x [Bird(x) ∧ Chirping(x) ∧ ¬∃y Music(y)]"),
    ("a room devoid of voices", "∃x [Room(x) ∧ ¬∃y Voice(y)]"),
    ("a dog barking with no people talking", "∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]"),
    ("a forest without wind or rain", "∃x [Forest(x) ∧ ¬∃y Wind(y) ∧ ¬∃z Rain(z)]"),
    ("no birds are chirping", "¬∃x [Bird(x) ∧ Chirping(x)]"),
    # coordination: each entity its own predicates, no co-occurrence relation
    ("music playing together with wind blowing", "∃x ∃y [Music(x) ∧ Playing(x) ∧ Wind(y) ∧ Blowing(y)]"),
    (
        "a door opening and closing and water flowing",
        "∃x ∃y [Door(x) ∧ Opening(x) ∧ Closing(x) ∧ Water(y) ∧ Flowing(y)]",
    ),
    ("rain falling as well as thunder", "∃x ∃y [Rain(x) ∧ Falling(x) ∧ Thunder(y)]"),
    ("thunder as well as rain", "∃x ∃y [Thunder(x) ∧ Rain(y)]"),
    ("a piano together with a violin", "∃x ∃y [Piano(x) ∧ Violin(y)]"),
    # shapes the small model mis-parses (repairs interjection-no, compound-before-verb,
    # coordinated-subject) and the repeated bare plural subject (a new group)
    ("birds chirping but no a baby", "∃x [Bird(x) ∧ Chirping(x) ∧ ¬∃y Baby(y)]"),
    ("a machine running but no a door", "∃x [Machine(x) ∧ Running(x) ∧ ¬∃y Door(y)]"),
    ("a train passing but no a door", "∃x [Train(x) ∧ Passing(x) ∧ ¬∃y Door(y)]"),
    ("people talking but no a baby", "∃x [Person(x) ∧ Talking(x) ∧ ¬∃y Baby(y)]"),
    ("dogs barking but no a cat", "∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y Cat(y)]"),
    ("bells ringing but no birds chirping", "∃x [Bell(x) ∧ Ringing(x) ∧ ¬∃y [Bird(y) ∧ Chirping(y)]]"),
    ("insects buzzing with no birds chirping", "∃x [Insect(x) ∧ Buzzing(x) ∧ ¬∃y [Bird(y) ∧ Chirping(y)]]"),
    ("a siren wailing but no birds chirping", "∃x [Siren(x) ∧ Wailing(x) ∧ ¬∃y [Bird(y) ∧ Chirping(y)]]"),
    (
        "vehicles passing by but no birds chirping",
        "∃x [Vehicle(x) ∧ Passing(x) ∧ ¬∃y [Bird(y) ∧ Chirping(y)]]",
    ),
    ("rain falling but no thunder rumbling", "∃x [Rain(x) ∧ Falling(x) ∧ ¬∃y [Thunder(y) ∧ Rumbling(y)]]"),
    (
        "people talking, and no a dog barking at all",
        "∃x [Person(x) ∧ Talking(x) ∧ ¬∃y [Dog(y) ∧ Barking(y)]]",
    ),
    ("wind blowing, and no a dog barking at all", "∃x [Wind(x) ∧ Blowing(x) ∧ ¬∃y [Dog(y) ∧ Barking(y)]]"),
    ("people talking and a horn honking", "∃x ∃y [Person(x) ∧ Talking(x) ∧ Horn(y) ∧ Honking(y)]"),
    ("a bell ringing and a dog barking", "∃x ∃y [Bell(x) ∧ Ringing(x) ∧ Dog(y) ∧ Barking(y)]"),
    ("a drill whirring and a hammer banging", "∃x ∃y [Drill(x) ∧ Whirring(x) ∧ Hammer(y) ∧ Bang(y)]"),
    (
        "an aircraft flying overhead and insects buzzing",
        "∃x ∃y [Aircraft(x) ∧ Flying(x) ∧ Overhead(x) ∧ Insect(y) ∧ Buzzing(y)]",
    ),
    ("thunder rumbling and rain falling", "∃x ∃y [Thunder(x) ∧ Rumbling(x) ∧ Rain(y) ∧ Falling(y)]"),
    ("people laughing and people clapping", "∃x ∃y [Person(x) ∧ Laughing(x) ∧ Person(y) ∧ Clapping(y)]"),
    ("children shouting and children singing", "∃x ∃y [Child(x) ∧ Shouting(x) ∧ Child(y) ∧ Singing(y)]"),
    ("a car passes and the car stops", "∃x [Car(x) ∧ Passing(x) ∧ Stopping(x)]"),  # coreference stays
    (
        "a crowd cheering with music in the background",  # plain 'with' keeps its relation
        "∃x ∃y [Crowd(x) ∧ Cheering(x) ∧ With(x, y) ∧ Music(y) ∧ Background(x)]",
    ),
]


@pytest.mark.parametrize(("caption", "formula"), EXPECTED)
def test_exact_formula(caption: str, formula: str) -> None:
    assert str(parser().parse(caption).formula) == formula


def test_no_people_talking_while_a_dog_barks() -> None:
    # The denied clause says what 'while' would add: no While to a denied entity.
    phi = parser().parse("no people are talking while a dog barks").formula
    assert canonical(phi) == canonical(
        parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]")
    )


def test_records_of_a_denied_clause_are_excluded_not_negated() -> None:
    result = parser().parse("a dog barking without people talking")
    assert [(r.symbol, r.args, r.negated, r.excluded) for r in result.predicates] == [
        ("Dog", ("x",), False, False),
        ("Barking", ("x",), False, False),
        ("Person", ("y",), False, True),
        ("Talking", ("y",), False, True),
    ]
    # the excluded head's provenance is the cue class that excluded it (grammars/negation.toml)
    assert [r.rule for r in result.predicates][2] == "scope-privative-preposition"


def test_a_denied_object_keeps_its_verb_inside_the_clause() -> None:
    phi = parser().parse("a machine is detecting nothing").formula
    assert str(phi) == "∃x [Machine(x) ∧ ¬∃y [Detect(x, y) ∧ Something(y)]]"


def test_polarity_under_the_denied_clause() -> None:
    phi = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]")
    assert {(p.name, p.polarity) for p in predicates(phi)} == {
        ("Dog", Polarity.POSITIVE),
        ("Barking", Polarity.POSITIVE),
        ("Person", Polarity.NEGATIVE),
        ("Talking", Polarity.NEGATIVE),
    }


@pytest.mark.parametrize("style", ["unicode", "ascii", "nltk"])
def test_printers_round_trip(style: str) -> None:
    phi = parser().parse("a dog barking without people talking but no music").formula
    assert parse_formula(format_formula(phi, style)) == phi
    assert "Person" in format_formula(phi, "latex")


def test_scoring_reads_the_clause_as_negated() -> None:
    gold = parse_formula("Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]")
    predicted = parser().parse("a dog barking without people talking").formula
    score = Scorer(vocabulary=None).score([gold], [predicted])
    assert score.negation.f1 == 1.0 and score.exact_match == 1.0


@pytest.mark.parametrize(
    "caption",
    [
        "a dog barking without people talking",
        "birds chirping, excluding traffic",
        "a car passing by without any horns honking",
        "a street with traffic but no sirens",
        "a forest without wind or rain",
        "only water, not wind",
        "no birds are chirping",
        "a dog barks and nobody talks",
        "A detector device is operating and detecting nothing",
    ],
)
def test_verbaliser_round_trip(caption: str) -> None:
    phi = parser().parse(caption).formula
    text = verbalise(phi)
    assert canonical(parser().parse(text).formula) == canonical(phi), text


def test_verbaliser_says_the_clause() -> None:
    phi = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]")
    assert verbalise(phi) == "a dog barking, without a person talking"


def test_operators_attach_to_asserted_entities() -> None:
    phi = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]")
    assert str(o_attr(phi, "Loud")) == "∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)] ∧ Loud(x)]"
    negated = "∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)] ∧ ¬Howling(x)]"
    assert str(o_neg(phi, "Howling")) == negated
    rel = o_rel(phi, "In", "Room")
    assert isinstance(rel, Quant) and [p.name for p in predicates(rel)].count("In") == 1
    assert "Room(y1) ∧ In(x, y1)" in str(rel)  # a fresh variable, never the clause's y
    with pytest.raises(OperatorError, match="E008"):
        o_attr(phi, "Loud", Var("y"))
    assert isinstance(phi, Quant) and isinstance(phi.body.operands[2], Not)  # type: ignore[attr-defined]
