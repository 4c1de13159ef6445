"""Reading text files: one line splitting, one decoding policy, one CSV and caption-CSV reader.

Every text file fortekit reads (query files, caption files, JSON Lines, TSV tables, lists
of paths) goes through this module, so that they all agree on what a line is and on what
happens to a line that cannot be read:

* **Lines** end at ``"\\n"`` alone; one ``"\\r"`` before it is dropped. A file without any
  ``"\\n"`` but with ``"\\r"`` (old Mac line ends) is split at ``"\\r"``. U+2028, U+2029,
  U+0085 and the other characters that :meth:`str.splitlines` would also split at are
  text, never line ends (a JSON writer with ``ensure_ascii=False`` writes them raw).
* **Decoding** is strict UTF-8; a UTF-8 byte-order mark at the start of the file is
  dropped. A line that is not UTF-8 is a bad line with its number, never silently
  replaced (:class:`BadLine`); the other lines are still read.
* **CSV/TSV** records follow :mod:`csv` with ``newline=""`` semantics (``\\r\\n``,
  ``\\n`` or ``\\r`` end a record outside quotes; a quoted cell may hold any of them).
  Each record is parsed on its own, so a malformed record, a cell over the csv module's
  field limit (131,072 characters, never raised here) or a record over the length cap is
  a bad line, and the records after it are read as usual.
* **JSON Lines**: a line that is not JSON, or nests deeper than :data:`MAX_JSON_DEPTH`,
  is a bad line (no ``RecursionError``).
* **Lengths**: a line longer than ``max_chars`` is a bad line, never held in memory whole.

This module is part of the logic core: it imports neither torch nor fortekit.search or
fortekit.plugins. Clotho and AudioCaps caption CSVs are read by
:func:`fortekit.collection_reader.read_caption_csv`, built on :func:`read_csv_records`.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "q.txt"
    >>> _ = path.write_bytes("rain\\u2028on a roof\\r\\n".encode() + b"\\xff\\n")
    >>> [text if isinstance(text, str) else text.reason for _, text in read_text_lines(path)]
    ['rain\\u2028on a roof', 'not UTF-8: byte 0xff at column 1']
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple

__all__ = [
    "MAX_JSON_DEPTH", "MAX_LINE_CHARS", "BadLine", "CsvRecord", "Line", "json_value", "read_csv_records",
    "read_jsonl", "read_lines", "read_text_lines", "shorten", "split_text_lines", "unicode_problem",
]

#: The default cap on one line (or one CSV record), in characters.
MAX_LINE_CHARS = 1 << 20
#: The deepest nesting of arrays and objects accepted on a JSON line.
MAX_JSON_DEPTH = 200
_BOM = b"\xef\xbb\xbf"
_BLOCK = 1 << 16
_CONTINUATION = bytes(range(0x80, 0xC0))
_LF, _CR, _UNIVERSAL = re.compile(rb"\n"), re.compile(rb"\r"), re.compile(rb"\r\n|\n|\r")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SURROGATE = re.compile("[\ud800-\udfff]")
Source = str | os.PathLike[str] | IO[bytes]
BadKind = Literal["undecodable", "too_long", "csv", "json"]


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line (or CSV record) that cannot be used, and why.

    Attributes:
        line: its 1-based line number (a CSV record's first line), as an editor shows it.
        kind: ``"undecodable"`` (not UTF-8), ``"too_long"``, ``"csv"`` (malformed record)
            or ``"json"`` (not JSON, or nested too deeply).
        reason: what is wrong, a phrase for a coded message (``"byte 0xff at column 3 ..."``).
        length: the line's length in characters, for ``"too_long"``.
    """

    line: int
    kind: BadKind
    reason: str
    length: int | None = None


class Line(NamedTuple):
    """One physical line: its number, its text (no line end) or why it is bad, its line end."""

    number: int
    text: str | BadLine
    ending: str
    lenient: str = ""  # the text with U+FFFD for bad bytes; "" when too long
    replaced: int = 0  # how many bad byte sequences became U+FFFD in `lenient`


class CsvRecord(NamedTuple):
    """One CSV/TSV record: the line it starts on and its cells, or why it is bad."""

    line: int
    cells: list[str] | BadLine
    replaced: int = 0  # bad byte sequences decoded as U+FFFD (``lenient`` reading only)


