"""Query files for ``fol-refine``: reading them line by line.

A query file is ``.txt`` (one query per line; ``#`` starts a comment line), ``.jsonl``
(one JSON object per line, the query in a field: ``"query"``, else BEIR's ``"text"``, by default)
or ``.csv`` / ``.tsv`` (a header row; the query column likewise). Which field holds the query and
which its id (``"_id"`` or ``"id"``, carried as :attr:`QueryLine.query_id`) is the one reader's
knowledge (:mod:`fortekit.collection_reader`), so a BEIR ``queries.jsonl`` is read as it is. Files are read
by :mod:`fortekit.textio`: lines end at ``"\\n"`` only (never at U+2028 or U+0085), CSV
records follow ``newline=""`` (CR-only files work), and a line that is not UTF-8, too long,
nested too deeply or malformed is reported on its own with its number; the others still run.
A last line without a line end is a query like any other (a finished file often lacks the final
line break); a file read while it is still being written is read as far as it goes. Each record
holds its line's number and text, so a resumed run that finds the line grown or edited refuses
the output (E672, :meth:`fortekit.search.refine.resume.ResumeState.holds`) instead of writing a
second record of it.
Every line comes out as a :class:`QueryLine`: a query, or the reason
it was skipped (empty, not UTF-8, too long, bad JSON, no such field), with its line
number. Writing results and resuming an interrupted run live in
:mod:`fortekit.search.refine.output`, the offline lookup table in
:mod:`fortekit.search.refine.lookup`.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "queries.txt"
    >>> _ = path.write_bytes(b"a dog barks\\n\\n\\xff rain\\n")
    >>> for item in read_queries(path):
    ...     print(item.line, item.query or item.problem[:6])
    1 a dog barks
    2 [E655]
    3 [E656]
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from fortekit.collection_reader import QUERY_KEYS, query_field, query_id, query_id_column
from fortekit.errors import Errors, QueryFileError
from fortekit.fol.caption.pipeline import MAX_CHARS
from fortekit.textio import (
    MAX_LINE_CHARS,
    BadLine,
    CsvRecord,
    json_value,
    read_csv_records,
    read_lines,
    unicode_problem,
)

__all__ = [
    "DEFAULT_MAX_CHARS",
    "EXTENSIONS",
    "QUERY_FORMATS",
    "QueryFormat",
    "QueryLine",
    "count_lines",
    "detect_format",
    "read_queries",
    "resume_key",
]

QueryFormat = Literal["txt", "jsonl", "csv", "tsv"]
QUERY_FORMATS: tuple[QueryFormat, ...] = ("txt", "jsonl", "csv", "tsv")
#: File extensions and the format each one means.
EXTENSIONS: dict[str, QueryFormat] = {
    ".txt": "txt", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv",
}
#: Longest query accepted by default, in characters. Search queries are a sentence or two;
#: a longer line is almost always a pasted document or a broken file. The caption parser
#: itself accepts up to ``fortekit.fol.caption.pipeline.MAX_CHARS``.
DEFAULT_MAX_CHARS = 1_000
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


@dataclass(frozen=True, slots=True)
class QueryLine:
    """One line (or CSV record) of a query file.

    Attributes:
        line: the 1-based line number where it starts, as an editor shows it.
        query: the query with surrounding white space removed; None when skipped.
        problem: why the line is skipped (a coded message); None when it is fine.
        key: identifies the line for resuming: its number and its text (see :func:`resume_key`).
        target: the value of the target column or field (the relevant item's id, for
            oracle anchors), when one was asked for.
        query_id: the query's own id (a BEIR ``_id``, or an ``id``), when the file gives one.
    """

    line: int
    query: str | None
    problem: str | None
    key: str
    target: str | None = None
    query_id: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the line holds a usable query."""
        return self.problem is None


def resume_key(line: int, query: str) -> str:
    """The key of a query in a file: its line number and its text.

    Both are part of the key so that an edited input is noticed: a resumed run refuses an
    output holding the line's result for other text (E672).

    Example:
        >>> resume_key(3, "rain on a roof")
        '3:rain on a roof'
    """
    return f"{line}:{query}"


def detect_format(path: str | os.PathLike[str], file_format: str | None = None) -> QueryFormat:
    """The format of a query file: `file_format` when given, else from the extension.

    Raises:
        QueryFileError: an unknown format name or extension (E651).

    Example:
        >>> detect_format("clotho_captions_development.csv")
        'csv'
        >>> detect_format("queries.dat", "txt")
        'txt'
    """
    source = Path(path)
    if file_format is not None:
        if file_format not in QUERY_FORMATS:
            raise QueryFileError(Errors.E651.format(
                path=source, suffix=file_format, extensions=", ".join(EXTENSIONS),
                options=", ".join(QUERY_FORMATS),
            ))
        return file_format
    found = EXTENSIONS.get(source.suffix.lower())
    if found is None:
        raise QueryFileError(Errors.E651.format(
            path=source, suffix=source.suffix, extensions=", ".join(EXTENSIONS),
            options=", ".join(QUERY_FORMATS),
        ))
    return found


