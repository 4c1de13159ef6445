"""What :meth:`~fortekit.search.retriever.Retriever.search` returns: ranked hits and their explanations.

Both print short (``repr``) and, in Jupyter, as an HTML table (``_repr_html_``).

Example:
    >>> hit = Hit(1, "clip7", 0.61, caption="a dog barks")
    >>> hit.to_dict()["id"], hit.to_dict()["score"]
    ('clip7', 0.61)
    >>> hit
    Hit(1, 'clip7', 0.61, 'a dog barks')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

from fortekit.fol.predicates import PredicateSymbol
from fortekit.textio import shorten

__all__ = [
    "Confidence",
    "Hit",
    "PushedDown",
    "SearchResult",
    "explain_predicates",
    "format_score_parts",
    "rounded_parts",
    "score_bar",
]


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
        score_parts: how the score was made, stage by stage, as (stage, amount) pairs that sum to
            ``score``: ``similarity`` (the first pass: the query vector's cosine to the item, in
            the projected space when Stage 2's head is on), then what ``formula`` scoring,
            ``stage3`` and the ``order`` check each added (negative: took away); a stage that
            did not run has no pair (docs/retriever.md, "Why a hit ranks where it does").
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
    score_parts: tuple[tuple[str, float], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field; the score parts rounded as the score is, summing to it.

        Example:
            >>> hit = Hit(1, "a", 0.5, score_parts=(("similarity", 0.6), ("formula", -0.1)))
            >>> hit.to_dict()["score_parts"]
            [{'stage': 'similarity', 'amount': 0.6}, {'stage': 'formula', 'amount': -0.1}]
        """
        return {
            "rank": self.rank, "id": self.item_id, "score": round(self.score, 6), "caption": self.caption,
            "path": self.path, "matched": list(self.matched), "missed": list(self.missed),
            "violated": list(self.violated),
            "clause_similarities": [round(value, 6) for value in self.clause_similarities],
            "score_parts": rounded_parts(self.score_parts, self.score),
        }

    def __repr__(self) -> str:
        """Rank, id, score (4 decimals) and the caption's first 60 characters; the violated predicates.

        Example:
            >>> Hit(2, "clip3", 0.812345, "a dog barks while a man talks", violated=("¬Talking/1",))
            Hit(2, 'clip3', 0.8123, 'a dog barks while a man talks', violated=('¬Talking/1',))
        """
        caption = "" if self.caption is None else f", {shorten(self.caption, 60)!r}"
        violated = f", violated={self.violated!r}" if self.violated else ""
        return f"Hit({self.rank}, {self.item_id!r}, {round(self.score, 4)!r}{caption}{violated})"


