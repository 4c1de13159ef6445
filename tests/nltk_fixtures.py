"""Reading NLTK's logic back as fortekit formulas: shared by the printer and property tests."""

from __future__ import annotations

from nltk.sem import logic as nltk_logic

from fortekit.fol import (
    And,
    Atom,
    Const,
    Eq,
    Formula,
    Func,
    Iff,
    Implies,
    Not,
    Or,
    Quant,
    Quantifier,
    Term,
    Var,
    Xor,
)
from fortekit.fol.ast import children, is_variable_name
from fortekit.fol.terms import rebind_constant


def as_nltk_reads_it(phi: Formula) -> Formula:
    """The formula the NLTK printer writes: ⊕ and ∈-restricted quantifiers rewritten."""
    if isinstance(phi, Xor):
        return Not(Iff(as_nltk_reads_it(phi.left), as_nltk_reads_it(phi.right)))
    if isinstance(phi, Quant):
        body = as_nltk_reads_it(phi.body)
        if phi.domain is not None:
            member = Atom("Member", (phi.variable, phi.domain))
            body = Implies(member, body) if phi.quantifier is Quantifier.FORALL else And((member, body))
        return Quant(phi.quantifier, phi.variable, body)
    if isinstance(phi, Not):
        return Not(as_nltk_reads_it(phi.body))
    if isinstance(phi, (And, Or)):
        return type(phi)(tuple(as_nltk_reads_it(op) for op in phi.operands))
    if isinstance(phi, Implies):
        return Implies(as_nltk_reads_it(phi.antecedent), as_nltk_reads_it(phi.consequent))
    if isinstance(phi, Iff):
        return Iff(as_nltk_reads_it(phi.left), as_nltk_reads_it(phi.right))
    assert not children(phi)
    return phi


def _nltk_term(expression: object) -> Term:
    if isinstance(expression, nltk_logic.ApplicationExpression):
        function, args = expression.uncurry()
        return Func(_unescape(str(function)), tuple(_nltk_term(arg) for arg in args))
    name = _unescape(str(expression))
    return Var(name) if is_variable_name(name) else Const(name)


def _unescape(name: str) -> str:
    return name.translate(str.maketrans({"‐": "-", "․": ".", "·": " "}))


def from_nltk(expression: object, bound: frozenset[str] = frozenset()) -> Formula:
    """An NLTK logic expression as a fortekit formula (for comparing the two readers)."""
    logic = nltk_logic
    if isinstance(expression, logic.AllExpression | logic.ExistsExpression):
        name = _unescape(str(expression.variable))
        kind = Quantifier.FORALL if isinstance(expression, logic.AllExpression) else Quantifier.EXISTS
        body = from_nltk(expression.term, bound | {name})
        if not is_variable_name(name):
            body = rebind_constant(body, name)
        return Quant(kind, Var(name), body)
    if isinstance(expression, logic.NegatedExpression):
        return Not(from_nltk(expression.term, bound))
    if isinstance(expression, logic.EqualityExpression):
        return Eq(_nltk_term(expression.first), _nltk_term(expression.second))
    binary = {
        logic.AndExpression: "and",
        logic.OrExpression: "or",
        logic.ImpExpression: "imp",
        logic.IffExpression: "iff",
    }
    for cls, kind in binary.items():
        if isinstance(expression, cls):
            left, right = from_nltk(expression.first, bound), from_nltk(expression.second, bound)
            if kind == "and":
                return And((left, right))
            if kind == "or":
                return Or((left, right))
            return Implies(left, right) if kind == "imp" else Iff(left, right)
    if isinstance(expression, logic.ApplicationExpression):
        function, args = expression.uncurry()
        return Atom(_unescape(str(function)), tuple(_nltk_term(arg) for arg in args))
    return Atom(_unescape(str(expression)))
