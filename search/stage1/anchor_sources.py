"""Stage 1's anchor sources and elaborators built by name, in one place (fol-refine, the
Retriever and the benchmarks).

Example:
    >>> type(make_anchor_source("none")).__name__
    'NoAnchors'
    >>> make_anchor_source("psychic")
    Traceback (most recent call last):
    ...
    fortekit.errors.RefineError: [E406] Unknown anchor source 'psychic'. Valid sources: none, ...
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, RefineError
from fortekit.search.stage1.anchors import ANCHOR_SOURCES, AnchorBank, AnchorSource

if TYPE_CHECKING:
    import torch

    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.stage1.corpus import CaptionCorpus

__all__ = ["ANCHOR_SOURCES", "has_captions", "make_anchor_source", "make_elaborator", "resolve_auto"]


def make_anchor_source(
    name: str,
    *,
    index: AudioIndex | None = None,
    bank: AnchorBank | str | os.PathLike[str] | None = None,
    oracle: Mapping[str, tuple[torch.Tensor, torch.Tensor | None]] | None = None,
    proxy_k: int = 10,
    corpus: CaptionCorpus | None = None,
    feedback: Mapping[str, float] | None = None,
) -> AnchorSource:
    """The anchor source ``name`` (one of :data:`ANCHOR_SOURCES`).

    Args:
        name: "none" (the pivot alone), "proxy" (the frozen first pass over ``index``: e+ its
            top-1, e- its bottom-``proxy_k``), "bank" (``bank``: an anchor bank, or the directory
            of one or of a training index), "feedback" (the first pass over ``index``, or over
            ``corpus``, judged by the formula: e+ the items whose captions satisfy phi0, e- the
            others) or "oracle" (``oracle``: per query text, its relevant item's embedding and
            a negative; for analysis only).
        index: the collection the queries search (for "proxy", and "feedback" without ``corpus``).
        bank: the anchor bank (for "bank").
        oracle: the ground-truth anchors (for "oracle").
        proxy_k: how many bottom items make the proxy's e-.
        corpus: the collection's rows and parsed item captions (for "feedback"; default built
            from ``index``, whose captions are then parsed as the queries read them).
        feedback: ``k``, ``coverage`` and ``weight`` of the feedback anchors (default
            :data:`~fortekit.search.stage1.feedback.DEFAULT_FEEDBACK`).

    Returns:
        An object with ``anchor_batch`` (see :class:`~fortekit.search.stage1.anchors.AnchorSource`).

    Raises:
        RefineError: an unknown name, or one without what it needs (E406); a bank that cannot
            be read, with its own code.
    """
    from fortekit.search.stage1.anchors import NoAnchors, OracleAnchors, ProxyAnchors

    def unusable(why: str) -> RefineError:
        return RefineError(Errors.E406.format(name=f"{name} ({why})", options=", ".join(ANCHOR_SOURCES)))

    key = name.strip().lower() if isinstance(name, str) else name
    if key == "none":
        return NoAnchors()
    if key == "proxy":
        if index is None:
            raise unusable("no index was given")
        return ProxyAnchors(index, k=proxy_k)
    if key == "bank":
        if bank is None:
            raise unusable("no anchor bank was given")
        return bank if isinstance(bank, AnchorBank) else AnchorBank.load(bank)
    if key == "feedback":
        from fortekit.search.stage1.corpus import CaptionCorpus
        from fortekit.search.stage1.feedback import FeedbackAnchors

        if corpus is None:
            if index is None:
                raise unusable("no index or caption corpus was given")
            corpus = CaptionCorpus.from_index(index)
        return FeedbackAnchors(corpus, **dict(feedback or {}))  # type: ignore[arg-type]
    if key == "oracle":
        if oracle is None:
            raise unusable("no ground truth was given")
        return OracleAnchors(oracle)
    raise RefineError(Errors.E406.format(name=name, options=", ".join(ANCHOR_SOURCES)))


def make_elaborator(
    elaborator: Any, *, index: AudioIndex | None = None, corpus: CaptionCorpus | None = None
) -> Any:
    """Stage 1's elaborator: "corpus" over ``corpus`` (or ``index``'s captions), else as given.

    Args:
        elaborator: "corpus", a registered elaborator's name (e.g. "lexical"), or an object.
        index: the collection searched: its item captions are the corpus when none is given.
        corpus: a :class:`~fortekit.search.stage1.corpus.CaptionCorpus`.

    Returns:
        A :class:`~fortekit.search.stage1.corpus_elaborator.CorpusElaborator` for "corpus";
        otherwise ``elaborator`` itself (the Refiner resolves a registered name).

    Raises:
        RefineError: "corpus" with neither a corpus nor an index (E414), or an index
            whose captions do not parse (E411).

    Example:
        >>> make_elaborator("lexical")
        'lexical'
        >>> make_elaborator("corpus")
        Traceback (most recent call last):
        ...
        fortekit.errors.RefineError: [E414] The corpus elaborator needs a caption corpus...
    """
    if not (isinstance(elaborator, str) and elaborator.strip().lower() == "corpus"):
        return elaborator
    from fortekit.search.stage1.corpus import CaptionCorpus
    from fortekit.search.stage1.corpus_elaborator import CorpusElaborator

    if corpus is None:
        if index is None:
            raise RefineError(Errors.E414)
        corpus = CaptionCorpus.from_index(index)
    return CorpusElaborator(corpus)


def has_captions(index: AudioIndex | None) -> bool:
    """Whether ``index`` holds item captions (what the corpus elaborator and feedback read).

    Example:
        >>> has_captions(None)
        False
    """
    return index is not None and any(caption and caption.strip() for caption in index.captions)


def resolve_auto(
    elaborator: Any, anchors: Any, *, index: AudioIndex | None = None, corpus_given: bool = False
) -> tuple[Any, Any]:
    """Stage 1's "auto" elaborator and anchors: what a collection with captions makes possible.

    With item captions (or a corpus given), "auto" is the corpus elaborator and feedback
    anchors; without, the lexical elaborator and no anchors. Other values pass through.

    Example:
        >>> resolve_auto("auto", "auto")
        ('lexical', 'none')
        >>> resolve_auto("auto", "auto", corpus_given=True)
        ('corpus', 'none')
    """
    captions = has_captions(index)
    if elaborator == "auto":
        elaborator = "corpus" if captions or corpus_given else "lexical"
    if anchors == "auto":
        anchors = "feedback" if captions else "none"
    return elaborator, anchors