@contextmanager
def _binary(source: Source) -> Iterator[IO[bytes]]:
    if not isinstance(source, (str, os.PathLike)):
        yield source
        return
    with Path(source).open("rb") as handle:
        yield handle


def _has_lf(handle: IO[bytes]) -> bool:
    """Whether the rest of a seekable file holds a "\\n" (the position is kept)."""
    if not handle.seekable():
        return True
    start = handle.tell()
    try:
        while block := handle.read(1 << 20):
            if b"\n" in block:
                return True
        return False
    finally:
        handle.seek(start)


def _chars(data: bytes) -> int:
    """The number of characters in UTF-8 bytes (continuation bytes not counted)."""
    return len(data.translate(None, _CONTINUATION))


def _raw_lines(handle: IO[bytes], max_bytes: int, universal: bool) -> Iterator[tuple[bytes, bytes, int]]:
    """(bytes without the line end, the line end, characters dropped) for each line."""
    pattern = _UNIVERSAL if universal else (_LF if _has_lf(handle) else _CR)
    buffer, dropped, first = b"", 0, True
    while True:
        block = handle.read(_BLOCK)
        if first:
            block, first = (block[3:] if block.startswith(_BOM) else block), False
        buffer += block
        position = 0
        for match in pattern.finditer(buffer):
            if block and match.group() == b"\r" and match.end() == len(buffer):
                break  # perhaps the first half of "\r\n": wait for the next block
            data, ending = buffer[position:match.start()], match.group()
            if pattern is _LF and data.endswith(b"\r"):
                data, ending = data[:-1], b"\r\n"
            position = match.end()
            if dropped:
                yield b"", ending, dropped + _chars(data)
            else:
                yield data, ending, 0
            dropped = 0
        buffer = buffer[position:]
        if len(buffer) > max_bytes:  # a line too long to keep: count it and let it go
            keep = 1 if buffer.endswith(b"\r") else 0
            dropped += _chars(buffer[:len(buffer) - keep])
            buffer = buffer[len(buffer) - keep:]
        if not block:
            if buffer or dropped:
                yield (b"", b"", dropped + _chars(buffer)) if dropped else (buffer, b"", 0)
            return


def read_lines(
    source: Source, *, max_chars: int = MAX_LINE_CHARS, universal: bool = False,
) -> Iterator[Line]:
    """Every physical line of a file, decoded as strict UTF-8, with its number.

    Args:
        source: a path, or a binary file object (read from where it is; not closed).
        max_chars: a longer line is a :class:`BadLine` of kind ``"too_long"``; at most
            about ``4 * max_chars`` bytes of a line are held in memory.
        universal: split at ``"\\r\\n"``, ``"\\n"`` and ``"\\r"`` alike (CSV); by default
            lines end at ``"\\n"`` (or at ``"\\r"`` in a file without ``"\\n"``).

    Returns:
        One :class:`Line` a line, blank lines included; a last line without a line end
        has ``ending == ""``.

    Example:
        >>> import io
        >>> [tuple(line)[:3] for line in read_lines(io.BytesIO(b"a\\r\\nb\\xc2\\x85c"))]
        [(1, 'a', '\\r\\n'), (2, 'b\\x85c', '')]
    """
    with _binary(source) as handle:
        raw = _raw_lines(handle, 4 * max_chars + 4, universal)
        for number, (data, ending_bytes, dropped) in enumerate(raw, start=1):
            ending = ending_bytes.decode("ascii")
            if dropped:
                yield Line(number, _too_long(number, dropped, max_chars), ending)
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                reason = f"not UTF-8: byte 0x{data[exc.start]:02x} at column {exc.start + 1}"
                loose = data.decode("utf-8", errors="replace")
                replaced = loose.count("\ufffd") - data.count("\ufffd".encode())
                yield Line(number, BadLine(number, "undecodable", reason), ending, loose, replaced)
                continue
            if len(text) > max_chars:
                yield Line(number, _too_long(number, len(text), max_chars), ending)
            else:
                yield Line(number, text, ending, text)


def _too_long(number: int, length: int, limit: int) -> BadLine:
    reason = f"{length:,} characters long, more than the limit of {limit:,}"
    return BadLine(number, "too_long", reason, length)


