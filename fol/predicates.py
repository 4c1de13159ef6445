"""``Pred(φ)``: the predicate symbols of a formula, and the invariant set C.

A symbol is its name, arity (an event predicate's without its event argument,
:mod:`fortekit.fol.events`) and polarity: ``¬Shouting(x)`` contributes
``¬Shouting/1``, which is not the same symbol as ``Shouting/1``. Polarity follows
the usual rule: it flips under ¬ and in the antecedent of →, and both sides of
↔ and ⊕ count with both polarities.

Example:
    >>> from fortekit.fol import parse_formula
    >>> sorted(map(str, predicates(parse_formula("Wind(x) ∧ Blowing(x) ∧ ¬Rain(y)"))))
    ['Blowing/1', 'Wind/1', '¬Rain/1']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from fortekit.fol.ast import And, Atom, Eq, Formula, Iff, Implies, Not, Or, Quant, Xor, check_formula
from fortekit.fol.events import participant_arity


class Polarity(StrEnum):
    """Whether a predicate occurs asserted or denied."""

    POSITIVE = "+"
    NEGATIVE = "-"

    def flipped(self) -> Polarity:
        return Polarity.NEGATIVE if self is Polarity.POSITIVE else Polarity.POSITIVE


@dataclass(frozen=True, slots=True, order=True)
class PredicateSymbol:
    """A predicate symbol of ``Pred(φ)``: name, arity and polarity."""

    name: str
    arity: int
    polarity: Polarity = Polarity.POSITIVE

    @property
    def negated(self) -> bool:
        return self.polarity is Polarity.NEGATIVE

    def __str__(self) -> str:
        return f"{'¬' if self.negated else ''}{self.name}/{self.arity}"


def _occurrences(
    phi: Formula, polarity: Polarity, doubled: bool = False
) -> Iterator[tuple[Atom, Polarity]]:
    # ``doubled``: an enclosing ↔ or ⊕ already visits this sub-formula with both
    # polarities, so a nested one need not double it again (2^depth visits otherwise).
    if isinstance(phi, Atom):
        yield phi, polarity
    elif isinstance(phi, Eq):
        return
    elif isinstance(phi, Not):
        yield from _occurrences(phi.body, polarity.flipped(), doubled)
    elif isinstance(phi, (And, Or)):
        for operand in phi.operands:
            yield from _occurrences(operand, polarity, doubled)
    elif isinstance(phi, Implies):
        yield from _occurrences(phi.antecedent, polarity.flipped(), doubled)
        yield from _occurrences(phi.consequent, polarity, doubled)
    elif isinstance(phi, (Iff, Xor)):
        for side in (phi.left, phi.right):
            yield from _occurrences(side, polarity, True)
            if not doubled:
                yield from _occurrences(side, polarity.flipped(), True)
    elif isinstance(phi, Quant):
        yield from _occurrences(phi.body, polarity, doubled)


def atom_occurrences(phi: Formula) -> Iterator[tuple[Atom, Polarity]]:
    """Every atom of ``phi`` with its polarity, left to right (equalities excluded).

    An atom under ↔ or ⊕ comes once with each polarity (a nested ↔ or ⊕ does not
    double it again), so the cost is linear in the size of ``phi``.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> [(str(a), p.value) for a, p in atom_occurrences(parse_formula("A(x) → ¬B(x)"))]
        [('A(x)', '-'), ('B(x)', '-')]
    """
    check_formula(phi, "atom_occurrences")
    return _occurrences(phi, Polarity.POSITIVE)


def predicates(phi: Formula) -> frozenset[PredicateSymbol]:
    """``Pred(φ)``: the predicate symbols of ``phi`` with arity and polarity.

    Args:
        phi: any formula.

    Returns:
        The set of :class:`PredicateSymbol`.

    Raises:
        FormulaTypeError: (a ``TypeError``) ``phi`` is not a formula (E009). A formula string is
            refused, not parsed (it used to give an empty set): ``predicates(parse_formula(text))``.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> sorted(map(str, predicates(parse_formula("∀x (Drinks(x) → Dependent(x))"))))
        ['Dependent/1', '¬Drinks/1']

    An event predicate's arity leaves its event argument out (:mod:`fortekit.fol.events`):

        >>> sorted(map(str, predicates(parse_formula("Pumping(e1, x) ∧ Slowing(e2, x) ∧ Before(e1, e2)"))))
        ['Before/2', 'Pumping/1', 'Slowing/1']
    """
    check_formula(phi, "predicates")
    return frozenset(
        PredicateSymbol(atom.predicate, participant_arity(atom), polarity)
        for atom, polarity in _occurrences(phi, Polarity.POSITIVE)
    )


def _as_sequence(formulas: Formula | Sequence[Formula]) -> Sequence[Formula]:
    if isinstance(formulas, (list, tuple)):
        return formulas
    return (formulas,)  # type: ignore[return-value]


def _shared(formulas: Iterable[Formula], *, require_all: bool) -> frozenset[PredicateSymbol]:
    sets = [predicates(phi) for phi in formulas]
    if not sets:
        return frozenset()
    if require_all:
        return frozenset.intersection(*sets)
    return frozenset.union(*sets)


def invariant_predicates(
    phi0: Formula,
    positives: Formula | Sequence[Formula],
    negatives: Formula | Sequence[Formula],
    *,
    require_all: bool = False,
) -> frozenset[PredicateSymbol]:
    """The invariant set C = Pred(φ0) ∩ Pred(φ+) ∩ Pred(φ-), or Pred(φ0) when that is empty.

    With several elaborations (N_pos = 2, N_neg = 3), a predicate counts as shared
    by the positives when any positive has it (``require_all=False``, the default)
    or only when all of them do (``require_all=True``).

    Args:
        phi0: the parse of the query.
        positives: the parse(s) of the positive elaboration(s).
        negatives: the parse(s) of the contrastive negative(s).
        require_all: intersect within each group instead of taking the union.

    Returns:
        The predicates every refinement must keep.

    Example:
        >>> from fortekit.fol import parse_formula as p
        >>> c = invariant_predicates(p("Bird(x) ∧ Chirping(x) ∧ Morning(t)"),
        ...     [p("Bird(x) ∧ Chirping(x) ∧ Soft(x)")], [p("Bird(x) ∧ Squawking(x)")])
        >>> sorted(map(str, c))
        ['Bird/1']
    """
    base = predicates(phi0)
    shared = (
        base
        & _shared(_as_sequence(positives), require_all=require_all)
        & _shared(_as_sequence(negatives), require_all=require_all)
    )
    return shared or base


def preserves(phi: Formula, invariant: Iterable[PredicateSymbol]) -> bool:
    """Whether every predicate of ``invariant`` is still in ``Pred(phi)``."""
    return set(invariant) <= predicates(phi)
