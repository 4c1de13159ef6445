"""The one reader of collections: caption CSVs, JSON Lines, BEIR corpora and query files.

Every command that reads a collection or its queries asks this module what a record holds:
``fortekit index build`` (:func:`read_items`), ``fortekit eval`` (a BEIR folder through
:func:`item_record` and :func:`query_field`; Clotho and AudioCaps CSVs through
:func:`read_caption_csv` and :func:`caption_clips`), ``fortekit search --queries`` and
``fol-refine`` (:func:`query_field`, :func:`query_id`, :func:`query_id_column`), the vocabulary
builder and the parser report (:func:`read_caption_csv`).

The shapes it knows:

* **BEIR**, with BEIR's own field names: a corpus line ``{"_id", "text", "title"?,
  "captions"?: [str]}``, a query line ``{"_id", "text"}``.
* **Clotho** CSVs (``file_name,caption_1,...,caption_N``) give one clip a row; **AudioCaps**
  CSVs (``audiocap_id,youtube_id,start_time,caption``) give one caption a row, grouped into
  clips by ``(youtube_id, start_time)``.
* Any other ``.csv``, ``.tsv`` or ``.jsonl``: an id (:data:`ID_KEYS`) and a text
  (:data:`TEXT_KEYS`), or the columns the caller names; queries in :data:`QUERY_KEYS`.
* ``.txt``: one caption a line, ``id<TAB>caption`` or the caption alone (its id is its line number).

**One clip, one item.** A record that holds a list of captions (a BEIR ``captions`` field, a
named field that is a list, a Clotho row, an AudioCaps clip) is one :class:`ItemRecord`: the
item's vector is the mean of its captions' embeddings, and its own text (stored with it and
parsed for Stage 3) is its ``text``, else its first caption. A list is never stored as its
printed form. BEIR's ``title`` is read and kept, not embedded (as ``fortekit eval --beir``).

Files are read by :mod:`fortekit.textio` (strict UTF-8, lines split at ``"\\n"`` alone, CSV
records with ``newline=""`` semantics, never at U+2028 or U+0085). What to do with a bad record
is the caller's choice: :func:`read_caption_csv` collects them, :func:`read_items` and
:func:`item_record` raise :class:`RecordError` (line, problem) for the caller to name in its own
coded message; :func:`check_caption_csv` raises the shared DataFileError (E114, E109).
Part of the logic core: no torch, nothing from fortekit.search or fortekit.plugins.

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "corpus.jsonl").write_text(
    ...     '{"_id": "d1", "title": "", "text": "rain", "captions": ["rain", "rain on a roof"]}\\n')
    >>> [(r.id, r.text, r.texts) for r in read_items(folder / "corpus.jsonl")]
    [('d1', 'rain', ('rain', 'rain on a roof'))]
    >>> path = folder / "clotho.csv"
    >>> _ = path.write_text('file_name,caption_1,caption_2\\na.wav,"rain, then wind",\\n')
    >>> table = read_caption_csv(path)
    >>> table.layout.format, table.rows[0].captions, table.captions()
    ('clotho', ('rain, then wind', ''), ['rain, then wind'])
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fortekit.errors import DataFileError, Errors
from fortekit.textio import (
    MAX_LINE_CHARS,
    BadLine,
    read_csv_records,
    read_jsonl,
    read_text_lines,
    shorten,
    unicode_problem,
)

__all__ = [
    "CAPTIONS_KEY",
    "ID_KEYS",
    "QUERY_ID_KEYS",
    "QUERY_KEYS",
    "TEXT_KEYS",
    "CaptionClip",
    "CaptionCsv",
    "CaptionLayout",
    "CaptionRow",
    "ItemRecord",
    "RecordError",
    "caption_clips",
    "caption_layout",
    "check_caption_csv",
    "item_record",
    "query_field",
    "query_id",
    "query_id_column",
    "read_caption_csv",
    "read_items",
]

#: An item's id, tried in this order when no key is named (BEIR's ``_id`` first).
ID_KEYS = ("_id", "id", "file_name")
#: An item's own text, tried in this order when no key is named (BEIR's ``text`` first).
TEXT_KEYS = ("text", "caption")
#: The list of a clip's captions (BEIR corpora as fortekit writes them): one item, their mean.
CAPTIONS_KEY = "captions"
#: BEIR's document title: read, never embedded.
TITLE_KEY = "title"
#: A query's text, tried in this order when no field is named (BEIR's queries say ``text``).
QUERY_KEYS = ("query", "text")
#: A query's id, carried into the outputs that write query ids.
QUERY_ID_KEYS = ("_id", "id")

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


# -- clips of a caption CSV ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CaptionClip:
    """One clip of a caption CSV: the line it starts on, its id, its non-empty captions (file
    order) and how many empty captions it had."""

    line: int
    clip_id: str
    captions: tuple[str, ...]
    empty: int = 0


def caption_clips(table: CaptionCsv) -> list[CaptionClip]:
    """The clips of a Clotho or AudioCaps table, in first-seen order, clips without captions kept.

    A Clotho row is a clip. AudioCaps rows are grouped by ``(youtube_id, start_time)``; the clip
    id is the YouTube id, or ``{youtube_id}_{start_time}`` when the file holds several segments
    of one video.

    Example:
        >>> rows = [CaptionRow(2, "v", "30", ("a dog",)), CaptionRow(3, "w", "0", ("",)),
        ...         CaptionRow(4, "v", "30", ("a dog barks",))]
        >>> table = CaptionCsv(Path("ac.csv"), [], CaptionLayout("audiocaps", 1, (3,), 2), rows)
        >>> [(clip.clip_id, clip.captions, clip.empty) for clip in caption_clips(table)]
        [('v', ('a dog', 'a dog barks'), 0), ('w', (), 1)]
    """
    if table.layout is None or table.layout.format == "clotho":
        return [CaptionClip(row.line, row.clip_id, tuple(c for c in row.captions if c),
                            sum(1 for c in row.captions if not c)) for row in table.rows]
    groups: dict[tuple[str, str], list[CaptionRow]] = {}  # insertion order = first-seen order
    for row in table.rows:
        groups.setdefault((row.clip_id, row.segment), []).append(row)
    starts: dict[str, int] = {}
    for video, _ in groups:
        starts[video] = starts.get(video, 0) + 1
    clips = []
    for (video, start), rows in groups.items():
        captions = [caption for row in rows for caption in row.captions]
        clips.append(CaptionClip(rows[0].line, video if starts[video] == 1 else f"{video}_{start}",
                                 tuple(c for c in captions if c), sum(1 for c in captions if not c)))
    return clips


# -- items: one record, one item ----------------------------------------------------------------


class RecordError(ValueError):
    """A record (or a file) the reader cannot use: the caller names it in its own coded message.

    Attributes:
        line: the line it starts on; None for the file as a whole (an unknown type, no header).
        problem: what is wrong, a phrase (``"'captions' is 'one', not a list of strings"``).
        columns: for a record or header without the keys asked for, the keys it has.
        bad: the :class:`~fortekit.textio.BadLine` of a line that could not be read, if it is one.
    """

    def __init__(self, line: int | None, problem: str, *, columns: Sequence[str] = (),
                 bad: BadLine | None = None) -> None:
        super().__init__(problem if line is None else f"line {line}: {problem}")
        self.line, self.problem, self.columns, self.bad = line, problem, list(columns), bad


@dataclass(frozen=True, slots=True)
class ItemRecord:
    """One item of a collection: one clip, however many captions it has.

    Attributes:
        line: the line its record starts on.
        id: its id.
        text: its own text (stored with the item, parsed for Stage 3): the record's text, else
            its first caption; None when it has neither.
        captions: its list of captions, when the record has one: the item's vector is the mean
            of their embeddings. Empty ones are left out.
        title: BEIR's ``title`` (kept, not embedded), or None.

    Example:
        >>> ItemRecord(1, "d1", "rain", ("rain", "rain falls")).texts
        ('rain', 'rain falls')
        >>> ItemRecord(2, "d2", "wind").texts, ItemRecord(3, "d3", None).texts
        (('wind',), ())
    """

    line: int
    id: str
    text: str | None
    captions: tuple[str, ...] = ()
    title: str | None = None

    @property
    def texts(self) -> tuple[str, ...]:
        """What the item's vector is the mean of: its captions, else its own text, else nothing."""
        if self.captions:
            return self.captions
        return (self.text,) if self.text else ()


