"""Variables of formulas: free variables, substitution, fresh names.

Example:
    >>> from fortekit.fol import parse_formula
    >>> phi = parse_formula("∃x [Bird(x) ∧ On(x, y)]")
    >>> sorted(v.name for v in free_variables(phi))
    ['y']
    >>> str(substitute(phi, {Var("y"): Const("roof")}))
    '∃x [Bird(x) ∧ On(x, roof)]'
    >>> fresh_variable(phi).name
    'y1'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from fortekit.fol.ast import (
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
    Term,
    Var,
    Xor,
    check_formula,
    children,
)


def term_variables(term: Term) -> frozenset[Var]:
    """The variables occurring in a term."""
    if isinstance(term, Var):
        return frozenset((term,))
    if isinstance(term, Func):
        return frozenset().union(*(term_variables(arg) for arg in term.args))
    return frozenset()


def free_variables(phi: Formula) -> frozenset[Var]:
    """Variables with a free occurrence in ``phi`` (a restricted quantifier's domain is outside its scope).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> sorted(v.name for v in free_variables(parse_formula("∀x∈z [Bird(x) ∧ Near(x, y)]")))
        ['y', 'z']
    """
    if isinstance(phi, Atom):
        return frozenset().union(*(term_variables(arg) for arg in phi.args))
    if isinstance(phi, Eq):
        return term_variables(phi.left) | term_variables(phi.right)
    if isinstance(phi, Not):
        return free_variables(phi.body)
    if isinstance(phi, (And, Or)):
        return frozenset().union(*(free_variables(op) for op in phi.operands))
    if isinstance(phi, Implies):
        return free_variables(phi.antecedent) | free_variables(phi.consequent)
    if isinstance(phi, (Iff, Xor)):
        return free_variables(phi.left) | free_variables(phi.right)
    if not isinstance(phi, Quant):  # the last case: anything else is no formula (None, a str)
        check_formula(phi, "free_variables")
    domain = term_variables(phi.domain) if phi.domain is not None else frozenset()
    return (free_variables(phi.body) - {phi.variable}) | domain


def all_variables(phi: Formula) -> frozenset[Var]:
    """Every variable occurring in ``phi``, free or bound, binders included."""
    if isinstance(phi, Quant):
        domain = term_variables(phi.domain) if phi.domain is not None else frozenset()
        return all_variables(phi.body) | {phi.variable} | domain
    if isinstance(phi, (Atom, Eq)):
        return free_variables(phi)
    return frozenset().union(*(all_variables(child) for child in children(phi)))


def bound_names(phi: Formula) -> frozenset[str]:
    """Names bound by some quantifier of ``phi``."""
    if isinstance(phi, Quant):
        return bound_names(phi.body) | {phi.variable.name}
    return frozenset().union(*(bound_names(child) for child in children(phi)))


def _map_terms(term: Term, mapping: Mapping[Var, Term]) -> Term:
    if isinstance(term, Var):
        return mapping.get(term, term)
    if isinstance(term, Func):
        return Func(term.name, tuple(_map_terms(arg, mapping) for arg in term.args))
    return term


def _map_domain(
    domain: Var | Const | None, mapping: Mapping[Var, Term], rebind: str | None = None
) -> Var | Const | None:
    """A quantifier's domain after substitution; it must stay a plain name."""
    if domain is None:
        return None
    if rebind is not None:
        return Var(rebind) if isinstance(domain, Const) and domain.name == rebind else domain
    mapped = _map_terms(domain, mapping)
    if isinstance(mapped, Func):
        raise ValueError(f"cannot substitute the function term {mapped} for the domain {domain}")
    return mapped


def _rebuild(
    phi: Formula, term: Callable[[Term], Term], quantified: Callable[[Quant], Formula]
) -> Formula:
    """``phi`` with ``term`` applied to every term outside quantifiers; ``quantified``
    rebuilds each quantifier (where substitution and rebinding differ)."""
    if isinstance(phi, Atom):
        return Atom(phi.predicate, tuple(term(arg) for arg in phi.args))
    if isinstance(phi, Eq):
        return Eq(term(phi.left), term(phi.right))
    if isinstance(phi, Quant):
        return quantified(phi)
    if isinstance(phi, Not):
        return Not(_rebuild(phi.body, term, quantified))
    if isinstance(phi, (And, Or)):
        return type(phi)(tuple(_rebuild(op, term, quantified) for op in phi.operands))
    if isinstance(phi, Implies):
        return Implies(_rebuild(phi.antecedent, term, quantified), _rebuild(phi.consequent, term, quantified))
    return type(phi)(_rebuild(phi.left, term, quantified), _rebuild(phi.right, term, quantified))


def substitute(phi: Formula, mapping: Mapping[Var, Term]) -> Formula:
    """Replace free occurrences of variables by terms, renaming binders to avoid capture.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> str(substitute(parse_formula("∃y Near(x, y)"), {Var("x"): Var("y")}))
        '∃y1 Near(y, y1)'
    """
    check_formula(phi, "substitute")
    if not mapping:
        return phi

    def quantified(quant: Quant) -> Formula:
        domain = _map_domain(quant.domain, mapping)
        inner = {var: term for var, term in mapping.items() if var != quant.variable}
        incoming = frozenset().union(*(term_variables(term) for term in inner.values()))
        variable, body = quant.variable, quant.body
        if variable in incoming and inner:
            renamed = fresh_variable(body, avoid=incoming | set(inner), base=variable.name)
            body = substitute(body, {variable: renamed})
            variable = renamed
        return Quant(quant.quantifier, variable, substitute(body, inner), domain)

    return _rebuild(phi, lambda term: _map_terms(term, mapping), quantified)


def fresh_variable(
    phi: Formula | None = None, *, avoid: Iterable[Var] = (), base: str = "y"
) -> Var:
    """A variable that occurs nowhere in ``phi`` nor in ``avoid``: ``base``, then ``base1``, ``base2``, ...

    Example:
        >>> from fortekit.fol import parse_formula
        >>> fresh_variable(parse_formula("On(x, y) ∧ Near(y, y1)")).name
        'y2'
    """
    taken = {v.name for v in avoid}
    if phi is not None:
        taken |= {v.name for v in all_variables(phi)}
    stem = base.rstrip("0123456789'") or "y"
    if stem not in taken:
        return Var(stem)
    index = 1
    while f"{stem}{index}" in taken:
        index += 1
    return Var(f"{stem}{index}")


def _rebind_term(term: Term, name: str) -> Term:
    if isinstance(term, Const) and term.name == name:
        return Var(name)
    if isinstance(term, Func):
        return Func(term.name, tuple(_rebind_term(arg, name) for arg in term.args))
    return term


def rebind_constant(phi: Formula, name: str) -> Formula:
    """Read free constants called ``name`` as the variable a quantifier binds.

    The parser reads ``X`` in ``Flock(X)`` as a constant until it meets ``∃X``.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> parse_formula("∃X Flock(X)").body.args[0]
        Var(name='X')
    """

    def quantified(quant: Quant) -> Formula:
        domain = _map_domain(quant.domain, {}, rebind=name)
        if quant.variable.name == name:  # an inner binder of the same name shadows ours
            return Quant(quant.quantifier, quant.variable, quant.body, domain)
        return Quant(quant.quantifier, quant.variable, rebind_constant(quant.body, name), domain)

    return _rebuild(phi, lambda term: _rebind_term(term, name), quantified)
