"""Stage 1's anchor sources built by name, in one place (fol-refine, the Retriever and the benchmarks).

Example:
    >>> type(make_anchor_source("none")).__name__
    'NoAnchors'
    >>> make_anchor_source("psychic")
    Traceback (most recent call last):
    ...
    fortekit.errors.SearchError: [E406] Unknown anchor source 'psychic'. Valid sources: none, ...
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from fortekit.errors import Errors, SearchError
from fortekit.search.stage1.anchors import ANCHOR_SOURCES, AnchorBank, AnchorSource

if TYPE_CHECKING:
    import torch

    from fortekit.search.index.audio_index import AudioIndex

__all__ = ["ANCHOR_SOURCES", "make_anchor_source"]


def make_anchor_source(
    name: str,
    *,
    index: AudioIndex | None = None,
    bank: AnchorBank | str | os.PathLike[str] | None = None,
    oracle: Mapping[str, tuple[torch.Tensor, torch.Tensor | None]] | None = None,
    proxy_k: int = 10,
) -> AnchorSource:
    """The anchor source ``name`` (one of :data:`ANCHOR_SOURCES`).

    Args:
        name: "none" (the pivot alone), "proxy" (the frozen first pass over ``index``: e+ its
            top-1, e- its bottom-``proxy_k``), "bank" (``bank``: an anchor bank, or the directory
            of one or of a training index) or "oracle" (``oracle``: per query text, its relevant
            item's embedding and a negative; for analysis only).
        index: the collection the queries search (for "proxy").
        bank: the anchor bank (for "bank").
        oracle: the ground-truth anchors (for "oracle").
        proxy_k: how many bottom items make the proxy's e-.

    Returns:
        An object with ``anchor_batch`` (see :class:`~fortekit.search.stage1.anchors.AnchorSource`).

    Raises:
        SearchError: an unknown name, or one without what it needs (E406); a bank that cannot
            be read, with its own code.
    """
    from fortekit.search.stage1.anchors import NoAnchors, OracleAnchors, ProxyAnchors

    def unusable(why: str) -> SearchError:
        return SearchError(Errors.E406.format(name=f"{name} ({why})", options=", ".join(ANCHOR_SOURCES)))

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
    if key == "oracle":
        if oracle is None:
            raise unusable("no ground truth was given")
        return OracleAnchors(oracle)
    raise SearchError(Errors.E406.format(name=name, options=", ".join(ANCHOR_SOURCES)))
