"""From a :class:`~.spec.PipelineSpec` to the stage objects a Retriever ranks with, for one index.

Each ``"auto"`` of the spec becomes the default of the index's kind (:mod:`~.defaults`), where
the index and the backbone have what the stage needs; :func:`assemble` builds the components
(Stage 1's refiner, the text encoder and its cache, the formula scorer, the re-ranker, the order
check, the first pass) and the :class:`~.defaults.Pipeline` that says what runs and why.

Example:
    >>> import numpy as np
    >>> from fortekit.search.index.audio_index import AudioIndex
    >>> index = AudioIndex.from_captions(["a"], [None], "demo", embeddings=np.eye(1),
    ...                                  parse_captions=False)
    >>> plan(PipelineSpec(), index, "demo", 1).running
    ('formula',)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, PipelineError
from fortekit.search.pipeline.defaults import Pipeline, index_kind, kind_defaults, resolve_pipeline
from fortekit.search.pipeline.spec import AUTO, PipelineSpec

if TYPE_CHECKING:
    from fortekit.fol.predicates import PredicateSymbol
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.formula.evidence import LabelEvidence
    from fortekit.search.formula.order_check import OrderCheck
    from fortekit.search.formula.scoring import FormulaScorer
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.projected import ProjectedHead
    from fortekit.search.query_side import RefinementLookup
    from fortekit.search.rerank import Reranker
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.encoder import CachedTextEncoder

__all__ = ["Stages", "assemble", "caption_names", "default_head", "default_pipeline", "first_pass_reason",
           "plan", "plan_kind"]


@dataclass(frozen=True, slots=True)
class Stages:
    """The components one Retriever ranks with, and the pipeline they make.

    Attributes:
        spec: the spec they were assembled from.
        encoder: the text encoder with its cache (Stage 1's, when Stage 1 runs).
        refiner: Stage 1, or None.
        lookup: stored Stage 1 results, or None.
        projection: the Stage 2 head's file or folder, or None.
        formula_scorer: formula scoring, or None.
        reranker: Stage 3, or None.
        order_check: the order check, or None.
        use_ann: whether the first pass searches the index's saved FAISS index.
        projected: whether the index holds the rows the Stage 2 head in use projects (and an ANN
            part over them, :mod:`fortekit.search.index.projected`): the item vectors are those
            rows, and with ``use_ann`` the first pass searches that part, the head staying on.
        candidates: first-pass items re-scored per query.
        evidence: label evidence for the items, or None.
        captions: per item, the caption symbols the caller gave, or None (the index's own).
        pipeline: what runs and why.
    """

    spec: PipelineSpec
    encoder: CachedTextEncoder
    refiner: Refiner | None
    lookup: RefinementLookup | None
    projection: str | os.PathLike[str] | None
    formula_scorer: FormulaScorer | None
    reranker: Reranker | None
    order_check: OrderCheck | None
    use_ann: bool
    projected: bool
    candidates: int
    evidence: LabelEvidence | None
    captions: list[frozenset[str]] | None
    pipeline: Pipeline


def assemble(
    spec: PipelineSpec,
    index: AudioIndex,
    backbone: Backbone,
    *,
    encoder: CachedTextEncoder | None = None,
    device: str = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
    previous: Stages | None = None,
) -> Stages:
    """The stage objects of ``spec`` for ``index``: each ``"auto"`` as the index's kind has it.

    Args:
        spec: the stages asked for.
        index: the index searched (its kind: :func:`~.defaults.index_kind`).
        backbone: the text encoder (a shipped Stage 2 head is looked up by its name and width).
        encoder: a text encoder with its cache to share; None makes one (or takes Stage 1's).
        device: where Stage 1 runs when it is built here.
        cache_dir: a folder for the on-disk text-embedding cache, or None.
        previous: the stages of the same index and backbone under another spec: what did not
            change (Stage 1, the formula scorer, the order check) is shared, not built again.

    Returns:
        The :class:`Stages`.

    Raises:
        PipelineError: evidence or captions that do not fit the index (E423); ``first_pass="ann"``
            with a Stage 2 head whose projected rows the index does not hold (E425).
        FortekitError: from Stage 1, the backbone or a component, with their codes.

    Example:
        >>> stages = assemble(PipelineSpec(stage1=None), index, backbone)  # doctest: +SKIP
        >>> stages.pipeline.running  # doctest: +SKIP
        ('projection', 'formula', 'stage3')
    """
    from fortekit.search.stage1.encoder import CachedTextEncoder, TextEmbeddingCache

    name, dim = str(getattr(backbone, "name", "")), int(getattr(backbone, "dim", 0) or 0)
    first = _first_pass(spec, index, name, dim)
    if first.refused is not None:
        raise PipelineError(first.refused)
    use_ann = first.use_ann
    pipeline = plan(spec, index, name, dim, use_ann=use_ann, projected_ann=first.projected)
    same = previous is not None and previous.spec.stage1 is spec.stage1
    refiner = previous.refiner if same and previous is not None else _refiner(
        spec, pipeline, index, backbone, device=device, cache_dir=cache_dir)
    if refiner is not None:
        encoder = refiner.encoder
    elif previous is not None:
        encoder = previous.encoder
    elif encoder is None:
        cache = TextEmbeddingCache(cache_dir, backbone=backbone.name, dim=int(backbone.dim)) \
            if cache_dir is not None else None
        encoder = CachedTextEncoder(backbone, cache)
    formula_scorer = _formula(spec, pipeline, encoder, previous)
    return Stages(
        spec=spec, encoder=encoder, refiner=refiner, lookup=spec.lookup,
        projection=_projection(spec, pipeline, name, dim),
        formula_scorer=formula_scorer,
        reranker=_rerank(spec, pipeline),
        order_check=_order_check(pipeline, index, previous),
        use_ann=use_ann, projected=first.projected and pipeline.state("projection").on,
        candidates=spec.candidates,
        evidence=_evidence(getattr(index, "evidence", None) if spec.evidence == AUTO else spec.evidence,
                           len(index)),
        captions=None if spec.captions is None else caption_names(spec.captions, len(index)),
        pipeline=pipeline,
    )


def plan(spec: PipelineSpec, index: AudioIndex, name: str, dim: int, *, use_ann: bool = False,
         projected_ann: bool = False) -> Pipeline:
    """What runs for ``spec`` on ``index`` and why, without building anything.

    Args:
        spec: the stages asked for.
        index: the index (its kind and whether it holds parsed captions).
        name: the backbone's name, for the shipped Stage 2 head.
        dim: the backbone's width.
        use_ann: the first pass searches the saved FAISS index.
        projected_ann: the index holds an ANN part over the rows the head projects (the head
            stays on with ``use_ann``).

    Returns:
        The :class:`~.defaults.Pipeline`.

    Example:
        >>> plan(PipelineSpec(formula=None), index, "demo", 1).running  # doctest: +SKIP
        ()
    """
    return plan_kind(spec, index_kind(index), name, dim, parsed_captions=any(index.predicate_sets),
                     use_ann=use_ann, projected_ann=projected_ann)


def plan_kind(
    spec: PipelineSpec, kind: str, name: str, dim: int, *, parsed_captions: bool = True,
    use_ann: bool = False, projected_ann: bool = False,
) -> Pipeline:
    """What runs for ``spec`` on an index of ``kind`` and why: :func:`plan` without the index.

    The benchmark plans the default pipeline of a collection it has not indexed this way.

    Args:
        spec: the stages asked for.
        kind: the kind of index (:data:`~.defaults.KINDS`).
        name: the backbone's name, for the shipped Stage 2 head.
        dim: the backbone's width.
        parsed_captions: whether the items have parsed captions (Stage 3 and the order check need them).
        use_ann: the first pass searches a saved FAISS index.
        projected_ann: the index holds an ANN part over the rows the shipped head projects: with
            ``use_ann`` the head stays on (without it, the ANN part's rows are unprojected and the
            head is unavailable).

    Returns:
        The :class:`~.defaults.Pipeline`.

    Example:
        >>> plan_kind(PipelineSpec(), "audio", "demo", 1, parsed_captions=False).running
        ('formula',)
    """
    from fortekit.search.stage1.config import RefineConfig

    table = kind_defaults(kind)
    choices: dict[str, bool | None] = {}
    details: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    caller_why: dict[str, str] = {}
    if spec.stage1 != AUTO:
        choices["stage1"] = spec.stage1 is not None
        if spec.stage1 is not None and not isinstance(spec.stage1, RefineConfig):
            caller_why["stage1"] = "a Stage 1 refiner given by the caller"
    elif table.stage("stage1").on:
        details["stage1"] = "feedback (corpus elaborator, feedback anchors; no refinement search)"
    if spec.projection != AUTO:
        choices["projection"] = spec.projection is not None
        details["projection"] = str(spec.projection or "")
    elif table.stage("projection").on:
        if _shipped(name, dim) is None:
            unavailable["projection"] = f"no Stage 2 head ships for the backbone {name!r}"
        elif use_ann and not projected_ann:
            unavailable["projection"] = ("the saved FAISS index holds the unprojected rows (`fortekit index "
                                         "build-ann` adds an ANN part over the projected rows)")
        else:
            details["projection"] = f"the head shipped for {name!r}" + (
                " (the first pass searches the ANN part over its projected rows)" if use_ann else "")
    if spec.formula != AUTO:
        choices["formula"] = spec.formula is not None
    if spec.rerank != AUTO:
        choices["stage3"] = spec.rerank is not None
    if not parsed_captions:
        unavailable["stage3"] = "the index holds no parsed captions"
        unavailable["order_check"] = "the index holds no parsed captions"
    if spec.order_check != AUTO:
        choices["order_check"] = bool(spec.order_check)
    return resolve_pipeline(kind, choices, unavailable=unavailable, details=details, caller_why=caller_why)


def default_pipeline(index: AudioIndex) -> Pipeline:
    """What ``Retriever(index)`` runs with no stage switched, without loading the backbone.

    ``fortekit index info`` prints it; the shipped head is looked up by the index's backbone name
    and width.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> index = AudioIndex.from_captions(["a"], ["rain"], "demo", embeddings=np.eye(1),
        ...                                  parse_captions=False)
        >>> default_pipeline(index).state("projection").source
        'unavailable'
    """
    spec = PipelineSpec()
    first = _first_pass(spec, index, index.backbone_name, index.dim)
    return plan(spec, index, index.backbone_name, index.dim, use_ann=first.use_ann,
                projected_ann=first.projected)


def caption_names(captions: Sequence[Iterable[PredicateSymbol | str]], items: int) -> list[frozenset[str]]:
    """Per item, the asserted symbol names of its captions: what an excluded sound is judged by.

    Raises:
        PipelineError: not one symbol set per item (E423).

    Example:
        >>> [sorted(names) for names in caption_names([["Bird", "Singing"], []], 2)]
        [['Bird', 'Singing'], []]
    """
    from fortekit.fol.violation import positive_names

    if len(captions) != items:
        raise PipelineError(Errors.E423.format(name="captions", expected=f"one symbol set per item ({items})",
                                               value=f"{len(captions)} sets"))
    return [positive_names(symbols) for symbols in captions]


def first_pass_reason(spec: PipelineSpec, index: AudioIndex) -> str:
    """Which first pass a spec runs on an index, and why, in words (``--explain``, ``index info``).

    With a Stage 2 head on (the shipped one by default, or the spec's), an index's ANN part holds
    the unprojected rows; an index that also holds an ANN part over the rows that very head
    projects (:mod:`fortekit.search.index.projected`) is searched there, the head staying on.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> index = AudioIndex.from_captions(["a"], ["rain"], "demo", embeddings=np.eye(1),
        ...                                  parse_captions=False)
        >>> first_pass_reason(PipelineSpec(), index)
        'exact (the index has no ANN part; fortekit index build --ann hnsw adds one)'
        >>> first_pass_reason(PipelineSpec(first_pass="exact"), index)
        'exact (asked for: --first-pass exact)'
    """
    return _first_pass(spec, index, index.backbone_name, index.dim).reason


@dataclass(frozen=True, slots=True)
class _FirstPass:
    """Where the candidate pool comes from, whether the head's projected rows are there, and why."""

    use_ann: bool
    projected: bool
    reason: str
    refused: str | None = None  # E425: first_pass "ann" with a head whose projected rows are not there


def _first_pass(spec: PipelineSpec, index: AudioIndex, name: str, dim: int) -> _FirstPass:
    """The first pass of ``spec`` on ``index``: the rule of :func:`assemble` and :func:`first_pass_reason`."""
    from fortekit.search.index.ann import ANN_MIN_ITEMS, APPROXIMATE_KINDS

    kind, count = index.faiss_kind, len(index)
    head = _head_in_use(spec, index, name, dim)
    part = index.projected_ann
    projected = head is not None and part is not None and index.projected_rows is not None and (
        part.head == _identity(head))
    explicit = spec.projection not in (AUTO, None)
    if head is None or projected:
        off = ""
    elif part is None:
        off = "the index holds no ANN part over the rows it projects (fortekit index build-ann adds one)"
    else:
        off = f"the index's ANN part over projected rows was built for another head, {part.describe()}"
    over = f"{kind} over the rows the Stage 2 head projects"
    if spec.first_pass == "exact":
        return _FirstPass(False, projected, "exact (asked for: --first-pass exact)")
    if spec.first_pass == "ann":
        if projected:
            return _FirstPass(True, True, f"ann ({over}; asked for: --first-pass ann)")
        refused = None
        if explicit:
            refused = Errors.E425.format(head=spec.projection, directory=_folder_of(index), problem=off)
        return _FirstPass(True, False, f"ann ({kind}; asked for: --first-pass ann"
                                       f"{f'; the Stage 2 head is off: {off}' if off else ''})", refused)
    if kind not in APPROXIMATE_KINDS:
        return _FirstPass(False, projected,
                          "exact (the index has no ANN part; fortekit index build --ann hnsw adds one)")
    if explicit and not projected:
        return _FirstPass(False, False, f"exact (Stage 2's head is on, and the index's {kind} rows are "
                                        f"unprojected: {off})")
    if count < ANN_MIN_ITEMS:
        return _FirstPass(False, projected, (
            f"exact (the index has a {kind} part, but below {ANN_MIN_ITEMS:,} items exact search "
            f"is as fast and loses nothing: {count:,} here; --first-pass ann uses it)"))
    size = f"{count:,} items, from {ANN_MIN_ITEMS:,} on the first pass is approximate"
    if projected:
        return _FirstPass(True, True, f"ann ({over}: {size})")
    head_off = f"; the Stage 2 head is off: {off}" if off else ""
    return _FirstPass(True, False, f"ann ({kind}: {size}{head_off})")


def _head_in_use(spec: PipelineSpec, index: AudioIndex, name: str, dim: int) -> str | os.PathLike[str] | None:
    """The Stage 2 head the spec uses, the first pass aside: the spec's, or the kind's shipped one."""
    if spec.projection != AUTO:
        return spec.projection
    if not kind_defaults(index_kind(index)).stage("projection").on:
        return None
    return _shipped(name, dim)


def _identity(head: str | os.PathLike[str]) -> str:
    from fortekit.search.projection.ann import head_identity

    return head_identity(head)


def _folder_of(index: AudioIndex) -> str:
    """The index's folder for a message (DIR when it was built in memory)."""
    folder = getattr(index, "_faiss_file", None) or getattr(index, "_projected_file", None)
    return os.fspath(Path(folder).parent) if folder is not None else "DIR"


def default_head(index: AudioIndex) -> ProjectedHead | None:
    """The Stage 2 head a search of `index` uses by default, as the index takes it (None: none).

    What ``fortekit index build`` builds an ANN part over projected rows for: the head shipped for
    the index's backbone, where its kind of index uses one by default (docs/defaults.md).

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> index = AudioIndex.from_captions(["a"], ["rain"], "demo", embeddings=np.eye(1),
        ...                                  parse_captions=False)
        >>> default_head(index) is None
        True
    """
    head = _head_in_use(PipelineSpec(), index, index.backbone_name, index.dim)
    if head is None:
        return None
    from fortekit.search.projection.ann import index_head

    return index_head(head, index.backbone_name)


def _shipped(name: str, dim: int) -> Path | None:
    from fortekit.search.projection.shipped import shipped_head

    return shipped_head(name, dim or None) if name else None


def _refiner(
    spec: PipelineSpec, pipeline: Pipeline, index: AudioIndex, backbone: Backbone, *, device: str,
    cache_dir: str | os.PathLike[str] | None,
) -> Refiner | None:
    from fortekit.search.stage1.config import RefineConfig

    config: Any = spec.stage1
    if config is None or (config == AUTO and not pipeline.state("stage1").on):
        return None
    if config == AUTO:
        config = RefineConfig.feedback()
    if not isinstance(config, RefineConfig):
        return config  # type: ignore[no-any-return]  # a Refiner built by the caller
    from fortekit.search.stage1.assembly import build_refiner

    return build_refiner(backbone, config=config, elaborator=spec.elaborator, anchors=spec.anchors,
                         index=index, device=device, cache_dir=cache_dir)


def _projection(spec: PipelineSpec, pipeline: Pipeline, name: str, dim: int) -> str | os.PathLike[str] | None:
    if spec.projection != AUTO:
        return spec.projection
    return _shipped(name, dim) if pipeline.state("projection").on else None


def _formula(
    spec: PipelineSpec, pipeline: Pipeline, encoder: CachedTextEncoder, previous: Stages | None,
) -> FormulaScorer | None:
    from fortekit.search.formula.scoring import FormulaScorer, FormulaScoringConfig

    if spec.formula == AUTO and not pipeline.state("formula").on:
        return None
    if spec.formula is None:
        return None
    config = FormulaScoringConfig() if spec.formula == AUTO else spec.formula
    kept = previous.formula_scorer if previous is not None else None
    if kept is not None and previous is not None and previous.encoder is encoder and kept.config == config:
        return kept
    return FormulaScorer(encoder, config)


def _rerank(spec: PipelineSpec, pipeline: Pipeline) -> Reranker | None:
    if spec.rerank != AUTO:
        return spec.rerank
    if not pipeline.state("stage3").on:
        return None
    from fortekit.search.rerank import Reranker

    return Reranker()


def _order_check(pipeline: Pipeline, index: AudioIndex, previous: Stages | None) -> OrderCheck | None:
    if not pipeline.state("order_check").on:
        return None
    if previous is not None and previous.order_check is not None:
        return previous.order_check
    from fortekit.search.formula.order_check import OrderCheck

    return OrderCheck(index.captions)


def _evidence(evidence: object, items: int) -> LabelEvidence | None:
    from fortekit.search.formula.evidence import LabelEvidence

    if evidence is None:
        return None
    if not isinstance(evidence, LabelEvidence):
        raise PipelineError(Errors.E423.format(name="evidence", expected="a LabelEvidence",
                                               value=type(evidence).__name__))
    if len(evidence) != items:
        raise PipelineError(Errors.E423.format(
            name="evidence", expected=f"a LabelEvidence with one row per item ({items})",
            value=f"{len(evidence)} rows"))
    return evidence
