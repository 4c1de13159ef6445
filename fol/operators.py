"""The refinement operator algebra of Stage 1: o_attr, o_rel, o_neg, and successors.

All three operators only add conjuncts to the formula's matrix (the part under
its leading existential quantifiers), so they never remove a predicate: the
invariant set C is kept by construction, and :func:`successors` checks it again.

Example:
    >>> from fortekit.fol import parse_formula
    >>> phi = parse_formula("∃x [Person(x) ∧ Speaking(x)]")
    >>> str(o_attr(phi, "Quiet"))
    '∃x [Person(x) ∧ Speaking(x) ∧ Quiet(x)]'
    >>> str(o_rel(phi, "In", "Room"))
    '∃x ∃y [Person(x) ∧ Speaking(x) ∧ Room(y) ∧ In(x, y)]'
    >>> str(o_neg(phi, "Shouting"))
    '∃x [Person(x) ∧ Speaking(x) ∧ ¬Shouting(x)]'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from fortekit.errors import Errors, OperatorError
from fortekit.fol.ast import And, Atom, Formula, Not, Quant, Quantifier, Var, check_formula
from fortekit.fol.canonical import canonical
from fortekit.fol.events import event_participants, participant_arity
from fortekit.fol.predicates import PredicateSymbol, atom_occurrences, preserves
from fortekit.fol.terms import bound_names, free_variables, fresh_variable

OperatorName = Literal["attr", "rel", "neg"]
OPERATORS: tuple[OperatorName, ...] = ("attr", "rel", "neg")

#: The paper's depth schedule: attributes first, then relations, then negations.
DEPTH_SCHEDULE: Mapping[int, tuple[OperatorName, ...]] = {
    1: ("attr",),
    2: ("rel",),
    3: ("neg",),
    4: ("neg",),
}


@dataclass(frozen=True, slots=True)
class _Shape:
    """A formula split into its leading ∃-prefix and the conjuncts of its matrix."""

    prefix: tuple[Var, ...]
    conjuncts: tuple[Formula, ...]

    @classmethod
    def of(cls, phi: Formula) -> _Shape:
        prefix: list[Var] = []
        node = phi
        while isinstance(node, Quant) and node.quantifier is Quantifier.EXISTS and node.domain is None:
            prefix.append(node.variable)
            node = node.body
        conjuncts = node.operands if isinstance(node, And) else (node,)
        return cls(tuple(prefix), conjuncts)

    def build(self) -> Formula:
        body: Formula = self.conjuncts[0] if len(self.conjuncts) == 1 else And(self.conjuncts)
        for variable in reversed(self.prefix):
            body = Quant(Quantifier.EXISTS, variable, body)
        return body

    def extended(self, *conjuncts: Formula, new_variable: Var | None = None) -> _Shape:
        prefix = self.prefix
        if new_variable is not None and prefix:  # keep the caller's style: closed stays closed
            prefix = (*prefix, new_variable)
        return _Shape(prefix, (*self.conjuncts, *conjuncts))


def entity_variables(phi: Formula) -> tuple[Var, ...]:
    """Variables an operator may attach to, in order of first mention in a unary atom.

    These are the matrix's free variables and those of the leading ∃-prefix;
    variables bound deeper (inside ∀ or ¬∃) are not entities of the description.
    An event predicate (``Pumping(e1, x)``) mentions its participant like a unary
    atom, and event variables (``e1``) are no entities: an attribute is said of the
    machine, not of one of its events.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> [v.name for v in entity_variables(parse_formula("∃x ∃t [Bird(x) ∧ Morning(t)]"))]
        ['x', 't']
        >>> events = parse_formula("∃e1 ∃e2 [Pumping(e1, x) ∧ Before(e1, e2) ∧ Slowing(e2, x)]")
        >>> [v.name for v in entity_variables(events)]
        ['x']
    """
    check_formula(phi, "entity_variables")
    shape = _Shape.of(phi)
    matrix = _Shape((), shape.conjuncts).build()
    allowed = free_variables(matrix)
    ordered: list[Var] = []
    for atom, _ in atom_occurrences(matrix):
        for arg in atom.args[-1:] if participant_arity(atom) == 1 else ():
            if isinstance(arg, Var) and arg in allowed and arg not in ordered:
                ordered.append(arg)
    events = event_participants(matrix)  # the variables that name an event ('e1' of 'Pumping(e1, x)')
    rest = {v for v in allowed - set(ordered) if v.name not in events}
    ordered.extend(sorted(rest, key=lambda v: v.name))
    return tuple(ordered)


def _target(phi: Formula, variable: Var | None, operator: str) -> Var:
    check_formula(phi, operator)  # the public entry points' boundary: None or a str fails here, coded
    if variable is not None:
        if variable.name in bound_names(phi) and variable not in _Shape.of(phi).prefix:
            # '∃x [Dog(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]': y is no entity to describe
            options = ", ".join(v.name for v in entity_variables(phi)) or "none"
            raise OperatorError(
                Errors.E008.format(operator=operator, variable=variable.name, formula=phi, options=options)
            )
        return variable
    candidates = entity_variables(phi)
    if not candidates:
        raise OperatorError(Errors.E007.format(operator=operator, formula=phi))
    return candidates[0]


def o_attr(phi: Formula, predicate: str, variable: Var | None = None) -> Formula:
    """Add the attribute ``predicate(x)`` to an existing entity ``x``.

    Args:
        phi: the formula to refine.
        predicate: the attribute's predicate symbol, e.g. ``"Quiet"``.
        variable: the entity; by default the first one the formula mentions.

    Returns:
        ``phi`` with ``predicate(x)`` conjoined to its matrix (``phi`` itself when
        the conjunct is already there).

    Raises:
        OperatorError: ``phi`` has no entity variable and none was given.
        FormulaTypeError: (a ``TypeError``) ``phi`` is not a formula, e.g. None or a str (E009).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> str(o_attr(parse_formula("Speaking(x)"), "Quiet"))
        'Speaking(x) ∧ Quiet(x)'
    """
    target = _target(phi, variable, "o_attr")
    atom = Atom(predicate, (target,))
    shape = _Shape.of(phi)
    if atom in shape.conjuncts:
        return phi
    return shape.extended(atom).build()


def o_rel(
    phi: Formula, relation: str, entity: str, variable: Var | None = None
) -> Formula:
    """Add a new entity ``entity(y)`` and the relation ``relation(x, y)``.

    The new variable is fresh; when ``phi`` starts with ∃-quantifiers the new one is
    quantified too.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> str(o_rel(parse_formula("Speech(x)"), "Background", "CrowdNoise"))
        'Speech(x) ∧ CrowdNoise(y) ∧ Background(x, y)'
    """
    target = _target(phi, variable, "o_rel")
    new = fresh_variable(phi, avoid=(target,))
    shape = _Shape.of(phi)
    return shape.extended(
        Atom(entity, (new,)), Atom(relation, (target, new)), new_variable=new
    ).build()


def o_neg(phi: Formula, predicate: str, variable: Var | None = None) -> Formula:
    """Exclude a property: add ``¬predicate(x)``.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> str(o_neg(parse_formula("Wind(x) ∧ Blowing(x)"), "Rain"))
        'Wind(x) ∧ Blowing(x) ∧ ¬Rain(x)'
    """
    target = _target(phi, variable, "o_neg")
    literal = Not(Atom(predicate, (target,)))
    shape = _Shape.of(phi)
    if literal in shape.conjuncts:
        return phi
    return shape.extended(literal).build()


@dataclass(frozen=True, slots=True)
class CandidatePools:
    """What the operators may add: attribute names, (relation, entity) pairs, negation targets.

    Stage 1 fills them from the positive elaborations and the vocabulary (attributes,
    relations) and from the negative elaborations and negation targets (negations).
    """

    attributes: tuple[str, ...] = ()
    relations: tuple[tuple[str, str], ...] = ()
    negations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Successor:
    """One child of a search node: the formula and the edit that made it."""

    formula: Formula
    operator: OperatorName
    argument: tuple[str, ...] = field(default=())


def _mentions(phi: Formula, predicate: str, target: Var) -> bool:
    """Whether ``phi`` already says or denies ``predicate(target)``.

    Adding it again would be void (same polarity) or a contradiction (the opposite).
    """
    atom = Atom(predicate, (target,))
    return any(occurrence == atom for occurrence, _ in atom_occurrences(phi))


def successors(
    phi: Formula,
    depth: int,
    pools: CandidatePools,
    invariant: Iterable[PredicateSymbol] = (),
    *,
    schedule: Mapping[int, Sequence[str]] = DEPTH_SCHEDULE,
    variable: Var | None = None,
) -> list[Successor]:
    """The refinements of ``phi`` at search depth ``depth``, de-duplicated.

    Args:
        phi: the node to expand.
        depth: the depth of the children (1 for the children of φ0).
        pools: candidate predicates per operator.
        invariant: predicates every child must keep (checked).
        schedule: which operators run at which depth; depths not listed yield nothing.
        variable: the entity to attach to (default: the formula's first entity).

    Returns:
        Children in a deterministic order, none equal (up to :func:`canonical`)
        to ``phi`` or to each other; an attribute or negation the formula already
        mentions is not added again, nor is its opposite.

    Raises:
        OperatorError: the schedule names an unknown operator.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> kids = successors(parse_formula("Bird(x) ∧ Chirping(x)"), 1,
        ...                   CandidatePools(attributes=("Soft", "Bird", "Soft")))
        >>> [str(k.formula) for k in kids]
        ['Bird(x) ∧ Chirping(x) ∧ Soft(x)']
    """
    check_formula(phi, "successors")
    operators = tuple(schedule.get(depth, ()))
    unknown = [name for name in operators if name not in OPERATORS]
    if unknown:
        raise OperatorError(Errors.E006.format(name=unknown[0], options=", ".join(OPERATORS)))
    if not entity_variables(phi) and variable is None:
        return []
    target = _target(phi, variable, "successors")
    invariant = frozenset(invariant)
    seen = {canonical(phi)}
    result: list[Successor] = []

    def offer(formula: Formula, operator: OperatorName, argument: tuple[str, ...]) -> None:
        key = canonical(formula)
        if key in seen or not preserves(formula, invariant):
            return
        seen.add(key)
        result.append(Successor(formula, operator, argument))

    for operator in operators:
        if operator == "attr":
            for name in pools.attributes:
                if not _mentions(phi, name, target):
                    offer(o_attr(phi, name, target), "attr", (name,))
        elif operator == "rel":
            for relation, entity in pools.relations:
                offer(o_rel(phi, relation, entity, target), "rel", (relation, entity))
        else:
            for name in pools.negations:
                if not _mentions(phi, name, target):
                    offer(o_neg(phi, name, target), "neg", (name,))
    return result
