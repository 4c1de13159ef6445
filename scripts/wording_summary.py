"""Summarise wording_bench.json files: one row per cue class (or wording), one column per set.

    python scripts/wording_summary.py runs/wb_heldout/wording_bench.json --field cue_class

Cells: "without" rows ``default nDCG@10 / AP / violation@10 (baseline nDCG@10)``; "and" rows
``default nDCG@10 (baseline)``. A last line counts families below the frozen baseline on any
metric (nDCG@10, AP, violation@10).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fortekit.errors import Errors


def _cell(row: dict[str, Any]) -> str:
    base, new = row["baseline"], row["default"]
    if new["kind"] == "and":
        return f"{new['nDCG@10']:.3f} ({base['nDCG@10']:.3f})"
    return (
        f"{new['nDCG@10']:.3f} / {new['AP']:.3f} / {new['violation@10']:.3f} "
        f"({base['nDCG@10']:.3f})"
    )


def _below(row: dict[str, Any]) -> bool:
    base, new = row["baseline"], row["default"]
    worse = new["nDCG@10"] < base["nDCG@10"] or new["AP"] < base["AP"]
    if new["kind"] == "without":
        worse = worse or new["violation@10"] > base["violation@10"]
    return bool(worse)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path, help="wording_bench.json files")
    parser.add_argument("--field", default="cue_class", choices=("wording", "cue_class", "half"))
    args = parser.parse_args()
    sets: dict[str, dict[str, Any]] = {}
    for path in args.reports:
        try:
            report = json.loads(path.read_text("utf-8"))
            for name, fields in report.items():
                sets[name] = fields[args.field]
        except (OSError, UnicodeDecodeError, ValueError, AttributeError, KeyError, TypeError) as exc:
            named = isinstance(exc, OSError) and exc.strerror
            problem = exc.strerror if named else f"{type(exc).__name__}: {exc}"
            sys.exit(f"wording_summary: {Errors.E511.format(path=path, problem=problem)}")
    keys = sorted({k for table in sets.values() for k in table}, key=lambda k: (k.endswith("(and)"), k))
    print(f"| {args.field} | " + " | ".join(sets) + " |")
    print("|---" * (len(sets) + 1) + "|")
    below = 0
    for key in keys:
        cells = []
        for table in sets.values():
            row = table.get(key)
            cells.append("–" if row is None else _cell(row))
            below += row is not None and _below(row)
        print(f"| {key} | " + " | ".join(cells) + " |")
    print(f"\nrows below the frozen baseline on some metric: {below}")


if __name__ == "__main__":
    main()
