"""The stages a :class:`~fortekit.search.retriever.Retriever` runs: the caller's, else the index kind's.

The :class:`~fortekit.search.retriever.Retriever` takes each stage as a keyword whose default
is "the default of this kind of index" (a sentinel); :func:`choose_stages` turns those keywords
into the components (a Stage 1 configuration, a head's file, a formula scoring configuration,
a re-ranker, the order check) and the :class:`~fortekit.search.defaults.Pipeline` that says what
runs and why.

Example:
    >>> from fortekit.search.index.audio_index import AudioIndex
    >>> index = AudioIndex.load("clips.index")  # doctest: +SKIP
    >>> chosen = choose_stages(index, backbone, stage1=DEFAULT, projection=None, formula=DEFAULT,
    ...                        rerank=DEFAULT, order_check=DEFAULT)  # doctest: +SKIP
    >>> chosen.pipeline.running  # doctest: +SKIP
    ('stage1', 'formula', 'stage3')
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.search.defaults import Pipeline, index_kind, kind_defaults, resolve_pipeline

if TYPE_CHECKING:
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.formula.scoring import FormulaScoringConfig
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.rerank import Reranker
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.config import RefineConfig

__all__ = ["DEFAULT", "ChosenStages", "DefaultSentinel", "choose_stages", "default_pipeline"]


class DefaultSentinel:
    """A keyword's default that means "what the table gives this kind of index"; ``help()`` says so."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<the default of the index's kind>"


DEFAULT: Any = DefaultSentinel()


@dataclass(frozen=True, slots=True)
class ChosenStages:
    """The components a Retriever builds, and the pipeline they make.

    Attributes:
        stage1: Stage 1's configuration, or None (off; also when a built refiner is given).
        projection: the Stage 2 head's file or folder, or None.
        formula: formula scoring's configuration, or None.
        rerank: Stage 3's re-ranker, or None.
        order_check: whether the order check runs.
        pipeline: what runs and why.
    """

    stage1: RefineConfig | None
    projection: str | os.PathLike[str] | None
    formula: FormulaScoringConfig | None
    rerank: Reranker | None
    order_check: bool
    pipeline: Pipeline


def choose_stages(
    index: AudioIndex,
    backbone: Backbone,
    *,
    stage1: Any,
    projection: Any,
    formula: Any,
    rerank: Any,
    order_check: Any,
    refiner: Refiner | None = None,
    use_faiss: bool = False,
) -> ChosenStages:
    """Each stage: the caller's value, or (for :data:`DEFAULT`) the index kind's default.

    Args:
        index: the index searched (its kind: :func:`~fortekit.search.defaults.index_kind`).
        backbone: the text encoder (a shipped Stage 2 head is looked up by its name and width).
        stage1, projection, formula, rerank, order_check: the Retriever's keywords, or
            :data:`DEFAULT`.
        refiner: a Stage 1 refiner the caller built (Stage 1 is then on, the caller's).
        use_faiss: the first pass searches a saved FAISS index of the unprojected rows, so a
            default Stage 2 head is unavailable.

    Returns:
        The :class:`ChosenStages`.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> index = AudioIndex.from_captions(["a"], [None], "demo", embeddings=np.eye(1),
        ...                                  parse_captions=False)
        >>> chosen = choose_stages(index, None, stage1=DEFAULT, projection=DEFAULT, formula=DEFAULT,
        ...                        rerank=DEFAULT, order_check=DEFAULT)
        >>> chosen.pipeline.kind, chosen.pipeline.running
        ('audio', ('formula',))
    """
    name, dim = str(getattr(backbone, "name", "")), int(getattr(backbone, "dim", 0) or 0)
    pipeline = _plan(index, name, dim, stage1=stage1, projection=projection, formula=formula, rerank=rerank,
                     order_check=order_check, refiner=refiner, use_faiss=use_faiss)
    return ChosenStages(
        stage1=_stage1(stage1, pipeline, refiner),
        projection=_projection(projection, pipeline, name, dim),
        formula=_formula(formula, pipeline),
        rerank=_rerank(rerank, pipeline),
        order_check=pipeline.state("order_check").on,
        pipeline=pipeline,
    )


def _plan(
    index: AudioIndex, name: str, dim: int, *, stage1: Any, projection: Any, formula: Any, rerank: Any,
    order_check: Any, refiner: Refiner | None, use_faiss: bool,
) -> Pipeline:
    """The pipeline: the caller's switches over the table's defaults for the index's kind."""
    kind = index_kind(index)
    table = kind_defaults(kind)
    choices: dict[str, bool | None] = {}
    details: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    caller_why: dict[str, str] = {}
    if refiner is not None:
        choices["stage1"] = True
        caller_why["stage1"] = "a Stage 1 refiner given by the caller"
    elif stage1 is not DEFAULT:
        choices["stage1"] = stage1 is not None
    elif table.stage("stage1").on:
        details["stage1"] = "online (corpus elaborator, feedback anchors)"
    if projection is not DEFAULT:
        choices["projection"] = projection is not None
        details["projection"] = str(projection or "")
    elif table.stage("projection").on:
        if _shipped(name, dim) is None:
            unavailable["projection"] = f"no Stage 2 head ships for the backbone {name!r}"
        elif use_faiss:
            unavailable["projection"] = "the saved FAISS index holds the unprojected rows"
        else:
            details["projection"] = f"the head shipped for {name!r}"
    if formula is not DEFAULT:
        choices["formula"] = formula is not None
    if rerank is not DEFAULT:
        choices["stage3"] = rerank is not None
    if not any(index.predicate_sets):
        unavailable["stage3"] = "the index holds no parsed captions"
        unavailable["order_check"] = "the index holds no parsed captions"
    if order_check is not DEFAULT:
        choices["order_check"] = bool(order_check)
    return resolve_pipeline(kind, choices, unavailable=unavailable, details=details, caller_why=caller_why)


def _shipped(name: str, dim: int) -> Path | None:
    from fortekit.search.projection.shipped import shipped_head

    return shipped_head(name, dim or None) if name else None


def _stage1(stage1: Any, pipeline: Pipeline, refiner: Refiner | None) -> RefineConfig | None:
    if refiner is not None:
        return None
    if stage1 is not DEFAULT:
        return stage1  # type: ignore[no-any-return]
    if not pipeline.state("stage1").on:
        return None
    from fortekit.search.stage1.config import RefineConfig

    return RefineConfig.online()


def _projection(projection: Any, pipeline: Pipeline, name: str, dim: int) -> str | os.PathLike[str] | None:
    if projection is not DEFAULT:
        return projection  # type: ignore[no-any-return]
    return _shipped(name, dim) if pipeline.state("projection").on else None


def _formula(formula: Any, pipeline: Pipeline) -> FormulaScoringConfig | None:
    if formula is not DEFAULT:
        return formula  # type: ignore[no-any-return]
    if not pipeline.state("formula").on:
        return None
    from fortekit.search.formula.scoring import FormulaScoringConfig

    return FormulaScoringConfig()


def _rerank(rerank: Any, pipeline: Pipeline) -> Reranker | None:
    if rerank is not DEFAULT:
        return rerank  # type: ignore[no-any-return]
    if not pipeline.state("stage3").on:
        return None
    from fortekit.search.rerank import Reranker

    return Reranker()


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

    return _plan(index, index.backbone_name, index.dim, stage1=DEFAULT, projection=DEFAULT, formula=DEFAULT,
                 rerank=DEFAULT, order_check=DEFAULT, refiner=None, use_faiss=False)
