"""Dataset adapters: Clotho and AudioCaps caption CSVs as clips.

A :class:`Clip` is one audio clip with its captions. Clotho CSVs
(``file_name,caption_1,...,caption_N``) give one clip a row; AudioCaps CSVs
(``audiocap_id,youtube_id,start_time,caption``) give one caption a row, grouped here
by ``(youtube_id, start_time)`` in first-seen order. The benchmarks built from clips
live in :mod:`fortekit.search.eval.tasks`. The package never reads ``../shared``: callers
pass paths.

The file is read by :func:`fortekit.collection_reader.read_caption_csv` (records split as
``newline=""`` does, never at U+2028 or U+0085). Bad bytes are decoded as U+FFFD and
counted (the evaluation's lenient policy, reported), empty captions are skipped and counted,
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

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from fortekit.collection_reader import CaptionCsv, caption_clips, read_caption_csv
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


def _read(path: str | os.PathLike[str], format_name: str) -> CaptionCsv:
    """The file read by :func:`fortekit.collection_reader.read_caption_csv`: bad bytes replaced and
    counted, strict quoting; a malformed or too long record is E491."""
    source = Path(path).expanduser()
    if not source.is_file():
        hint = (
            "Pass a Clotho captions CSV (clotho_captions_development.csv) or an AudioCaps CSV "
            "(train.csv, val.csv, test.csv)."
        )
        what = f"The {format_name} caption file" if format_name else "The caption file"
        raise DataFileError(Errors.E487.format(what=what, path=source, hint=hint))
    try:
        table = read_caption_csv(source, strict=True, lenient=True)
    except OSError as exc:
        raise DataFileError(Errors.E487.format(what="A readable caption file", path=source,
                                               hint=f"Reading it failed: {exc}.")) from None
    if table.bad:
        first = table.bad[0]
        raise EvaluationError(Errors.E491.format(path=source, line=first.line, problem=first.reason))
    return table


def _expect(table: CaptionCsv, format_name: str) -> None:
    if table.layout is None or table.layout.format != format_name:
        clotho = format_name == "clotho"
        raise EvaluationError(Errors.E490.format(
            path=table.path, format="Clotho" if clotho else "AudioCaps",
            expected=CLOTHO_HEADER if clotho else AUDIOCAPS_HEADER,
            problem=f"its header is {','.join(table.header)!r}",
        ))


def _clips(table: CaptionCsv, format_name: str) -> Collection:
    """The clips the one reader finds (a Clotho row, an AudioCaps clip), those without captions dropped."""
    found = caption_clips(table)
    clips = [Clip(clip.clip_id, clip.captions) for clip in found if clip.captions]
    empty = sum(clip.empty for clip in found)
    return _collection(table, format_name, clips, empty, len(found) - len(clips))


def _collection(
    table: CaptionCsv, format_name: str, clips: list[Clip], empty: int, dropped: int,
) -> Collection:
    report = LoadReport(
        path=str(table.path), format=format_name, rows=len(table.rows), clips=len(clips),
        captions=sum(len(clip.captions) for clip in clips),
        undecodable_bytes=table.replaced, empty_captions=empty, dropped_clips=dropped,
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
    table = _read(path, "Clotho")
    _expect(table, "clotho")
    return _clips(table, "clotho")


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
    table = _read(path, "AudioCaps")
    _expect(table, "audiocaps")
    return _clips(table, "audiocaps")


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
    table = _read(path, "")
    if table.layout is None:
        raise EvaluationError(Errors.E489.format(path=table.path, header=",".join(table.header)))
    return _clips(table, table.layout.format)


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