@dataclass(frozen=True, slots=True)
class PushedDown:
    """An item of the first pass's top k that the later stages moved out of it (issue 46).

    Attributes:
        item_id: the item's id.
        caption: its caption, when the index has one.
        was: its rank in the first pass (1 for the best).
        now: its rank after every stage, or None when it left the candidate pool.
        evidence: why it moved: its caption's violated predicates, each stage's amount.
    """

    item_id: str
    caption: str | None
    was: int
    now: int | None
    evidence: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict.

        Example:
            >>> PushedDown("c4", "a crow caws", 2, 14, ("its caption says Crow/1",)).to_dict()["now"]
            14
        """
        return {"id": self.item_id, "caption": self.caption, "was": self.was, "now": self.now,
                "evidence": list(self.evidence)}


@dataclass(frozen=True, slots=True)
class Confidence:
    """Whether a query's hits are more than noise (issue 46): a coded warning when they are not.

    Attributes:
        low: True when no item matches the query (W860) or the best match is within random
            text's reach (W861).
        reason: the warning's text ("" when not low).
        code: ``W860``, ``W861`` or "".
    """

    low: bool
    reason: str = ""
    code: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict.

        Example:
            >>> Confidence(False).to_dict()
            {'low': False, 'reason': '', 'code': ''}
        """
        return {"low": self.low, "reason": self.reason, "code": self.code}


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What :meth:`Retriever.search` found for one query.

    Attributes:
        query: the query as given.
        hits: the ranked items, best first.
        phi0: Π(q) as text (None when the query could not be parsed).
        phi_star: Stage 1's phi* as text (phi0 without Stage 1).
        refined_text: with Stage 1 (or a lookup), the refined query: G(phi*), or the query itself
            when nothing was refined (phi* = phi0); else None.
        clauses: the clauses formula scoring judged: (verbalised text, negated), in order;
            empty when the query scored by its similarity alone.
        fallback: why formula scoring was not applied ("plain", "no formula", ...), or "".
        source: where the query side came from: "query" (as it is), "refine" (Stage 1) or
            "lookup" (a stored refinement).
        pushed_down: for a query with a negated clause, the items of the first pass's top k that
            the later stages moved out of it (:class:`PushedDown`).
        confidence: whether the hits are more than noise (:class:`Confidence`).
        unsure: with ``explain``, the query's negations and connectives whose scope the parser
            could not resolve, one line each ("'apart from': ambiguous cue"): the formula
            leaves them out, so formula scoring keeps the whole-query similarity for them
            (docs/negation.md); and the negated clauses formula scoring could not judge by
            evidence, with why ("not 'a crow': the backbone cannot tell it from the asked-for
            sound ..."; docs/formula_scoring.md, "Exclusion by evidence").
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
    pushed_down: tuple[PushedDown, ...] = ()
    confidence: Confidence = Confidence(False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the query, its formulas and clauses, every hit, what the exclusion
        pushed down and the confidence."""
        return {
            "query": self.query, "phi0": self.phi0, "phi_star": self.phi_star,
            "refined_text": self.refined_text, "source": self.source,
            "clauses": [{"text": text, "negated": negated} for text, negated in self.clauses],
            "fallback": self.fallback, "unsure": list(self.unsure),
            "pushed_down": [item.to_dict() for item in self.pushed_down],
            "confidence": self.confidence.to_dict(),
            "hits": [hit.to_dict() for hit in self.hits],
        }

    def __repr__(self) -> str:
        """The query, its formula and the first hits (as many as keep it under 200 characters).

        Example:
            >>> SearchResult("rain", (Hit(1, "a", 0.9), Hit(2, "b", 0.5)), phi_star="∃x Rain(x)")
            SearchResult('rain', ∃x Rain(x), 2 hits: 'a' 0.9, 'b' 0.5)
        """
        formula = f", {self.phi_star}" if self.phi_star is not None else ""
        head = f"SearchResult({shorten(self.query, 50)!r}{formula}, {len(self.hits)} hit"
        head += "" if len(self.hits) == 1 else "s"
        shown: list[str] = []
        for hit in self.hits:
            item = f"{shorten(hit.item_id, 24)!r} {round(hit.score, 4)!r}" + (" ✗" if hit.violated else "")
            if shown and len(head) + len(", ".join([*shown, item])) > 180:
                break
            shown.append(item)
        more = ", …" if len(shown) < len(self.hits) else ""
        return f"{head}{': ' if shown else ''}{', '.join(shown)}{more})"

    def _repr_html_(self) -> str:
        """For Jupyter: the query and formula, then a table of the hits; a hit whose caption
        contradicts the query (violated predicates) is marked ✗ and shaded. Every text is escaped.

        Example:
            >>> hit = Hit(1, "a", 0.9, "<i>x</i>", violated=("¬Talking/1",))
            >>> html = SearchResult("q", (hit,))._repr_html_()
            >>> "&lt;i&gt;" in html, "fortekit-violated" in html
            (True, True)
        """
        rows = []
        for hit in self.hits:
            marked = ' class="fortekit-violated" style="background-color:rgba(255,0,0,0.12)"' \
                if hit.violated else ""
            cells = [
                f"{hit.rank}{' ✗' if hit.violated else ''}", hit.item_id, f"{hit.score:.4f}",
                hit.caption or "", " ".join(hit.matched), " ".join(hit.missed), " ".join(hit.violated),
            ]
            rows.append(f"<tr{marked}>" + "".join(f"<td>{escape(cell)}</td>" for cell in cells)
                        + f"<td>{score_bar(hit.score_parts)}</td></tr>")
        lines = [f"<b>{escape(self.query)}</b>"]
        if self.phi_star is not None:
            lines.append(f"<code>{escape(self.phi_star)}</code>")
        if self.refined_text:
            lines.append(f"refined: {escape(self.refined_text)}")
        if self.clauses:
            lines.append("clauses: " + "; ".join(
                escape(("not: " if negated else "") + text) for text, negated in self.clauses))
        elif self.fallback:
            lines.append(f"formula scoring: {escape(self.fallback)}")
        lines.extend(f"unsure: {escape(line)}" for line in self.unsure)
        if self.confidence.low:
            lines.insert(0, f'<span class="fortekit-low-confidence">{escape(self.confidence.reason)}</span>')
        for item in self.pushed_down:
            now = "out of the candidates" if item.now is None else f"#{item.now}"
            why = "; ".join(item.evidence)
            lines.append(escape(f"pushed down: {item.item_id} #{item.was} → {now}: {why}"))
        header = "".join(f"<th>{name}</th>" for name in
                         ("rank", "id", "score", "caption", "matched", "missed", "violated", "why"))
        return (
            f'<div class="fortekit-result"><p>{"<br>".join(lines)}</p>'
            f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        )


def rounded_parts(
    parts: tuple[tuple[str, float], ...], score: float, digits: int = 6
) -> list[dict[str, Any]]:
    """The score parts rounded to ``digits`` as the score is, the last absorbing the rounding, so
    that the rounded parts sum to the rounded score (an output is the same, to the digit, whichever
    batch encoded the query).

    Example:
        >>> rounded_parts((("similarity", 0.1234564), ("formula", 0.1234564)), 0.2469128)
        [{'stage': 'similarity', 'amount': 0.123456}, {'stage': 'formula', 'amount': 0.123457}]
    """
    if not parts:
        return []
    shown = [round(amount, digits) + 0.0 for _, amount in parts[:-1]]  # + 0.0: no -0.0
    shown.append(round(round(score, digits) - sum(shown), digits) + 0.0)
    return [{"stage": stage, "amount": amount} for (stage, _), amount in zip(parts, shown, strict=True)]


#: The colour of each stage's part in a score bar (a part that takes away is drawn hatched).
_STAGE_COLOURS = {"similarity": "#4e79a7", "formula": "#f28e2b", "stage3": "#59a14f", "order": "#b07aa1"}


def format_score_parts(parts: tuple[tuple[str, float], ...]) -> str:
    """The score parts as one line, each labelled and signed.

    Example:
        >>> format_score_parts((("similarity", 0.61), ("formula", -0.052), ("stage3", 0.01)))
        'similarity 0.610 · formula −0.052 · stage3 +0.010'
    """
    shown = []
    for k, (stage, amount) in enumerate(parts):
        sign = "−" if amount < 0 else ("" if k == 0 else "+")  # -0.0 is +0.000, as on the page
        shown.append(f"{stage} {sign}{abs(amount):.3f}")
    return " · ".join(shown)


def score_bar(parts: tuple[tuple[str, float], ...], width: int = 160) -> str:
    """A small inline SVG bar of the score parts (HTML-safe), with the labelled line as its title.

    Example:
        >>> bar = score_bar((("similarity", 0.6), ("formula", -0.1)))
        >>> bar.startswith("<svg") and "formula −0.100" in bar
        True
    """
    if not parts:
        return ""
    total = sum(abs(amount) for _, amount in parts) or 1.0
    x, rects = 0.0, []
    for stage, amount in parts:
        w = width * abs(amount) / total
        colour = _STAGE_COLOURS.get(stage, "#999999")
        fill = colour if amount >= 0 else "none"
        rects.append(f'<rect x="{x:.1f}" y="1" width="{w:.1f}" height="10" fill="{fill}" '
                     f'stroke="{colour}" data-stage="{escape(stage)}"/>')
        x += w
    title = escape(format_score_parts(parts))
    return (f'<svg class="fortekit-score-bar" width="{width}" height="12" role="img" aria-label="{title}">'
            f"<title>{title}</title>{''.join(rects)}</svg>")


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
