"""Retrieval: Stage 1 refine, the index, formula scoring, Stages 2-3, the ranking, evaluation, the CLI.

Importing this package is light: each name loads its module (and torch) on first use.

Example:
    >>> from fortekit.search import Refiner, RefineConfig
    >>> RefineConfig.offline().beam_width
    5
    >>> refiner = Refiner("minilm", "lexical", config=RefineConfig.online())  # doctest: +SKIP
    >>> refiner.refine("a person talking").refined_text  # doctest: +SKIP
    'a person talking loudly'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fortekit._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from fortekit.search.formula.clauses import split_clauses
    from fortekit.search.formula.scoring import FormulaScorer, FormulaScoringConfig
    from fortekit.search.hits import explain_predicates
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.collection import Collection
    from fortekit.search.pipeline import PipelineSpec
    from fortekit.search.projection import (
        ProjectionConfig,
        ProjectionData,
        ProjectionHead,
        load_projection,
        project_embeddings,
        save_projection,
    )
    from fortekit.search.projection.training import TrainingReport, train_projection
    from fortekit.search.query_side import RefinementLookup
    from fortekit.search.rerank import DEFAULT_ALPHA, Reranker, polarity_overlap, predicate_overlap
    from fortekit.search.retriever import Hit, Retriever, SearchResult
    from fortekit.search.stage1.anchor_sources import ANCHOR_SOURCES, make_anchor_source, make_elaborator
    from fortekit.search.stage1.anchors import AnchorBank, NoAnchors, OracleAnchors, ProxyAnchors
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.config import RefineConfig
    from fortekit.search.stage1.corpus import CaptionCorpus
    from fortekit.search.stage1.corpus_elaborator import CorpusElaborator
    from fortekit.search.stage1.encoder import CachedTextEncoder, EncoderStats, TextEmbeddingCache
    from fortekit.search.stage1.feedback import FeedbackAnchors
    from fortekit.search.stage1.result import ObjectiveTerms, RefinementResult, SearchNode

_LAZY = {
    "Refiner": "fortekit.search.stage1.beam",
    "RefineConfig": "fortekit.search.stage1.config",
    "RefinementResult": "fortekit.search.stage1.result",
    "SearchNode": "fortekit.search.stage1.result",
    "ObjectiveTerms": "fortekit.search.stage1.result",
    "CachedTextEncoder": "fortekit.search.stage1.encoder",
    "EncoderStats": "fortekit.search.stage1.encoder",
    "TextEmbeddingCache": "fortekit.search.stage1.encoder",
    "AnchorBank": "fortekit.search.stage1.anchors",
    "NoAnchors": "fortekit.search.stage1.anchors",
    "OracleAnchors": "fortekit.search.stage1.anchors",
    "ProxyAnchors": "fortekit.search.stage1.anchors",
    "AudioIndex": "fortekit.search.index.audio_index",
    "Collection": "fortekit.search.index.collection",
    "FormulaScorer": "fortekit.search.formula.scoring",
    "FormulaScoringConfig": "fortekit.search.formula.config",
    "Retriever": "fortekit.search.retriever",
    "PipelineSpec": "fortekit.search.pipeline",
    "SearchResult": "fortekit.search.retriever",
    "Hit": "fortekit.search.retriever",
    "explain_predicates": "fortekit.search.hits",
    "RefinementLookup": "fortekit.search.query_side",
    "ANCHOR_SOURCES": "fortekit.search.stage1.anchor_sources",
    "make_anchor_source": "fortekit.search.stage1.anchor_sources",
    "make_elaborator": "fortekit.search.stage1.anchor_sources",
    "CaptionCorpus": "fortekit.search.stage1.corpus",
    "CorpusElaborator": "fortekit.search.stage1.corpus_elaborator",
    "FeedbackAnchors": "fortekit.search.stage1.feedback",
    "split_clauses": "fortekit.search.formula.clauses",
    "ProjectionHead": "fortekit.search.projection",
    "ProjectionConfig": "fortekit.search.projection",
    "ProjectionData": "fortekit.search.projection",
    "load_projection": "fortekit.search.projection",
    "save_projection": "fortekit.search.projection",
    "project_embeddings": "fortekit.search.projection",
    "train_projection": "fortekit.search.projection.training",
    "TrainingReport": "fortekit.search.projection.training",
    "Reranker": "fortekit.search.rerank",
    "DEFAULT_ALPHA": "fortekit.search.rerank",
    "predicate_overlap": "fortekit.search.rerank",
    "polarity_overlap": "fortekit.search.rerank",
}

__all__ = [
    "ANCHOR_SOURCES",
    "DEFAULT_ALPHA",
    "AnchorBank",
    "AudioIndex",
    "CachedTextEncoder",
    "CaptionCorpus",
    "Collection",
    "CorpusElaborator",
    "EncoderStats",
    "FeedbackAnchors",
    "FormulaScorer",
    "FormulaScoringConfig",
    "Hit",
    "NoAnchors",
    "ObjectiveTerms",
    "OracleAnchors",
    "PipelineSpec",
    "ProjectionConfig",
    "ProjectionData",
    "ProjectionHead",
    "ProxyAnchors",
    "RefineConfig",
    "RefinementLookup",
    "RefinementResult",
    "Refiner",
    "Reranker",
    "Retriever",
    "SearchNode",
    "SearchResult",
    "TextEmbeddingCache",
    "TrainingReport",
    "explain_predicates",
    "load_projection",
    "make_anchor_source",
    "make_elaborator",
    "polarity_overlap",
    "predicate_overlap",
    "project_embeddings",
    "save_projection",
    "split_clauses",
    "train_projection",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, names=globals())
