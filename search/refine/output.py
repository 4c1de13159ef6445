"""Results of ``fol-refine``: written line by line (resuming is :mod:`.resume`'s job).

Each query's result is one JSONL object (or one TSV row), appended and flushed as
soon as its batch finishes, and forced to disk every ``fsync_every`` lines and at the
end: an interrupted run loses at most the batch in flight. An operating-system error
at any step (a full disk, a missing permission) becomes a coded error naming the file
(:func:`write_error`); a closed standard output is passed on as ``BrokenPipeError``.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
    >>> with ResultWriter(path) as writer:
    ...     writer.write({"line": 1, "query": "rain", "refined_text": "steady rain"})
    >>> path.read_text(encoding="utf-8").splitlines()
    ['{"line": 1, "query": "rain", "refined_text": "steady rain"}']
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TextIO

from fortekit.errors import Errors, QueryFileError

# The one comparison of files by device and inode, shared with every writer of fortekit
# (re-exported here, where fol-refine's callers have always found it).
from fortekit.safe_write import same_file

__all__ = [
    "OUTPUT_FORMATS",
    "RANKING_COLUMNS",
    "TSV_COLUMNS",
    "OutputFormat",
    "ResultWriter",
    "result_record",
    "same_file",
    "tsv_columns",
    "tsv_escape",
    "tsv_unescape",
    "write_error",
]

OutputFormat = Literal["jsonl", "tsv"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("jsonl", "tsv")
#: The columns of a TSV output; the objective's terms are flattened.
TSV_COLUMNS = (
    "line", "query", "refined_text", "phi_star", "F", "complexity", "utility", "pivot",
    "depth", "feasible", "source",
)
#: Added with ``--index``: the ranked item ids and their scores, each a JSON list.
RANKING_COLUMNS = ("ranking", "scores")
_OWN_FIELDS = frozenset({"line", "query_id", "query", "ranking", "source"})  # set per run, never copied
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {value: key for key, value in _ESCAPES.items()}
_ESCAPED = re.compile(r"\\[\\tnr]")


def tsv_escape(text: str) -> str:
    r"""A cell for a TSV line: backslash, tab and line breaks written as \\, \t, \n, \r.

    Example:
        >>> tsv_escape("a\tb\\c")
        'a\\tb\\\\c'
        >>> tsv_unescape(tsv_escape("x\ny")) == "x\ny"
        True
    """
    return "".join(_ESCAPES.get(char, char) for char in text)


def tsv_unescape(cell: str) -> str:
    """The text of a cell written by :func:`tsv_escape`."""
    return _ESCAPED.sub(lambda match: _UNESCAPES[match.group()], cell)


def tsv_columns(*, ranking: bool) -> tuple[str, ...]:
    """The header of a TSV output (with the ranking columns when an index is searched)."""
    return TSV_COLUMNS + (RANKING_COLUMNS if ranking else ())


def result_record(
    line: int,
    query: str,
    result: Mapping[str, Any],
    *,
    source: str = "refine",
    ranking: Sequence[Mapping[str, Any]] | None = None,
    query_id: str | None = None,
) -> dict[str, Any]:
    """The record written for one query: its line, its id, its text, the result, where it came from.

    Args:
        line: the query's line number in the input.
        query: the query as read.
        result: ``RefinementResult.to_dict()``, or a lookup table's stored record.
        source: "refine" (refined in this run) or "lookup" (from a lookup table).
        ranking: the top-K items ({id, score, caption}) when an index was searched.
        query_id: the query's own id (a BEIR ``_id``), written after the line when the file gives one.

    Example:
        >>> result_record(4, "rain", {"query": "rain", "refined_text": "rain, steady", "line": 9})
        {'line': 4, 'query': 'rain', 'refined_text': 'rain, steady', 'source': 'refine'}
        >>> list(result_record(1, "rain", {}, query_id="q7"))
        ['line', 'query_id', 'query', 'source']
    """
    stored = {key: value for key, value in result.items() if key not in _OWN_FIELDS}
    own = {} if query_id is None else {"query_id": query_id}
    record: dict[str, Any] = {"line": line, **own, "query": query, **stored, "source": source}
    if ranking is not None:
        record["ranking"] = [dict(item) for item in ranking]
    return record


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return tsv_escape(str(value))


def _tsv_line(record: Mapping[str, Any], columns: Sequence[str]) -> str:
    values = {**record, **(record.get("objective") or {})}
    ranking = record.get("ranking") or []
    values["ranking"] = [item["id"] for item in ranking]
    values["scores"] = [item["score"] for item in ranking]
    return "\t".join(_cell(values.get(name)) for name in columns) + "\n"


_PERMISSION = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
#: Names that moved to :mod:`fortekit.search.refine.resume` (still importable from here).
_MOVED = frozenset({"ResumeState", "check_settings", "settings_path", "write_settings"})


def write_error(path: str | os.PathLike[str], exc: OSError, *, action: str = "write") -> QueryFileError:
    """The coded error for an OSError met while opening, writing, flushing or syncing `path`.

    A missing permission (or a read-only file system) is E666, which names the path and
    how to get access; anything else, a full disk included, is E661.

    Example:
        >>> import errno
        >>> str(write_error("out.jsonl", OSError(errno.ENOSPC, "No space left on device")))
        '[E661] Cannot write the results to out.jsonl: No space left on device. (See docs/errors.md#e661.)'
        >>> str(write_error("out.jsonl", PermissionError(errno.EACCES, "Permission denied")))[:40]
        '[E666] The run may not write out.jsonl ('
    """
    problem = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno in _PERMISSION:
        return QueryFileError(Errors.E666.format(action=action, path=path, problem=problem))
    return QueryFileError(Errors.E661.format(path=path, problem=problem))


def _stream_name(stream: Any) -> str:
    """What a stream's errors call it: the output it stands for (an AtomicFile's handle), or stdout."""
    return str(getattr(stream, "output_name", None) or "<stdout>")


class ResultWriter:
    """Appends one record per query to a JSONL or TSV file (or a stream), a line at a time.

    Every line is flushed as it is written; the file is forced to disk (fsync) every
    `fsync_every` lines and when the writer closes. A new or empty TSV file gets the
    header first.

    Args:
        path: the output file (appended to; parent folders are made), or None for `stream`.
        file_format: "jsonl" or "tsv".
        ranking: whether records carry a ranking (adds the TSV ranking columns).
        fsync_every: lines between two fsync calls.
        stream: where to write when `path` is None (default: standard output).
        overwrite: empty the file first instead of appending to it.

    Raises:
        QueryFileError: the file cannot be opened (E661; E666 without permission).

    Example:
        >>> import io
        >>> stream = io.StringIO()
        >>> with ResultWriter(None, stream=stream, file_format="tsv") as writer:
        ...     writer.write({"line": 3, "query": "rain", "refined_text": "rain, steady"})
        >>> stream.getvalue().splitlines()[0].split("\\t")[:3]
        ['3', 'rain', 'rain, steady']
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        *,
        file_format: OutputFormat = "jsonl",
        ranking: bool = False,
        fsync_every: int = 64,
        stream: TextIO | None = None,
        overwrite: bool = False,
    ) -> None:
        self.path = None if path is None else Path(path).expanduser()
        self.file_format = file_format
        self.columns = tsv_columns(ranking=ranking)
        self.fsync_every = max(1, fsync_every)
        self.written = 0
        self._closed = False
        self._handle: TextIO
        if self.path is None:
            self._handle = stream or sys.stdout
            fresh = False  # a stream gets no TSV header (as before)
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fresh = overwrite or not self.path.exists() or self.path.stat().st_size == 0
                self._handle = self.path.open("w" if overwrite else "a", encoding="utf-8", newline="")
            except OSError as exc:
                raise write_error(self.path, exc) from None
        if fresh and file_format == "tsv":
            try:
                self._emit("\t".join(self.columns) + "\n")
            except BaseException:
                self._release()
                raise

    def write(self, record: Mapping[str, Any]) -> None:
        """Append one record and flush it.

        Raises:
            QueryFileError: the write failed (a full disk E661, a lost permission E666).
            BrokenPipeError: the stream (standard output) was closed by its reader.
        """
        if self.file_format == "tsv":
            self._emit(_tsv_line(record, self.columns))
        else:
            self._emit(json.dumps(record, ensure_ascii=False) + "\n")
        self.written += 1
        if self.written % self.fsync_every == 0:
            self._sync()

    def _emit(self, text: str) -> None:
        try:
            self._handle.write(text)
            self._handle.flush()
        except OSError as exc:
            if self.path is None and isinstance(exc, BrokenPipeError):
                raise  # the reader of standard output is gone: the caller stops quietly
            raise write_error(self.path or _stream_name(self._handle), exc) from None

    def _sync(self) -> None:
        """fsync a regular file (a pipe or a device such as /dev/null cannot be, and needs not be)."""
        if self.path is None:
            return
        try:
            descriptor = self._handle.fileno()
            if stat.S_ISREG(os.fstat(descriptor).st_mode):
                os.fsync(descriptor)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
                raise write_error(self.path, exc) from None

    def _release(self) -> None:
        """Close the file without raising (after an error that is being reported)."""
        self._closed = True
        if self.path is not None:
            with contextlib.suppress(OSError):
                self._handle.close()

    def close(self) -> None:
        """Force the file to disk and close it (a stream is only flushed); a second call does nothing.

        The file is closed even when the last flush fails.

        Raises:
            QueryFileError: the last lines cannot be written (E661, E666).
            BrokenPipeError: the stream (standard output) was closed by its reader.
        """
        if self._closed:
            return
        self._closed = True
        if self.path is None:
            try:
                self._handle.flush()
            except BrokenPipeError:
                raise
            except OSError as exc:
                raise write_error(_stream_name(self._handle), exc) from None
            return
        try:
            self._handle.flush()
            self._sync()
        except OSError as exc:
            self._release()
            raise write_error(self.path, exc) from None
        except BaseException:
            self._release()
            raise
        try:
            self._handle.close()
        except OSError as exc:
            raise write_error(self.path, exc) from None

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None,
    ) -> None:
        if error is None:
            self.close()
            return
        with contextlib.suppress(QueryFileError, OSError):  # the error in flight is the one to report
            self.close()  # the finished lines are still forced to disk


def __getattr__(name: str) -> Any:
    """The resume names, which moved to :mod:`fortekit.search.refine.resume`."""
    if name in _MOVED:
        from fortekit.search.refine import resume

        return getattr(resume, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
