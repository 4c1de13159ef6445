"""Split a query's formula into clauses that formula scoring can judge one by one.

A *clause* is one asserted entity with its unary predicates and the relations it
heads (with the entities those relations reach: "rain on a metal roof" is one
sound), or one negated sub-formula (``¬∃y [Person(y) ∧ Talking(y)]``). Relations that
say two sounds occur together (``With``, ``While``: ``grammars/clauses.toml``) split
their two sides into two clauses. A negated property of an asserted entity
(``Water(x) ∧ Flowing(x) ∧ ¬Dripping(x)``) is the negated clause "water dripping":
the entity's nouns with the denied predicate.

The result is a small tree of :class:`Clause` leaves under :class:`ClauseAnd`,
:class:`ClauseOr` and :class:`ClauseNot`, which :mod:`fortekit.search.formula.scoring`
evaluates with fuzzy connectives. Pure logic: no torch here.

Example:
    >>> from fortekit.fol import parse_formula
    >>> tree = split_clauses(parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]"))
    >>> print(tree)
    (∃x [Dog(x) ∧ Barking(x)]) ∧ ¬(∃y [Person(y) ∧ Talking(y)])
    >>> [str(leaf.formula) for leaf in leaves(tree)]
    ['∃x [Dog(x) ∧ Barking(x)]', '∃y [Person(y) ∧ Talking(y)]']
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any, TypeAlias

from fortekit.fol.ast import And, Atom, Formula, Not, Or, Quant, Quantifier, Var, conjoin
from fortekit.fol.events import is_event_predicate

__all__ = [
    "Clause",
    "ClauseAnd",
    "ClauseNot",
    "ClauseOr",
    "ClauseTree",
    "clause_rules",
    "has_positive_clause",
    "is_plain",
    "leaf_polarities",
    "leaves",
    "split_clauses",
]


@dataclass(frozen=True, slots=True)
class Clause:
    """A leaf: a closed, negation-free formula that is verbalised and encoded like a query."""

    formula: Formula

    def __str__(self) -> str:
        return f"({self.formula})"


@dataclass(frozen=True, slots=True)
class ClauseNot:
    """The negation of a clause tree: the item should not contain it."""

    body: ClauseTree

    def __str__(self) -> str:
        return f"¬{self.body}"


@dataclass(frozen=True, slots=True)
class ClauseAnd:
    """All operands must hold (a t-norm)."""

    operands: tuple[ClauseTree, ...]

    def __str__(self) -> str:
        return " ∧ ".join(map(str, self.operands))


@dataclass(frozen=True, slots=True)
class ClauseOr:
    """One operand must hold (the dual co-norm)."""

    operands: tuple[ClauseTree, ...]

    def __str__(self) -> str:
        return "[" + " ∨ ".join(map(str, self.operands)) + "]"


ClauseTree: TypeAlias = Clause | ClauseNot | ClauseAnd | ClauseOr


@cache
def clause_rules() -> dict[str, Any]:
    """The parsed ``grammars/clauses.toml`` (co-occurrence relations, time prefix, the cap).

    Example:
        >>> "With" in clause_rules()["cooccurrence_relations"], clause_rules()["max_clauses"]
        (True, 8)
    """
    text = resources.files("fortekit.grammars").joinpath("clauses.toml").read_text("utf-8")
    return tomllib.loads(text)


def leaves(tree: ClauseTree | None) -> list[Clause]:
    """The leaves of a clause tree, left to right (none for None).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> len(leaves(split_clauses(parse_formula("∃x ∃y [Rain(x) ∧ Thunder(y)]"))))
        2
    """
    if tree is None:
        return []
    if isinstance(tree, Clause):
        return [tree]
    if isinstance(tree, ClauseNot):
        return leaves(tree.body)
    return [leaf for operand in tree.operands for leaf in leaves(operand)]


def leaf_polarities(tree: ClauseTree | None) -> list[bool]:
    """Per leaf (in :func:`leaves` order), whether it lies under an odd number of negations.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> leaf_polarities(split_clauses(parse_formula("∃x [Dog(x) ∧ ¬∃y Music(y)]")))
        [False, True]
    """

    def walk(node: ClauseTree, negated: bool) -> list[bool]:
        if isinstance(node, Clause):
            return [negated]
        if isinstance(node, ClauseNot):
            return walk(node.body, not negated)
        return [flag for operand in node.operands for flag in walk(operand, negated)]

    return [] if tree is None else walk(tree, False)


def has_positive_clause(tree: ClauseTree | None) -> bool:
    """Whether some leaf is asserted (not under an odd number of negations).

    Example:
        >>> has_positive_clause(ClauseNot(Clause(Atom("Rain", (Var("x"),)))))
        False
    """

    def walk(node: ClauseTree, positive: bool) -> bool:
        if isinstance(node, Clause):
            return positive
        if isinstance(node, ClauseNot):
            return walk(node.body, not positive)
        return any(walk(operand, positive) for operand in node.operands)

    return tree is not None and walk(tree, True)


def is_plain(tree: ClauseTree | None) -> bool:
    """A single asserted clause: nothing for formula scoring to add to the query's similarity."""
    return isinstance(tree, Clause)


