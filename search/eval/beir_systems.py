"""The systems of ``fortekit eval --beir`` and the data they share (embedded and parsed once).

Each system ranks every item for every query through a
:class:`~fortekit.search.retriever.Retriever` with its stages switched on
(:meth:`BeirData.retriever`), so a figure here is what ``fortekit search`` gives with the
same settings. The registry maps a name to a function from :class:`BeirData` to a
:class:`SystemRanking`, so a system is added with :func:`register_system`. The built-in
ones, in table order:

* ``baseline``: f_T(q) · item, the frozen retriever;
* ``S3-paper``, ``S3-polarity``: the top 50 re-ranked by Stage 3 with Pred(Π(q)) against
  Pred(Π(text)) of each item, the paper's s_pred or the polarity-aware one;
* ``formula``: formula scoring of Π(q) over the items (clauses, fuzzy connectives);
* ``S1+formula``: Stage 1's q* as the query vector, formula scoring of phi*;
* ``full``: Stage 1, formula scoring of phi*, then Stage 3 (polarity) with Pred(phi*); the
  items through the Stage 2 head when one is given (``--projection``);
* ``formula+S3``: formula scoring of Π(q), then Stage 3's default (what ``default`` was before
  the defaults depended on the kind of index);
* ``default``: what ``fortekit search`` does without stage flags on this kind of collection
  (:mod:`fortekit.search.pipeline.defaults`: Stage 1 and the shipped Stage 2 head on human captions;
  the order check and the captioner's label evidence on audio).

Three systems run only when named in ``--systems``: ``S1`` (Stage 1's q* against the items,
nothing else) and ``S2`` (f_T(q) against the items through the Stage 2 head of
``--projection``, which it requires), the ablation of one stage at a time; and
``formula+S3+order``, ``formula+S3`` whose top 50 are then sorted by a formula-level order check
(:mod:`fortekit.search.formula.order_check`: the query's ``Before(x, y)`` against the item caption's),
what ``fortekit search --order-check`` adds. ``formula+evidence`` and ``formula+S3+evidence`` (only
with a captioner that gives label evidence, such as ``tagger``) add the captioner's label
probabilities to formula scoring (:mod:`fortekit.search.formula.evidence`). The names
``default+order`` and ``default+evidence`` of earlier releases still select them.

Every system also keeps the score it gave each (query, item) pair (``SystemRanking.scores``),
from which the audio-to-text direction ranks the query texts for each item
(:mod:`fortekit.search.eval.beir_a2t`): the Retriever's final score (items below Stage 3's top N
keep ``(1 - alpha) sim + alpha s_min``, as :meth:`~fortekit.search.rerank.Reranker.rerank` returns
them); ``default+order`` moves items within ``default``'s top N and each takes the score of
the place it lands on.

Everything a system needs is computed on first use and kept: a run of ``baseline`` alone
never parses a caption or searches Stage 1. ``item_concepts.jsonl`` is not read here.

Example:
    >>> [name for name, spec in SYSTEMS.items() if spec.by_default][4:]
    ['formula', 'formula+S3', 'default', 'S1+formula', 'full']
    >>> parse_systems("formula,S3-paper,S2")
    ['baseline', 'formula', 'S3-paper', 'S2']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fortekit.errors import Errors, EvaluationError
from fortekit.fol.predicates import PredicateSymbol
from fortekit.search.eval.beir_data import BeirData
from fortekit.search.eval.systems import rank_all

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.search.rerank import Reranker
    from fortekit.search.retriever import Retriever

__all__ = ["SYSTEMS", "BeirData", "SystemRanking", "SystemSpec", "parse_systems", "register_system"]


@dataclass
class SystemRanking:
    """One system's ranking of every item for every query.

    Attributes:
        order: (queries, items) item indices, best first.
        seconds: wall time of scoring and sorting (preparation measured apart, in ``BeirData.seconds``).
        extra: per-query columns for the per-query file (e.g. ``refined``: G(phi*)).
        scores: (queries, items) the score of each pair, column j for item j (not sorted), each
            row non-increasing along ``order``; None for a system that gives an order only (the
            audio-to-text direction then reads ranks, :func:`fortekit.search.eval.beir_a2t.score_matrix`).
    """

    order: npt.NDArray[np.int64]
    seconds: float
    extra: dict[str, list[Any]]
    scores: npt.NDArray[np.float32] | None = None


@dataclass(frozen=True)
class SystemSpec:
    """A registered system.

    Attributes:
        name: its name in ``--systems`` and the tables.
        rank: BeirData -> SystemRanking.
        description: one line for the docs and ``config.json``.
        query_steps: the preparation steps of ``BeirData.seconds`` on the query side (for ms/query).
        item_steps: those on the item side (for s / 1,000 items).
        by_default: run when ``--systems`` is left out (else only when named).
    """

    name: str
    rank: Callable[[BeirData], SystemRanking]
    description: str
    query_steps: tuple[str, ...] = ("encode_queries",)
    item_steps: tuple[str, ...] = ("encode_items",)
    by_default: bool = True


SYSTEMS: dict[str, SystemSpec] = {}
# Names of earlier releases: "default" then meant formula scoring and Stage 3 on every collection.
RENAMED_SYSTEMS: dict[str, str] = {
    "default+order": "formula+S3+order", "default+evidence": "formula+S3+evidence",
}


def register_system(spec: SystemSpec) -> SystemSpec:
    """Add a system to :data:`SYSTEMS` (a later one of the same name replaces it).

    Example:
        >>> spec = register_system(SystemSpec("mine", lambda data: SYSTEMS["baseline"].rank(data), "a copy"))
        >>> "mine" in SYSTEMS
        True
        >>> del SYSTEMS["mine"]
    """
    SYSTEMS[spec.name] = spec
    return spec


def parse_systems(spec: str | None) -> list[str]:
    """The systems of ``--systems`` (None: all run by default), in the given order, ``baseline`` first.

    The baseline is always run: the paired t-tests compare every system with it.

    Raises:
        EvaluationError: an unknown name (E506).
    """
    if spec is None:
        return [name for name, system in SYSTEMS.items() if system.by_default]
    names = [name.strip() for name in spec.split(",") if name.strip()]
    lowered = {name.lower(): name for name in SYSTEMS}
    chosen: list[str] = []
    for name in names or [spec]:
        name = RENAMED_SYSTEMS.get(name.lower(), name)
        known = lowered.get(name.lower())
        if known is None:
            raise EvaluationError(Errors.E506.format(name=name, options=", ".join(SYSTEMS)))
        chosen.append(known)
    return list(dict.fromkeys(["baseline", *chosen]))


def _ranking(retriever: Retriever, vectors: torch.Tensor, formulas: Sequence[Formula | None] | None,
             query_predicates: Sequence[frozenset[PredicateSymbol]] | None = None,
             extra: dict[str, Any] | None = None, chunk_rows: int = 512) -> SystemRanking:
    """Every item ranked for every query through ``retriever``: the benchmark's one loop, :func:`rank_all`."""
    tick = time.perf_counter()
    order, scores = rank_all(retriever, vectors, formulas, query_predicates, chunk_rows=chunk_rows)
    return SystemRanking(order, time.perf_counter() - tick, extra or {}, scores)


