"""AST nodes: immutability, hashing, canonical order, free variables, substitution, fresh names."""

from __future__ import annotations

import dataclasses

import pytest

from fortekit.fol import (
    And,
    Atom,
    Const,
    Func,
    Not,
    Quant,
    Quantifier,
    Var,
    canonical,
    conjoin,
    free_variables,
    fresh_variable,
    parse_formula,
    substitute,
)

x, y = Var("x"), Var("y")


def test_nodes_are_frozen_slotted_and_hashable() -> None:
    phi = parse_formula("∃x [Bird(x) ∧ On(x, MetalRoof(y))]")
    with pytest.raises(dataclasses.FrozenInstanceError):
        phi.body = Atom("Cat", (x,))  # type: ignore[misc]
    assert not hasattr(phi, "__dict__")
    assert {phi: 1}[parse_formula("∃x (Bird(x) ∧ On(x, MetalRoof(y)))")] == 1


def test_and_or_are_flat_and_need_two_operands() -> None:
    a, b, c = Atom("A"), Atom("B"), Atom("C")
    assert And((And((a, b)), c)) == And((a, b, c))
    with pytest.raises(ValueError):
        And((a,))
    assert conjoin(a) is a and conjoin(a, b) == And((a, b))


def test_invalid_names_are_rejected() -> None:
    for bad in ["", "Bird(x)", "a b", "-x", "all"]:
        with pytest.raises(ValueError):
            Atom(bad)
    with pytest.raises(ValueError, match="reads as a variable"):
        Const("x1")
    with pytest.raises(ValueError):
        Func("f", ())
    with pytest.raises(ValueError, match="plain name"):
        Quant(Quantifier.FORALL, x, Atom("A"), Func("f", (x,)))


def test_canonical_order_identifies_permutations_and_repeats() -> None:
    first = parse_formula("∃x ∃t [Morning(t) ∧ Chirping(x) ∧ Bird(x) ∧ Bird(x)]")
    second = parse_formula("∃t ∃x [Bird(x) ∧ Chirping(x) ∧ Morning(t)]")
    assert first != second
    assert canonical(first) == canonical(second)
    assert canonical(parse_formula("B(x) ∨ A(x)")) == canonical(parse_formula("A(x) ∨ B(x)"))
    # direction matters for →
    assert canonical(parse_formula("A → B")) != canonical(parse_formula("B → A"))


def test_free_variables_respect_binders_and_domains() -> None:
    phi = parse_formula("∃X [Flock(X) ∧ ∀x∈X Bird(x)] ∧ Near(x, y)", warn_free=False)
    assert free_variables(phi) == {x, y}
    assert free_variables(parse_formula("∀x∈z Bird(x)")) == {Var("z")}
    assert free_variables(parse_formula("∀x∈Rooms Bird(x)")) == set()  # a constant domain


def test_substitution_avoids_capture() -> None:
    phi = parse_formula("∃y Near(x, y)")
    assert str(substitute(phi, {x: y})) == "∃y1 Near(y, y1)"
    assert str(substitute(phi, {y: Const("roof")})) == "∃y Near(x, y)"  # y is bound: untouched
    assert substitute(Not(Atom("On", (x, Func("Top", (x,))))), {x: Const("roof")}) == Not(
        Atom("On", (Const("roof"), Func("Top", (Const("roof"),))))
    )


def test_fresh_variables() -> None:
    assert fresh_variable(parse_formula("Bird(x)")) == y
    assert fresh_variable(parse_formula("On(x, y) ∧ Near(y, y1)")) == Var("y2")
    assert fresh_variable(parse_formula("∃y Bird(y)"), base="y") == Var("y1")
    assert fresh_variable(avoid=[Var("e")], base="e") == Var("e1")