def _first(keys: Any, candidates: Sequence[str]) -> str | None:
    return next((key for key in candidates if key in keys), None)


def _show(value: Any) -> str:
    return shorten(repr(value), 80)


def _checked(line: int, key: str, text: str) -> str:
    problem = unicode_problem(text)
    if problem is not None:
        raise RecordError(line, f'"{key}": {problem}')
    return text


def _id_value(line: int, key: str, value: Any, columns: Sequence[str]) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        if value is None:
            raise RecordError(line, f'"{key}" is None, not a non-empty string', columns=columns)
        raise RecordError(line, f'"{key}" is {_show(value)}, not a non-empty string')
    return _checked(line, key, str(value).strip())


def _text_value(line: int, key: str, value: Any) -> tuple[str | None, tuple[str, ...]]:
    """(text, captions) of a text field: a string, a number, or a list of strings (captions)."""
    if value is None:
        return None, ()
    if isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return _checked(line, key, str(value).strip()) or None, ()
    if isinstance(value, list) and all(isinstance(caption, str) for caption in value):
        captions = tuple(_checked(line, key, caption.strip()) for caption in value if caption.strip())
        return (captions[0] if captions else None), captions
    kind = "a list of strings" if isinstance(value, list) else "text"
    raise RecordError(line, f'"{key}" is {_show(value)}, not {kind}')


