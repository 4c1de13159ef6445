"""Issue 42's goals per set, from a wording benchmark's JSON (scripts/wording_bench.py --by wording).

Per set: the "without" wordings' mean nDCG@10 / AP / violation@10 (frozen baseline -> default),
how many reach the goal (nDCG@10 >= 0.85, AP >= 0.70, violation@10 <= 0.10), the "and"
controls' mean nDCG@10 and how many gain +0.10, which wordings fall more than 0.005 below the
baseline on nDCG@10 or AP, and how many wording families (cue classes) do::

    python scripts/wording_goals.py runs/issue42_fresh/bench_fresh/wording_bench.json

Example:
    >>> row = {"baseline": {"kind": "without", "nDCG@10": 0.3, "AP": 0.4, "violation@10": 0.7},
    ...        "default": {"kind": "without", "nDCG@10": 0.9, "AP": 0.8, "violation@10": 0.05}}
    >>> at_goal(row), below_baseline(row)
    (True, False)
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def at_goal(row: dict[str, Any]) -> bool:
    new = row["default"]
    return bool(new["nDCG@10"] >= 0.85 and new["AP"] >= 0.70 and (new["violation@10"] or 0.0) <= 0.10)


def below_baseline(row: dict[str, Any], margin: float = 0.005) -> bool:
    old, new = row["baseline"], row["default"]
    return bool(new["nDCG@10"] < old["nDCG@10"] - margin or new["AP"] < old["AP"] - margin)


def summary(
    name: str, rows: dict[str, dict[str, Any]], families: dict[str, dict[str, Any]] | None = None
) -> str:
    without = {k: r for k, r in rows.items() if r["default"]["kind"] == "without"}
    controls = {k: r for k, r in rows.items() if r["default"]["kind"] == "and"}

    def mean(system: str, field: str) -> float:
        return statistics.mean(r[system][field] for r in without.values())

    means = " / ".join(f"{mean('baseline', f):.3f}" for f in ("nDCG@10", "AP", "violation@10"))
    means += " -> " + " / ".join(f"{mean('default', f):.3f}" for f in ("nDCG@10", "AP", "violation@10"))
    goal = sum(at_goal(r) for r in without.values())
    gained = sum(r["default"]["nDCG@10"] >= r["baseline"]["nDCG@10"] + 0.10 for r in controls.values())
    below = sorted(k.split(" ")[0] for k, r in rows.items() if below_baseline(r))
    and_means = " -> ".join(
        f"{statistics.mean(r[system]['nDCG@10'] for r in controls.values()):.3f}"
        for system in ("baseline", "default")
    ) if controls else "-"
    text = (f"{name}: without {len(without)} wordings {means}; at the goal {goal}/{len(without)}; "
            f"and {and_means}, controls +0.10: {gained}/{len(controls)}; below the baseline: {len(below)}"
            + (f" ({', '.join(below)})" if below else ""))
    if families:
        low = sorted(k.split(" ")[0] for k, r in families.items() if below_baseline(r))
        text += f"; families below the baseline: {len(low)}/{len(families)}"
        text += f" ({', '.join(low)})" if low else ""
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_json", type=Path,
                        help="wording_bench.json of scripts/wording_bench.py --by wording")
    args = parser.parse_args(argv)
    for name, tables in json.loads(args.bench_json.read_text("utf-8")).items():
        print(summary(name, tables["wording"], tables.get("cue_class")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
