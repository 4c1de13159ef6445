"""What ``fortekit eval`` writes: per-system metrics with p-values, the markdown table, JSON files.

Example:
    >>> rows = {"baseline": {"R@1": 0.5, "R@5": 0.7, "R@10": 0.8, "R@50": 0.9, "mAP@10": 0.6,
    ...         "p_value": 1.0, "ms_per_query": 1.5, "s_per_1000_items": 2.0,
    ...         "S1": False, "S2": False, "S3": None, "anchors": None}}
    >>> print(markdown_table(rows).splitlines()[2])
    | baseline | – | – | – | 50.00 | 70.00 | 80.00 | 90.00 | 60.00 | – | 1.5 | 2.00 |
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fortekit.errors import Errors, EvaluationError, OutputError
from fortekit.search.eval.metrics import MAP_CUTOFF, hits_at, paired_t_test, retrieval_metrics
from fortekit.search.eval.per_query import per_query_records, write_per_query

if TYPE_CHECKING:
    from fortekit.safe_write import OutputLock

__all__ = ["METRIC_NAMES", "markdown_table", "open_output_folder", "system_row", "write_json",
           "write_per_query_file", "write_text"]

METRIC_NAMES = ("R@1", "R@5", "R@10", "R@50", f"mAP@{MAP_CUTOFF}")


def open_output_folder(out: Path) -> OutputLock:
    """Create (and mark) an evaluation's ``--out`` folder and lock it for the run.

    A new or empty folder gets fortekit's marker file, and so does the folder of an earlier
    run (which re-runs reuse); a folder holding anything else is refused (E526), since the
    run's fixed file names (docs/evaluation.md) would replace the user's files.
    The lock (``.NAME.lock`` beside it) makes a second run on the same folder fail with
    E742 instead of mixing two runs' files; release it with ``.release()``.

    Raises:
        EvaluationError: the folder cannot be created (E524); it holds files no evaluation
            wrote (E526: its results.md, config.json, ... would be replaced).
        OutputError: ``out`` is a file (E745), a link (E741), or locked by another run (E742).

    Example:
        >>> import tempfile
        >>> lock = open_output_folder(Path(tempfile.mkdtemp()) / "run")
        >>> sorted(p.name for p in lock.target.iterdir()); lock.release()
        ['.fortekit-output']
    """
    from fortekit.safe_write import (
        OutputLock,
        adopt_directory,
        create_output_directory,
        is_fortekit_directory,
    )

    folder = Path(out)
    if folder.is_dir() and not folder.is_symlink() and not is_fortekit_directory(folder):
        _check_earlier_run(folder)
    try:
        folder.absolute().parent.mkdir(parents=True, exist_ok=True)
        create_output_directory(out)
        if folder.is_dir() and not is_fortekit_directory(folder):  # an earlier run's: ours
            adopt_directory(folder)
    except OutputError:
        raise
    except OSError as exc:
        raise EvaluationError(Errors.E524.format(path=out, problem=exc)) from None
    return OutputLock(Path(out).absolute()).acquire()


def _check_earlier_run(folder: Path) -> None:
    """Refuse (E526) a non-empty folder that no evaluation wrote: its files would be replaced.

    An earlier run's folder, from before runs were marked, holds a ``config.json`` with the
    run's ``settings`` and ``counts``; a folder with nothing in it, or only an earlier run's
    caches (``stage1/``, ``cache/``), is the user's to fill.
    """
    try:
        entries = sorted(p.name for p in folder.iterdir())
    except OSError:
        return  # unreadable: creating the run's files gives the coded error
    if not entries:
        return
    try:
        config = json.loads((folder / "config.json").read_text("utf-8"))
    except (OSError, ValueError):
        config = None
    if isinstance(config, dict) and "settings" in config and "counts" in config:
        return
    if set(entries) <= {"stage1", "cache"}:  # an earlier run's caches, copied to be reused
        return
    shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
    raise EvaluationError(Errors.E526.format(path=folder, holding=f" ({shown})"))


def write_text(path: Path, text: str) -> Path:
    """Write a text file (UTF-8) with the safe writer: temporary file, fsync, rename.

    Raises:
        OutputError: ``path`` is a link (E741) or a folder (E745); the write failed (E743, naming it).
    """
    from fortekit.safe_write import atomic_write_text, write_error

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(path.parent, exc) from exc
    return atomic_write_text(path, text)


def write_json(path: Path, document: Any) -> Path:
    """Write a JSON document (indented, UTF-8), replacing the file atomically (the safe writer).

    Raises:
        EvaluationError: the document is not JSON (E524).
        OutputError: ``path`` is a link (E741); the write failed (E743, naming the file).
    """
    try:
        text = json.dumps(document, indent=2, ensure_ascii=False, default=_plain) + "\n"
    except (TypeError, ValueError) as exc:
        raise EvaluationError(Errors.E524.format(path=path, problem=exc)) from None
    return write_text(path, text)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _finite(value: float) -> float | str:
    """JSON has no infinity: a t statistic of ±inf is written as a string."""
    return value if math.isfinite(value) else str(value)


def system_row(
    ranks: Any, baseline_ranks: Any, *, timing: Mapping[str, float], system: Mapping[str, object],
) -> dict[str, Any]:
    """One system's metrics, its paired t-test against the baseline on per-query R@1, and timings.

    Args:
        ranks: the system's per-query ranks.
        baseline_ranks: the frozen baseline's, same queries in the same order.
        timing: ``ms_per_query`` and ``s_per_1000_items`` (and any breakdown).
        system: the switches (``S1``, ``S2``, ``S3``, ``anchors``).

    Returns:
        A JSON-ready dict: the five metrics (fractions), ``p_value``, ``t``, the timings.

    Example:
        >>> row = system_row([1, 2, 1], [1, 2, 1], timing={}, system={})
        >>> row["R@1"], row["p_value"]
        (0.6666666666666666, 1.0)
    """
    row: dict[str, Any] = dict(system)
    row.update(retrieval_metrics(ranks))
    t, p = paired_t_test(hits_at(ranks, 1), hits_at(baseline_ranks, 1))
    row["p_value"] = p
    row["t"] = _finite(t)
    row.update(timing)
    return row


def _percent(value: object) -> str:
    return f"{100 * float(value):.2f}" if isinstance(value, (int, float)) else "–"


def _p(value: object, name: str) -> str:
    if name == "baseline" or not isinstance(value, (int, float)):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def markdown_table(systems: Mapping[str, Mapping[str, Any]]) -> str:
    """The ablation table: rows systems, columns the switches, metrics (%), p and timings.

    Args:
        systems: system name -> its :func:`system_row`.

    Returns:
        A markdown table (no trailing newline).
    """
    head = ("| System | S1 | S2 | S3 | R@1 | R@5 | R@10 | R@50 | mAP@10 | p (R@1 vs baseline) "
            "| ms / query | s / 1,000 items |")
    lines = [head, "|" + "---|" * 12]
    for name, row in systems.items():
        s1 = str(row.get("anchors")) if row.get("S1") else "–"
        s2 = "✓" if row.get("S2") else "–"
        s3 = str(row.get("S3")) if row.get("S3") else "–"
        metrics = " | ".join(_percent(row.get(metric)) for metric in METRIC_NAMES)
        ms = row.get("ms_per_query")
        per_items = row.get("s_per_1000_items")
        ms_text = f"{ms:.1f}" if isinstance(ms, (int, float)) else "–"
        items_text = f"{per_items:.2f}" if isinstance(per_items, (int, float)) else "–"
        lines.append(f"| {name} | {s1} | {s2} | {s3} | {metrics} | {_p(row.get('p_value'), name)} "
                     f"| {ms_text} | {items_text} |")
    return "\n".join(lines)


def write_per_query_file(
    path: Path, queries: Sequence[str], ranks: Any, targets: Sequence[int], top: Any,
    item_ids: Sequence[str], extra: Mapping[str, Sequence[Any]] | None = None,
) -> Path:
    """One JSON line per query: rank, hits, AP@10, the target's id and the 10 best item ids."""
    records = per_query_records(
        queries, ranks, targets=targets, top_indices=top, item_ids=item_ids, extra=extra,
    )
    try:
        return write_per_query(path, records)
    except OSError as exc:
        raise EvaluationError(Errors.E524.format(path=path, problem=exc)) from None
