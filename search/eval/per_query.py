"""Per-query records of a retrieval run and their JSON Lines files.

One record per query: its text, the rank of its relevant item, hits at each cut-off and
AP@10 (:mod:`fortekit.search.eval.metrics` computes them), plus optional columns such as the
target, the retrieved items or the refined query. :func:`write_per_query` writes them one JSON
object a line, :func:`read_per_query` reads them back.

Example:
    >>> per_query_records(["rain"], [1], ks=(1,))
    [{'query_index': 0, 'query': 'rain', 'rank': 1, 'R@1': 1, 'AP@10': 1.0}]
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fortekit.errors import DataFileError, Errors, EvaluationError
from fortekit.search.eval.metrics import DEFAULT_KS, MAP_CUTOFF, as_numpy, checked_ranks
from fortekit.textio import BadLine, json_value

__all__ = ["per_query_records", "read_per_query", "write_per_query"]


def per_query_records(
    queries: Sequence[str],
    ranks: Any,
    *,
    targets: Sequence[int] | None = None,
    top_indices: Any = None,
    item_ids: Sequence[str] | None = None,
    ks: Iterable[int] = DEFAULT_KS,
    extra: Mapping[str, Sequence[Any]] | None = None,
) -> list[dict[str, Any]]:
    """One JSON-ready record per query: its text, rank, hits at each k and AP@10.

    Args:
        queries: the query texts.
        ranks: their ranks (:func:`~fortekit.search.eval.metrics.ranks_of_targets`).
        targets: the relevant item index per query (stored as ``"target"``).
        top_indices: (queries, k) ranked item indices; stored as ``"top"`` (item ids when
            ``item_ids`` is given, else indices).
        item_ids: ids of the items, to name targets and retrieved items.
        ks: cut-offs stored as ``"R@k"`` (0 or 1).
        extra: more per-query columns, e.g. ``{"refined": [...]}``.

    Returns:
        A list of dicts with keys ``query_index``, ``query``, ``rank``, ``R@k``...,
        ``AP@10`` and the optional ones.

    Raises:
        EvaluationError: lengths that differ from ``len(queries)`` (E484) or bad ranks (E485).

    Example:
        >>> per_query_records(["rain"], [3], targets=[7], item_ids=[str(i) for i in range(9)], ks=(1,))
        [{'query_index': 0, 'query': 'rain', 'rank': 3, 'R@1': 0, 'AP@10': 0.3333333333333333, 'target': 7, 'target_id': '7'}]
    """  # noqa: E501
    values = checked_ranks(ranks)
    cutoffs = list(ks)
    columns: dict[str, Sequence[Any]] = dict(extra or {})
    lengths = {"ranks": len(values), **{name: len(column) for name, column in columns.items()}}
    top = None if top_indices is None else as_numpy(top_indices)
    if targets is not None:
        lengths["targets"] = len(targets)
    if top is not None:
        lengths["top_indices"] = len(top)
    wrong = {name: length for name, length in lengths.items() if length != len(queries)}
    if wrong:
        raise EvaluationError(Errors.E484.format(
            problem=f"{len(queries)} queries but per-query columns of lengths {wrong}",
        ))
    records: list[dict[str, Any]] = []
    for i, query in enumerate(queries):
        rank = int(values[i])
        record: dict[str, Any] = {"query_index": i, "query": query, "rank": rank}
        record.update({f"R@{k}": int(rank <= k) for k in cutoffs})
        record[f"AP@{MAP_CUTOFF}"] = 1.0 / rank if rank <= MAP_CUTOFF else 0.0
        try:
            if targets is not None:
                record["target"] = int(targets[i])
                if item_ids is not None:
                    record["target_id"] = item_ids[int(targets[i])]
            if top is not None:
                row = [int(index) for index in top[i]]
                record["top"] = [item_ids[index] for index in row] if item_ids is not None else row
        except IndexError:
            raise EvaluationError(Errors.E484.format(
                problem=f"query {i} names an item index beyond the {len(item_ids or ())} item_ids",
            )) from None
        for name, column in columns.items():
            record[name] = column[i]
        records.append(record)
    return records


def _jsonable(value: Any) -> Any:
    """numpy scalars and arrays as plain Python values, for json.dumps."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def write_per_query(path: str | os.PathLike[str], records: Iterable[Mapping[str, Any]]) -> Path:
    """Write per-query records as JSON Lines (UTF-8, one object a line, flushed line by line).

    Args:
        path: the output file; its folder is created.
        records: dicts of JSON-ready values (numpy scalars are converted).

    Returns:
        The path written.

    Raises:
        EvaluationError: a record that is not JSON-serialisable (E493); the file is left as it
            was (written with the safe writer: temporary file, fsync, rename).
        OutputError: ``path`` is a link (E741); the write failed (E743, naming the file).

    Example:
        >>> import tempfile, pathlib
        >>> out = write_per_query(pathlib.Path(tempfile.mkdtemp()) / "q.jsonl", [{"rank": np.int64(2)}])
        >>> read_per_query(out)
        [{'rank': 2}]
    """
    from fortekit.safe_write import atomic_write, write_error

    target = Path(path).expanduser()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(target.parent, exc) from exc

    def write(temporary: Path) -> None:
        with temporary.open("w", encoding="utf-8") as handle:
            for index, record in enumerate(records):
                try:
                    line = json.dumps(dict(record), ensure_ascii=False, default=_jsonable)
                except (TypeError, ValueError) as exc:
                    raise EvaluationError(Errors.E493.format(index=index, path=target, problem=exc)) from None
                handle.write(line + "\n")

    return atomic_write(target, write)  # the whole file or the old one: never half a file


def read_per_query(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a per-query JSONL file written by :func:`write_per_query` (blank lines ignored).

    Raises:
        DataFileError: the file is missing (E487).
        EvaluationError: a line that is not a JSON object, named by number (E488).

    Example:
        >>> read_per_query("/nonexistent/q.jsonl")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.DataFileError: [E487] Per-query results file not found: ...
    """
    source = Path(path).expanduser()
    if not source.is_file():
        raise DataFileError(Errors.E487.format(
            what="Per-query results file", path=source,
            hint="Write one with fortekit.search.eval.per_query.write_per_query().",
        ))
    records: list[dict[str, Any]] = []
    with source.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            record = json_value(number, text)  # fortekit.textio: no RecursionError on deep JSON
            if isinstance(record, BadLine):
                raise EvaluationError(Errors.E488.format(
                    path=source, line=number, problem=f"not JSON ({record.reason})",
                ))
            if not isinstance(record, dict):
                raise EvaluationError(Errors.E488.format(
                    path=source, line=number, problem=f"a JSON {type(record).__name__}, not an object",
                ))
            records.append(record)
    return records
