"""A word the parser does not understand leaves what it is said of to the whole-query similarity.

Formula scoring turns every asserted clause into a demand: the item must hold it. That is right
only where the parse says what the query says. Where a query holds a word that V_audio does not
ground and that no closed class of the grammar accounts for, the parser has read it as a
predicate like any other, and what it says of the sound it is said of is unknown: "a dog
barking, birds verboten", "rain, and thunder surplus to requirements". Read token by token, that
sound is asserted, and formula scoring promotes the
very sound the query leaves out. On the eighth blind wording set (docs/results.md), Stage 1 alone
stayed within 0.03 of the plain encoder on such wordings while formula scoring fell 0.05-0.11
below it in nDCG@10.

The principle is the one the parser already follows for a negation it cannot place, and the
issue's "do no harm": formula scoring asserts only what it understands. An entity that an
uninterpreted word is *said of* (a one-place predicate of it: "birds verboten", "a cheap phone")
is *doubted*: it leaves its clause with the relations that reach it, and a later clause whose own
sound is doubted leaves the clause tree. What the query opens with (the first clause's head
entity: what a query opens with is what it asks for) and the query's exclusions always stay. A
query left with its first sound alone is scored by its whole-query similarity, as a plain query
is. The doubt is on the formula alone: the parse, Stage 1 and Stage 3 are untouched. A word said
of nothing but a thing of its own ("in fits and starts", "from the neighbour's garden") takes
only that thing out, and the sounds beside it are scored: a doubt of every later sound cost the
ninth set's "and" controls 0.04-0.11 nDCG@10 (docs/formula_scoring.md). Out of reach: unknown
words that form a thing of their own beside the sound ("over my dead body, a horn").

An *uninterpreted* word is a one-place predicate whose symbol V_audio does not hold (it would
carry V_audio's symbol if any tier grounded it) and whose lemma is in none of the grammar's
closed lists of words that say nothing of a sound's presence (``grammars/arc_rules.toml``:
indefinite pronouns, collective and measure nouns, time and property nouns, copulas, light
adverbs, the verbs of the verbal prepositions). Relations are the grammar's own and never count.

Example:
    >>> from fortekit.fol import parse_formula
    >>> from fortekit.search.formula.clauses import split_clauses
    >>> tree = split_clauses(parse_formula("∃x ∃y [Dog(x) ∧ Barking(x) ∧ Bird(y) ∧ Verboten(y)]"))
    >>> kept, doubted = doubt_later_clauses(tree)
    >>> str(kept), [str(clause.formula) for clause in doubted]
    ('(∃x [Dog(x) ∧ Barking(x)])', ['∃y [Bird(y) ∧ Verboten(y)]'])
    >>> tree = split_clauses(parse_formula("∃x ∃y [Dog(x) ∧ Barking(x) ∧ Bird(y) ∧ Chirping(y)]"))
    >>> doubt_later_clauses(tree)[1]
    ()
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from fortekit.fol.ast import And, Atom, Formula, Not
from fortekit.search.formula.clauses import Clause, ClauseAnd, ClauseTree, _close, _strip, _variables

__all__ = ["CLOSED_LISTS", "doubt_later_clauses", "doubted_words", "uninterpreted_symbols"]

#: The lists of ``grammars/arc_rules.toml`` whose words say nothing of whether a sound is heard.
CLOSED_LISTS = (
    "indefinite_pronouns", "collective_nouns", "measure_nouns", "time_nouns", "property_nouns",
    "generic_sound_nouns", "copular_verbs", "never_predicates", "non_predicate_adverbs",
    "place_adverbs", "verbal_prepositions", "quantity_words", "ordinals", "reciprocal_words",
)


@cache
def _understood() -> tuple[frozenset[str], frozenset[str]]:
    """V_audio's symbols, and the CamelCase symbols of the closed lists' words."""
    from fortekit.fol.caption.lemmas import camel
    from fortekit.fol.caption.rules import load_rules
    from fortekit.vocab import get_grounder

    lexicon = load_rules().lexicon
    closed = frozenset(camel(word) for name in CLOSED_LISTS for word in lexicon.words(name))
    return get_grounder().vocabulary.symbols, closed


def uninterpreted_symbols(names: Iterable[str]) -> list[str]:
    """The one-place predicate names among ``names`` that no tier grounds and no closed list holds.

    Example:
        >>> uninterpreted_symbols(["Dog", "Barking", "Verboten", "Someone"])
        ['Verboten']
    """
    vocabulary, closed = _understood()
    return [name for name in names if name not in vocabulary and name not in closed]


def _literals(clause: Clause) -> list[Formula]:
    body = _strip(clause.formula)
    return list(body.operands) if isinstance(body, And) else [body]


def _atom(literal: Formula) -> Atom | None:
    inner = literal.body if isinstance(literal, Not) else literal
    return inner if isinstance(inner, Atom) else None


def _entities(clause: Clause) -> tuple[list[Formula], list[Atom | None], str | None]:
    """A clause's literals, their atoms, and its head entity (the variable of its first one-place literal)."""
    literals = _literals(clause)
    atoms = [_atom(literal) for literal in literals]
    head = next((_variables(atom)[0] for atom in atoms if atom is not None and len(atom.args) == 1
                 and _variables(atom)), None)
    return literals, atoms, head