def _reranker(data: BeirData, mode: str, alpha: float | None = None) -> Reranker:
    from fortekit.search.rerank import Reranker

    weight = data.alpha if alpha is None else alpha
    return Reranker(alpha=weight, top_n=data.top_n, mode=mode)  # type: ignore[arg-type]


def _baseline(data: BeirData) -> SystemRanking:
    return _ranking(data.retriever(formula=False, rerank=None), data.queries, None)


def _stage3(mode: str, alpha: float | None = None) -> Callable[[BeirData], SystemRanking]:
    def rank(data: BeirData) -> SystemRanking:
        retriever = data.retriever(formula=False, rerank=_reranker(data, mode, alpha))
        return _ranking(retriever, data.queries, data.query_formulas)

    return rank


def _formula(data: BeirData) -> SystemRanking:
    return _ranking(data.retriever(formula=True, rerank=None), data.queries, data.query_formulas)


def _s1_formula(data: BeirData) -> SystemRanking:
    output, _ = data.stage1
    # Formula scoring judges the query's own formula; Stage 1 acts through q*.
    return _ranking(data.retriever(formula=True, rerank=None), output.q_star, data.query_formulas,
                    extra={"refined": output.refined_texts})


def _formula_stage3(data: BeirData) -> SystemRanking:
    """Formula scoring of Π(q), then Stage 3 with its default (alpha 0.03)."""
    from fortekit.search.rerank import DEFAULT_ALPHA

    retriever = data.retriever(formula=True, rerank=_reranker(data, "polarity", DEFAULT_ALPHA))
    return _ranking(retriever, data.queries, data.query_formulas)


