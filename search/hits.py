"""What :meth:`~fortekit.search.retriever.Retriever.search` returns: ranked hits and their explanations.

Example:
    >>> hit = Hit(1, "clip7", 0.61, caption="a dog barks")
    >>> hit.to_dict()["id"], hit.to_dict()["score"]
    ('clip7', 0.61)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fortekit.fol.predicates import PredicateSymbol

__all__ = ["Hit", "SearchResult", "explain_predicates"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved item.

    Attributes:
        rank: 1 for the best.
        item_id: the item's id in the index.
        score: the final score (after formula scoring and Stage 3).
        caption: the item's caption, when the index has one.
        path: the item's audio path, when the index has one.
        matched: the query's predicates (with their polarity) that the caption agrees with.
        missed: the query's asserted predicates the caption does not mention.
        violated: the query's predicates the caption contradicts (an excluded sound it names).
        clause_similarities: with ``explain``, each clause's cosine to the item, in clause order.
    """

    rank: int
    item_id: str
    score: float
    caption: str | None = None
    path: str | None = None
    matched: tuple[str, ...] = ()
    missed: tuple[str, ...] = ()
    violated: tuple[str, ...] = ()
    clause_similarities: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "rank": self.rank, "id": self.item_id, "score": round(self.score, 6), "caption": self.caption,
            "path": self.path, "matched": list(self.matched), "missed": list(self.missed),
            "violated": list(self.violated),
            "clause_similarities": [round(value, 6) for value in self.clause_similarities],
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What :meth:`Retriever.search` found for one query.

    Attributes:
        query: the query as given.
        hits: the ranked items, best first.
        phi0: Π(q) as text (None when the query could not be parsed).
        phi_star: Stage 1's phi* as text (phi0 without Stage 1).
        refined_text: G(phi*) with Stage 1, else None.
        clauses: the clauses formula scoring judged: (verbalised text, negated), in order;
            empty when the query scored by its similarity alone.
        fallback: why formula scoring was not applied ("plain", "no formula", ...), or "".
        source: where the query side came from: "query" (as it is), "search" (Stage 1) or
            "lookup" (a stored refinement).
        unsure: with ``explain``, the query's negations and connectives whose scope the parser
            could not resolve, one line each ("'apart from': ambiguous cue"): the formula
            leaves them out, so formula scoring keeps the whole-query similarity for them
            (docs/negation.md).
    """

    query: str
    hits: tuple[Hit, ...]
    phi0: str | None = None
    phi_star: str | None = None
    refined_text: str | None = None
    clauses: tuple[tuple[str, bool], ...] = ()
    fallback: str = ""
    source: str = "query"
    extra: dict[str, Any] = field(default_factory=dict)
    unsure: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the query, its formulas and clauses, and every hit."""
        return {
            "query": self.query, "phi0": self.phi0, "phi_star": self.phi_star,
            "refined_text": self.refined_text, "source": self.source,
            "clauses": [{"text": text, "negated": negated} for text, negated in self.clauses],
            "fallback": self.fallback, "unsure": list(self.unsure),
            "hits": [hit.to_dict() for hit in self.hits],
        }


def explain_predicates(
    query: frozenset[PredicateSymbol], item: frozenset[PredicateSymbol],
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Which of the query's predicates an item's caption matches, misses and violates.

    Args:
        query: Pred(φ) of the query, signed.
        item: Pred of the item's caption, signed.

    Returns:
        ``(matched, missed, violated)`` as sorted symbol strings: matched = same symbol and
        polarity; missed = asserted query symbols the caption does not mention; violated =
        query symbols whose opposite the caption states (``¬Talking/1`` against ``Talking/1``).

    Example:
        >>> from fortekit.fol import parse_formula, predicates
        >>> q = predicates(parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]"))
        >>> explain_predicates(q, predicates(parse_formula("∃x [Dog(x) ∧ Talking(x)]")))
        (('Dog/1',), ('Barking/1',), ('¬Talking/1',))
    """
    matched, missed, violated = [], [], []
    for symbol in sorted(query):
        opposite = PredicateSymbol(symbol.name, symbol.arity, symbol.polarity.flipped())
        if symbol in item:
            matched.append(str(symbol))
        elif opposite in item:
            violated.append(str(symbol))
        elif not symbol.negated:
            missed.append(str(symbol))
    return tuple(matched), tuple(missed), tuple(violated)
