"""The systems of ``fortekit eval`` and how each one ranks a collection.

A system switches three stages on or off over the frozen baseline ``f_T(q) · e_a``:

* S1: the query vector is Stage 1's q* (with one anchor setting) instead of f_T(q);
* S2: the items are projected, h(e_a), by the trained Stage 2 head;
* S3: each query's top 50 are re-ranked with ``(1 - alpha) sim + alpha s_pred``, the
  paper's s_pred or the polarity-aware one, with Pred(phi*) (S1 on) or Pred(Pi(q));
* formula: each query's similarities are re-scored by its formula (phi* with S1, else
  Pi(q)) before Stage 3 (:mod:`fortekit.search.formula.scoring`; text-to-audio only).

``default`` is the pipeline a user gets on a caption-indexed collection, as the table of
defaults (:mod:`fortekit.search.pipeline.defaults`) gives it for the kind ``captions``: Stage 1 with the
corpus elaborator and feedback anchors, the Stage 2 head shipped for the backbone (not the one
the benchmark trains), formula scoring and Stage 3's default; ``default-S1``, ``default-S2``,
``default-formula`` and ``default-S3`` leave one of them out.

Every system ranks through a :class:`~fortekit.search.retriever.Retriever` with those
stages switched on, in one loop (:func:`rank_chunks`, shared with ``fortekit eval --beir``): the
benchmark assembles no pipeline of its own.
In the audio-to-text direction the item is the query and the captions the collection
(a Retriever over an index of the captions): S1 refines the captions of the collection and
S3 compares the item caption's predicates with each caption's.

Example:
    >>> [system.name for system in ablation_systems("bank", ["bank", "none"])][:4]
    ['baseline', 'S1', 'S2', 'S3']
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from fortekit.fol.predicates import PredicateSymbol
from fortekit.search.eval.metrics import ranks_from_indices

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.search.retriever import Retriever

__all__ = [
    "DEFAULT_ANCHORS", "Direction", "RankedRun", "System", "ablation_systems", "default_systems", "rank_all",
    "rank_chunks", "rank_through",
]

Direction = Literal["t2a", "a2t"]
TOP_STORED = 10  # retrieved items stored per query in per_query/<system>.jsonl


@dataclass(frozen=True, slots=True)
class System:
    """One row of the ablation table.

    Attributes:
        name: e.g. "S1+S3" or "S1@oracle"; also the per-query file's name.
        s1: use q* (Stage 1) for the text side.
        s2: project the items (Stage 2).
        s3: re-rank with this s_pred mode ("paper", "polarity"), or None.
        anchors: the anchor setting of Stage 1 (meaningful when ``s1``).
        formula: re-score by the query's formula (formula scoring).
        alpha: Stage 3's alpha for this system (None: the run's ``--alpha``).
        head: Stage 2's head: ``"trained"`` (on the run's training part) or ``"shipped"`` (the one
            :mod:`fortekit.search.projection.shipped` ships for the backbone: what a user gets).
    """

    name: str
    s1: bool
    s2: bool
    s3: str | None
    anchors: str
    formula: bool = False
    alpha: float | None = None
    head: str = "trained"

    def to_dict(self) -> dict[str, object]:
        return {"S1": self.s1, "S2": self.s2, "S3": self.s3, "anchors": self.anchors if self.s1 else None,
                "formula": self.formula, "alpha": self.alpha, "head": self.head if self.s2 else None}


def _combo_name(s1: bool, s2: bool, s3: bool) -> str:
    parts = [name for name, on in (("S1", s1), ("S2", s2), ("S3", s3)) if on]
    return "+".join(parts) or "baseline"


DEFAULT_ANCHORS = "default"  # the Stage 1 run of the default pipeline: corpus elaborator, feedback anchors


def default_systems(shipped_head: bool) -> list[System]:
    """The default pipeline of a caption-indexed collection, and each of its stages left out.

    The stages come from the table of defaults (kind ``captions``); Stage 2 is the shipped head,
    on only when one ships for the backbone.

    Args:
        shipped_head: whether a head ships for the run's backbone.

    Returns:
        ``default``, then ``default-<stage>`` for each stage it runs.

    Example:
        >>> [s.name for s in default_systems(True)]
        ['default', 'default-S1', 'default-S2', 'default-formula', 'default-S3']
    """
    from fortekit.search.pipeline.defaults import kind_defaults
    from fortekit.search.rerank import DEFAULT_ALPHA

    table = kind_defaults("captions")
    on = {name: table.stage(name).on for name in ("stage1", "projection", "formula", "stage3")}
    on["projection"] = on["projection"] and shipped_head

    def make(name: str, without: str | None = None) -> System:
        keep = {stage: value and stage != without for stage, value in on.items()}
        return System(name, keep["stage1"], keep["projection"], "polarity" if keep["stage3"] else None,
                      DEFAULT_ANCHORS, formula=keep["formula"], alpha=DEFAULT_ALPHA, head="shipped")

    labels = {"stage1": "S1", "projection": "S2", "formula": "formula", "stage3": "S3"}
    left_out = [make(f"default-{labels[stage]}", stage) for stage, value in on.items() if value]
    return [make("default"), *left_out]


def ablation_systems(primary: str, anchors: Sequence[str], *, shipped_head: bool = False) -> list[System]:
    """The 8 S1/S2/S3 combinations (paper s_pred), their 4 polarity variants, S1 per anchor setting,
    then formula scoring alone and with Stage 1, Stage 3's default alone, and the default pipeline
    with each of its stages left out (:func:`default_systems`).

    Args:
        primary: the anchor setting of the combinations (and of Stage 2's training queries).
        anchors: every anchor setting evaluated; each other one gets an "S1@<name>" row.
        shipped_head: whether a Stage 2 head ships for the run's backbone (the default's Stage 2).

    Returns:
        The systems, in table order.

    Example:
        >>> [s.name for s in ablation_systems("bank", ["bank", "oracle"])][-7:]
        ['formula', 'S1+formula', 'S3-default', 'default', 'default-S1', 'default-formula', 'default-S3']
    """
    order = [(False, False, False), (True, False, False), (False, True, False), (False, False, True),
             (True, True, False), (True, False, True), (False, True, True), (True, True, True)]
    systems = [
        System(_combo_name(s1, s2, s3), s1, s2, "paper" if s3 else None, primary) for s1, s2, s3 in order
    ]
    systems += [
        System(_combo_name(s1, s2, True) + "-polarity", s1, s2, "polarity", primary)
        for s1, s2, s3 in order if s3
    ]
    systems += [System(f"S1@{name}", True, False, None, name) for name in anchors if name != primary]
    from fortekit.search.rerank import DEFAULT_ALPHA

    systems += [
        System("formula", False, False, None, primary, formula=True),
        System("S1+formula", True, False, None, primary, formula=True),
        System("S3-default", False, False, "polarity", primary, alpha=DEFAULT_ALPHA),
    ]
    return systems + default_systems(shipped_head)


@dataclass
class RankedRun:
    """How one system ranked the collection for every query.

    Attributes:
        ranks: the 1-based rank of each query's relevant item.
        top: (queries, 10) the best items, best first.
        seconds: wall time of scoring (and re-ranking) all queries.
        rerank_seconds: the part of it spent re-ranking.
    """

    ranks: npt.NDArray[np.int64]
    top: npt.NDArray[np.int64]
    seconds: float
    rerank_seconds: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


def rank_chunks(
    retriever: Retriever,
    queries: torch.Tensor,
    formulas: Sequence[Formula | None] | None = None,
    query_predicates: Sequence[frozenset[PredicateSymbol]] | None = None,
    *,
    chunk_rows: int = 512,
    timings: dict[str, float] | None = None,
) -> Iterator[tuple[npt.NDArray[np.int64], torch.Tensor]]:
    """Every item ranked for every query through :meth:`Retriever.rank`: the benchmark's one loop.

    ``fortekit eval`` (``--test`` through :func:`rank_through`, ``--beir`` through :func:`rank_all`)
    ranks with this loop, so a figure it reports is what ``fortekit search`` gives with the same
    settings. Every item is a candidate (the metrics need the whole ranking); queries are ranked
    ``chunk_rows`` at a time, and each caller keeps of a chunk only what it needs.

    Args:
        retriever: the system: index, item vectors (projected with Stage 2) and ranking stages.
        queries: (q, d) unit query vectors (f_T(q), q*, or items for audio-to-text).
        formulas: per query, its formula (formula scoring and Stage 3); None: no formula.
        query_predicates: per query, the set Stage 3 compares (default: Pred of ``formulas``).
        chunk_rows: queries ranked per call.
        timings: when given, the seconds of each step are added to it (see :meth:`Retriever.rank`).

    Yields:
        Per chunk of queries, in order: (rows, items) item rows best first, and their scores
        in that order.

    Example:
        >>> rows, scores = next(rank_chunks(retriever, queries, formulas))  # doctest: +SKIP
        >>> rows[0, :3].tolist()  # doctest: +SKIP
        [4, 0, 7]
    """
    import torch

    n_items = len(retriever.index)
    given = list(formulas) if formulas is not None else [None] * int(queries.shape[0])
    predicate_rows = None if query_predicates is None else list(query_predicates)
    with torch.inference_mode():
        for start in range(0, int(queries.shape[0]), chunk_rows):
            stop = start + chunk_rows
            sets = None if predicate_rows is None else predicate_rows[start:stop]
            scores, order = retriever.rank(queries[start:stop], given[start:stop], n_items,
                                           query_predicates=sets, timings=timings)
            yield order.cpu().numpy().astype(np.int64), scores


def rank_all(
    retriever: Retriever,
    queries: torch.Tensor,
    formulas: Sequence[Formula | None] | None = None,
    query_predicates: Sequence[frozenset[PredicateSymbol]] | None = None,
    *,
    chunk_rows: int = 512,
    timings: dict[str, float] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The whole ranking and every score, from :func:`rank_chunks` (``fortekit eval --beir``).

    Args:
        retriever, queries, formulas, query_predicates, chunk_rows, timings: as
            :func:`rank_chunks`.

    Returns:
        ``(order, scores)``: (q, items) item rows best first, and (q, items) the score of each
        pair, column j for item j.

    Example:
        >>> order, scores = rank_all(retriever, queries, formulas)  # doctest: +SKIP
        >>> order[0, :3].tolist(), float(scores[0, order[0, 0]])  # doctest: +SKIP
        ([4, 0, 7], 0.8123)
    """
    n_items = len(retriever.index)
    orders: list[npt.NDArray[np.int64]] = []
    matrices: list[npt.NDArray[np.float32]] = []
    for rows, scores in rank_chunks(retriever, queries, formulas, query_predicates, chunk_rows=chunk_rows,
                                    timings=timings):
        matrix = np.empty(rows.shape, dtype=np.float32)
        np.put_along_axis(matrix, rows, scores.float().cpu().numpy(), axis=1)  # column j: item j
        orders.append(rows)
        matrices.append(matrix)
    if not orders:
        return np.zeros((0, n_items), dtype=np.int64), np.zeros((0, n_items), dtype=np.float32)
    return np.concatenate(orders), np.concatenate(matrices)