def _default(data: BeirData) -> SystemRanking:
    """What ``fortekit search`` does without stage flags on this kind of collection: the table of
    defaults (:mod:`fortekit.search.pipeline.defaults`) for :attr:`BeirData.kind`, with the head shipped for
    the backbone as Stage 2 and the captioner's label evidence where it gives some."""
    from fortekit.plugins.protocols import LabelTagger
    from fortekit.search.pipeline import PipelineSpec, plan_kind
    from fortekit.search.projection.shipped import shipped_head
    from fortekit.search.rerank import DEFAULT_ALPHA

    table = plan_kind(PipelineSpec(), data.kind, data.backbone.name, int(data.backbone.dim))
    head = shipped_head(data.backbone.name, int(data.backbone.dim)) if table.state("projection").on else None
    stage3 = _reranker(data, "polarity", DEFAULT_ALPHA) if table.state("stage3").on else None
    evidence = isinstance(data.captioner, LabelTagger) and table.state("formula").on
    retriever = data.retriever(formula=table.state("formula").on, rerank=stage3, projected=head is not None,
                               evidence=evidence, head=head)
    extra: dict[str, Any] = {}
    vectors, sets = data.queries, None
    if table.state("stage1").on:
        output, _ = data.stage1
        vectors, sets, extra = output.q_star, output.phi_star_predicates, {"refined": output.refined_texts}
    ranking = _ranking(retriever, vectors, data.query_formulas, sets, extra=extra)
    return _order_checked(data, ranking) if table.state("order_check").on else ranking


def _s1(data: BeirData) -> SystemRanking:
    """Stage 1 alone: q* against the items, no formula scoring, no re-ranking."""
    output, _ = data.stage1
    return _ranking(data.retriever(formula=False, rerank=None), output.q_star, None,
                    extra={"refined": output.refined_texts})


def _s2(data: BeirData) -> SystemRanking:
    """Stage 2 alone: f_T(q) against h(e_a), the items through the head of ``--projection``."""
    if data.projection is None:
        raise EvaluationError(Errors.E508.format(
            problem="the system S2 needs a Stage 2 head", fix="Pass --projection DIR, or leave S2 out.",
        ))
    return _ranking(data.retriever(formula=False, rerank=None, projected=True), data.queries, None)


def _formula_stage3_order(data: BeirData) -> SystemRanking:
    """``formula+S3``, then the order check on its top N (:func:`_order_checked`)."""
    return _order_checked(data, _formula_stage3(data))


def _order_checked(data: BeirData, base: SystemRanking) -> SystemRanking:
    """``base``'s top N sorted by the order check: agreeing items first, reversed ones last.

    Scores: an item moved within the top N takes ``base``'s score of the place it lands on
    (the row stays non-increasing; the other items keep theirs).
    """
    import torch

    from fortekit.search.formula.order_check import OrderCheck

    check = OrderCheck(data.item_texts, data.top_n, formulas=data.item_formulas)
    tick = time.perf_counter()
    ranked = np.zeros(base.order.shape, dtype=np.float32) if base.scores is None else np.take_along_axis(
        base.scores, base.order, axis=1)
    _, moved = check.apply(data.query_formulas, torch.from_numpy(ranked), torch.from_numpy(base.order))
    order = moved.numpy()
    scores = None
    if base.scores is not None:  # each place keeps default's score; the items move
        scores = np.empty_like(base.scores)
        np.put_along_axis(scores, order, ranked, axis=1)
    return SystemRanking(order, base.seconds + time.perf_counter() - tick, base.extra, scores)