def count_lines(path: str | os.PathLike[str]) -> int:
    """The number of lines of a file, read in 1 MiB blocks (a progress bar's total).

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "q.txt"
        >>> _ = path.write_text("a\\nb\\nc")
        >>> count_lines(path)
        3
    """
    count, returns, last = 0, 0, b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            count += block.count(b"\n")
            returns += block.count(b"\r")
            last = block[-1:]
    if not count and returns:  # a file with CR line ends only (see fortekit.textio)
        return returns + (last != b"\r")
    return count + (last != b"\n")


def read_queries(
    path: str | os.PathLike[str],
    *,
    file_format: str | None = None,
    column: str | None = None,
    field: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    target: str | None = None,
) -> Iterator[QueryLine]:
    """The queries of a file, one :class:`QueryLine` per line, read lazily.

    The file is opened, and a CSV/TSV header checked, when this function is called,
    so that an unusable file fails before any model is loaded.

    Args:
        path: the query file.
        file_format: "txt", "jsonl", "csv" or "tsv"; None: from the extension.
        column: the CSV/TSV column holding the queries (default: ``query``, else ``text``); not
            for .txt.
        field: the JSONL field holding the queries (default: ``query``, else ``text``, per line).
        max_chars: longer queries are skipped with a problem (E657).
        target: a CSV/TSV column or JSONL field whose value each :class:`QueryLine`
            carries as ``target`` (e.g. the relevant item's id).

    Returns:
        An iterator over the lines; skipped lines carry a ``problem`` and no ``query``.
        Comment lines of a .txt file (first character ``#``) are left out silently.

    Raises:
        QueryFileError: a missing or unreadable file, a directory, an unknown extension
            (E651), a UTF-16 file (E654), a CSV without a header (E653) or without the
            column (E652), a column or target asked of a .txt file (E667).

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "q.csv"
        >>> _ = path.write_text('id,caption_1\\n7,"rain, then thunder"\\n8,\\n')
        >>> [(q.line, q.query, q.ok) for q in read_queries(path, column="caption_1")]
        [(2, 'rain, then thunder', True), (3, None, False)]
    """
    source = Path(path).expanduser()
    if source.is_dir():
        raise QueryFileError(Errors.E650.format(path=source, problem="it is a directory"))
    kind = detect_format(source, file_format)
    if kind == "txt" and (target is not None or column is not None):
        raise QueryFileError(Errors.E667.format(
            option="a column (--column, --target-column)", needed="a .csv, .tsv or .jsonl query file",
            why=f"{source} has one query per line and nothing else",
        ))
    handle = _open_binary(source)
    lines = _Lines(source, handle, max_chars)
    if kind == "txt":
        return lines.txt()
    if kind == "jsonl":
        return lines.jsonl(field, target)
    return lines.table(delimiter="," if kind == "csv" else "\t", column=column, kind=kind, target=target)


def _open_binary(source: Path) -> BinaryIO:
    try:
        handle = source.open("rb")
    except FileNotFoundError:
        raise QueryFileError(Errors.E650.format(path=source, problem="no such file")) from None
    except OSError as exc:
        raise QueryFileError(Errors.E650.format(path=source, problem=exc.strerror or str(exc))) from None
    if handle.peek(2)[:2] in _UTF16_BOMS:
        handle.close()
        raise QueryFileError(Errors.E654.format(path=source, suffix=source.suffix))
    return handle