def rank_through(
    retriever: Retriever,
    queries: torch.Tensor,
    targets: Sequence[int],
    *,
    formulas: Sequence[Formula | None] | None = None,
    query_predicates: Sequence[frozenset[PredicateSymbol]] | None = None,
    chunk_rows: int = 512,
) -> RankedRun:
    """Each query's relevant item's rank and its top 10, from :func:`rank_all`.

    The benchmark's systems are Retrievers with stages switched on or off
    (:meth:`~fortekit.search.retriever.Retriever.replace`), so a figure it reports is what
    ``fortekit search`` gives with the same settings.

    Args:
        retriever: the system: index, item vectors (projected with Stage 2) and ranking stages.
        queries: (q, d) unit query vectors (f_T(q), q*, or items for audio-to-text).
        targets: the relevant item of each query.
        formulas: per query, its formula (formula scoring and Stage 3); None: no formula.
        query_predicates: per query, the set Stage 3 compares (default: Pred of ``formulas``).
        chunk_rows: queries ranked per call.

    Returns:
        The :class:`RankedRun`.

    Example:
        >>> retriever = Retriever("clips.index", formula=None, rerank=None)  # doctest: +SKIP
        >>> rank_through(retriever, queries, targets).ranks[:3].tolist()  # doctest: +SKIP
        [1, 3, 2]
    """
    wanted = np.asarray(list(targets), dtype=np.int64)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    ranks: list[npt.NDArray[np.int64]] = []
    tops: list[npt.NDArray[np.int64]] = []
    # Only each chunk's ranks and top 10 are kept: a whole (queries x items) ranking need not fit.
    done = 0
    for rows, _ in rank_chunks(retriever, queries, formulas, query_predicates, chunk_rows=chunk_rows,
                               timings=timings):
        ranks.append(ranks_from_indices(rows, wanted[done:done + len(rows)]))
        tops.append(rows[:, :TOP_STORED])
        done += len(rows)
    empty = np.zeros(0, dtype=np.int64)
    return RankedRun(
        ranks=np.concatenate(ranks) if ranks else empty,
        top=np.concatenate(tops) if tops else empty.reshape(0, TOP_STORED),
        seconds=time.perf_counter() - started, rerank_seconds=timings.get("rerank", 0.0),
        extra={"formula_seconds": timings.get("formula", 0.0)},
    )
