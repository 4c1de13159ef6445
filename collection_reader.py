"""The one reader of Clotho and AudioCaps caption CSVs (vocabulary builder, parser report, eval).

Clotho CSVs (``file_name,caption_1,...,caption_N``) give one clip a row; AudioCaps CSVs
(``audiocap_id,youtube_id,start_time,caption``) give one caption a row. The file is read
by :func:`fortekit.textio.read_csv_records` (strict UTF-8, records split with
``newline=""`` semantics, never at U+2028 or U+0085; a bad record is reported with its
line number, the others are read). What to do with a bad record, a missing file or an
unknown header is the caller's choice: :func:`read_caption_csv` raises nothing of its own
but ``OSError``; :func:`check_caption_csv` raises the shared DataFileError (E114, E109).
Part of the logic core: no torch, nothing from fortekit.search or fortekit.plugins.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "clotho.csv"
    >>> _ = path.write_text('file_name,caption_1,caption_2\\na.wav,"rain, then wind",\\n')
    >>> table = read_caption_csv(path)
    >>> table.layout.format, table.rows[0].captions, table.captions()
    ('clotho', ('rain, then wind', ''), ['rain, then wind'])
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from fortekit.errors import DataFileError, Errors
from fortekit.textio import MAX_LINE_CHARS, BadLine, read_csv_records

__all__ = [
    "CaptionCsv", "CaptionLayout", "CaptionRow", "caption_layout", "check_caption_csv", "read_caption_csv",
]

_CAPTION_COLUMN = re.compile(r"caption_(\d+)")
#: The layouts, as the messages show them.
EXPECTED = "file_name,caption_1..caption_5 (Clotho) or audiocap_id,youtube_id,start_time,caption (AudioCaps)"


@dataclass(frozen=True, slots=True)
class CaptionLayout:
    """Where a caption CSV keeps its clip ids and captions (0-based column positions)."""

    format: Literal["clotho", "audiocaps"]
    id_column: int
    caption_columns: tuple[int, ...]
    segment_column: int | None = None


@dataclass(frozen=True, slots=True)
class CaptionRow:
    """One data row: its line, the clip id (Clotho file name or YouTube id), the AudioCaps
    ``start_time`` (``""`` for Clotho) and its captions, stripped, empty ones kept as ``""``."""

    line: int
    clip_id: str
    segment: str
    captions: tuple[str, ...]


@dataclass(slots=True)
class CaptionCsv:
    """What :func:`read_caption_csv` read: the header, the layout (None: neither format),
    the rows (blank ones left out), the bad records and the bad bytes replaced (lenient)."""

    path: Path
    header: list[str]
    layout: CaptionLayout | None
    rows: list[CaptionRow] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    replaced: int = 0

    def captions(self) -> list[str]:
        """Every non-empty caption, in file order (row by row, column by column)."""
        return [caption for row in self.rows for caption in row.captions if caption]


def caption_layout(header: Sequence[str]) -> CaptionLayout | None:
    """The layout a header names, or None (names compared without case or surrounding spaces).

    Example:
        >>> caption_layout(["audiocap_id", "youtube_id", "start_time", "caption"])
        CaptionLayout(format='audiocaps', id_column=1, caption_columns=(3,), segment_column=2)
        >>> caption_layout(["file_name", "caption_2", "caption_1"]).caption_columns
        (2, 1)
    """
    names = [name.strip().lower() for name in header]
    numbered = sorted(
        (int(match.group(1)), position) for position, name in enumerate(names)
        if (match := _CAPTION_COLUMN.fullmatch(name))
    )
    if "file_name" in names and numbered:
        return CaptionLayout("clotho", names.index("file_name"), tuple(position for _, position in numbered))
    if {"youtube_id", "caption"} <= set(names):
        segment = names.index("start_time") if "start_time" in names else None
        return CaptionLayout("audiocaps", names.index("youtube_id"), (names.index("caption"),), segment)
    return None


def read_caption_csv(
    path: str | os.PathLike[str], *, strict: bool = False, lenient: bool = False,
    max_chars: int = MAX_LINE_CHARS,
) -> CaptionCsv:
    """Read a Clotho or AudioCaps caption CSV (the layout is found from the header).

    Args:
        path: the CSV file.
        strict: csv's ``strict`` quoting (a stray quote is a bad record).
        lenient: decode bad bytes as U+FFFD and count them in ``replaced`` rather than
            making their records bad (the evaluation's policy, which reports the count).
        max_chars: the longest record, in characters.

    Returns:
        The :class:`CaptionCsv`; with no known layout, its ``rows`` are empty.

    Raises:
        OSError: the file cannot be opened or read.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "val.csv"
        >>> _ = path.write_bytes(b"audiocap_id,youtube_id,start_time,caption\\n1,v,0,a\\xffb\\n2,w,0,ok\\n")
        >>> table = read_caption_csv(path)
        >>> [row.clip_id for row in table.rows], table.bad[0].line, table.bad[0].kind
        (['w'], 2, 'undecodable')
    """
    source = Path(path).expanduser()
    records = read_csv_records(source, strict=strict, lenient=lenient, max_chars=max_chars)
    table = CaptionCsv(source, [], None)
    for record in records:
        table.replaced += record.replaced
        if isinstance(record.cells, BadLine):
            table.bad.append(record.cells)
            continue
        if not table.header:
            table.header = [name.strip() for name in record.cells]
            table.layout = caption_layout(table.header)
            if table.layout is None:
                break
            continue
        row, layout = record.cells, table.layout
        if layout is None or not any(cell.strip() for cell in row):
            continue

        def cell(position: int | None, row: list[str] = row) -> str:
            return row[position].strip() if position is not None and position < len(row) else ""

        captions = tuple(cell(position) for position in layout.caption_columns)
        clip_id, segment = cell(layout.id_column), cell(layout.segment_column)
        table.rows.append(CaptionRow(record.line, clip_id, segment, captions))
    return table


def check_caption_csv(table: CaptionCsv, *, what: str = "a caption CSV") -> CaptionCsv:
    """`table` itself when it has a known layout and no bad record, else a DataFileError.

    Raises:
        DataFileError: a bad record, named by its line (E114); neither layout (E109).

    Example:
        >>> check_caption_csv(CaptionCsv(Path("x.csv"), ["id", "text"], None))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.DataFileError: [E109] x.csv does not look like a caption CSV: expected ...
    """
    if table.bad:
        first = table.bad[0]
        raise DataFileError(Errors.E114.format(
            path=table.path, line=first.line, problem=first.reason, count=len(table.bad),
        ))
    if table.layout is None:
        raise DataFileError(Errors.E109.format(
            path=table.path, what=what, expected=EXPECTED, found=",".join(table.header) or "(an empty file)",
        ))
    return table
