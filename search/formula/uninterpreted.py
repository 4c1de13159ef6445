"""A word the parser does not understand leaves the later sounds to the whole-query similarity.

Formula scoring turns every asserted clause into a demand: the item must hold it. That is right
only where the parse says what the query says. Where a query holds a word that V_audio does not
ground and that no closed class of the grammar accounts for, the parser has read it as a
predicate like any other, and what it says of the sounds after it is unknown: "a dog barking,
birds verboten", "rain, and thunder surplus to requirements", "an engine idling, over my dead
body a horn". Read token by token, the later sound is asserted, and formula scoring promotes the
very sound the query leaves out. On the eighth blind wording set (docs/results.md), Stage 1 alone
stayed within 0.03 of the plain encoder on such wordings while formula scoring fell 0.05-0.11
below it in nDCG@10.

The principle is the one the parser already follows for a negation it cannot place, and the
issue's "do no harm": formula scoring asserts only what it understands. When a positive clause
other than the first holds an uninterpreted word, the query's positive clauses after the first
are *doubted*: they leave the clause tree, and only the first sound (what a query opens with is
what it asks for) and the query's exclusions are scored. A query left with its first clause
alone is scored by its whole-query similarity, as a plain query is. The doubt is on the formula
alone: the parse, Stage 1 and Stage 3 are untouched.

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


def _later_words(clause: Clause, first: bool) -> list[str]:
    """The uninterpreted one-place predicates of the clause's later sounds: all of them in a later
    clause, those of entities other than its head in the first one."""
    atoms = [atom for atom in map(_atom, _literals(clause)) if atom is not None]
    head = next((_variables(atom)[0] for atom in atoms if len(atom.args) == 1 and _variables(atom)), None)
    said = sorted({atom.predicate for atom in atoms if len(atom.args) == 1
                   and not (first and _variables(atom) == [head])})
    return uninterpreted_symbols(said)


def _head_only(clause: Clause) -> Clause:
    """The first clause with its head entity's own literals alone (its later sounds taken out)."""
    literals = _literals(clause)
    atoms = [_atom(literal) for literal in literals]
    head = next((_variables(atom)[0] for atom in atoms if atom is not None and len(atom.args) == 1
                 and _variables(atom)), None)
    kept = [literal for literal, atom in zip(literals, atoms, strict=True)
            if atom is not None and _variables(atom) == [head]]
    return Clause(_close(kept)) if kept and len(kept) < len(literals) else clause


def doubt_later_clauses(tree: ClauseTree | None) -> tuple[ClauseTree | None, tuple[Clause, ...]]:
    """The clause tree without its later sounds when one of them holds an uninterpreted word.

    Args:
        tree: a clause tree (:func:`~fortekit.search.formula.clauses.split_clauses`).

    Returns:
        ``(tree, doubted)``: the tree to score (the first clause's head entity and the query's
        exclusions) and what was taken out of it: the later positive clauses, and the first
        clause as it was when its own later sounds went. Nothing changes when no later sound
        holds an uninterpreted word.
    """
    operands = tree.operands if isinstance(tree, ClauseAnd) else (tree,) if isinstance(tree, Clause) else ()
    positive = [operand for operand in operands if isinstance(operand, Clause)]
    if not positive or not any(_later_words(clause, k == 0) for k, clause in enumerate(positive)):
        return tree, ()
    first = _head_only(positive[0])
    doubted = tuple(positive[1:]) + ((positive[0],) if first is not positive[0] else ())
    kept = [first if operand is positive[0] else operand for operand in operands
            if operand not in positive[1:]]
    return (kept[0] if len(kept) == 1 else ClauseAnd(tuple(kept))), doubted


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
    words = [word for k, clause in enumerate(positive) for word in _later_words(clause, k == 0)]
    return list(dict.fromkeys(words))
