"""The files of a ``fortekit eval --beir`` run folder, read and checked for :class:`~.eval_run.EvalRun`.

``config.json`` and ``metrics.json`` are JSON objects; ``per_query/<system>.jsonl`` holds one
line per query. Anything else is refused with E800, naming the file and line. A line of an
earlier version, without ``violated@10`` and ``top_violated``
(:mod:`fortekit.search.eval.grounded`), is read as such: :attr:`RunRecord.top_marks` None.

Example:
    >>> finite_number(0.5), finite_number(float("nan")), finite_number(True)
    (0.5, None, None)
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, ServeError
from fortekit.search.eval.beir import CORPUS, QRELS, QUERIES
from fortekit.search.eval.beir_metrics import GROUNDED_VIOLATION, VIOLATION
from fortekit.search.eval.grounded import TOP_MARKS
from fortekit.textio import BadLine, json_value
from fortekit.textio import read_jsonl as _read_json_lines

__all__ = ["CONFIG", "GAIN_MEASURE", "METRICS", "PER_QUERY", "RunRecord", "collection_candidates",
           "find_collection", "finite_number", "not_a_run", "read_object", "read_records", "t2a_systems"]

CONFIG = "config.json"
METRICS = "metrics.json"
PER_QUERY = "per_query"
#: The measure the rows of :meth:`EvalRun.queries` compare (their ``gain``).
GAIN_MEASURE = "nDCG@10"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One line of ``per_query/<system>.jsonl``, checked.

    Attributes:
        grounded: its ``violated@10`` (None: the query excludes no sound, or an earlier run).
        top_marks: per item of ``top``, the excluded sounds its captions hold by the grounded
            check, as the run judged them (None for an item: no caption to judge; None: the query
            excludes no sound).
        grounded_stored: whether the line has ``violated@10`` (False: a run of an earlier version,
            which stored neither).
    """

    query_id: str
    query: str
    kind: str | None
    metadata: Mapping[str, Any]
    ndcg: float
    violation: float | None
    top: tuple[str, ...]
    grounded: float | None = None
    top_marks: tuple[tuple[str, ...] | None, ...] | None = None
    grounded_stored: bool = False


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
    grounded, marks = value.get(GROUNDED_VIOLATION), value.get(TOP_MARKS)
    if grounded is not None and finite_number(grounded) is None:
        raise not_a_run(run, f'{where} "{GROUNDED_VIOLATION}" is {grounded!r}, not a number or null')
    if marks is not None and not (isinstance(marks, list) and len(marks) == len(top) and all(
            mark is None or (isinstance(mark, list) and all(isinstance(sound, str) for sound in mark))
            for mark in marks)):
        raise not_a_run(run, f'{where} "{TOP_MARKS}" is {marks!r}, not null or a list with, per item '
                             f'of "top", a list of excluded sounds or null')
    held = None if marks is None else tuple(None if mark is None else tuple(mark) for mark in marks)
    return RunRecord(query_id, text, kind, dict(metadata), ndcg, finite_number(violation), tuple(top),
                     finite_number(grounded), held, GROUNDED_VIOLATION in value)


def collection_candidates(path: Path, config: Mapping[str, Any], metrics: Mapping[str, Any]) -> list[Path]:
    """Where the collection a run evaluated may be, most likely first.

    config.json's ``data.corpus.path`` folder, then ``settings.beir`` (or metrics.json's
    ``collection``) resolved against the folder the run was made from, the run folder's parent
    and the current directory.

    Example:
        >>> collection_candidates(Path("/runs/x"), {"settings": {"beir": "/data/coll"}}, {})
        [PosixPath('/data/coll')]
    """
    found: list[Path] = []
    data = config.get("data")
    corpus = data.get("corpus") if isinstance(data, dict) else None
    corpus_path = corpus.get("path") if isinstance(corpus, dict) else None
    if isinstance(corpus_path, str) and corpus_path:
        found.append(Path(corpus_path).expanduser().parent)
    settings = config.get("settings")
    beir = settings.get("beir") if isinstance(settings, dict) else None
    if not isinstance(beir, str) or not beir:
        beir = metrics.get("collection")
    if isinstance(beir, str) and beir:
        given = Path(beir).expanduser()
        if given.is_absolute():
            found.append(given)
        else:
            bases: list[Path] = []
            out = settings.get("out") if isinstance(settings, dict) else None
            if isinstance(out, str) and out and not Path(out).is_absolute():
                parts = Path(out).parts  # the run was made from the folder that -o OUT was relative to
                if len(parts) < len(path.parts) and path.parts[-len(parts):] == parts:
                    bases.append(Path(*path.parts[:-len(parts)]))
            bases += [path.parent, Path.cwd()]
            found += [base / given for base in bases]
    unique: list[Path] = []
    for candidate in found:
        if candidate not in unique:
            unique.append(candidate)
    return unique

def find_collection(path: Path, config: Mapping[str, Any], metrics: Mapping[str, Any],
                     collection: str | os.PathLike[str] | None) -> Path:
    """The collection folder of a run: ``collection`` when given, else the first candidate holding
    a corpus (:func:`collection_candidates`).

    Raises:
        ServeError: the given folder lacks a file, or no candidate holds a corpus (E801).

    Example:
        >>> find_collection(Path("/runs/x"), {}, {}, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.ServeError: [E801] The collection (unnamed) that the run /runs/x evaluated ...
    """
    if collection is not None:
        folder = Path(collection).expanduser()
        missing = [name for name in (CORPUS, QUERIES, str(QRELS)) if not (folder / name).is_file()]
        if missing:
            where = "no such folder" if not folder.exists() else f"it has no {', '.join(missing)}"
            raise ServeError(Errors.E801.format(path=folder, run=path, problem=where))
        return folder.resolve()
    candidates = collection_candidates(path, config, metrics)
    for folder in candidates:
        if (folder / CORPUS).is_file():
            return folder.resolve()
    if not candidates:
        raise ServeError(Errors.E801.format(
            path="(unnamed)", run=path, problem="config.json names no collection (data.corpus.path "
                                                "or settings.beir)"))
    looked = ", ".join(str(folder) for folder in candidates)
    raise ServeError(Errors.E801.format(path=candidates[0], run=path,
                                        problem=f"no {CORPUS} was found (looked in {looked})"))


def t2a_systems(path: Path, metrics: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """metrics.json's text-to-audio systems: its "t2a" block, else the top-level "systems" (E800).

    Example:
        >>> t2a_systems(Path("run"), {"systems": {"baseline": {"nDCG@10": 0.5}}})
        {'baseline': {'nDCG@10': 0.5}}
    """
    block = metrics.get("t2a")
    systems = block.get("systems") if isinstance(block, dict) else metrics.get("systems")
    if not isinstance(systems, dict) or not systems:
        directions = metrics.get("directions")
        why = (" (it evaluated audio to text only: run it with --direction t2a)"
               if isinstance(directions, list) and "t2a" not in directions else "")
        raise not_a_run(path, f"metrics.json lists no text-to-audio systems{why}")
    for name, row in systems.items():
        if not name or name in {".", ".."} or "/" in name or "\\" in name or "\0" in name:
            raise not_a_run(path, f"metrics.json names a system {name!r}, which is no file name")
        if not isinstance(row, dict):
            raise not_a_run(path, f"metrics.json's system {name!r} is a JSON {type(row).__name__}, "
                                   "not an object")
    return systems