def _formula_evidence(data: BeirData) -> SystemRanking:
    """Formula scoring of Π(q) with the captioner's label evidence (a tagger's probabilities)."""
    retriever = data.retriever(formula=True, rerank=None, evidence=True)
    return _ranking(retriever, data.queries, data.query_formulas)


def _formula_stage3_evidence(data: BeirData) -> SystemRanking:
    """``formula+S3`` with the captioner's label evidence (an index that stores a tagger's evidence)."""
    from fortekit.search.rerank import DEFAULT_ALPHA

    retriever = data.retriever(formula=True, rerank=_reranker(data, "polarity", DEFAULT_ALPHA), evidence=True)
    return _ranking(retriever, data.queries, data.query_formulas)


def _full(data: BeirData) -> SystemRanking:
    from fortekit.search.rerank import DEFAULT_ALPHA

    output, _ = data.stage1
    stage3 = _reranker(data, "polarity", DEFAULT_ALPHA)
    retriever = data.retriever(formula=True, rerank=stage3, projected=True)
    return _ranking(retriever, output.q_star, data.query_formulas, output.phi_star_predicates,
                    extra={"refined": output.refined_texts})


for _spec in (
    SystemSpec("baseline", _baseline, "f_T(q) · item: the frozen retriever"),
    SystemSpec("S3-paper", _stage3("paper"), "Stage 3, the paper's s_pred, Pred(Π(q)), top 50, alpha 0.3",
               ("encode_queries", "parse_queries"), ("caption_items", "encode_items", "parse_items")),
    SystemSpec("S3-polarity", _stage3("polarity"), "Stage 3, polarity-aware s_pred, Pred(Π(q))",
               ("encode_queries", "parse_queries"), ("caption_items", "encode_items", "parse_items")),
    SystemSpec("S3-default", _stage3("polarity", 0.03),
               "Stage 3's default: polarity-aware s_pred, alpha 0.03",
               ("encode_queries", "parse_queries"), ("caption_items", "encode_items", "parse_items")),
    SystemSpec("formula", _formula, "formula scoring of Π(q) over the items",
               ("encode_queries", "parse_queries")),
    SystemSpec("formula+S3", _formula_stage3, "formula scoring of Π(q), then Stage 3's default (alpha 0.03)",
               ("encode_queries", "parse_queries"), ("caption_items", "encode_items", "parse_items")),
    SystemSpec("default", _default,
               "what fortekit search does without stage flags on this kind of collection "
               "(search/pipeline/defaults.toml; the head shipped for the backbone as Stage 2)",
               ("stage1", "encode_queries", "parse_queries"),
               ("caption_items", "encode_items", "parse_items", "project_items")),
    SystemSpec("S1+formula", _s1_formula, "Stage 1's q* and formula scoring of phi*", ("stage1",)),
    SystemSpec("full", _full,
               "Stage 1, formula scoring of phi*, Stage 3's default (alpha 0.03) (+ Stage 2: --projection)",
               ("stage1",), ("caption_items", "encode_items", "parse_items", "project_items")),
    SystemSpec("S1", _s1, "Stage 1's q* alone (no formula scoring, no Stage 3)", ("stage1",),
               by_default=False),
    SystemSpec("formula+S3+order", _formula_stage3_order,
               "formula+S3, then its top 50 sorted by the order check of Before(x, y) against the item "
               "caption's formula (search/formula/order_check.py; fortekit search --order-check)",
               ("encode_queries", "parse_queries"), ("caption_items", "encode_items", "parse_items"),
               by_default=False),
    SystemSpec("formula+evidence", _formula_evidence,
               "formula scoring of Π(q), the clauses a label grounds judged by the captioner's label "
               "evidence too (--captioner tagger; search/formula/evidence.py)",
               ("encode_queries", "parse_queries"), ("tag_items", "encode_items"), by_default=False),
    SystemSpec("formula+S3+evidence", _formula_stage3_evidence,
               "formula+S3 with the captioner's label evidence in formula scoring (--captioner tagger)",
               ("encode_queries", "parse_queries"),
               ("caption_items", "tag_items", "encode_items", "parse_items"), by_default=False),
    SystemSpec("S2", _s2, "f_T(q) against the items through the Stage 2 head (--projection)",
               ("encode_queries",), ("encode_items", "project_items"), by_default=False),
):
    register_system(_spec)
