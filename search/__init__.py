"""Stage 1 search, the audio index, Stages 2-3, evaluation and the command-line tools.

Importing this package is light: each name loads its module (and torch) on first use.

Example:
    >>> from fortekit.search import Refiner, SearchConfig
    >>> SearchConfig.offline().beam_width
    5
    >>> refiner = Refiner("minilm", "lexical", config=SearchConfig.online())  # doctest: +SKIP
    >>> refiner.refine("a person talking").refined_text  # doctest: +SKIP
    'a person talking loudly'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fortekit._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from fortekit.search.formula_scoring import FormulaScorer, FormulaScoringConfig, search_index
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.retriever import Hit, Retriever, SearchResult
    from fortekit.search.stage1.anchors import AnchorBank, NoAnchors, OracleAnchors, ProxyAnchors
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.config import SearchConfig
    from fortekit.search.stage1.encoder import CachedTextEncoder, EncoderStats, TextEmbeddingCache
    from fortekit.search.stage1.result import ObjectiveTerms, RefinementResult, SearchNode

_LAZY = {
    "Refiner": "fortekit.search.stage1.beam",
    "SearchConfig": "fortekit.search.stage1.config",
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
    "FormulaScorer": "fortekit.search.formula_scoring",
    "FormulaScoringConfig": "fortekit.search.formula_scoring",
    "search_index": "fortekit.search.formula_scoring",
    "Retriever": "fortekit.search.retriever",
    "SearchResult": "fortekit.search.retriever",
    "Hit": "fortekit.search.retriever",
}

__all__ = [
    "AnchorBank",
    "AudioIndex",
    "CachedTextEncoder",
    "EncoderStats",
    "FormulaScorer",
    "FormulaScoringConfig",
    "Hit",
    "NoAnchors",
    "ObjectiveTerms",
    "OracleAnchors",
    "ProxyAnchors",
    "RefinementResult",
    "Refiner",
    "Retriever",
    "SearchConfig",
    "SearchNode",
    "SearchResult",
    "TextEmbeddingCache",
    "search_index",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, names=globals())
