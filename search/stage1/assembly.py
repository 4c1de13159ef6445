"""Stage 1 assembled once: the refiner every caller builds (the Retriever, ``fol-refine``, eval).

What a Stage 1 refiner is made of depends on the collection: "auto" picks the corpus
elaborator and feedback anchors when the index has item captions (lexical and none
without); the corpus elaborator and the feedback anchors read the same parsed captions, so
they are shared, and parsed on demand (a query reads only its neighbours). :func:`build_refiner`
is that assembly; callers differ only in what they pass (``fol-refine`` its own anchor objects
and a ``--corpus`` file).

Example:
    >>> from fortekit.search.stage1.config import RefineConfig
    >>> refiner = build_refiner("minilm", config=RefineConfig.online())  # doctest: +SKIP
    >>> refiner.elaborator.name, refiner.anchors.name  # doctest: +SKIP
    ('lexical', 'none')
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.stage1.anchors import AnchorBank
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.config import RefineConfig
    from fortekit.search.stage1.corpus import CaptionCorpus

__all__ = ["build_refiner"]


def build_refiner(
    backbone: str | Backbone,
    *,
    config: RefineConfig | None = None,
    elaborator: Any = "auto",
    anchors: Any = "auto",
    index: AudioIndex | None = None,
    corpus: CaptionCorpus | Callable[[Backbone], CaptionCorpus] | None = None,
    index_corpus: Callable[[], CaptionCorpus] | None = None,
    bank: AnchorBank | str | os.PathLike[str] | None = None,
    device: str = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
    backbone_options: dict[str, Any] | None = None,
) -> Refiner:
    """The Stage 1 refiner for a collection, as every command and API assembles it.

    Args:
        backbone: a registered backbone's name or a backbone object.
        config: Stage 1's settings (default: the online regime).
        elaborator: "auto", "corpus", a registered elaborator's name, or an elaborator object.
        anchors: "auto", "none", "proxy", "bank", "feedback", or an anchor source object (used
            as it is: ``fol-refine`` passes its own, built at the first batch).
        index: the collection searched: the corpus of "corpus" and "feedback" when no other is
            given, and its backbone is checked against the refiner's.
        corpus: the corpus elaborator's captions, when not the index's: a
            :class:`~fortekit.search.stage1.corpus.CaptionCorpus`, or a function that makes one
            with the refiner's backbone.
        index_corpus: makes the index's parsed captions (default
            :meth:`CaptionCorpus.from_index`, called at most once and shared by the elaborator
            and the feedback anchors); a caller that keeps its own copy passes it here.
        bank: the anchor bank, for "bank".
        device: where the backbone runs ("auto", "cpu", "cuda", ...).
        cache_dir: a folder that keeps text embeddings across runs.
        backbone_options: keyword options of the backbone's factory, when ``backbone`` is a name.

    Returns:
        A :class:`~fortekit.search.stage1.beam.Refiner`.

    Raises:
        RefineError: "corpus" with neither a corpus nor an index (E414); a corpus or anchor
            bank of another width than the backbone's (E407).
        IndexFormatError: an index built with another backbone.

    Example:
        >>> build_refiner("minilm", elaborator="lexical", anchors="none").anchors.name  # doctest: +SKIP
        'none'
    """
    from fortekit.search.stage1.anchor_sources import make_anchor_source, make_elaborator, resolve_auto
    from fortekit.search.stage1.beam import Refiner

    elaborator, anchors = resolve_auto(elaborator, anchors, index=index, corpus_given=corpus is not None)
    shared: list[CaptionCorpus] = []

    def captions_of_index() -> CaptionCorpus:
        if not shared:
            from fortekit.search.stage1.corpus import CaptionCorpus

            assert index is not None  # only asked for with an index
            shared.append(index_corpus() if index_corpus is not None else CaptionCorpus.from_index(index))
        return shared[0]

    if anchors == "none":
        anchors = None
    elif isinstance(anchors, str):
        anchors = make_anchor_source(
            anchors, index=index, bank=bank,
            corpus=captions_of_index() if anchors == "feedback" and index is not None else None,
        )
    by_corpus = elaborator == "corpus"
    refiner = Refiner(
        backbone, "lexical" if by_corpus else elaborator, config=config, anchors=anchors, device=device,
        cache_dir=cache_dir, backbone_options=backbone_options,
    )
    if index is not None:
        index.check_backbone(refiner.backbone)
    if by_corpus:
        chosen = corpus(refiner.backbone) if callable(corpus) else corpus
        if chosen is None and index is not None:
            chosen = captions_of_index()
        refiner.elaborator = make_elaborator("corpus", corpus=chosen)
        refiner.check_widths()  # a saved corpus of another backbone: E407 now, not a torch error later
    return refiner
