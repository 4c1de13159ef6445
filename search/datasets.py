"""Dataset adapters: Clotho and AudioCaps caption CSVs as clips, and the caption-indexed benchmarks.

A :class:`Clip` is one audio clip with its captions. Clotho CSVs
(``file_name,caption_1,...,caption_N``) give one clip a row; AudioCaps CSVs
(``audiocap_id,youtube_id,start_time,caption``) give one caption a row, grouped here
by ``(youtube_id, start_time)`` in first-seen order. :func:`retrieval_task` turns clips
into the text-to-audio benchmark (query: one caption; item: the clip, stood in for by
its other captions when there is no audio); :func:`audio_to_text_task` builds the
reverse direction. The package never reads ``../shared``: callers pass paths.

Bad bytes are decoded as U+FFFD and counted, empty captions are skipped and counted,
clips left with no caption are dropped and counted: :func:`read_collection` returns
the counts in a :class:`LoadReport`; the ``load_*`` functions log them (logger
``fortekit.search.datasets``) and return the clips.

Example:
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "ac.csv"
    >>> _ = f.write_text("audiocap_id,youtube_id,start_time,caption\\n"
    ...                  "1,abc,30,A dog barks\\n2,xyz,0,Rain falls\\n3,abc,30,A dog is barking\\n")
    >>> [(clip.clip_id, clip.captions) for clip in load_collection(f)]
    [('abc', ('A dog barks', 'A dog is barking')), ('xyz', ('Rain falls',))]
"""

from __future__ import annotations

import csv
import io
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fortekit.errors import DataFileError, Errors, EvaluationError

__all__ = [
    "AUDIOCAPS_HEADER",
    "CLOTHO_HEADER",
    "AudioToTextTask",
    "Clip",
    "Collection",
    "LoadReport",
    "RetrievalTask",
    "audio_to_text_task",
    "load_audiocaps_csv",
    "load_clotho_csv",
    "load_collection",
    "read_audiocaps_csv",
    "read_clotho_csv",
    "read_collection",
    "retrieval_task",
    "split_by_clip",
]

logger = logging.getLogger(__name__)

CLOTHO_HEADER = "file_name,caption_1,caption_2,caption_3,caption_4,caption_5"
AUDIOCAPS_HEADER = "audiocap_id,youtube_id,start_time,caption"
_CAPTION_COLUMN = re.compile(r"caption_(\d+)")
_REPLACEMENT = "\ufffd"


@dataclass(frozen=True, slots=True)
class Clip:
    """One audio clip and its reference captions.

    Attributes:
        clip_id: the Clotho file name, or the AudioCaps YouTube id (``{youtube_id}_{start_time}``
            when one file holds several segments of the same video).
        captions: its non-empty captions, stripped, in file order.
    """

    clip_id: str
    captions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LoadReport:
    """What reading a caption CSV kept, replaced and dropped.

    Attributes:
        path: the file read.
        format: ``"clotho"`` or ``"audiocaps"``.
        rows: data rows read.
        clips: clips returned.
        captions: captions returned (all clips together).
        undecodable_bytes: invalid UTF-8 sequences replaced by U+FFFD.
        empty_captions: empty or whitespace captions skipped.
        dropped_clips: clips with no caption left, dropped.
    """

    path: str
    format: str
    rows: int
    clips: int
    captions: int
    undecodable_bytes: int
    empty_captions: int
    dropped_clips: int

    @property
    def clean(self) -> bool:
        """Whether nothing was replaced, skipped or dropped."""
        return not (self.undecodable_bytes or self.empty_captions or self.dropped_clips)

    def summary(self) -> str:
        """One line for a log or a report.

        Example:
            >>> LoadReport("c.csv", "clotho", 2, 2, 9, 0, 1, 0).summary()
            'c.csv (clotho): 2 rows -> 2 clips, 9 captions; 0 undecodable bytes replaced, 1 empty captions skipped, 0 clips dropped'
        """  # noqa: E501
        return (
            f"{self.path} ({self.format}): {self.rows} rows -> {self.clips} clips, {self.captions} captions; "
            f"{self.undecodable_bytes} undecodable bytes replaced, {self.empty_captions} empty captions "
            f"skipped, {self.dropped_clips} clips dropped"
        )


@dataclass(frozen=True, slots=True)
class Collection:
    """The clips of a caption CSV and the :class:`LoadReport` of reading it."""

    clips: list[Clip]
    report: LoadReport


# -- reading --------------------------------------------------------------------------------