def item_record(
    record: Mapping[str, Any], line: int, *, id_key: str | None = None, text_key: str | None = None,
) -> ItemRecord:
    """The item of one JSON object (a BEIR corpus line, or a line of any JSONL collection).

    Args:
        record: the object.
        line: its line number.
        id_key: its id's key (default: the first of :data:`ID_KEYS` it has).
        text_key: its text's key (default: :data:`TEXT_KEYS`, with :data:`CAPTIONS_KEY` as the
            list of captions). A named key that holds a list of strings is the list of captions.

    Returns:
        The :class:`ItemRecord`; its ``text`` is None when the record holds no text at all.

    Raises:
        RecordError: no id, an id or text of the wrong type, captions that are not a list of
            strings, a named key the record lacks, text that is no valid Unicode.

    Example:
        >>> item_record({"_id": "d1", "text": "", "captions": ["rain", " "]}, 1)
        ItemRecord(line=1, id='d1', text='rain', captions=('rain',), title=None)
        >>> item_record({"id": 7, "captions": ["a", "b"]}, 2, text_key="captions").texts
        ('a', 'b')
    """
    columns = list(record)
    key = id_key or _first(record, ID_KEYS) or ID_KEYS[0]
    if key not in record:
        wanted = f'"{key}"' if id_key else " or ".join(f'"{name}"' for name in ID_KEYS)
        raise RecordError(line, f"it has no id ({wanted})", columns=columns)
    item_id = _id_value(line, key, record[key], columns)
    if text_key is not None:
        if text_key not in record:
            raise RecordError(line, f'it has no "{text_key}"', columns=columns)
        text, captions = _text_value(line, text_key, record[text_key])
    else:
        text_field = _first(record, TEXT_KEYS)
        text, listed = _text_value(line, text_field, record[text_field]) if text_field else (None, ())
        captions = listed
        if CAPTIONS_KEY in record and record[CAPTIONS_KEY] is not None:
            value = record[CAPTIONS_KEY]
            if not isinstance(value, list):
                raise RecordError(line, f'"{CAPTIONS_KEY}" is {_show(value)}, not a list of strings')
            _, captions = _text_value(line, CAPTIONS_KEY, value)
        text = text or (captions[0] if captions else None)
    title = record.get(TITLE_KEY)
    return ItemRecord(line, item_id, text, captions, title if isinstance(title, str) else None)