class _Lines:
    """Reads a binary file through :mod:`fortekit.textio` and turns lines into :class:`QueryLine` items."""

    def __init__(self, source: Path, handle: BinaryIO, max_chars: int) -> None:
        self.source = source
        self.handle = handle
        self.max_chars = max_chars
        # A line (or CSV record) is held in memory up to this length; longer ones are E657.
        # It stays under csv's field limit, so no cell can hit that limit.
        self.cap = max(4 * max_chars, min(MAX_LINE_CHARS, 100_000))

    def decoded(self) -> Iterator[tuple[int, str | BadLine]]:
        """(line number, text or why it is unreadable), lines split at "\\n" only."""
        try:
            for line in read_lines(self.handle, max_chars=self.cap):
                yield line.number, line.text
        finally:
            self.handle.close()

    def bad(self, bad: BadLine) -> QueryLine:
        """The skipped QueryLine of an unreadable line or record."""
        if bad.kind == "undecodable":
            return _skipped(bad.line, Errors.E656.format(reason=bad.reason.removeprefix("not UTF-8: ")))
        if bad.kind == "too_long":
            return _skipped(bad.line, Errors.E657.format(
                length=bad.length, limit=self.max_chars, parser_limit=MAX_CHARS,
            ))
        if bad.kind == "json":
            return _skipped(bad.line, Errors.E658.format(problem=bad.reason))
        return _skipped(bad.line, Errors.E491.format(path=self.source, line=bad.line, problem=bad.reason))

    def check(
        self, number: int, text: str | None, what: str = "line", target: str | None = None,
        query_id: str | None = None,
    ) -> QueryLine:
        """A QueryLine for `text` at `number`, with a problem if it is unusable."""
        query = (text or "").strip()
        if not query:
            return _skipped(number, Errors.E655.format(what=what))
        if len(query) > self.max_chars:
            return _skipped(number, Errors.E657.format(
                length=len(query), limit=self.max_chars, parser_limit=MAX_CHARS,
            ))
        problem = unicode_problem(query)  # a JSON "\ud800" escape: the decoded file itself was UTF-8
        if problem is not None:
            return _skipped(number, Errors.E671.format(function="read_queries", problem=problem))
        return QueryLine(number, query, None, resume_key(number, query), target, query_id)

    def txt(self) -> Iterator[QueryLine]:
        for number, text in self.decoded():
            if isinstance(text, BadLine):
                yield self.bad(text)
            elif not text.lstrip().startswith("#"):
                yield self.check(number, text)

    def jsonl(self, named: str | None, target: str | None) -> Iterator[QueryLine]:
        for number, text in self.decoded():
            if isinstance(text, BadLine) or not text.strip():
                yield self.bad(text) if isinstance(text, BadLine) else self.check(number, text)
                continue
            record = json_value(number, text)
            if isinstance(record, BadLine):
                yield self.bad(record)
                continue
            if not isinstance(record, dict):
                yield _skipped(number, Errors.E658.format(problem=f"a JSON {type(record).__name__}"))
                continue
            field = query_field(record, named)
            value = record.get(field)
            if not isinstance(value, str):
                fields = ", ".join(map(repr, record)) or "none"
                also = "" if named else f", and so is {QUERY_KEYS[1]!r}"
                detail = (
                    f"holds a JSON {type(value).__name__}, not text" if field in record
                    else f"is missing{also} (the object's fields: {fields})"
                )
                yield _skipped(number, Errors.E659.format(field=field, detail=detail))
                continue
            found = record.get(target) if target is not None else None
            yield self.check(number, value, f"field {field!r}", None if found is None else str(found),
                             query_id(record))

    def table(
        self, *, delimiter: str, column: str | None, kind: str, target: str | None,
    ) -> Iterator[QueryLine]:
        # at most csv's field limit (131,072), so a longer cell is E657 with its length
        records = read_csv_records(self.handle, delimiter=delimiter, max_chars=min(self.cap, 131_072))
        header = next(records, None)
        if header is None:
            self.handle.close()
            raise QueryFileError(Errors.E653.format(path=self.source, file_format=kind.upper()))
        if isinstance(header.cells, BadLine):
            self.handle.close()
            problem = f"its header (line {header.cells.line}) is unreadable: {header.cells.reason}"
            raise QueryFileError(Errors.E650.format(path=self.source, problem=problem))
        names = [name.strip() for name in header.cells]
        column = query_field(names, column)
        for wanted in (column, target):
            if wanted is not None and wanted not in names:
                self.handle.close()
                columns = ", ".join(map(repr, names))
                raise QueryFileError(Errors.E652.format(path=self.source, column=wanted, columns=columns))
        target_index = None if target is None else names.index(target)
        id_column = query_id_column(names)
        id_index = None if id_column is None else names.index(id_column)
        return self._records(records, names.index(column), column, target_index, id_index)

    def _records(
        self, records: Iterator[CsvRecord], index: int, column: str, target: int | None,
        id_index: int | None = None,
    ) -> Iterator[QueryLine]:
        try:
            for first, row, _ in records:
                if isinstance(row, BadLine):
                    yield self.bad(row)
                    continue
                if not row:  # a blank line between records
                    yield self.check(first, "")
                    continue
                value = row[index] if index < len(row) else None
                found = row[target] if target is not None and target < len(row) else None
                own = row[id_index].strip() if id_index is not None and id_index < len(row) else ""
                yield self.check(first, value, f"value in column {column!r}", found, own or None)
        finally:
            self.handle.close()


def _skipped(number: int, problem: str) -> QueryLine:
    return QueryLine(number, None, problem, resume_key(number, ""))
