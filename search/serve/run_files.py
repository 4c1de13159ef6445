"""The files of a ``fortekit eval --beir`` run folder, read and checked for :class:`~.eval_run.EvalRun`.

``config.json`` and ``metrics.json`` are JSON objects; ``per_query/<system>.jsonl`` holds one
line per query. Anything else is refused with E800, naming the file and line.

Example:
    >>> finite_number(0.5), finite_number(float("nan")), finite_number(True)
    (0.5, None, None)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, ServeError
from fortekit.search.eval.beir_metrics import VIOLATION
from fortekit.textio import BadLine, json_value
from fortekit.textio import read_jsonl as _read_json_lines

__all__ = ["CONFIG", "GAIN_MEASURE", "METRICS", "PER_QUERY", "RunRecord", "finite_number", "not_a_run",
           "read_object", "read_records"]

CONFIG = "config.json"
METRICS = "metrics.json"
PER_QUERY = "per_query"
#: The measure the rows of :meth:`EvalRun.queries` compare (their ``gain``).
GAIN_MEASURE = "nDCG@10"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One line of ``per_query/<system>.jsonl``, checked."""

    query_id: str
    query: str
    kind: str | None
    metadata: Mapping[str, Any]
    ndcg: float
    violation: float | None
    top: tuple[str, ...]


def finite_number(value: object) -> float | None:
    """A finite real number as a float, anything else None (JSON has no NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def not_a_run(path: Path, problem: str) -> ServeError:
    """E800: ``path`` is not a run folder, for ``problem``."""
    return ServeError(Errors.E800.format(path=path, problem=problem))


def read_object(run: Path, name: str) -> dict[str, Any]:
    """The JSON object in ``run/name`` (E800 when it is missing, not JSON or not an object)."""
    source = run / name
    if not source.is_file():
        raise not_a_run(run, f"it has no {name}")
    try:
        value = json_value(1, source.read_bytes())
    except (OSError, UnicodeDecodeError) as exc:
        raise not_a_run(run, f"{name} cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if isinstance(value, BadLine):
        raise not_a_run(run, f"{name} is not JSON ({value.reason})")
    if not isinstance(value, dict):
        raise not_a_run(run, f"{name} holds a JSON {type(value).__name__}, not an object")
    return value


def read_records(run: Path, system: str) -> dict[str, RunRecord]:
    """query id -> the checked record, in file order, of ``per_query/<system>.jsonl`` (E800)."""
    relative = f"{PER_QUERY}/{system}.jsonl"
    source = run / PER_QUERY / f"{system}.jsonl"
    records: dict[str, RunRecord] = {}
    try:
        for number, value in _read_json_lines(source):
            where = f"{relative}, line {number},"
            if isinstance(value, BadLine):
                raise not_a_run(run, f"{where} is not a JSON object ({value.reason})")
            if not isinstance(value, dict):
                raise not_a_run(run, f"{where} is a JSON {type(value).__name__}, not an object")
            record = run_record(run, where, value)
            if record.query_id in records:
                raise not_a_run(run, f"{where} repeats the query {record.query_id!r}")
            records[record.query_id] = record
    except OSError as exc:
        raise not_a_run(run, f"{relative} cannot be read ({exc.strerror or exc})") from None
    if not records:
        raise not_a_run(run, f"{relative} holds no query")
    return records


def run_record(run: Path, where: str, value: Mapping[str, Any]) -> RunRecord:
    """A per-query line as a :class:`RunRecord`, its fields checked (E800 naming the line)."""
    query_id, text, kind = value.get("query_id"), value.get("query"), value.get("kind")
    metadata = value.get("metadata") or {}
    ndcg, violation, top = finite_number(value.get(GAIN_MEASURE)), value.get(VIOLATION), value.get("top")
    if not isinstance(query_id, str) or not query_id:
        raise not_a_run(run, f'{where} "query_id" is {query_id!r}, not a non-empty string')
    if not isinstance(text, str):
        raise not_a_run(run, f'{where} "query" is {text!r}, not a string')
    if kind is not None and not isinstance(kind, str):
        raise not_a_run(run, f'{where} "kind" is {kind!r}, not a string or null')
    if not isinstance(metadata, dict):
        raise not_a_run(run, f'{where} "metadata" is {metadata!r}, not an object')
    if ndcg is None:
        raise not_a_run(run, f'{where} "{GAIN_MEASURE}" is {value.get(GAIN_MEASURE)!r}, not a number')
    if violation is not None and finite_number(violation) is None:
        raise not_a_run(run, f'{where} "{VIOLATION}" is {violation!r}, not a number or null')
    if not isinstance(top, list) or not all(isinstance(item, str) for item in top):
        raise not_a_run(run, f'{where} "top" is {top!r}, not a list of item ids')
    return RunRecord(query_id, text, kind, dict(metadata), ndcg, finite_number(violation), tuple(top))