def _read_text(path: str | os.PathLike[str], format_name: str) -> tuple[Path, str, int]:
    """The file's text (UTF-8, BOM dropped, bad bytes replaced) and the count of replacements."""
    source = Path(path).expanduser()
    if not source.is_file():
        hint = (
            "Pass a Clotho captions CSV (clotho_captions_development.csv) or an AudioCaps CSV "
            "(train.csv, val.csv, test.csv)."
        )
        what = f"The {format_name} caption file" if format_name else "The caption file"
        raise DataFileError(Errors.E487.format(what=what, path=source, hint=hint))
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise DataFileError(Errors.E487.format(what="A readable caption file", path=source,
                                               hint=f"Reading it failed: {exc}.")) from None
    text = data.decode("utf-8-sig", errors="replace")
    # U+FFFD written in the file itself is not a replacement: subtract its encoded occurrences.
    undecodable = text.count(_REPLACEMENT) - data.count(_REPLACEMENT.encode("utf-8"))
    return source, text, undecodable


def _rows(source: Path, text: str) -> tuple[list[str], list[list[str]]]:
    # strict: an unclosed quote is an error, not a field that swallows the rest of the file
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[list[str]] = []
    try:
        header = [name.strip() for name in next(reader, [])]
        rows.extend(reader)
    except csv.Error as exc:
        raise EvaluationError(Errors.E491.format(path=source, line=reader.line_num, problem=exc)) from None
    return header, rows


def _sniff(header: Sequence[str]) -> str | None:
    names = {name.lower() for name in header}
    if "file_name" in names and any(_CAPTION_COLUMN.fullmatch(name) for name in names):
        return "clotho"
    if {"youtube_id", "caption"} <= names:
        return "audiocaps"
    return None


def _clotho(source: Path, header: list[str], rows: list[list[str]], undecodable: int) -> Collection:
    lowered = [name.lower() for name in header]
    numbered = sorted(
        (int(match.group(1)), position)
        for position, name in enumerate(lowered)
        if (match := _CAPTION_COLUMN.fullmatch(name))
    )
    if "file_name" not in lowered or not numbered:
        raise EvaluationError(Errors.E490.format(
            path=source, format="Clotho", expected=CLOTHO_HEADER,
            problem=f"its header is {','.join(header)!r}",
        ))
    name_at = lowered.index("file_name")
    caption_at = [position for _, position in numbered]
    clips: list[Clip] = []
    empty = dropped = n_rows = 0
    for row in rows:
        if not any(cell.strip() for cell in row):
            continue  # blank line
        n_rows += 1
        cells = [row[position].strip() if position < len(row) else "" for position in caption_at]
        kept = tuple(cell for cell in cells if cell)
        empty += len(cells) - len(kept)
        clip_id = row[name_at].strip() if name_at < len(row) else ""
        if not kept:
            dropped += 1
            continue
        clips.append(Clip(clip_id, kept))
    return _collection(source, "clotho", n_rows, clips, undecodable, empty, dropped)


def _audiocaps(source: Path, header: list[str], rows: list[list[str]], undecodable: int) -> Collection:
    lowered = [name.lower() for name in header]
    if not {"youtube_id", "caption"} <= set(lowered):
        raise EvaluationError(Errors.E490.format(
            path=source, format="AudioCaps", expected=AUDIOCAPS_HEADER,
            problem=f"its header is {','.join(header)!r}",
        ))
    video_at, caption_at = lowered.index("youtube_id"), lowered.index("caption")
    start_at = lowered.index("start_time") if "start_time" in lowered else None

    def cell(row: list[str], position: int | None) -> str:
        return row[position].strip() if position is not None and position < len(row) else ""

    groups: dict[tuple[str, str], list[str]] = {}  # insertion order = first-seen order
    empty = n_rows = 0
    for row in rows:
        if not any(value.strip() for value in row):
            continue
        n_rows += 1
        captions = groups.setdefault((cell(row, video_at), cell(row, start_at)), [])
        caption = cell(row, caption_at)
        if caption:
            captions.append(caption)
        else:
            empty += 1
    starts: dict[str, int] = {}
    for video, _ in groups:
        starts[video] = starts.get(video, 0) + 1
    clips: list[Clip] = []
    dropped = 0
    for (video, start), captions in groups.items():
        if not captions:
            dropped += 1
            continue
        clip_id = video if starts[video] == 1 else f"{video}_{start}"
        clips.append(Clip(clip_id, tuple(captions)))
    return _collection(source, "audiocaps", n_rows, clips, undecodable, empty, dropped)


def _collection(
    source: Path, format_name: str, rows: int, clips: list[Clip], undecodable: int, empty: int, dropped: int
) -> Collection:
    report = LoadReport(
        path=str(source), format=format_name, rows=rows, clips=len(clips),
        captions=sum(len(clip.captions) for clip in clips),
        undecodable_bytes=undecodable, empty_captions=empty, dropped_clips=dropped,
    )
    logger.log(logging.INFO if report.clean else logging.WARNING, "%s", report.summary())
    return Collection(clips, report)


