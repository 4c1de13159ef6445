"""The operator algebra: o_attr, o_rel, o_neg, successors, and the invariant set C."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fortekit.errors import OperatorError
from fortekit.fol import (
    DEPTH_SCHEDULE,
    CandidatePools,
    PredicateSymbol,
    Var,
    canonical,
    entity_variables,
    invariant_predicates,
    o_attr,
    o_neg,
    o_rel,
    parse_formula,
    predicates,
    preserves,
    successors,
)
from fortekit.fol.predicates import Polarity

PHI0 = parse_formula("∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]")
POSITIVES = [
    parse_formula("∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Soft(x) ∧ Outdoor(t) ∧ Peaceful(x)]"),
    parse_formula("∃x ∃t [Flock(x) ∧ Bird(x) ∧ Chirping(x) ∧ Morning(t)]"),
]
NEGATIVES = [
    parse_formula("∃x [Bird(x) ∧ DistressCall(x) ∧ HighPitch(x) ∧ Loud(x)]"),
    parse_formula("∃x [Bird(x) ∧ AlarmCall(x) ∧ RapidBurst(x)]"),
    parse_formula("∃x [Bird(x) ∧ Squawking(x) ∧ Aggressive(x)]"),
]
POOLS = CandidatePools(
    attributes=("Soft", "Peaceful", "Continuous", "Soft"),
    relations=(("In", "Forest"), ("Background", "Wind"), ("In", "Forest")),
    negations=("Loud", "Squawking", "HighPitch"),
)


def test_invariant_set_of_the_papers_example() -> None:
    assert invariant_predicates(PHI0, POSITIVES, NEGATIVES) == {PredicateSymbol("Bird", 1)}
    # with one elaboration per side, as in the paper's equation
    assert invariant_predicates(PHI0, POSITIVES[1], NEGATIVES[0]) == {PredicateSymbol("Bird", 1)}


def test_invariant_set_falls_back_to_pred_phi0() -> None:
    unrelated = parse_formula("Engine(x) ∧ Idling(x)")
    assert invariant_predicates(PHI0, [unrelated], [unrelated]) == predicates(PHI0)


def test_invariant_set_respects_polarity() -> None:
    phi0 = parse_formula("Crowd(x) ∧ ¬Music(x)")
    negative = parse_formula("Crowd(x) ∧ Music(x)")
    assert invariant_predicates(phi0, [phi0], [negative]) == {PredicateSymbol("Crowd", 1)}


def test_require_all_intersects_within_each_group() -> None:
    assert invariant_predicates(PHI0, POSITIVES, NEGATIVES, require_all=True) == {
        PredicateSymbol("Bird", 1)
    }
    negatives = [NEGATIVES[0], parse_formula("Bird(x) ∧ Chirping(x)")]
    c_any = invariant_predicates(PHI0, POSITIVES, negatives)
    c_all = invariant_predicates(PHI0, POSITIVES, negatives, require_all=True)
    assert c_any == {PredicateSymbol("Bird", 1), PredicateSymbol("Chirping", 1)}
    assert c_all == {PredicateSymbol("Bird", 1)}


def test_predicates_polarity() -> None:
    symbols = predicates(parse_formula("∀x (Drinks(x) → Dependent(x)) ∧ (A(y) ↔ B(y))"))
    assert PredicateSymbol("Drinks", 1, Polarity.NEGATIVE) in symbols
    assert PredicateSymbol("Dependent", 1) in symbols
    assert {PredicateSymbol("A", 1), PredicateSymbol("A", 1, Polarity.NEGATIVE)} <= symbols


def test_operators_add_to_the_matrix_and_quantify_new_entities() -> None:
    assert str(o_attr(PHI0, "Soft")) == "∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t) ∧ Soft(x)]"
    assert str(o_rel(PHI0, "In", "Forest")) == (
        "∃x ∃t ∃y [Bird(x) ∧ Chirping(x) ∧ Morning(t) ∧ Forest(y) ∧ In(x, y)]"
    )
    assert str(o_neg(PHI0, "Loud")) == "∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t) ∧ ¬Loud(x)]"
    assert str(o_attr(PHI0, "Early", Var("t"))).endswith("Early(t)]")


def test_operators_on_free_variable_formulas_stay_open() -> None:
    phi = parse_formula("Rain(x) ∧ Falling(x)")
    assert str(o_rel(phi, "On", "MetalRoof")) == "Rain(x) ∧ Falling(x) ∧ MetalRoof(y) ∧ On(x, y)"
    twice = o_rel(o_rel(phi, "On", "MetalRoof"), "Near", "Gutter")
    assert str(twice).endswith("Gutter(y1) ∧ Near(x, y1)")


def test_operators_are_idempotent_where_it_makes_sense() -> None:
    once = o_attr(PHI0, "Soft")
    assert o_attr(once, "Soft") == once
    assert o_neg(o_neg(PHI0, "Loud"), "Loud") == o_neg(PHI0, "Loud")


def test_operators_need_an_entity() -> None:
    with pytest.raises(OperatorError, match="E007"):
        o_attr(parse_formula("Raining"), "Heavy")
    assert successors(parse_formula("Raining"), 1, POOLS) == []


def test_entity_variables_ignore_variables_bound_deeper() -> None:
    phi = parse_formula("Dog(x) ∧ ∀y (Cat(y) → Chases(x, y))")
    assert entity_variables(phi) == (Var("x"),)


def test_depth_schedule_is_the_papers() -> None:
    assert dict(DEPTH_SCHEDULE) == {1: ("attr",), 2: ("rel",), 3: ("neg",), 4: ("neg",)}
    assert {s.operator for s in successors(PHI0, 1, POOLS)} == {"attr"}
    assert {s.operator for s in successors(PHI0, 2, POOLS)} == {"rel"}
    assert {s.operator for s in successors(PHI0, 3, POOLS)} == {"neg"}
    assert successors(PHI0, 5, POOLS) == []


def test_successors_are_deduplicated_and_skip_what_is_already_said() -> None:
    kids = successors(PHI0, 1, POOLS)
    assert [k.argument for k in kids] == [("Soft",), ("Peaceful",), ("Continuous",)]
    rels = successors(PHI0, 2, POOLS)
    assert [k.argument for k in rels] == [("In", "Forest"), ("Background", "Wind")]
    said = o_attr(PHI0, "Loud")
    assert ("Loud",) not in [k.argument for k in successors(said, 3, POOLS)]  # no contradiction
    assert len({canonical(k.formula) for k in kids}) == len(kids)


def test_unknown_operator_in_schedule() -> None:
    with pytest.raises(OperatorError, match="attr, rel, neg"):
        successors(PHI0, 1, POOLS, schedule={1: ("swap",)})


def _expand_to_depth(phi, invariant, depth: int, pools: CandidatePools):  # type: ignore[no-untyped-def]
    frontier = [phi]
    for level in range(1, depth + 1):
        frontier = [
            kid.formula
            for node in frontier
            for kid in successors(node, level, pools, invariant)
        ][:200]
        yield level, frontier


def test_invariant_is_preserved_up_to_depth_4() -> None:
    invariant = invariant_predicates(PHI0, POSITIVES, NEGATIVES)
    for _level, frontier in _expand_to_depth(PHI0, invariant, 4, POOLS):
        assert frontier
        for phi in frontier:
            assert preserves(phi, invariant)
            assert predicates(PHI0) <= predicates(phi)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["attr", "rel", "neg"]), min_size=1, max_size=4),
    st.lists(st.sampled_from(["Soft", "Loud", "Distant", "Echoing", "Bird"]), min_size=4, max_size=4),
)
def test_any_operator_sequence_up_to_depth_4_keeps_c(ops: list[str], names: list[str]) -> None:
    invariant = invariant_predicates(PHI0, POSITIVES, NEGATIVES)
    phi = PHI0
    for op, name in zip(ops, itertools.cycle(names), strict=False):
        if op == "attr":
            phi = o_attr(phi, name)
        elif op == "rel":
            phi = o_rel(phi, "Near", name)
        else:
            phi = o_neg(phi, name)
        assert preserves(phi, invariant)