def read_items(
    path: str | os.PathLike[str], *, id_column: str | None = None, text_column: str | None = None,
    max_chars: int = 100_000,
) -> list[ItemRecord]:
    """The items of a collection file, one :class:`ItemRecord` per clip, in file order.

    ``.jsonl`` (BEIR corpora included) is read by :func:`item_record`; ``.csv``/``.tsv`` by its
    header (a Clotho or AudioCaps layout, one item per clip, when no column is named; else the
    id and text columns); ``.txt`` holds one caption a line (``id<TAB>caption``, or the caption
    alone with its line number as id). Ids may repeat (the caller decides); blank lines are skipped.

    Args:
        path: the file.
        id_column: the id column or key (default: a layout's, else the first of :data:`ID_KEYS`).
        text_column: the text column or key (default: a layout's captions, else :data:`TEXT_KEYS`).
        max_chars: the longest caption: a CSV record or text line may be 1,000 characters longer,
            a JSON line four times as long.

    Raises:
        RecordError: the first line or record that cannot be used, a header without the columns,
            no header, an unknown file type (line None).
        OSError: the file cannot be opened or read.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "ac.csv"
        >>> _ = path.write_text("audiocap_id,youtube_id,start_time,caption\\n"
        ...                     "1,v,30,a dog\\n2,v,30,barking\\n")
        >>> [(r.id, r.text, r.texts) for r in read_items(path)]
        [('v', 'a dog', ('a dog', 'barking'))]
        >>> [(r.id, r.texts) for r in read_items(path, id_column="audiocap_id", text_column="caption")]
        [('1', ('a dog',)), ('2', ('barking',))]
    """
    source = Path(path)
    suffix = source.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return _table_items(source, "\t" if suffix == ".tsv" else ",", id_column, text_column,
                            max_chars + 1_000)
    if suffix in (".jsonl", ".ndjson"):
        return list(_jsonl_items(source, id_column, text_column, 4 * max_chars))
    if suffix == ".txt":
        return list(_txt_items(source, max_chars + 1_000))
    raise RecordError(None, f"unknown file type {suffix or '(none)'!r}")


def _bad(bad: BadLine) -> RecordError:
    return RecordError(bad.line, bad.reason, bad=bad)


def _jsonl_items(path: Path, id_key: str | None, text_key: str | None, limit: int) -> Iterator[ItemRecord]:
    for number, record in read_jsonl(path, max_chars=limit):
        if isinstance(record, BadLine):
            raise _bad(record)
        if not isinstance(record, dict):
            raise RecordError(number, f"it is a JSON {type(record).__name__}, not an object")
        yield item_record(record, number, id_key=id_key, text_key=text_key)


def _txt_items(path: Path, limit: int) -> Iterator[ItemRecord]:
    for number, line in read_text_lines(path, max_chars=limit):
        if isinstance(line, BadLine):
            raise _bad(line)
        if not line.strip() or line.startswith("#"):
            continue
        item_id, tab, caption = line.partition("\t")
        if tab and not item_id.strip():
            raise RecordError(number, "it has a tab but no id before it")
        text = _checked(number, "caption", (caption if tab else line).strip()) or None
        yield ItemRecord(number, _checked(number, "id", item_id.strip()) if tab else str(number), text)


