"""Approximate search (ANN) as a build option: which kind, from what size, and when a search uses it.

``fortekit index build --ann auto|hnsw|ivfpq|none`` (and ``index.build_ann(...)``) builds a
FAISS index of an approximate kind beside the exact rows; its recall@10 against the exact
search is measured at build time and stored in ``index.json`` (``ann_recall``). ``auto`` (the
default) builds HNSW from :data:`ANN_MIN_ITEMS` items on and nothing below: under that size
the exact matrix product takes a few milliseconds, less than encoding the query, so an
approximate first pass would trade recall for nothing (docs/scale.md has the measurement).

A :class:`~fortekit.search.retriever.Retriever` takes its candidate pool (for formula scoring
and Stage 3) from the ANN index when the index has one and holds at least
:data:`ANN_MIN_ITEMS` items, unless told otherwise (``use_faiss=True/False``, ``fortekit
search --first-pass exact|ann``).

Example:
    >>> ann_kind("auto", 5_000) is None, ann_kind("auto", 2_000_000), ann_kind("ivfpq", 5_000)
    (True, 'hnsw', 'ivfpq')
    >>> ann_kind("lsh", 10)
    Traceback (most recent call last):
    ...
    fortekit.errors.AudioIndexError: [E637] --ann must be one of auto, hnsw, ivfpq, none, not 'lsh'. ...
"""

from __future__ import annotations

from fortekit.errors import AudioIndexError, Errors

__all__ = ["ANN_CHOICES", "ANN_MIN_ITEMS", "APPROXIMATE_KINDS", "ann_kind", "first_pass_uses_ann"]

#: The FAISS kinds whose answers may differ from the exact search (their recall is measured at build).
APPROXIMATE_KINDS = ("ivf", "hnsw", "ivfpq")

#: What ``--ann`` accepts.
ANN_CHOICES = ("auto", "hnsw", "ivfpq", "none")
#: From this many items on, ``--ann auto`` builds HNSW and a search takes its candidates from it.
#: Measured on development captions (``python scripts/ann_tuning.py --crossover``, docs/scale.md):
#: the exact top 1,000 (the candidate pool) costs 11 ms at 50,000 items and 21 ms at 100,000 on a
#: 2-core CPU, against 17 ms to encode the query with MiniLM and 3 ms for HNSW's pool
#: (recall@1000 0.986); from here on the exact pool costs more than the query's encoding.
ANN_MIN_ITEMS = 100_000


def ann_kind(choice: str, count: int) -> str | None:
    """The FAISS kind that ``--ann CHOICE`` builds for `count` items (None: exact search only).

    Args:
        choice: one of :data:`ANN_CHOICES`.
        count: the items in the index.

    Returns:
        "hnsw", "ivfpq" or None.

    Raises:
        AudioIndexError: an unknown choice (E637).
    """
    if choice not in ANN_CHOICES:
        raise AudioIndexError(Errors.E637.format(choices=", ".join(ANN_CHOICES), value=choice,
                                                 threshold=ANN_MIN_ITEMS))
    if choice == "auto":
        return "hnsw" if count >= ANN_MIN_ITEMS else None
    return None if choice == "none" else choice


def first_pass_uses_ann(faiss_kind: str | None, count: int, use_faiss: bool | None) -> bool:
    """Whether a search's first pass (the candidate pool) comes from the index's FAISS part.

    Args:
        faiss_kind: the index's FAISS kind, or None.
        count: the items in the index.
        use_faiss: the caller's choice; None: an approximate kind from :data:`ANN_MIN_ITEMS` items on.

    Returns:
        True to search the FAISS part, False to search exactly.

    Example:
        >>> first_pass_uses_ann("hnsw", 1_000_000, None), first_pass_uses_ann("hnsw", 1_000, None)
        (True, False)
        >>> first_pass_uses_ann("flat", 1_000_000, None), first_pass_uses_ann("flat", 10, True)
        (False, True)
    """
    if use_faiss is not None:
        return bool(use_faiss)
    return faiss_kind in APPROXIMATE_KINDS and count >= ANN_MIN_ITEMS