def read_text_lines(path: Source, *, max_chars: int = MAX_LINE_CHARS) -> Iterator[tuple[int, str | BadLine]]:
    """``(line number, text or BadLine)`` for each line of a text file: the one policy.

    Lines end at ``"\\n"`` (a ``"\\r"`` before it dropped; ``"\\r"`` in a file without
    ``"\\n"``), never at U+2028, U+2029 or U+0085. The text is strict UTF-8 (a BOM at the
    start dropped): a line that is not is a :class:`BadLine` (kind ``"undecodable"``), as
    is a line over `max_chars` characters (``"too_long"``); the lines after it are read
    as usual. Blank lines are yielded as ``""``; the caller skips them or not.

    Args:
        path: the file (or a binary file object).
        max_chars: the longest line accepted, in characters.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "old-mac.txt"
        >>> _ = path.write_bytes(b"one\\rtwo\\r")
        >>> list(read_text_lines(path, max_chars=10))
        [(1, 'one'), (2, 'two')]
    """
    for line in read_lines(path, max_chars=max_chars):
        yield line.number, line.text


def split_text_lines(text: str) -> list[str]:
    """The lines of text already in memory, split as :func:`read_text_lines` splits a file.

    Example:
        >>> split_text_lines("a\\u2028b\\r\\nc\\n")
        ['a\\u2028b', 'c']
    """
    separator = "\n" if "\n" in text or "\r" not in text else "\r"
    lines = text.split(separator)
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _depth(text: str) -> int:
    """How deep arrays and objects nest in a JSON text (strings ignored)."""
    depth = deepest = 0
    for char in _JSON_STRING.sub("", text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def json_value(number: int, text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON value of one line, or a :class:`BadLine` (kind ``"json"``) saying why not.

    Example:
        >>> json_value(1, '{"a": [1]}')
        {'a': [1]}
        >>> json_value(2, "[" * 100_000).reason
        'nested more than 200 levels deep'
        >>> json_value(3, "{x").reason
        'Expecting property name enclosed in double quotes at column 2'
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if text.count("[") + text.count("{") > max_depth and _depth(text) > max_depth:
        return BadLine(number, "json", f"nested more than {max_depth} levels deep")
    try:
        return json.loads(text)
    except RecursionError:
        return BadLine(number, "json", f"nested more than {max_depth} levels deep")
    except json.JSONDecodeError as exc:
        return BadLine(number, "json", f"{exc.msg} at column {exc.colno}")
    except ValueError as exc:
        return BadLine(number, "json", str(exc))


def read_jsonl(path: Source, *, max_chars: int = MAX_LINE_CHARS) -> Iterator[tuple[int, Any]]:
    """``(line number, JSON value or BadLine)`` for each non-blank line of a JSON Lines file.

    Lines are split and decoded as :func:`read_text_lines` does; a line that is not JSON
    or nests too deeply is a :class:`BadLine`. Whether a value must be an object is the
    caller's business.

    Example:
        >>> import io
        >>> [(n, v if not isinstance(v, BadLine) else v.kind)
        ...  for n, v in read_jsonl(io.BytesIO(b'{"t": "a\\xe2\\x80\\xa8b"}\\n\\n[[\\n'))]
        [(1, {'t': 'a\\u2028b'}), (3, 'json')]
    """
    for number, text in read_text_lines(path, max_chars=max_chars):
        if isinstance(text, BadLine):
            yield number, text
        elif text.strip():
            yield number, json_value(number, text)


def _still_quoted(text: str, delimiter: str, quoted: bool) -> bool:
    """Whether a CSV record is inside a quoted cell at the end of `text` (csv's own rules)."""
    if not quoted and '"' not in text:
        return False
    position, size, state = 0, len(text), "quoted" if quoted else "start"
    while position < size:
        if state == "quoted":
            found = text.find('"', position)
            if found < 0:
                return True
            position = found + 1
            if position < size and text[position] == '"':
                position += 1  # a doubled quote inside the cell
            else:
                state = "field"
        elif state == "start":
            if text[position] == '"':
                state, position = "quoted", position + 1
            else:
                state = "field"
        else:
            found = text.find(delimiter, position)
            if found < 0:
                return False
            state, position = "start", found + 1
    return state == "quoted"


def _parse_record(first: int, text: str, delimiter: str, strict: bool) -> list[str] | BadLine:
    try:
        return next(csv.reader([text], delimiter=delimiter, strict=strict), [])
    except csv.Error as exc:
        reason = str(exc)
        if "field limit" in reason:
            reason = f"a cell is longer than {csv.field_size_limit():,} characters"
        return BadLine(first, "csv", reason)


def read_csv_records(
    source: Source, *, delimiter: str = ",", strict: bool = False, max_chars: int = MAX_LINE_CHARS,
    lenient: bool = False,
) -> Iterator[CsvRecord]:
    """The records of a CSV or TSV file, each parsed on its own, with the line it starts on.

    Records end at ``"\\r\\n"``, ``"\\n"`` or ``"\\r"`` outside quotes (``newline=""``
    semantics, so CR-only files work), never at U+2028 or U+0085. A record that is not
    UTF-8 (unless `lenient`), longer than `max_chars`, holds a cell over the csv module's
    field limit, is malformed (with `strict`), or opens a quote it never closes, is a
    :class:`BadLine`; the records after it are read as usual.

    Args:
        source: the file (or a binary file object).
        delimiter: ``","`` or ``"\\t"``.
        strict: csv's ``strict`` (a stray quote after a quoted cell is an error).
        max_chars: the longest record, in characters.
        lenient: decode bad bytes as U+FFFD instead of making the record bad (for readers
            that count them, as the evaluation's :class:`LoadReport` does).

    Example:
        >>> import io
        >>> data = 'id,caption\\r1,"rain,\\r\\nthen wind"\\r2,a\\u2028b\\r'.encode()
        >>> [(record.line, record.cells) for record in read_csv_records(io.BytesIO(data))]
        [(1, ['id', 'caption']), (2, ['1', 'rain,\\r\\nthen wind']), (4, ['2', 'a\\u2028b'])]
    """
    parts: list[str] = []
    number = first = size = replaced = 0
    quoted, bad = False, None
    for number, text, ending, loose, swapped in read_lines(source, max_chars=max_chars, universal=True):
        if not parts and bad is None:
            first, size, replaced = number, 0, 0
        replaced += swapped
        if isinstance(text, BadLine) and not (lenient and text.kind == "undecodable"):
            bad = bad or text
        body = loose if isinstance(text, BadLine) else text
        size += len(body) + len(ending)
        if bad is None and size > max_chars:
            bad = _too_long(first, size, max_chars)
        if bad is None:
            parts.append(body + ending)
        quoted = _still_quoted(body, delimiter, quoted)
        if quoted:
            continue
        record = bad if bad is not None else _parse_record(first, "".join(parts), delimiter, strict)
        yield CsvRecord(first, record, replaced if lenient else 0)
        parts, bad = [], None
    if quoted:
        yield CsvRecord(first, bad or BadLine(
            first, "csv", f"the quoted cell opened on line {first} is still open at the end of the file, "
            f"line {number}",
        ))


def unicode_problem(text: str) -> str | None:
    """What makes a str no valid Unicode text (a lone surrogate), or None: the one test of every text.

    A Python str may hold a lone surrogate (U+D800-U+DFFF), which is no character: it cannot be
    written as UTF-8, and tokenizers refuse it. It arrives from bytes that are not UTF-8 (Python
    decodes command-line arguments and file names with ``surrogateescape``, so the byte 0xff
    becomes U+DCFF) or from a JSON ``"\\ud800"`` escape without its pair. The files this module
    reads never hold one (a line that is not UTF-8 is a :class:`BadLine`); a JSON value may.

    Args:
        text: the text.

    Returns:
        None for valid text; else a phrase for a coded message, naming the first such code point
        and its 1-based position (and the byte it stands for, for an escaped byte).

    Example:
        >>> unicode_problem("rain on a roof") is None
        True
        >>> unicode_problem("rain \\udcff on a roof")
        'the byte 0xff at character 6 is not UTF-8 (Python holds it as the lone surrogate U+DCFF)'
        >>> unicode_problem("rain \\ud800")
        'it holds a lone surrogate (U+D800 at character 6), which is no character'
    """
    if text.isascii():  # the usual query: no scan beyond this check
        return None
    found = _SURROGATE.search(text)
    if found is None:
        return None
    point, position = ord(found.group()), found.start() + 1
    if 0xDC80 <= point <= 0xDCFF:  # surrogateescape's stand-in for one undecodable byte
        return (f"the byte 0x{point - 0xDC00:02x} at character {position} is not UTF-8 "
                f"(Python holds it as the lone surrogate U+{point:04X})")
    return f"it holds a lone surrogate (U+{point:04X} at character {position}), which is no character"


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in an ellipsis where it was cut (for reprs).

    Example:
        >>> shorten("a dog barks", 60), shorten("a dog barks", 6)
        ('a dog barks', 'a dog…')
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"
