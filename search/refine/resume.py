"""Resuming a ``fol-refine`` output: what it already holds, and the settings it was made with.

:class:`ResumeState` reads an existing output, knows which queries are done and cuts
a torn last line (a crash in the middle of a write), but only from a file that is
recognisably a fol-refine output: its earlier lines are records (or the TSV header)
and, when the run's settings are given, its sidecar ``<output>.settings.json``
records the same settings. Anything else (a text file, a JSON config, a picture)
is refused untouched (E662); an output whose settings are other or unknown is
refused too (E663), and so is one that holds a query line twice (E670: two runs wrote it
at once, or files were joined), so a resumed run never mixes the results of two
configurations. Each record holds its line's number and text, so a line whose text changed
since its record was written is refused when the resumed run reaches it (E672, see
:meth:`ResumeState.holds`): a query file read while it was still being written (its last line,
without a line end, read before it was finished) or edited in between. An output ranked against
an index records the index's state (:func:`~fortekit.search.index.state.index_state`, under
``index_state``): after ``fortekit index add``, ``remove`` or ``compact`` (or a rebuild) the state
differs, and a resume is refused with both states named (E638) rather than mixing rankings of two
collections. The sidecar is written atomically (:mod:`fortekit.safe_write`): a crash
leaves the old one or the new one, and a sidecar that is a symbolic link is refused (E741).

Example:
    >>> import pathlib, tempfile
    >>> from fortekit.search.refine.output import ResultWriter
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
    >>> with ResultWriter(path) as writer:
    ...     writer.write({"line": 1, "query": "rain", "refined_text": "steady rain"})
    >>> write_settings(path, {"beam_width": 3})
    >>> with open(path, "a") as handle:   # a crash in the middle of a line
    ...     _ = handle.write('{"line": 2, "que')
    >>> state = ResumeState.read(path, settings={"beam_width": 3})
    >>> sorted(state.done), state.cut_bytes
    (['1:rain'], 16)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, QueryFileError, ResumeConflictError
from fortekit.search.refine.output import OutputFormat, tsv_columns, tsv_unescape, write_error
from fortekit.search.refine.query_io import QueryLine, resume_key
from fortekit.textio import BadLine, json_value

__all__ = ["ResumeState", "check_settings", "settings_path", "write_settings"]

#: How every JSONL record of fol-refine starts (``result_record`` puts "line" first).
_RECORD_START = '{"line": '


@dataclass(frozen=True, slots=True)
class ResumeState:
    """What an existing output already holds.

    Attributes:
        done: the resume keys (line number and text) of the queries written.
        records: how many records the file holds.
        cut_bytes: bytes of a torn last line removed from the file (0 if none).
        queries: the text each query line had when its record was written, by line number.
        output: the output file, for messages.
    """

    done: frozenset[str] = field(default_factory=frozenset)
    records: int = 0
    cut_bytes: int = 0
    queries: Mapping[int, str] = field(default_factory=dict, compare=False, hash=False)
    output: str = ""

    def __contains__(self, key: object) -> bool:
        return key in self.done

    def holds(self, item: QueryLine, *, where: str = "the query file") -> bool:
        """Whether the output already holds this line's result (then it is skipped).

        A line is done when a record holds its number and its text. A record of its number with
        other text means the query file changed since that record was written: its last line was
        read before it was finished (a last line without a line end is a query, as a finished
        file's often is, so a file still being written is read as far as it goes), or the file
        was edited. Searching the line again would leave two records of it, one for text the file
        no longer holds, so it is refused.

        Args:
            item: a usable line of the query file.
            where: the query file's name, for the message.

        Returns:
            True when the output holds the line's result for this text, False when it holds none.

        Raises:
            ResumeConflictError: the output holds the line's result for other text (E672), a
                :class:`~fortekit.errors.QueryFileError`.

        Example:
            >>> from fortekit.search.refine.query_io import QueryLine, resume_key
            >>> state = ResumeState(frozenset({resume_key(3, "rain on a")}), 1, queries={3: "rain on a"})
            >>> state.holds(QueryLine(3, "rain on a", None, resume_key(3, "rain on a")))
            True
            >>> state.holds(QueryLine(3, "rain on a roof", None, resume_key(3, "rain on a roof")))
            Traceback (most recent call last):
            ...
            fortekit.errors.ResumeConflictError: [E672] The output file ... holds the result of line 3 of the query file for the text 'rain on a', but that line now reads 'rain on a roof'. ...
        """  # noqa: E501
        if item.key in self.done:
            return True
        then = self.queries.get(item.line)
        if then is None or item.query is None or then == item.query:
            return False
        raise ResumeConflictError(Errors.E672.format(
            path=self.output or "(the output)", line=item.line, queries=where,
            then=_brief_text(then), now=_brief_text(item.query),
        ))

    @classmethod
    def read(
        cls,
        path: str | os.PathLike[str],
        *,
        file_format: OutputFormat = "jsonl",
        ranking: bool = False,
        settings: Mapping[str, Any] | None = None,
    ) -> ResumeState:
        """Read an output file, cutting a torn last line (the mark of a crash) from it.

        A last line without its line break, or one that does not parse, is removed when
        the lines before it are fol-refine lines (records, or the TSV header), or when it
        is the start of a fol-refine record itself. Any other bad line means the file is
        not a fol-refine output, and nothing is changed. With `settings`, the file is
        also checked against its settings sidecar before anything is cut.

        Args:
            path: the output file; a missing or empty one is a fresh start.
            file_format: "jsonl" or "tsv".
            ranking: whether a TSV output is expected to have the ranking columns.
            settings: this run's settings (see :func:`check_settings`); when given, an
                output holding records (or a torn line) must have a sidecar recording
                the same settings. None skips the check (the caller makes it).

        Raises:
            QueryFileError: not a fol-refine output (E662); other or unknown settings
                (E663); a query recorded twice (E670); the file cannot be read or cut (E661,
                E666). Nothing is cut when any of these is raised.

        Example:
            >>> import pathlib, tempfile
            >>> notes = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
            >>> _ = notes.write_text("remember the milk")
            >>> ResumeState.read(notes)
            Traceback (most recent call last):
            ...
            fortekit.errors.QueryFileError: [E662] The output file ... line 1 is cut short. ...
            >>> notes.read_text()
            'remember the milk'
        """
        target = Path(path).expanduser()
        columns = tsv_columns(ranking=ranking)
        try:
            if not target.is_file() or target.stat().st_size == 0:
                return cls()
            done, records, good_end, size, repeats, queries = _scan(target, file_format, columns)
        except OSError as exc:
            raise write_error(target, exc, action="read") from None
        if settings is not None and (records or good_end < size):
            check_settings(target, settings, resuming=True, missing_ok=False)
        if repeats:
            line, first = repeats[0]
            raise QueryFileError(Errors.E670.format(path=target, line=line, first=first, count=len(repeats)))
        if good_end < size:
            try:
                with target.open("r+b") as handle:
                    handle.truncate(good_end)
                    os.fsync(handle.fileno())
            except OSError as exc:
                raise write_error(target, exc) from None
        return cls(frozenset(done), records, size - good_end, queries, str(target))


def _scan(
    target: Path, file_format: OutputFormat, columns: Sequence[str],
) -> tuple[set[str], int, int, int, list[tuple[int, int]], dict[int, str]]:
    """(keys, records, end of the last good line, size, repeats, texts) of an output; E662 if it is not one.

    A problem is raised when another line follows it, or when it is the only line
    and does not look like the start of a fol-refine line (then it is no torn line).
    ``repeats`` holds (file line, file line of its first record) for each record whose query
    line an earlier record already holds, with the same text or another (an output resumed
    after its query file grew, by a fortekit that did not check). ``texts`` maps each query
    line to the text its record holds.
    """
    done: set[str] = set()
    first_of: dict[int, int] = {}
    texts: dict[int, str] = {}
    repeats: list[tuple[int, int]] = []
    records = good_lines = offset = good_end = 0
    pending: str | None = None
    last = b""
    with target.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if pending is not None:
                raise _not_output(target, number - 1, pending, file_format)
            offset += len(raw)
            last = raw
            if not raw.endswith(b"\n"):
                pending = "is cut short"
                continue
            key, pending = _parse_line(raw, number, file_format, columns)
            if pending is None:
                good_end, good_lines = offset, good_lines + 1
                if key is not None:
                    line, text = key
                    if line in first_of:
                        repeats.append((number, first_of[line]))
                    else:
                        first_of[line], texts[line] = number, text
                    done.add(resume_key(line, text))
                    records += 1
    if pending is not None and good_lines == 0 and not _starts_a_line(last, file_format, columns):
        raise _not_output(target, 1, pending, file_format)
    return done, records, good_end, offset, repeats, texts


def _not_output(target: Path, line: int, problem: str, file_format: OutputFormat) -> QueryFileError:
    return QueryFileError(Errors.E662.format(
        path=target, line=line, problem=problem, file_format=file_format.upper(),
    ))


def _starts_a_line(raw: bytes, file_format: OutputFormat, columns: Sequence[str]) -> bool:
    """Whether a lone first line is the torn start of what fol-refine writes first."""
    try:
        text = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        return False
    first = "\t".join(columns) if file_format == "tsv" else _RECORD_START
    return bool(text) and (first.startswith(text) or (file_format == "jsonl" and text.startswith(first)))


def _parse_line(
    raw: bytes, number: int, file_format: OutputFormat, columns: Sequence[str],
) -> tuple[tuple[int, str] | None, str | None]:
    """((query line, text), None) for a good line (the TSV header's: None), (None, problem) for a bad one."""
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
        return (int(cells[0]), tsv_unescape(cells[1])), None
    record = json_value(0, text)  # fortekit.textio: no RecursionError on deep JSON
    if isinstance(record, BadLine):
        return None, f"is not JSON ({record.reason})"
    if not isinstance(record, dict) or not isinstance(record.get("query"), str) or (
        isinstance(record.get("line"), bool) or not isinstance(record.get("line"), int)
    ):
        return None, "is not a record with \"line\" and \"query\""
    return (record["line"], record["query"]), None


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


def check_settings(
    output: str | os.PathLike[str], settings: Mapping[str, Any], *, resuming: bool, missing_ok: bool = True,
) -> None:
    """Check a resumed output's recorded settings against this run's.

    Args:
        output: the output file.
        settings: JSON-able values that change results (backbone, search configuration, ...).
        resuming: whether the output already holds records (if not, nothing is checked).
        missing_ok: accept a missing, unreadable or malformed sidecar (it is written
            again). fol-refine passes False: results of unknown settings are not resumed.

    Raises:
        QueryFileError: the output was ranked against the same index folder in another state
            (E638: items added, removed or compacted since); the output was written with other
            settings, or (`missing_ok` False) with settings nobody recorded (E663).

    Example:
        >>> import pathlib, tempfile
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
        >>> write_settings(out, {"beam_width": 3})
        >>> check_settings(out, {"beam_width": 5}, resuming=True)
        Traceback (most recent call last):
        ...
        fortekit.errors.QueryFileError: [E663] The output file ... (beam_width: 3 then, 5 now); ...
    """
    sidecar = settings_path(output)
    if not resuming:
        return
    try:
        recorded = json.loads(sidecar.read_text(encoding="utf-8"))
        problem = None if isinstance(recorded, dict) else "holds no JSON object"
    except FileNotFoundError:
        problem = "is missing"
    except (OSError, ValueError) as exc:
        problem = f"cannot be read ({getattr(exc, 'strerror', None) or exc})"
    if problem is not None:
        if missing_ok:
            return
        differences = f"unknown ones: its settings file {sidecar} {problem}"
        raise QueryFileError(Errors.E663.format(path=output, differences=differences))
    wanted = _normalised(settings)
    if recorded == wanted:
        return
    _check_index_state(output, recorded, wanted)
    differences = "; ".join(
        f"{name}: {_brief(recorded.get(name))} then, {_brief(wanted.get(name))} now"
        for name in sorted(set(recorded) | set(wanted)) if recorded.get(name) != wanted.get(name)
    )
    raise QueryFileError(Errors.E663.format(path=output, differences=differences))


def _check_index_state(output: str | os.PathLike[str], recorded: Mapping[str, Any],
                       wanted: Mapping[str, Any]) -> None:
    """E638 when the same index folder is now in another state than the output was ranked against.

    An output recorded before index states were (no ``index_state``) is taken as another state:
    it cannot be told from one ranked before an ``index add``.
    """
    now = wanted.get("index_state")
    if now is None or recorded.get("index") != wanted.get("index") or recorded.get("index_state") == now:
        return
    then = recorded.get("index_state") or "unrecorded (written by a fortekit that did not record it)"
    raise QueryFileError(Errors.E638.format(path=output, directory=wanted.get("index"), then=then, now=now))


def _brief(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _brief_text(text: str, limit: int = 80) -> str:
    """A query as a message quotes it: repr (line breaks and controls shown), cut after `limit`."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def write_settings(output: str | os.PathLike[str], settings: Mapping[str, Any]) -> None:
    """Record the run's settings beside the output (``<output>.settings.json``).

    Raises:
        QueryFileError: the sidecar's folder cannot be made (E661; E666 without permission).
        OutputError: the sidecar is a symbolic link (E741) or a folder (E745).
        OutputWriteError: the sidecar cannot be written (E743); the old one is unchanged.

    Example:
        >>> import json, pathlib, tempfile
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
        >>> write_settings(out, {"config": {"beam_width": 3}})
        >>> json.loads(settings_path(out).read_text())
        {'config.beam_width': 3}
    """
    from fortekit.safe_write import atomic_write_text

    sidecar = settings_path(output)
    try:
        sidecar.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(sidecar, exc) from None
    text = json.dumps(_normalised(settings), indent=1, sort_keys=True)
    # Beside and renamed: a crash never leaves half a sidecar, and a planted link is refused.
    atomic_write_text(sidecar, text + "\n")
