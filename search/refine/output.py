"""Results of ``fol-refine``: written line by line, resumed after an interruption.

Each query's result is one JSONL object (or one TSV row), appended and flushed as
soon as its batch finishes, and forced to disk every ``fsync_every`` lines and at the
end: an interrupted run loses at most the batch in flight. :class:`ResumeState` reads
an existing output, cuts a torn last line (a crash in the middle of a write) and
knows which queries are done; a sidecar file ``<output>.settings.json`` records the
settings, so that a resumed run never mixes results of two configurations.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
    >>> with ResultWriter(path) as writer:
    ...     writer.write({"line": 1, "query": "rain", "refined_text": "steady rain"})
    >>> with open(path, "a") as handle:   # a crash in the middle of a line
    ...     _ = handle.write('{"line": 2, "que')
    >>> state = ResumeState.read(path)
    >>> sorted(state.done), state.cut_bytes
    (['1:rain'], 16)
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, Literal, TextIO

from fortekit.errors import Errors, QueryFileError
from fortekit.search.refine.query_io import resume_key

__all__ = [
    "OUTPUT_FORMATS",
    "RANKING_COLUMNS",
    "TSV_COLUMNS",
    "OutputFormat",
    "ResultWriter",
    "ResumeState",
    "check_settings",
    "result_record",
    "settings_path",
    "tsv_columns",
    "tsv_escape",
    "tsv_unescape",
    "write_settings",
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
_OWN_FIELDS = frozenset({"line", "query", "ranking", "source"})  # set per run, never copied
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
    source: str = "search",
    ranking: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The record written for one query: its line, its text, the result, where it came from.

    Args:
        line: the query's line number in the input.
        query: the query as read.
        result: ``RefinementResult.to_dict()``, or a lookup table's stored record.
        source: "search" (refined in this run) or "lookup" (from a lookup table).
        ranking: the top-K items ({id, score, caption}) when an index was searched.

    Example:
        >>> result_record(4, "rain", {"query": "rain", "refined_text": "rain, steady", "line": 9})
        {'line': 4, 'query': 'rain', 'refined_text': 'rain, steady', 'source': 'search'}
    """
    stored = {key: value for key, value in result.items() if key not in _OWN_FIELDS}
    record: dict[str, Any] = {"line": line, "query": query, **stored, "source": source}
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
        QueryFileError: the file cannot be opened (E451).
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
        self._handle: TextIO
        if self.path is None:
            self._handle = stream or sys.stdout
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fresh = overwrite or not self.path.exists() or self.path.stat().st_size == 0
                self._handle = self.path.open("w" if overwrite else "a", encoding="utf-8", newline="")
            except OSError as exc:
                problem = exc.strerror or exc
                raise QueryFileError(Errors.E451.format(path=self.path, problem=problem)) from None
            if fresh and file_format == "tsv":
                self._emit("\t".join(self.columns) + "\n")

    def write(self, record: Mapping[str, Any]) -> None:
        """Append one record and flush it.

        Raises:
            QueryFileError: the write failed (a full disk, a removed folder) (E451).
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
            raise QueryFileError(Errors.E451.format(path=self.path or "<stdout>", problem=exc)) from None

    def _sync(self) -> None:
        if self.path is not None:
            try:
                os.fsync(self._handle.fileno())
            except OSError as exc:
                raise QueryFileError(Errors.E451.format(path=self.path, problem=exc)) from None

    def close(self) -> None:
        """Force the file to disk and close it (a stream is only flushed)."""
        if self.path is None:
            self._handle.flush()
            return
        if not self._handle.closed:
            self._sync()
            self._handle.close()

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None,
    ) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class ResumeState:
    """What an existing output already holds.

    Attributes:
        done: the resume keys (line number and text) of the queries written.
        records: how many records the file holds.
        cut_bytes: bytes of a torn last line removed from the file (0 if none).
    """

    done: frozenset[str] = field(default_factory=frozenset)
    records: int = 0
    cut_bytes: int = 0

    def __contains__(self, key: object) -> bool:
        return key in self.done

    @classmethod
    def read(
        cls, path: str | os.PathLike[str], *, file_format: OutputFormat = "jsonl", ranking: bool = False,
    ) -> ResumeState:
        """Read an output file, cutting a torn last line (the mark of a crash) from it.

        A last line without its line break, or one that does not parse, is removed; a
        bad line anywhere else means the file is not a fol-refine output, and nothing is
        changed.

        Args:
            path: the output file; a missing or empty one is a fresh start.
            file_format: "jsonl" or "tsv".
            ranking: whether a TSV output is expected to have the ranking columns.

        Raises:
            QueryFileError: a bad line before the last, or a TSV header of other columns (E452).
        """
        target = Path(path).expanduser()
        if not target.is_file() or target.stat().st_size == 0:
            return cls()
        done: set[str] = set()
        records = good_end = 0
        try:
            with target.open("rb") as handle:
                for end, key in _keys(target, handle, file_format, tsv_columns(ranking=ranking)):
                    good_end = end
                    if key is not None:
                        done.add(key)
                        records += 1
            size = target.stat().st_size
            if good_end < size:
                with target.open("r+b") as handle:
                    handle.truncate(good_end)
                    os.fsync(handle.fileno())
        except OSError as exc:
            raise QueryFileError(Errors.E451.format(path=target, problem=exc.strerror or exc)) from None
        return cls(frozenset(done), records, size - good_end)


def _keys(
    target: Path, handle: BinaryIO, file_format: OutputFormat, columns: Sequence[str],
) -> Iterator[tuple[int, str | None]]:
    """(end offset, key) for each complete, valid line; the header's key is None.

    A problem is raised only when another line follows it (a torn last line is cut).
    """
    offset = 0
    pending: str | None = None
    for number, raw in enumerate(handle, start=1):
        if pending is not None:
            raise QueryFileError(Errors.E452.format(
                path=target, line=number - 1, problem=pending, file_format=file_format.upper(),
            ))
        offset += len(raw)
        if not raw.endswith(b"\n"):
            pending = "is cut short"
            continue
        key, pending = _parse_line(raw, number, file_format, columns)
        if pending is None:
            yield offset, key


def _parse_line(
    raw: bytes, number: int, file_format: OutputFormat, columns: Sequence[str],
) -> tuple[str | None, str | None]:
    """(key, None) for a good line, (None, problem) for a bad one."""
    try:
        text = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        return None, "is not UTF-8"
    if file_format == "tsv":
        cells = text.split("\t")
        if number == 1:
            return (None, None) if tuple(cells) == tuple(columns) else (
                None, f"has the columns {', '.join(cells)}; expected {', '.join(columns)}"
            )
        if len(cells) != len(columns) or not cells[0].isdigit():
            return None, f"has {len(cells)} cells; expected {len(columns)}, the first a line number"
        return resume_key(int(cells[0]), tsv_unescape(cells[1])), None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"is not JSON ({exc.msg})"
    if not isinstance(record, dict) or not isinstance(record.get("query"), str) or (
        isinstance(record.get("line"), bool) or not isinstance(record.get("line"), int)
    ):
        return None, "is not a record with \"line\" and \"query\""
    return resume_key(record["line"], record["query"]), None


def settings_path(output: str | os.PathLike[str]) -> Path:
    """Where the settings of an output are recorded: ``<output>.settings.json``.

    Example:
        >>> settings_path("runs/refined.jsonl").name
        'refined.jsonl.settings.json'
    """
    target = Path(output)
    return target.with_name(target.name + ".settings.json")


def _normalised(settings: Mapping[str, Any]) -> dict[str, Any]:
    """JSON values, nested mappings flattened one level ("config.beam_width") for short messages."""
    data = json.loads(json.dumps(settings, sort_keys=True, default=str))
    flat: dict[str, Any] = {}
    for name, value in data.items():
        if isinstance(value, dict):
            flat.update({f"{name}.{inner}": item for inner, item in value.items()})
        else:
            flat[name] = value
    return flat


def check_settings(output: str | os.PathLike[str], settings: Mapping[str, Any], *, resuming: bool) -> None:
    """Check a resumed output's recorded settings against this run's.

    Args:
        output: the output file.
        settings: JSON-able values that change results (backbone, search configuration, ...).
        resuming: whether the output already holds records (if not, nothing is checked).

    Raises:
        QueryFileError: the output was written with other settings (E453). A missing or
            unreadable sidecar is accepted (it is written again).

    Example:
        >>> import pathlib, tempfile
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
        >>> write_settings(out, {"beam_width": 3})
        >>> check_settings(out, {"beam_width": 5}, resuming=True)
        Traceback (most recent call last):
        ...
        fortekit.errors.QueryFileError: [E453] The output file ... (beam_width: 3 then, 5 now); ...
    """
    sidecar = settings_path(output)
    if not resuming or not sidecar.is_file():
        return
    try:
        recorded = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    wanted = _normalised(settings)
    if not isinstance(recorded, dict) or recorded == wanted:
        return
    differences = "; ".join(
        f"{name}: {_brief(recorded.get(name))} then, {_brief(wanted.get(name))} now"
        for name in sorted(set(recorded) | set(wanted)) if recorded.get(name) != wanted.get(name)
    )
    raise QueryFileError(Errors.E453.format(path=output, differences=differences))


def _brief(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def write_settings(output: str | os.PathLike[str], settings: Mapping[str, Any]) -> None:
    """Record the run's settings beside the output (``<output>.settings.json``).

    Raises:
        QueryFileError: the sidecar cannot be written (E451).
    """
    sidecar = settings_path(output)
    try:
        sidecar.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(_normalised(settings), indent=1, sort_keys=True)
        sidecar.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise QueryFileError(Errors.E451.format(path=sidecar, problem=exc.strerror or exc)) from None
