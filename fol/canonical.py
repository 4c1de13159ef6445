"""A canonical form, so that formulas equal up to ∧/∨ order are de-duplicated.

``canonical`` sorts the operands of ∧ and ∨, drops repeated operands, and sorts
runs of nested unrestricted quantifiers of one kind by variable name (``∃x ∃t``
becomes ``∃t ∃x``). Two formulas with the same canonical form are logically
equivalent; the converse does not hold (no alpha-renaming).

Example:
    >>> from fortekit.fol import parse_formula
    >>> first = parse_formula("Loud(x) ∧ Bird(x) ∧ Loud(x)")
    >>> canonical(first) == canonical(parse_formula("Bird(x) ∧ Loud(x)"))
    True
"""

from __future__ import annotations

from fortekit.fol.ast import And, Atom, Eq, Formula, Iff, Implies, Not, Or, Quant, Xor, check_formula
from fortekit.fol.printers import format_formula


def sort_key(phi: Formula) -> tuple[int, str]:
    """A total order on formulas: atoms first, then by their Unicode text."""
    rank = 0 if isinstance(phi, (Atom, Eq)) else 1 if isinstance(phi, Not) else 2
    return rank, format_formula(phi)


def _unique_sorted(operands: tuple[Formula, ...]) -> tuple[Formula, ...]:
    return tuple(sorted(set(operands), key=sort_key))


def canonical(phi: Formula) -> Formula:
    """The canonical representative of ``phi`` (see the module docstring).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> str(canonical(parse_formula("∃x ∃t [Morning(t) ∧ Bird(x)]")))
        '∃t ∃x [Bird(x) ∧ Morning(t)]'
    """
    if isinstance(phi, (Atom, Eq)):
        return phi
    if isinstance(phi, Not):
        return Not(canonical(phi.body))
    if isinstance(phi, (And, Or)):
        operands = _unique_sorted(tuple(canonical(op) for op in phi.operands))
        if len(operands) == 1:
            return operands[0]
        return And(operands) if isinstance(phi, And) else Or(operands)
    if isinstance(phi, Implies):
        return Implies(canonical(phi.antecedent), canonical(phi.consequent))
    if isinstance(phi, Iff):
        return Iff(canonical(phi.left), canonical(phi.right))
    if isinstance(phi, Xor):
        return Xor(canonical(phi.left), canonical(phi.right))
    if not isinstance(phi, Quant):  # the last case: anything else is no formula (None, a str)
        check_formula(phi, "canonical")
    return _canonical_quantifiers(phi)


def _canonical_quantifiers(phi: Quant) -> Formula:
    run: list[Quant] = []
    node: Formula = phi
    while (
        isinstance(node, Quant)
        and node.quantifier is phi.quantifier
        and node.domain is None
        and node.variable not in {q.variable for q in run}
    ):
        run.append(node)
        node = node.body
    if not run:  # a restricted quantifier starts no run
        assert isinstance(phi, Quant)
        return Quant(phi.quantifier, phi.variable, canonical(phi.body), phi.domain)
    body = canonical(node)
    for quant in sorted(run, key=lambda q: q.variable.name, reverse=True):
        body = Quant(quant.quantifier, quant.variable, body)
    return body
