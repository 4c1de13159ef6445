"""Caption-indexed benchmarks built from clips: the split by clip and the two directions.

:func:`retrieval_task` turns clips (from :mod:`fortekit.search.eval.datasets`) into the
text-to-audio benchmark (query: one caption; item: the clip, stood in for by its other
captions when there is no audio); :func:`audio_to_text_task` builds the reverse
direction; :func:`split_by_clip` keeps all captions of one clip on one side.

Example:
    >>> from fortekit.search.eval.datasets import Clip
    >>> clips = [Clip("a", ("dog barks", "a dog")), Clip("b", ("rain", "rain falls"))]
    >>> train, test = split_by_clip(clips, 1)
    >>> retrieval_task(test).queries
    ['rain']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from fortekit._checks import check_int
from fortekit.errors import Errors, EvaluationError
from fortekit.search.eval.datasets import Clip

__all__ = ["AudioToTextTask", "RetrievalTask", "audio_to_text_task", "retrieval_task", "split_by_clip"]


def split_by_clip(clips: Sequence[Clip], n_train: int) -> tuple[list[Clip], list[Clip]]:
    """Split clips (never captions of one clip) into the first ``n_train`` and the rest.

    Args:
        clips: the clips, in the order to split.
        n_train: how many go to the first part, 0..len(clips).

    Returns:
        (first ``n_train`` clips, the others).

    Raises:
        EvaluationError: ``n_train`` is not an int in [0, len(clips)] (E480).

    Example:
        >>> clips = [Clip(str(i), ("c",)) for i in range(5)]
        >>> [len(part) for part in split_by_clip(clips, 3)]
        [3, 2]
    """
    check_int(n_train, name="n_train", low=0, high=len(clips), error=EvaluationError, message=Errors.E480,
              what="split")
    return list(clips[:n_train]), list(clips[n_train:])


@dataclass(frozen=True, slots=True)
class RetrievalTask:
    """A text-to-audio benchmark with one relevant item per query.

    Attributes:
        queries: one query caption per kept clip.
        item_texts: per item (clip), the texts that stand in for its audio: embed them and
            average (``"mean"``) or take the one (``"single"``).
        targets: ``targets[i]`` is query i's relevant item index (here always ``i``).
        clip_ids: the clip of each item.
        dropped: clips left out because they had too few captions.
    """

    queries: list[str]
    item_texts: list[tuple[str, ...]]
    targets: list[int]
    clip_ids: list[str]
    dropped: int = 0

    def __len__(self) -> int:
        return len(self.queries)


@dataclass(frozen=True, slots=True)
class AudioToTextTask:
    """The audio-to-text direction: items are the queries, captions the collection.

    Attributes:
        clip_ids: the query clips.
        item_texts: per query clip, the texts that stand in for its audio.
        captions: the collection of captions to rank.
        caption_clips: for each caption, the index of the query clip it belongs to.
        targets: per query clip, the position of its query caption in ``captions`` (the
            one relevant caption for the one-relevant metrics).
        relevant: per query clip, the positions of all its captions in ``captions``.
        dropped: clips left out because they had too few captions.
    """

    clip_ids: list[str]
    item_texts: list[tuple[str, ...]]
    captions: list[str]
    caption_clips: list[int]
    targets: list[int]
    relevant: list[tuple[int, ...]]
    dropped: int = 0

    def __len__(self) -> int:
        return len(self.clip_ids)


def _check_task_options(query_caption: int, item_captions: str) -> None:
    check_int(query_caption, name="query_caption", low=0, expected="an int >= 0 (0 = caption 1)",
              error=EvaluationError, message=Errors.E480, what="retrieval task")
    if item_captions not in ("mean", "single"):
        raise EvaluationError(Errors.E480.format(
            what="retrieval task", name="item_captions", expected="'mean' or 'single'", value=item_captions,
        ))


def _split_captions(clip: Clip, query_caption: int, item_captions: str) -> tuple[str, tuple[str, ...]]:
    captions = clip.captions
    query = captions[query_caption]
    if item_captions == "single":
        return query, (captions[(query_caption + 1) % len(captions)],)
    return query, captions[:query_caption] + captions[query_caption + 1:]


def retrieval_task(
    clips: Sequence[Clip],
    *,
    query_caption: int = 0,
    item_captions: Literal["mean", "single"] = "mean",
) -> RetrievalTask:
    """The caption-indexed text-to-audio benchmark built from clips.

    Query i is caption ``query_caption`` of clip i; item i is clip i, whose audio is stood
    in for by its other captions (``"mean"``: all of them, to be embedded and averaged by
    the caller; ``"single"``: only the next one, wrapping round). Clips with fewer than
    ``query_caption + 2`` captions cannot give both and are dropped (counted in ``dropped``).

    Args:
        clips: the clips.
        query_caption: which caption is the query (0 = ``caption_1``).
        item_captions: ``"mean"`` or ``"single"``.

    Returns:
        The :class:`RetrievalTask`; ``targets[i] == i``.

    Raises:
        EvaluationError: a bad option (E480) or no clip left (E492).

    Example:
        >>> clips = [Clip("a", ("dog barks", "a dog", "barking")), Clip("b", ("rain",))]
        >>> task = retrieval_task(clips, item_captions="single")
        >>> task.queries, task.item_texts, task.targets, task.dropped
        (['dog barks'], [('a dog',)], [0], 1)
    """
    _check_task_options(query_caption, item_captions)
    queries: list[str] = []
    item_texts: list[tuple[str, ...]] = []
    clip_ids: list[str] = []
    for clip in clips:
        if len(clip.captions) < query_caption + 2:
            continue
        query, texts = _split_captions(clip, query_caption, item_captions)
        queries.append(query)
        item_texts.append(texts)
        clip_ids.append(clip.clip_id)
    if not queries:
        raise EvaluationError(Errors.E492.format(
            problem=f"none of the {len(clips)} clips has the {query_caption + 2} captions needed for a "
            f"query (caption {query_caption + 1}) and an item text; lower query_caption or use a file "
            "with several captions per clip (Clotho, AudioCaps val/test)",
        ))
    return RetrievalTask(queries, item_texts, list(range(len(queries))), clip_ids, len(clips) - len(queries))


def audio_to_text_task(
    clips: Sequence[Clip],
    *,
    query_caption: int = 0,
    item_captions: Literal["mean", "single"] = "mean",
    collection: Literal["query", "all"] = "query",
) -> AudioToTextTask:
    """The audio-to-text direction of :func:`retrieval_task` (paper, appendix).

    The queries are the items (their audio, or the texts standing in for it, as in
    :func:`retrieval_task`); the collection is captions. With ``collection="query"`` it
    holds each clip's query caption only, so the score matrix is the transpose of the
    text-to-audio one and ``targets[i] == i``. With ``collection="all"`` it holds every
    caption of every kept clip (the DCASE protocol with real audio; with text stand-ins
    the item's own texts are in it too) and ``relevant[i]`` lists clip i's captions,
    while ``targets[i]`` is still its query caption, for the one-relevant metrics.

    Args:
        clips: the clips.
        query_caption: which caption is the relevant one (0 = ``caption_1``).
        item_captions: ``"mean"`` or ``"single"``, as in :func:`retrieval_task`.
        collection: ``"query"`` or ``"all"``.

    Returns:
        The :class:`AudioToTextTask`.

    Raises:
        EvaluationError: a bad option (E480) or no clip left (E492).

    Example:
        >>> clips = [Clip("a", ("dog barks", "a dog")), Clip("b", ("rain", "rain falls"))]
        >>> t = audio_to_text_task(clips, collection="all")
        >>> t.captions, t.targets, t.relevant
        (['dog barks', 'a dog', 'rain', 'rain falls'], [0, 2], [(0, 1), (2, 3)])
    """
    if collection not in ("query", "all"):
        raise EvaluationError(Errors.E480.format(
            what="retrieval task", name="collection", expected="'query' or 'all'", value=collection,
        ))
    forward = retrieval_task(clips, query_caption=query_caption, item_captions=item_captions)
    if collection == "query":
        n = len(forward)
        return AudioToTextTask(
            forward.clip_ids, forward.item_texts, list(forward.queries), list(range(n)), list(range(n)),
            [(i,) for i in range(n)], forward.dropped,
        )
    kept = [clip for clip in clips if len(clip.captions) >= query_caption + 2]  # as retrieval_task keeps
    captions: list[str] = []
    caption_clips: list[int] = []
    targets: list[int] = []
    relevant: list[tuple[int, ...]] = []
    for position, clip in enumerate(kept):
        own = clip.captions
        start = len(captions)
        captions.extend(own)
        caption_clips.extend([position] * len(own))
        targets.append(start + query_caption)
        relevant.append(tuple(range(start, start + len(own))))
    return AudioToTextTask(
        forward.clip_ids, forward.item_texts, captions, caption_clips, targets, relevant,
        forward.dropped,
    )