def _variables(atom: Atom) -> list[str]:
    return [arg.name for arg in atom.args if isinstance(arg, Var)]


def _strip(phi: Formula) -> Formula:
    while isinstance(phi, Quant):
        phi = phi.body
    return phi


def _close(literals: Sequence[Formula]) -> Formula:
    """The existential closure of a conjunction, variables in order of first mention."""
    body = conjoin(*literals)
    order: dict[str, None] = {}
    for literal in literals:
        atom = literal.body if isinstance(literal, Not) else literal
        if isinstance(atom, Atom):
            order.update((name, None) for name in _variables(atom))
    for name in reversed(order):
        body = Quant(Quantifier.EXISTS, Var(name), body)
    return body


class _Components:
    """Union-find over variable names: which entities form one clause."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, name: str) -> str:
        self.parent.setdefault(name, name)
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _is_noun(symbol: str) -> bool:
    from fortekit.verbalise.lexicon import Role
    from fortekit.verbalise.vocab_lexicon import default_lexicon

    word = _lexicon_word(default_lexicon(), symbol)
    return word is not None and word.role is Role.NOUN


#: Predicate symbols whose lexicon word :func:`_is_noun` keeps. Each unknown word of a query is one
#: more symbol (about 0.3 kB an entry with its key, so at most about 5 MB); ``functools.cache``
#: here grew by every word any query ever held.
LEXICON_WORD_ENTRIES = 1 << 14


@lru_cache(maxsize=LEXICON_WORD_ENTRIES)
def _lexicon_word(lexicon: Any, symbol: str) -> Any:
    from fortekit.verbalise.realise import _word

    return _word(symbol, 1, lexicon)


def _literal_clauses(literals: list[Formula], rules: dict[str, Any]) -> list[ClauseTree]:
    """Group a conjunction's literals into entity clauses (asserted) and negated-property clauses."""
    cooccurrence = frozenset(rules["cooccurrence_relations"])
    time_prefix = str(rules["time_variable_prefix"])
    components = _Components()
    order: list[str] = []
    for literal in literals:
        atom = literal.body if isinstance(literal, Not) else literal
        assert isinstance(atom, Atom)
        names = _variables(atom)
        for name in names:
            if name not in order:
                order.append(name)
            components.find(name)
        if len(names) >= 2 and not isinstance(literal, Not) and atom.predicate not in cooccurrence:
            for other in names[1:]:
                components.union(names[0], other)
    entity_roots = [components.find(n) for n in order if not _is_time(n, time_prefix)]
    if entity_roots:  # a time expression says when the first entity sounds, not another sound
        for name in order:
            if _is_time(name, time_prefix) and components.find(name) not in entity_roots:
                components.union(entity_roots[0], name)
    grouped: dict[str, list[Formula]] = {}
    denied: list[tuple[str, Atom]] = []
    for literal in literals:
        atom = literal.body if isinstance(literal, Not) else literal
        assert isinstance(atom, Atom)
        names = _variables(atom)
        if not names:
            continue  # an atom over constants only names no sound to listen for
        if isinstance(literal, Not):  # '¬Pumping(e1, x)' denies a property of x, as '¬Pumping(x)' does
            denied.append((names[1] if is_event_predicate(atom) and len(names) > 1 else names[0], atom))
            continue
        if atom.predicate in cooccurrence and len(names) >= 2:
            continue  # the two sides become two clauses; the relation itself is not a sound
        grouped.setdefault(components.find(names[0]), []).append(atom)
    trees: list[ClauseTree] = [Clause(_close(group)) for group in grouped.values()]
    for name, atom in denied:
        nouns = [
            literal for literal in grouped.get(components.find(name), [])
            if isinstance(literal, Atom) and literal.arity == 1 and _variables(literal) == [name]
            and _is_noun(literal.predicate)
        ]
        trees.append(ClauseNot(Clause(_close([*nouns, atom]))))
    return trees


