"""Stage 3: predicate-aware re-ranking of each query's top-N retrieved items.

Each retrieved item has a caption (stored with it in the index, or written by a
captioner plug-in) parsed once into its predicate set ``Pred(φ̂_k)``
(:mod:`fortekit.search.index.item_captions`). For query ``φ*`` the item's score becomes
``s = (1 - α) sim + α s_pred`` with α = 0.3, and the top N are sorted by it. The default
is the polarity-aware score with α = 0.03 (:data:`DEFAULT_ALPHA`): chosen on development
data (AudioCaps val, Clotho development clips 1-2000; ``scripts/choose_rerank_default.py``)
as the largest α that loses no R@1 on AudioCaps, where every larger α loses (0.05: -0.6,
0.3: -7.3); at 0.03 s_pred only breaks near-ties of the first pass. The paper's α = 0.3
is :data:`PAPER_ALPHA`. Two predicate scores are offered:

* ``"paper"`` (:func:`predicate_overlap`): ``|A ∩ B| / sqrt(|A| |B|)`` over symbols
  compared by name and arity only, so a ¬Rain in the query matches an item whose
  caption says it rains, exactly as the paper's formula does;
* ``"polarity"`` (:func:`polarity_overlap`): the same with polarity, where a
  contradiction (¬P against P, or P against ¬P) counts against the item.

Example:
    >>> from fortekit.fol import parse_formula, predicates
    >>> query = predicates(parse_formula("Wind(x) ∧ Blowing(x) ∧ ¬Rain(y)"))
    >>> rainy = predicates(parse_formula("Wind(x) ∧ Blowing(x) ∧ Rain(y)"))
    >>> dry = predicates(parse_formula("Wind(x) ∧ Blowing(x)"))
    >>> round(predicate_overlap(query, rainy), 3), round(predicate_overlap(query, dry), 3)
    (1.0, 0.816)
    >>> round(polarity_overlap(query, rainy), 3), round(polarity_overlap(query, dry), 3)
    (0.333, 0.816)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from fortekit._checks import check_int
from fortekit.errors import Errors, EvaluationError
from fortekit.fol.predicates import PredicateSymbol

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    import torch

    from fortekit.fol.ast import Formula


__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_TOP_N",
    "MODES",
    "PAPER_ALPHA",
    "Reranker",
    "polarity_overlap",
    "predicate_overlap",
]

Mode = Literal["paper", "polarity"]
MODES: tuple[str, ...] = ("paper", "polarity")
DEFAULT_ALPHA = 0.03
PAPER_ALPHA = 0.3
DEFAULT_TOP_N = 50
_LOWEST = {"paper": 0.0, "polarity": -1.0}  # the least s_pred each mode can give


def _unsigned(symbols: Iterable[PredicateSymbol]) -> frozenset[tuple[str, int]]:
    return frozenset((symbol.name, symbol.arity) for symbol in symbols)


def _flipped(symbol: PredicateSymbol) -> PredicateSymbol:
    return PredicateSymbol(symbol.name, symbol.arity, symbol.polarity.flipped())


def predicate_overlap(
    query_preds: Iterable[PredicateSymbol], item_preds: Iterable[PredicateSymbol]
) -> float:
    """The paper's s_pred: ``|A ∩ B| / sqrt(|A| |B|)``, polarity ignored.

    A and B are the query's and the item's symbols as (name, arity) pairs, so ``¬P`` in
    the query matches ``P`` in the item, as in the paper.

    Args:
        query_preds: ``Pred(φ*)``.
        item_preds: ``Pred(φ̂_k)`` of the item's caption.

    Returns:
        A score in [0, 1]; 0.0 when either set is empty.

    Example:
        >>> from fortekit.fol import parse_formula, predicates
        >>> q = predicates(parse_formula("Bird(x) ∧ Chirping(x) ∧ Morning(t)"))
        >>> item = predicates(parse_formula("Bird(x) ∧ Chirping(x) ∧ Soft(x) ∧ Outdoor(t) ∧ Peaceful(x)"))
        >>> round(predicate_overlap(q, item), 4)  # 2 / sqrt(3 * 5)
        0.5164
    """
    a = _unsigned(query_preds)
    b = _unsigned(item_preds)
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def polarity_overlap(
    query_preds: Iterable[PredicateSymbol], item_preds: Iterable[PredicateSymbol],
    conflict: int | None = None,
) -> float:
    """Polarity-aware s_pred: ``(agree - conflict) / sqrt(|Q| |I|)``, in [-1, 1].

    Q and I are the signed symbol sets (name, arity, polarity). ``agree = |Q ∩ I|``
    counts same-polarity matches (P with P, ¬P with ¬P); ``conflict`` counts the query
    symbols whose opposite is in the item (¬P in the query where the item's caption
    asserts P, and P where it denies P). A symbol the item does not mention counts
    neither way: a caption that says nothing of rain neither satisfies nor violates ¬Rain.
    Both counts are at most ``min(|Q|, |I|) <= sqrt(|Q| |I|)``, hence the range.
    Without negations on either side this equals :func:`predicate_overlap`.

    Args:
        query_preds: ``Pred(φ*)``.
        item_preds: ``Pred(φ̂_k)``.
        conflict: the conflicts counted by the grounded violation check
            (:mod:`fortekit.fol.violation`: the negated symbols of the excluded sounds the item
            holds, so that "a man speaking" conflicts with ¬Talking); None counts literal opposites.

    Returns:
        A score in [-1, 1]; 0.0 when either set is empty.

    Example:
        >>> from fortekit.fol import parse_formula, predicates
        >>> q = predicates(parse_formula("Crowd(x) ∧ ¬Music(y)"))
        >>> polarity_overlap(q, predicates(parse_formula("Crowd(x) ∧ Music(y)")))
        0.0
        >>> polarity_overlap(q, predicates(parse_formula("Crowd(x) ∧ ¬Music(y)")))
        1.0
    """
    q = frozenset(query_preds)
    i = frozenset(item_preds)
    if not q or not i:
        return 0.0
    agree = len(q & i)
    if conflict is None:
        conflict = sum(1 for symbol in q if _flipped(symbol) in i)
    conflict = min(conflict, len(q), len(i))
    return (agree - conflict) / math.sqrt(len(q) * len(i))


def _conflicts(flipped_query: frozenset[PredicateSymbol], item: frozenset[PredicateSymbol],
               violations: Callable[[Iterable[PredicateSymbol | str]], int] | None,
               names: Iterable[PredicateSymbol | str]) -> int:
    """Grounded conflicts (the excluded sounds' symbols the item holds,
    :meth:`~fortekit.fol.violation.ViolationCheck.violation_counter`), and at least the literal
    opposites a qualifier can have ("not loud" against "loud"): the query's symbols with their
    polarity flipped that the item holds."""
    literal = len(flipped_query & item)
    return max(literal, violations(names) if violations is not None else 0)


class Reranker:
    """Stage 3: re-score each query's top-N items with ``(1 - α) sim + α s_pred`` and re-sort them.

    Args:
        alpha: weight α of the predicate score, in [0, 1] (0: keep the order; 1: sort by s_pred).
        top_n: how many of each query's best items are re-scored (N).
        mode: ``"paper"`` (:func:`predicate_overlap`) or ``"polarity"`` (:func:`polarity_overlap`).

    Raises:
        EvaluationError: an option out of range (E480).

    Example:
        >>> import torch
        >>> from fortekit.fol import parse_formula, predicates
        >>> items = [predicates(parse_formula(f)) for f in ("Rain(x)", "Dog(x) ∧ Barking(x)")]
        >>> query = [predicates(parse_formula("Dog(x)"))]
        >>> scores, indices = Reranker(alpha=0.3).rerank(torch.tensor([[0.6, 0.5]]), query, items)
        >>> indices.tolist(), [round(s, 3) for s in scores[0].tolist()]
        ([[1, 0]], [0.562, 0.42])
    """

    def __init__(
        self, alpha: float = DEFAULT_ALPHA, top_n: int = DEFAULT_TOP_N, mode: Mode = "polarity"
    ) -> None:
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 <= alpha <= 1.0:
            raise EvaluationError(Errors.E480.format(
                what="re-ranker", name="alpha", expected="a number in [0, 1]", value=alpha,
            ))
        check_int(top_n, name="top_n", error=EvaluationError, message=Errors.E480, what="re-ranker")
        if mode not in MODES:
            raise EvaluationError(Errors.E480.format(
                what="re-ranker", name="mode", expected=f"one of {', '.join(MODES)}", value=mode,
            ))
        self.alpha = float(alpha)
        self.top_n = top_n
        self.mode: Mode = mode

    def __repr__(self) -> str:
        return f"Reranker(alpha={self.alpha}, top_n={self.top_n}, mode={self.mode!r})"

    def s_pred(self, query_preds: Iterable[PredicateSymbol], item_preds: Iterable[PredicateSymbol]) -> float:
        """The predicate score of this re-ranker's mode."""
        if self.mode == "polarity":
            return polarity_overlap(query_preds, item_preds)
        return predicate_overlap(query_preds, item_preds)

    def rerank(
        self,
        scores: torch.Tensor | tuple[torch.Tensor, torch.Tensor],
        query_predicates: Sequence[frozenset[PredicateSymbol]],
        item_predicates: Sequence[frozenset[PredicateSymbol]],
        *,
        formulas: Sequence[Formula | None] | None = None,
        item_names: Sequence[frozenset[str]] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Re-rank each query's top ``top_n`` items; the others keep their order below them.

        The first-pass ranking is the input sorted by similarity (stable: equal scores keep
        index order for a matrix, given order for top-k lists). Its first ``top_n`` items
        get ``(1 - α) sim + α s_pred`` and are sorted by it (stable: ties keep the first-pass
        order). Items after them keep their order and get ``(1 - α) sim + α s_min``, with
        ``s_min`` the least score the mode can give (0 paper, -1 polarity), so each returned
        row is non-increasing. The row order of ``indices`` is the ranking: compute ranks
        with :func:`fortekit.search.eval.metrics.ranks_from_indices`.

        Args:
            scores: a (queries, items) similarity matrix, or a tuple ``(top_scores, top_indices)``
                of shape (queries, k) as ``torch.topk`` returns them (indices into the items).
            query_predicates: ``Pred(φ*)`` per query.
            item_predicates: the predicate set of every item of the collection.
            formulas: per query, its formula: with ``mode="polarity"``, conflicts are counted by
                the grounded violation check (:mod:`fortekit.fol.violation`), the one check every
                violation mark uses; None: literal opposites.
            item_names: per item, the asserted symbol names the check reads (default: those of
                ``item_predicates``).

        Returns:
            ``(scores, indices)`` of shape (queries, items) or (queries, k), best first.

        Raises:
            EvaluationError: shapes, lengths or index ranges that do not fit, or scores
                that are not finite (E481).
        """
        import torch

        top_scores, top_indices = self._first_pass(scores, len(query_predicates), len(item_predicates))
        n_queries, width = top_scores.shape
        head = min(self.top_n, width)
        if n_queries == 0 or width == 0:
            return top_scores, top_indices
        head_indices = top_indices[:, :head]
        s_pred = torch.tensor(
            self._s_pred_rows(head_indices.tolist(), query_predicates, item_predicates, formulas, item_names),
            dtype=top_scores.dtype, device=top_scores.device,
        )
        fused = (1.0 - self.alpha) * top_scores[:, :head] + self.alpha * s_pred
        fused, order = torch.sort(fused, dim=1, descending=True, stable=True)
        tail = (1.0 - self.alpha) * top_scores[:, head:] + self.alpha * _LOWEST[self.mode]
        return (
            torch.cat([fused, tail], dim=1),
            torch.cat([torch.gather(head_indices, 1, order), top_indices[:, head:]], dim=1),
        )

    def _s_pred_rows(
        self,
        rows: list[list[int]],
        query_predicates: Sequence[frozenset[PredicateSymbol]],
        item_predicates: Sequence[frozenset[PredicateSymbol]],
        formulas: Sequence[Formula | None] | None = None,
        item_names: Sequence[frozenset[str]] | None = None,
    ) -> list[list[float]]:
        if self.mode == "polarity":
            if formulas is None:
                literal: list[list[float]] = []
                for q, row in enumerate(rows):
                    query = query_predicates[q]
                    flipped = frozenset(_flipped(symbol) for symbol in query)
                    literal.append([
                        polarity_overlap(query, item, len(flipped & item))
                        for item in (item_predicates[i] for i in row)
                    ])
                return literal
            from fortekit.fol.violation import default_check

            check = default_check()
            names = item_names if item_names is not None else item_predicates
            out: list[list[float]] = []
            for q, row in enumerate(rows):
                query, phi = query_predicates[q], formulas[q]
                # what does not change from item to item is found once a query
                flipped = frozenset(_flipped(symbol) for symbol in query)
                violations = check.violation_counter(phi) if phi is not None else None
                out.append([polarity_overlap(query, item_predicates[i],
                                             _conflicts(flipped, item_predicates[i], violations, names[i]))
                            for i in row])
            return out
        # The paper's score compares unsigned symbols: strip polarity once per item.
        unsigned: dict[int, frozenset[tuple[str, int]]] = {}
        result: list[list[float]] = []
        for q, row in enumerate(rows):
            a = _unsigned(query_predicates[q])
            values: list[float] = []
            for i in row:
                b = unsigned.get(i)
                if b is None:
                    b = unsigned[i] = _unsigned(item_predicates[i])
                values.append(len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0)
            result.append(values)
        return result

    @staticmethod
    def _first_pass(scores: Any, n_queries: int, n_items: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The first-pass ranking (scores, indices), best first, checked against the predicate lists."""
        import torch

        def fail(problem: str) -> EvaluationError:
            return EvaluationError(Errors.E481.format(problem=problem))

        if isinstance(scores, tuple):  # a list is a score matrix written as nested lists
            if len(scores) != 2:
                raise fail(f"a tuple of {len(scores)} parts instead of (top_scores, top_indices)")
            values = torch.as_tensor(scores[0])
            indices = torch.as_tensor(scores[1], device=values.device)
            if values.ndim != 2 or values.shape != indices.shape:
                raise fail(f"top_scores of shape {tuple(values.shape)}, top_indices {tuple(indices.shape)}")
            if indices.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8, torch.int8):
                raise fail(f"top_indices of dtype {indices.dtype} (an integer tensor is needed)")
            if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= n_items):
                raise fail(
                    f"top_indices in [{int(indices.min())}, {int(indices.max())}] but {n_items} item "
                    "predicate sets"
                )
            indices = indices.long()
        else:
            values = torch.as_tensor(scores)
            if values.ndim != 2:
                raise fail(f"scores of shape {tuple(values.shape)}")
            if values.shape[1] != n_items:
                raise fail(f"scores for {values.shape[1]} items but {n_items} item predicate sets")
            indices = torch.arange(n_items, device=values.device).expand(values.shape[0], n_items)
        if not values.is_floating_point():
            values = values.float()
        if values.shape[0] != n_queries:
            raise fail(f"{values.shape[0]} score rows but {n_queries} query predicate sets")
        if values.numel() and not bool(torch.isfinite(values).all()):
            raise fail("scores with NaN or infinity")
        values, order = torch.sort(values, dim=1, descending=True, stable=True)
        return values, torch.gather(indices, 1, order)