def _columns(names: list[str], id_column: str | None, text_column: str | None) -> tuple[int, int]:
    """The positions of the id and text columns: those named, else the first of ID_KEYS and TEXT_KEYS."""
    chosen = (id_column or _first(names, ID_KEYS), text_column or _first(names, TEXT_KEYS))
    if id_column is None and text_column is None and None in chosen:
        raise RecordError(1, f"it has no id column ({', '.join(map(repr, ID_KEYS))}) with a text column "
                          f"({', '.join(map(repr, TEXT_KEYS))}), and it is neither a Clotho nor an "
                          "AudioCaps caption CSV", columns=names)
    absent = [name or wanted for name, wanted in zip(chosen, (ID_KEYS[0], TEXT_KEYS[0]), strict=True)
              if name is None or name not in names]
    if absent:
        raise RecordError(1, f"it has no column {', '.join(map(repr, absent))}", columns=names)
    return names.index(str(chosen[0])), names.index(str(chosen[1]))


def _table_items(
    path: Path, delimiter: str, id_column: str | None, text_column: str | None, limit: int,
) -> list[ItemRecord]:
    records = read_csv_records(path, delimiter=delimiter, max_chars=limit)
    header = next(records, None)
    if header is None:
        raise RecordError(None, "it has no header row")
    if isinstance(header.cells, BadLine):
        raise _bad(header.cells)
    names = [name.strip() for name in header.cells]
    layout = caption_layout(names) if id_column is None and text_column is None else None
    keys = None if layout is not None else _columns(names, id_column, text_column)
    rows: list[CaptionRow] = []
    for number, cells, _ in records:
        if isinstance(cells, BadLine):
            raise _bad(cells)
        if not any(cell.strip() for cell in cells):
            continue  # a blank line

        def cell(position: int | None, cells: list[str] = cells, number: int = number) -> str:
            text = cells[position].strip() if position is not None and position < len(cells) else ""
            return _checked(number, names[position] if position is not None else "", text)

        if layout is None:
            assert keys is not None
            rows.append(CaptionRow(number, cell(keys[0]), "", (cell(keys[1]),)))
        else:
            rows.append(CaptionRow(number, cell(layout.id_column), cell(layout.segment_column),
                                   tuple(cell(position) for position in layout.caption_columns)))
    for row in rows:
        if not row.clip_id:
            raise RecordError(row.line, "it has no id")
    if layout is None:
        return [ItemRecord(row.line, row.clip_id, row.captions[0] or None) for row in rows]
    clips = caption_clips(CaptionCsv(path, names, layout, rows))
    return [ItemRecord(clip.line, clip.clip_id, clip.captions[0] if clip.captions else None, clip.captions)
            for clip in clips]


# -- queries ------------------------------------------------------------------------------------


def query_field(keys: Any, named: str | None = None) -> str:
    """The field (or column) of a query: `named`, else the first of :data:`QUERY_KEYS` that `keys`
    holds (``query``, then BEIR's ``text``), else ``query`` (for the message that it is missing).

    Example:
        >>> query_field({"_id": "q1", "text": "rain"}), query_field(["id", "query", "text"])
        ('text', 'query')
        >>> query_field({"q": "rain"}), query_field({"text": "x"}, "q")
        ('query', 'q')
    """
    return named or _first(keys, QUERY_KEYS) or QUERY_KEYS[0]


def query_id(record: Mapping[str, Any], named: str | None = None) -> str | None:
    """A JSON query's id: the value of `named`, else of the first of :data:`QUERY_ID_KEYS` it holds,
    as text; None when there is none (or it is not a string or a number).

    Example:
        >>> query_id({"_id": "q0001", "text": "rain"}), query_id({"id": 7}), query_id({"text": "x"})
        ('q0001', '7', None)
    """
    key = named or _first(record, QUERY_ID_KEYS)
    value = record.get(key) if key is not None else None
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        return None
    return str(value).strip()


def query_id_column(names: Sequence[str]) -> str | None:
    """The id column of a CSV/TSV query file's header: the first of :data:`QUERY_ID_KEYS`, or None.

    Example:
        >>> query_id_column(["_id", "text"]), query_id_column(["query"])
        ('_id', None)
    """
    return _first(names, QUERY_ID_KEYS)
