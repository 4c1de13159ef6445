"""Dataset adapters: Clotho and AudioCaps caption CSVs as clips.

A :class:`Clip` is one audio clip with its captions. Clotho CSVs
(``file_name,caption_1,...,caption_N``) give one clip a row; AudioCaps CSVs
(``audiocap_id,youtube_id,start_time,caption``) give one caption a row, grouped here
by ``(youtube_id, start_time)`` in first-seen order. The benchmarks built from clips
live in :mod:`fortekit.search.eval.tasks`. The package never reads ``../shared``: callers
pass paths.

Bad bytes are decoded as U+FFFD and counted, empty captions are skipped and counted,
clips left with no caption are dropped and counted: :func:`read_collection` returns
the counts in a :class:`LoadReport`; the ``load_*`` functions log them (logger
``fortekit.search.eval.datasets``) and return the clips.

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

from fortekit.errors import DataFileError, Errors, EvaluationError

__all__ = [
    "AUDIOCAPS_HEADER",
    "CLOTHO_HEADER",
    "Clip",
    "Collection",
    "LoadReport",
    "load_audiocaps_csv",
    "load_clotho_csv",
    "load_collection",
    "read_audiocaps_csv",
    "read_clotho_csv",
    "read_collection",
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