def _is_time(name: str, prefix: str) -> bool:
    return (name.startswith(prefix) and name[len(prefix):].isdigit()) or name == prefix


def _tree(phi: Formula, rules: dict[str, Any]) -> ClauseTree | None:
    phi = _strip(phi)
    if isinstance(phi, Or):
        return _combine(ClauseOr, [_tree(operand, rules) for operand in phi.operands])
    if isinstance(phi, Not) and not isinstance(phi.body, Atom):
        inner = _tree(phi.body, rules)
        return None if inner is None else ClauseNot(inner)
    operands = phi.operands if isinstance(phi, And) else (phi,)
    literals: list[Formula] = []
    nested: list[ClauseTree | None] = []
    for operand in operands:
        if isinstance(operand, Atom) or (isinstance(operand, Not) and isinstance(operand.body, Atom)):
            literals.append(operand)
        elif isinstance(operand, (Not, Or, Quant, And)):
            nested.append(_tree(operand, rules))
        # →, ↔, ⊕ and equalities are not clauses a sound can match: they are left out
    return _combine(ClauseAnd, [*_literal_clauses(literals, rules), *nested])


def _combine(kind: type[ClauseAnd] | type[ClauseOr], parts: list[ClauseTree | None]) -> ClauseTree | None:
    kept = [part for part in parts if part is not None]
    if not kept:
        return None
    if len(kept) == 1:
        return kept[0]
    flat: list[ClauseTree] = []
    for part in kept:
        flat.extend(part.operands if isinstance(part, kind) else (part,))
    return kind(tuple(flat))


def _capped(tree: ClauseTree, budget: list[int]) -> ClauseTree | None:
    if isinstance(tree, Clause):
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        return tree
    if isinstance(tree, ClauseNot):
        inner = _capped(tree.body, budget)
        return None if inner is None else ClauseNot(inner)
    kind = ClauseAnd if isinstance(tree, ClauseAnd) else ClauseOr
    return _combine(kind, [_capped(operand, budget) for operand in tree.operands])


def split_clauses(phi: Formula | None, *, max_clauses: int | None = None) -> ClauseTree | None:
    """The clause tree of a formula, or None when it has no clause to score.

    Args:
        phi: a formula (the caption parser's, Stage 1's phi*, or any parsed one).
        max_clauses: keep at most this many leaves, in formula order (default: the
            ``max_clauses`` of ``grammars/clauses.toml``).

    Returns:
        The tree; None for None, for a formula whose atoms name only constants, or for
        one built only of connectives no sound can match (→, ↔, ⊕, =).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> print(split_clauses(parse_formula("∃x ∃y [Music(x) ∧ Playing(x) ∧ Wind(y) ∧ Blowing(y)]")))
        (∃x [Music(x) ∧ Playing(x)]) ∧ (∃y [Wind(y) ∧ Blowing(y)])
        >>> print(split_clauses(parse_formula("∃x ∃y [Rain(x) ∧ On(x, y) ∧ Roof(y)]")))
        (∃x ∃y [Rain(x) ∧ On(x, y) ∧ Roof(y)])
    """
    if phi is None:
        return None
    rules = clause_rules()
    tree = _tree(phi, rules)
    limit = int(rules["max_clauses"]) if max_clauses is None else max_clauses
    if tree is None or limit < 1:
        return None
    return _capped(tree, [limit])


def walk_clauses(tree: ClauseTree) -> Iterator[ClauseTree]:
    """Every node of a clause tree, parents before children."""
    yield tree
    if isinstance(tree, ClauseNot):
        yield from walk_clauses(tree.body)
    elif isinstance(tree, (ClauseAnd, ClauseOr)):
        for operand in tree.operands:
            yield from walk_clauses(operand)
