"""Event terms (issue 17, item 2): an order between two events of one entity links events."""

from __future__ import annotations

import csv
import re

import pytest
from caption_fixtures import CLOTHO_DEV, parser, require

from fortekit.fol import Atom, is_event_variable, parse_formula, predicates
from fortekit.fol.ast import children
from fortekit.fol.caption import parse_captions
from fortekit.fol.caption.scoring import Scorer
from fortekit.search.formula.clauses import split_clauses
from fortekit.verbalise import verbalise

_ORDERS = frozenset({"Before", "While", "After"})


@pytest.mark.parametrize(
    ("caption", "formula"),
    [
        (
            "A machine is pumping at a steady pace and then it slows down",
            "∃x ∃e1 ∃y ∃e2 [Machine(x) ∧ Pumping(e1, x) ∧ At(x, y) ∧ Steady(y) ∧ Pace(y) ∧ Before(e1, e2)"
            " ∧ Slowing(e2, x)]",
        ),
        (
            "a train approaches, passes and then moves off",
            "∃x ∃e1 ∃e2 [Train(x) ∧ Approaching(x) ∧ Passing(e1, x) ∧ Before(e1, e2) ∧ Moving(e2, x)]",
        ),
        (
            "a machine whines and squeals while punching",
            "∃x ∃e1 ∃e2 [Machine(x) ∧ Whining(e1, x) ∧ Squealing(x) ∧ While(e1, e2) ∧ Punching(e2, x)]",
        ),
        (
            "A man opens a door and then closes it",
            "∃x ∃e1 ∃y ∃e2 [Man(x) ∧ Opening(e1, x, y) ∧ Door(y) ∧ Before(e1, e2) ∧ Closing(e2, x, y)]",
        ),
        # orders between two entities keep their entity terms, verbs stay unary
        ("a dog barks while a car passes", "∃x ∃y [Dog(x) ∧ Barking(x) ∧ While(x, y) ∧ Car(y) ∧ Passing(y)]"),
    ],
)
def test_event_terms(caption: str, formula: str) -> None:
    assert str(parser().parse(caption).formula) == formula


def test_pred_sees_event_predicates_as_their_verbs() -> None:
    phi = parser().parse("A machine is pumping and then it slows down").formula
    assert {str(s) for s in predicates(phi)} == {"Machine/1", "Pumping/1", "Before/2", "Slowing/1"}
    assert predicates(parse_formula("Machine(x) ∧ Pumping(x) ∧ Slowing(x)")) <= predicates(phi)


def test_verbaliser_says_the_events_in_order() -> None:
    phi = parse_formula("∃x ∃e1 ∃e2 [Machine(x) ∧ Slowing(e2, x) ∧ Pumping(e1, x) ∧ Before(e1, e2)]")
    assert verbalise(phi) == "a machine pumping and then slowing"
    back = parser().parse(verbalise(phi)).formula
    assert {s.name for s in predicates(back)} >= {"Machine", "Pumping", "Slowing", "Before"}
    phi = parse_formula("∃x ∃e1 ∃y ∃e2 ∃z [Water(x) ∧ Dripping(e1, x) ∧ From(x, y) ∧ Gutter(y)"
                        " ∧ Before(e1, e2) ∧ Hitting(e2, x, z) ∧ Metal(z)]")
    assert verbalise(phi) == "water dripping from a gutter, and then hitting metal"
    said = verbalise(parse_formula("Dog(x) ∧ Barking(e1, x) ∧ While(e1, e2) ∧ Growling(e2, x)"))
    assert said == "a dog barking while growling"


def test_scoring_reads_event_terms_as_their_entities() -> None:
    gold = parse_formula("Metal(x) ∧ Bar(x) ∧ Drop(x) ∧ Before(x, x)")
    found = parse_formula(
        "∃x ∃e1 ∃e2 [Metal(x) ∧ Bar(x) ∧ Dropping(e1, x) ∧ Before(e1, e2) ∧ Dropping(e2, x)]"
    )
    score = Scorer(vocabulary=None).score([gold], [found])
    assert (score.unary.f1, score.relation.f1, score.exact_match) == (1.0, 1.0, 1.0)


def test_formula_scoring_keeps_an_entity_and_its_events_in_one_clause() -> None:
    phi = parse_formula("∃x ∃e1 ∃e2 [Machine(x) ∧ Pumping(e1, x) ∧ Before(e1, e2) ∧ Slowing(e2, x)]")
    assert str(split_clauses(phi)).count("(∃") == 1


