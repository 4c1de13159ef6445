"""The systems of ``fortekit eval --beir`` and the data they share (embedded and parsed once).

Each system ranks every item for every query; the registry maps a name to a function
from :class:`BeirData` to a :class:`SystemRanking`, so a system is added with
:func:`register_system`. The built-in ones, in table order:

* ``baseline``: f_T(q) · item, the frozen retriever;
* ``S3-paper``, ``S3-polarity``: the top 50 re-ranked by Stage 3 with Pred(Π(q)) against
  Pred(Π(text)) of each item, the paper's s_pred or the polarity-aware one;
* ``formula``: formula scoring of Π(q) over the items (clauses, fuzzy connectives);
* ``S1+formula``: Stage 1's q* as the query vector, formula scoring of phi*;
* ``full``: Stage 1, formula scoring of phi*, then Stage 3 (polarity) with Pred(phi*); the
  items through the Stage 2 head when one is given (``--projection``).

Everything a system needs is computed on first use and kept: a run of ``baseline`` alone
never parses a caption or searches Stage 1. ``item_concepts.jsonl`` is not read here.

Example:
    >>> list(SYSTEMS)
    ['baseline', 'S3-paper', 'S3-polarity', 'S3-default', 'formula', 'default', 'S1+formula', 'full']
    >>> parse_systems("formula,S3-paper")
    ['baseline', 'formula', 'S3-paper']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fortekit.errors import Errors, EvaluationError
from fortekit.fol.predicates import PredicateSymbol
from fortekit.search.eval.beir import BeirCollection

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.eval.stage1 import Stage1Output
    from fortekit.search.formula_scoring import FormulaScorer, FormulaScoringConfig
    from fortekit.search.stage1.config import SearchConfig

__all__ = ["SYSTEMS", "BeirData", "SystemRanking", "SystemSpec", "parse_systems", "register_system"]


@dataclass
class SystemRanking:
    """One system's ranking of every item for every query.

    Attributes:
        order: (queries, items) item indices, best first.
        seconds: wall time of scoring and sorting (preparation measured apart, in ``BeirData.seconds``).
        extra: per-query columns for the per-query file (e.g. ``refined``: G(phi*)).
    """

    order: npt.NDArray[np.int64]
    seconds: float
    extra: dict[str, list[Any]]


@dataclass(frozen=True)
class SystemSpec:
    """A registered system.

    Attributes:
        name: its name in ``--systems`` and the tables.
        rank: BeirData -> SystemRanking.
        description: one line for the docs and ``config.json``.
        query_steps: the preparation steps of ``BeirData.seconds`` on the query side (for ms/query).
        item_steps: those on the item side (for s / 1,000 items).
    """

    name: str
    rank: Callable[[BeirData], SystemRanking]
    description: str
    query_steps: tuple[str, ...] = ("encode_queries",)
    item_steps: tuple[str, ...] = ("encode_items",)


SYSTEMS: dict[str, SystemSpec] = {}


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
    """The systems of ``--systems`` (None: all), in the given order, with ``baseline`` first.

    The baseline is always run: the paired t-tests compare every system with it.

    Raises:
        EvaluationError: an unknown name (E506).
    """
    if spec is None:
        return list(SYSTEMS)
    names = [name.strip() for name in spec.split(",") if name.strip()]
    lowered = {name.lower(): name for name in SYSTEMS}
    chosen: list[str] = []
    for name in names or [spec]:
        known = lowered.get(name.lower())
        if known is None:
            raise EvaluationError(Errors.E506.format(name=name, options=", ".join(SYSTEMS)))
        chosen.append(known)
    return list(dict.fromkeys(["baseline", *chosen]))


def _check_texts(texts: Sequence[str]) -> list[str | None]:
    """Each text if the caption parser takes it, else None."""
    from fortekit.fol.caption.parser import default_parser
    from fortekit.fol.caption.pipeline import check_text

    limit = default_parser().max_chars
    kept: list[str | None] = []
    for text in texts:
        try:
            kept.append(check_text(text, function="fortekit eval --beir", max_chars=limit))
        except (ValueError, TypeError):
            kept.append(None)
    return kept


class BeirData:
    """A BEIR collection embedded through a backbone and parsed, each part on first use.

    Args:
        collection: the loaded collection.
        backbone: the encoder.
        search: Stage 1's configuration.
        anchors: Stage 1's anchor setting ("none" or "proxy").
        formula: the formula-scoring configuration.
        alpha: Stage 3's weight of s_pred.
        top_n: how many items Stage 3 re-ranks.
        projection: a trained Stage 2 head (directory or file) for ``full``, or None.
        stage1_dir: where Stage 1's cache goes.
        stage1_key: what Stage 1's results depend on besides its configuration.
        device: for Stage 1 and the projection.
        log: progress lines.
    """

    def __init__(
        self, collection: BeirCollection, backbone: Backbone, *, search: SearchConfig, anchors: str = "none",
        formula: FormulaScoringConfig | None = None, alpha: float = 0.3, top_n: int = 50,
        projection: Path | None = None, stage1_dir: Path | None = None,
        stage1_key: dict[str, Any] | None = None, device: str = "auto",
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.collection = collection
        self.backbone = backbone
        self.search = search
        self.anchors = anchors
        self.formula_config = formula
        self.alpha = alpha
        self.top_n = top_n
        self.projection = projection
        self.stage1_dir = stage1_dir
        self.stage1_key = stage1_key or {}
        self.device = device
        self.log = log or (lambda line: None)
        self.seconds: dict[str, float] = {}
        self.item_sources: dict[str, int] = {}
        self.query_ids = [query.id for query in collection.queries]
        self.item_ids = [item.id for item in collection.items]

    def _timed(self, step: str, started: float) -> None:
        self.seconds[step] = self.seconds.get(step, 0.0) + time.perf_counter() - started

    @cached_property
    def encoder(self) -> Any:
        """f_T through an in-memory cache (clause texts repeat across queries and systems)."""
        from fortekit.search.stage1.encoder import CachedTextEncoder

        self.backbone.encode_text(["warm up"])  # load the weights before anything is timed
        return CachedTextEncoder(self.backbone)

    @cached_property
    def queries(self) -> torch.Tensor:
        """f_T(q), (queries, d) unit rows on the CPU."""
        import torch

        encoder = self.encoder
        tick = time.perf_counter()
        vectors = encoder.backbone.encode_text([q.text for q in self.collection.queries])
        self._timed("encode_queries", tick)
        return torch.nn.functional.normalize(vectors.detach().to("cpu", torch.float32), dim=1)

    @cached_property
    def items(self) -> torch.Tensor:
        """The item vectors, (items, d) unit rows on the CPU: audio, caption mean, or text."""
        import torch

        from fortekit.search.eval.data import item_embeddings

        _ = self.encoder
        items = self.collection.items
        use_audio = getattr(self.backbone, "sample_rate", None) is not None
        tick = time.perf_counter()
        vectors = torch.zeros((len(items), int(self.backbone.dim)), dtype=torch.float32)
        audio = [i for i, item in enumerate(items) if use_audio and item.audio is not None]
        texts = [i for i, item in enumerate(items) if not (use_audio and item.audio is not None)]
        if audio:
            encoded = self.backbone.encode_audio([items[i].audio for i in audio])  # type: ignore[misc]
            vectors[audio] = encoded.detach().to("cpu", torch.float32)
        if texts:
            groups = [items[i].captions or (items[i].text,) for i in texts]
            vectors[texts] = item_embeddings(self.backbone, groups)
        self._timed("encode_items", tick)
        captions = sum(1 for i in texts if items[i].captions)
        self.item_sources = {"audio": len(audio), "captions": captions, "text": len(texts) - captions}
        return torch.nn.functional.normalize(vectors, dim=1)

    @cached_property
    def query_formulas(self) -> list[Formula | None]:
        """Π(q) per query (None where the parser refuses the text)."""
        from fortekit.fol.caption.parser import parse_captions

        tick = time.perf_counter()
        texts = _check_texts([q.text for q in self.collection.queries])
        valid = [text for text in texts if text is not None]
        parsed = iter([result.formula for result in parse_captions(valid)])
        formulas = [next(parsed) if text is not None else None for text in texts]
        self._timed("parse_queries", tick)
        return formulas

    @cached_property
    def query_predicates(self) -> list[frozenset[PredicateSymbol]]:
        """Pred(Π(q)) per query."""
        from fortekit.fol.predicates import predicates

        return [predicates(phi) if phi is not None else frozenset() for phi in self.query_formulas]

    @cached_property
    def item_predicates(self) -> list[frozenset[PredicateSymbol]]:
        """Pred(Π(text)) per item: its own caption, parsed once."""
        from fortekit.search.rerank import item_predicates_from_captions

        tick = time.perf_counter()
        sets = item_predicates_from_captions([item.text for item in self.collection.items])
        self._timed("parse_items", tick)
        return sets

    @cached_property
    def scorer(self) -> FormulaScorer:
        from fortekit.search.formula_scoring import FormulaScorer

        return FormulaScorer(self.encoder, self.formula_config)

    @cached_property
    def stage1(self) -> tuple[Stage1Output, list[Formula | None]]:
        """Stage 1 of the queries (cached in ``stage1_dir``) and phi* parsed back."""
        from fortekit.fol import parse_formula
        from fortekit.search.eval.stage1 import Stage1Cache
        from fortekit.search.index.audio_index import AudioIndex
        from fortekit.search.stage1.anchors import NoAnchors, ProxyAnchors
        from fortekit.search.stage1.beam import Refiner

        refiner = Refiner(self.backbone, "lexical", config=self.search, device=self.device)
        if self.anchors == "proxy":
            index = AudioIndex.from_captions(self.item_ids, [item.text for item in self.collection.items],
                                             self.backbone.name, embeddings=self.items.numpy(),
                                             parse_captions=False)
            source: Any = ProxyAnchors(index, k=10)
        else:
            source = NoAnchors()
        directory = self.stage1_dir or Path("stage1")
        cache = Stage1Cache(refiner, directory, log=self.log)
        output = cache.run(f"beir-{self.anchors}", [q.text for q in self.collection.queries], source,
                           self.search, self.stage1_key)
        self.seconds["stage1"] = float(sum(output.seconds))
        self.log(f"stage 1 [{self.anchors}]: {len(output.seconds)} queries, {output.from_cache} from the "
                 f"cache, {output.refined:.0%} refined, {1000 * output.seconds_per_query:.0f} ms/query")
        return output, [parse_formula(text, warn_free=False) if text else None for text in output.phi_star]

    @cached_property
    def projected(self) -> torch.Tensor:
        """The item vectors through the Stage 2 head of ``projection`` (the items as they are without one)."""
        if self.projection is None:
            return self.items
        import torch

        from fortekit.search.projection.head import load_projection, project_embeddings

        items = self.items
        tick = time.perf_counter()
        head = load_projection(self.projection, device=self.device)
        projected = torch.from_numpy(project_embeddings(head, items))
        self._timed("project_items", tick)
        return projected


def _order(scores: torch.Tensor) -> npt.NDArray[np.int64]:
    import torch

    return torch.sort(scores, dim=1, descending=True, stable=True).indices.cpu().numpy().astype(np.int64)


def _rerank(data: BeirData, scores: torch.Tensor, mode: str,
            query_predicates: Sequence[frozenset[PredicateSymbol]],
            alpha: float | None = None) -> npt.NDArray[np.int64]:
    from fortekit.search.rerank import Reranker

    weight = data.alpha if alpha is None else alpha
    reranker = Reranker(alpha=weight, top_n=data.top_n, mode=mode)  # type: ignore[arg-type]
    _, order = reranker.rerank(scores, query_predicates, data.item_predicates)
    return order.cpu().numpy().astype(np.int64)


def _baseline(data: BeirData) -> SystemRanking:
    queries, items = data.queries, data.items
    tick = time.perf_counter()
    order = _order(queries @ items.T)
    return SystemRanking(order, time.perf_counter() - tick, {})


def _stage3(mode: str, alpha: float | None = None) -> Callable[[BeirData], SystemRanking]:
    def rank(data: BeirData) -> SystemRanking:
        queries, items = data.queries, data.items
        query_predicates, _ = data.query_predicates, data.item_predicates
        tick = time.perf_counter()
        order = _rerank(data, queries @ items.T, mode, query_predicates, alpha)
        return SystemRanking(order, time.perf_counter() - tick, {})

    return rank


def _formula(data: BeirData) -> SystemRanking:
    queries, items, formulas, scorer = data.queries, data.items, data.query_formulas, data.scorer
    tick = time.perf_counter()
    order = _order(scorer.score(formulas, queries @ items.T, items))
    return SystemRanking(order, time.perf_counter() - tick, {})


def _s1_formula(data: BeirData) -> SystemRanking:
    (output, formulas), items, scorer = data.stage1, data.items, data.scorer
    tick = time.perf_counter()
    order = _order(scorer.score(formulas, output.q_star @ items.T, items))
    return SystemRanking(order, time.perf_counter() - tick, {"refined": output.refined_texts})


def _default(data: BeirData) -> SystemRanking:
    """The pipeline a user gets: formula scoring of Π(q), then Stage 3 with its default (alpha 0.03)."""
    from fortekit.search.rerank import DEFAULT_ALPHA

    queries, items, formulas, scorer = data.queries, data.items, data.query_formulas, data.scorer
    _ = data.item_predicates
    tick = time.perf_counter()
    scores = scorer.score(formulas, queries @ items.T, items)
    order = _rerank(data, scores, "polarity", data.query_predicates, DEFAULT_ALPHA)
    return SystemRanking(order, time.perf_counter() - tick, {})


def _full(data: BeirData) -> SystemRanking:
    from fortekit.search.rerank import DEFAULT_ALPHA

    (output, formulas), items, scorer = data.stage1, data.projected, data.scorer
    _ = data.item_predicates
    tick = time.perf_counter()
    scores = scorer.score(formulas, output.q_star @ items.T, items)
    order = _rerank(data, scores, "polarity", output.phi_star_predicates, DEFAULT_ALPHA)
    return SystemRanking(order, time.perf_counter() - tick, {"refined": output.refined_texts})


for _spec in (
    SystemSpec("baseline", _baseline, "f_T(q) · item: the frozen retriever"),
    SystemSpec("S3-paper", _stage3("paper"), "Stage 3, the paper's s_pred, Pred(Π(q)), top 50, alpha 0.3",
               ("encode_queries", "parse_queries"), ("encode_items", "parse_items")),
    SystemSpec("S3-polarity", _stage3("polarity"), "Stage 3, polarity-aware s_pred, Pred(Π(q))",
               ("encode_queries", "parse_queries"), ("encode_items", "parse_items")),
    SystemSpec("S3-default", _stage3("polarity", 0.03),
               "Stage 3's default: polarity-aware s_pred, alpha 0.03",
               ("encode_queries", "parse_queries"), ("encode_items", "parse_items")),
    SystemSpec("formula", _formula, "formula scoring of Π(q) over the items",
               ("encode_queries", "parse_queries")),
    SystemSpec("default", _default, "formula scoring of Π(q), then Stage 3's default (alpha 0.03)",
               ("encode_queries", "parse_queries"), ("encode_items", "parse_items")),
    SystemSpec("S1+formula", _s1_formula, "Stage 1's q* and formula scoring of phi*", ("stage1",)),
    SystemSpec("full", _full,
               "Stage 1, formula scoring of phi*, Stage 3's default (alpha 0.03) (+ Stage 2: --projection)",
               ("stage1",), ("encode_items", "parse_items", "project_items")),
):
    register_system(_spec)