def read_clotho_csv(path: str | os.PathLike[str]) -> Collection:
    """Read a Clotho captions CSV: its clips and a :class:`LoadReport`.

    Args:
        path: a CSV with the header ``file_name,caption_1,...,caption_N`` (any number of
            ``caption_N`` columns, read in the order of N).

    Returns:
        The clips in file order, and what was replaced, skipped and dropped.

    Raises:
        DataFileError: the file is missing (E487).
        EvaluationError: another header (E490) or broken CSV quoting (E491).

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "clotho.csv"
        >>> _ = f.write_text("file_name,caption_1,caption_2\\na.wav,one, \\nb.wav,,\\n")
        >>> c = read_clotho_csv(f)
        >>> c.clips, c.report.empty_captions, c.report.dropped_clips
        ([Clip(clip_id='a.wav', captions=('one',))], 3, 1)
    """
    source, text, undecodable = _read_text(path, "Clotho")
    header, rows = _rows(source, text)
    return _clotho(source, header, rows, undecodable)


def read_audiocaps_csv(path: str | os.PathLike[str]) -> Collection:
    """Read an AudioCaps CSV, one clip per ``(youtube_id, start_time)`` in first-seen order.

    Args:
        path: a CSV with the header ``audiocap_id,youtube_id,start_time,caption``
            (``youtube_id`` and ``caption`` are required; other columns are ignored).

    Returns:
        The clips and a :class:`LoadReport`. A clip's id is its ``youtube_id``, or
        ``{youtube_id}_{start_time}`` where the file has several segments of that video.

    Raises:
        DataFileError: the file is missing (E487).
        EvaluationError: another header (E490) or broken CSV quoting (E491).

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "ac.csv"
        >>> _ = f.write_text("audiocap_id,youtube_id,start_time,caption\\n1,v,0,a\\n2,v,10,b\\n3,v,0,c\\n")
        >>> [(clip.clip_id, clip.captions) for clip in read_audiocaps_csv(f).clips]
        [('v_0', ('a', 'c')), ('v_10', ('b',))]
    """
    source, text, undecodable = _read_text(path, "AudioCaps")
    header, rows = _rows(source, text)
    return _audiocaps(source, header, rows, undecodable)


def read_collection(path: str | os.PathLike[str]) -> Collection:
    """Read a Clotho or AudioCaps CSV, choosing the format from its header.

    Args:
        path: the CSV file.

    Returns:
        The clips and a :class:`LoadReport`.

    Raises:
        DataFileError: the file is missing (E487).
        EvaluationError: a header of neither format, naming both accepted headers (E489);
            broken CSV quoting (E491).

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
        >>> _ = f.write_text("id,text\\n1,a dog\\n")
        >>> read_collection(f)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.EvaluationError: [E489] ... has the header 'id,text', which is not a caption CSV ...
    """
    source, text, undecodable = _read_text(path, "")
    header, rows = _rows(source, text)
    kind = _sniff(header)
    if kind == "clotho":
        return _clotho(source, header, rows, undecodable)
    if kind == "audiocaps":
        return _audiocaps(source, header, rows, undecodable)
    raise EvaluationError(Errors.E489.format(path=source, header=",".join(header)))


def load_clotho_csv(path: str | os.PathLike[str]) -> list[Clip]:
    """The clips of a Clotho captions CSV (see :func:`read_clotho_csv`; counts are logged).

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "clotho.csv"
        >>> _ = f.write_text("file_name,caption_1,caption_2\\na.wav,one,two\\n")
        >>> load_clotho_csv(f)
        [Clip(clip_id='a.wav', captions=('one', 'two'))]
    """
    return read_clotho_csv(path).clips


def load_audiocaps_csv(path: str | os.PathLike[str]) -> list[Clip]:
    """The clips of an AudioCaps CSV (see :func:`read_audiocaps_csv`; counts are logged).

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "ac.csv"
        >>> _ = f.write_text("audiocap_id,youtube_id,start_time,caption\\n1,v,0,a dog\\n2,v,0,a cat\\n")
        >>> load_audiocaps_csv(f)
        [Clip(clip_id='v', captions=('a dog', 'a cat'))]
    """
    return read_audiocaps_csv(path).clips


def load_collection(path: str | os.PathLike[str]) -> list[Clip]:
    """The clips of a Clotho or AudioCaps CSV, format sniffed from the header (:func:`read_collection`).

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "c.csv"
        >>> _ = f.write_text("file_name,caption_1\\na.wav,one\\n")
        >>> load_collection(f)
        [Clip(clip_id='a.wav', captions=('one',))]
    """
    return read_collection(path).clips


# -- splits and tasks -----------------------------------------------------------------------


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
    if isinstance(n_train, bool) or not isinstance(n_train, int) or not 0 <= n_train <= len(clips):
        raise EvaluationError(Errors.E480.format(
            what="split", name="n_train", expected=f"an int in [0, {len(clips)}]", value=n_train,
        ))
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
    if isinstance(query_caption, bool) or not isinstance(query_caption, int) or query_caption < 0:
        raise EvaluationError(Errors.E480.format(
            what="retrieval task", name="query_caption", expected="an int >= 0 (0 = caption 1)",
            value=query_caption,
        ))
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