@pytest.mark.parametrize(
    ("caption", "formula"),
    [
        # a reciprocal says no relation (docs/annotation.md "Reciprocals and reflexives")
        ("People are talking to each other on the radio.",
         "∃x ∃y [Person(x) ∧ Talking(x) ∧ On(x, y) ∧ Radio(y)]"),
        ("A crowd of people are talking and shouting over each other.",
         "∃x [Crowd(x) ∧ Person(x) ∧ Talking(x) ∧ Shouting(x)]"),
        # nor does a reflexive object
        ("A cat licks itself", "∃x [Cat(x) ∧ Licking(x)]"),
        # a noun repeated in its own phrase is a second entity
        ("Metal scraping against metal.", "∃x ∃y [Metal(x) ∧ Scrape(x) ∧ Against(x, y) ∧ Metal(y)]"),
        ("A hard object pulling and prying on hard wooden object.",
         "∃x ∃y [Hard(x) ∧ Object(x) ∧ Pulling(x) ∧ Pry(x) ∧ On(x, y) ∧ Hard(y) ∧ Wooden(y) ∧ Object(y)]"),
        # while a repeated noun with 'the' is still the same entity
        ("A car passes and then the car honks",
         "∃x ∃e1 ∃e2 [Car(x) ∧ Passing(e1, x) ∧ Before(e1, e2) ∧ Honking(e2, x)]"),
    ],
)
def test_no_relation_of_an_entity_to_itself(caption: str, formula: str) -> None:
    assert str(parser().parse(caption).formula) == formula


def test_scoring_reads_an_old_reciprocal_as_no_relation() -> None:
    gold = parse_formula("Person(x) ∧ Talk(x) ∧ To(x, x)")  # the guideline before issue 17
    found = parser().parse("people talking to each other").formula
    score = Scorer(vocabulary=None).score([gold], [found])
    assert (score.unary.f1, score.exact_match) == (1.0, 1.0)
    assert score.relation.gold == 0 and score.relation.predicted == 0


def _atoms(phi):  # type: ignore[no-untyped-def]
    if isinstance(phi, Atom):
        yield phi
    for child in children(phi) if not isinstance(phi, Atom) else ():
        yield from _atoms(child)


def test_no_relation_relates_a_term_to_itself_on_clotho_development() -> None:
    """No atom of the 14,465 Clotho development parses has the same term twice (issue 17).

    Not an order between two events of one entity (``Before(x, x)``), not a reciprocal
    (``To(x, x)`` for "talk to each other"), not a reflexive, not a repeated noun
    ("metal scraping against metal"), not an attachment error; every Before/While/After
    links two different terms. Skipped, with the reason, where ../shared is absent.
    """
    path = require(CLOTHO_DEV, "Clotho development captions")
    with path.open(encoding="utf-8") as handle:
        captions = [row[f"caption_{i}"] for row in csv.DictReader(handle) for i in range(1, 6)]
    assert len(captions) == 14465
    orders = events = 0
    repeated: list[str] = []
    for caption, result in zip(captions, parse_captions(captions), strict=True):
        for atom in _atoms(result.formula):
            if len(set(atom.args)) < len(atom.args):
                repeated.append(f"{caption!r}: {atom}")
            if atom.predicate in _ORDERS and len(atom.args) == 2:
                orders += 1
                events += all(is_event_variable(arg) for arg in atom.args)
            if len(atom.args) >= 2 and is_event_variable(atom.args[0]):
                assert re.fullmatch(r"e[1-9][0-9]*", atom.args[0].name)
    assert repeated == [], f"{len(repeated)} atoms with a term twice, e.g. {repeated[:5]}"
    assert events >= 1500  # 1,642 orders between events of one entity (2026-11-25)
    assert orders > events


def test_stage1_treats_an_event_predicate_as_a_property_of_its_entity() -> None:
    """Stage 1 tells properties from relations by participants: 'Pumping(e1, x)' is a sound of x."""
    from fortekit.search.stage1.corpus_elaborator import descriptors_of, neighbour_pools
    from fortekit.search.stage1.pools import candidate_pools, relation_pairs

    caption = parser().parse("a machine is pumping at a steady pace and then it slows down")
    pumping = next(record for record in caption.predicates if record.symbol == "Pumping")
    assert (pumping.args, pumping.participants) == (("e1", "x"), ("x",))
    machine = parser().parse("a machine")
    # what a positive elaboration's machine does is a candidate attribute, as 'Pumping(x)' would be
    assert "Pumping" in candidate_pools(machine, [caption], []).attributes
    # a near miss's pumping machine is a sound the query could deny
    assert "Pumping" in neighbour_pools(machine, [], [caption]).negations
    # the order between the two events is no (relation, place) pair
    assert relation_pairs(caption) == []
    said = parser().parse("a loud pump is pumping and then it slows down")
    assert descriptors_of(said) == ["Loud", "Slowing"]


def test_operators_and_clauses_read_an_event_predicate_as_said_of_its_entity() -> None:
    from fortekit.fol.operators import entity_variables, o_attr

    phi = parse_formula("∃x ∃e1 ∃e2 [Pumping(e1, x) ∧ Before(e1, e2) ∧ Slowing(e2, x)]")
    assert [v.name for v in entity_variables(phi)] == ["x"]
    assert "Loud(x)" in str(o_attr(phi, "Loud"))
    denied = parser().parse("a machine is not pumping and then it slows down").formula
    assert "¬Pumping(e1, x)" in str(denied)
    assert "¬(∃x ∃e1 [Machine(x) ∧ Pumping(e1, x)])" in str(split_clauses(denied))