def _doubted_entities(clause: Clause, first: bool) -> tuple[set[str], list[str]]:
    """The entities of a clause that an uninterpreted word is said of (never the first clause's
    head), and those words."""
    _, atoms, head = _entities(clause)
    said: dict[str, list[str]] = {}
    for atom in atoms:
        if atom is not None and len(atom.args) == 1 and _variables(atom):
            said.setdefault(_variables(atom)[0], []).append(atom.predicate)
    doubted, words = set(), []
    for name, symbols in said.items():
        found = uninterpreted_symbols(symbols)
        if found and not (first and name == head):
            doubted.add(name)
            words.extend(found)
    return doubted, words


def _without(clause: Clause, doubted: set[str]) -> Clause | None:
    """The clause without the doubted entities' literals and the relations that reach them; None
    when its head entity is doubted (the sound the clause is about is unknown)."""
    literals, atoms, head = _entities(clause)
    if head in doubted:
        return None
    kept = [literal for literal, atom in zip(literals, atoms, strict=True)
            if atom is None or not doubted.intersection(_variables(atom))]
    return Clause(_close(kept)) if kept else None


def doubt_later_clauses(tree: ClauseTree | None) -> tuple[ClauseTree | None, tuple[Clause, ...]]:
    """The clause tree without the sounds an uninterpreted word is said of.

    Args:
        tree: a clause tree (:func:`~fortekit.search.formula.clauses.split_clauses`).

    Returns:
        ``(tree, doubted)``: the tree to score and the positive clauses that changed, as they were
        (a later clause whose own sound an uninterpreted word is said of goes; an entity of a
        clause that holds one leaves it with the relations that reach it). The first clause's head
        entity and the exclusions always stay. Nothing changes when no such word is said of a
        later entity.
    """
    operands = tree.operands if isinstance(tree, ClauseAnd) else (tree,) if isinstance(tree, Clause) else ()
    positive = [operand for operand in operands if isinstance(operand, Clause)]
    replaced: dict[int, Clause | None] = {}
    for k, clause in enumerate(positive):
        doubted, _ = _doubted_entities(clause, k == 0)
        if doubted:
            replaced[id(clause)] = _without(clause, doubted)
    if not replaced:
        return tree, ()
    kept = [replaced.get(id(operand), operand) if isinstance(operand, Clause) else operand
            for operand in operands]
    remaining = [operand for operand in kept if operand is not None]
    changed = tuple(clause for clause in positive if id(clause) in replaced)
    if not remaining:
        return None, changed
    return (remaining[0] if len(remaining) == 1 else ClauseAnd(tuple(remaining))), changed


def doubted_words(tree: ClauseTree | None) -> list[str]:
    """The uninterpreted words of a clause tree's later sounds, in order, without repeats.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> from fortekit.search.formula.clauses import split_clauses
        >>> phi = parse_formula("∃x ∃y [Dog(x) ∧ Quixotic(x) ∧ Bird(y) ∧ Verboten(y)]")
        >>> doubted_words(split_clauses(phi))
        ['Verboten']
    """
    operands = tree.operands if isinstance(tree, ClauseAnd) else (tree,) if isinstance(tree, Clause) else ()
    positive = [operand for operand in operands if isinstance(operand, Clause)]
    words = [word for k, clause in enumerate(positive) for word in _doubted_entities(clause, k == 0)[1]]
    return list(dict.fromkeys(words))
