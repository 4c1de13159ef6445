"""The wording benchmark: per wording, the frozen baseline beside the default pipeline.

Runs ``fortekit eval --beir`` (systems ``baseline`` and ``default``: what ``fortekit search``
does) on folders written by ``scripts/reword_queries.py --wordings`` and prints, per wording
(and per cue class, per half), "without" nDCG@10 / AP / violation@10 and "and" nDCG@10::

    python scripts/reword_queries.py ../shared/data/negation/audiocaps_val runs/wordings/dev/audiocaps_val \\
        --wordings tests/data/wordings/wordings.toml --half development
    python scripts/wording_bench.py runs/wordings/dev/audiocaps_val runs/wordings/dev/clotho_development \\
        --out runs/wording_bench_dev

Every figure is trec_eval's (through ir-measures) and this project's violation@10, as
``fortekit eval --beir`` computes them; the per-wording table is made from its per-query files.
``--systems`` adds others (``formula``, ``default+order``, and ``default-assert``: the default with
``FormulaScoringConfig(uninterpreted="assert")``, every clause scored as parsed, registered here)::

    python scripts/wording_bench.py runs/i42h9/heldout9/audiocaps_val --systems default,default-assert,S1 \\
        --out runs/i42h9_diag --by wording
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from fortekit.search.eval.beir_eval import BeirSettings, run_beir_evaluation


def _default_assert(data: Any) -> Any:
    """The default pipeline with every clause scored as parsed (``uninterpreted="assert"``)."""
    from fortekit.search.eval.beir_systems import SYSTEMS
    from fortekit.search.formula.config import FormulaScoringConfig

    old = data.formula_config
    settings = {**(old.to_dict() if old is not None else {}), "uninterpreted": "assert"}
    data.formula_config = FormulaScoringConfig(**settings)
    try:
        return SYSTEMS["default"].rank(data)
    finally:
        data.formula_config = old


def _register_default_assert() -> None:
    from fortekit.search.eval.beir_systems import SYSTEMS, SystemSpec, register_system

    if "default-assert" not in SYSTEMS:
        register_system(SystemSpec(
            "default-assert", _default_assert,
            "the default pipeline, every clause scored as parsed (uninterpreted='assert')"))


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def summarise(per_system: dict[str, list[dict[str, Any]]], field: str) -> dict[str, dict[str, Any]]:
    """field value -> system -> {queries, nDCG@10, AP, violation@10, kind}."""
    table: dict[str, dict[str, Any]] = defaultdict(dict)
    for system, rows in per_system.items():
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:  # a value per kind: "without" and "and" queries are reported apart
            groups[f"{row['metadata'].get(field, '?')} ({row['kind']})"].append(row)
        for value, members in groups.items():
            table[value][system] = {
                "kind": members[0]["kind"],
                "half": members[0]["metadata"].get("half"),
                "cue_class": members[0]["metadata"].get("cue_class"),
                "queries": len(members),
                "nDCG@10": _mean([m["nDCG@10"] for m in members]),
                "AP": _mean([m["AP"] for m in members]),
                "violation@10": _mean([m["violation@10"] for m in members]),
            }
    return dict(table)


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def markdown(table: dict[str, dict[str, Any]], systems: list[str], title: str) -> str:
    lines = [
        f"| {title} | half | class | n | "
        + " | ".join(f"{s} nDCG@10 / AP / viol@10" for s in systems)
        + " |",
        "|---" * (4 + len(systems)) + "|",
    ]
    order = sorted(
        table,
        key=lambda v: (
            table[v][systems[0]]["kind"],
            table[v][systems[0]]["half"] or "",
            table[v][systems[0]]["cue_class"] or "",
            v,
        ),
    )
    for value in order:
        row = table[value]
        first = row[systems[0]]
        cells = []
        for system in systems:
            r = row.get(system)
            if r is None:
                cells.append("–")
            elif r["kind"] == "and":
                cells.append(_fmt(r["nDCG@10"]))
            else:
                cells.append(f"{_fmt(r['nDCG@10'])} / {_fmt(r['AP'])} / {_fmt(r['violation@10'])}")
        lines.append(
            f"| {value} | {first['half']} | {first['cue_class']} | {first['queries']} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "folders", nargs="+", type=Path, help="folders written by reword_queries.py --wordings"
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--systems", default="default", help="comma-separated systems beside baseline")
    parser.add_argument(
        "--by", default="wording", help="the metadata field of the table (wording, cue_class, half)"
    )
    parser.add_argument(
        "--rerun", action="store_true", help="run the evaluation again where its output exists"
    )
    args = parser.parse_args()
    _register_default_assert()
    systems = ["baseline", *[s for s in args.systems.split(",") if s and s != "baseline"]]
    report: dict[str, Any] = {}
    text: list[str] = []
    for folder in args.folders:
        name = f"{folder.parent.name}-{folder.name}"  # runs/wordings/<half>/<set>: both halves of a set apart
        out = args.out / name
        if args.rerun or not all((out / "per_query" / f"{s}.jsonl").is_file() for s in systems):
            run_beir_evaluation(
                BeirSettings(beir=folder, out=out, systems=tuple(systems), directions=("t2a",), umap=False),
                log=print,
            )
        per_system = {s: _rows(out / "per_query" / f"{s}.jsonl") for s in systems}
        fields = dict.fromkeys(("wording", "cue_class", "half", args.by, "relation", "pair"))
        report[name] = {field: summarise(per_system, field) for field in fields}
        for field in dict.fromkeys([args.by, "cue_class", "half"]):
            text.append(
                f"### {name}, by {field}\n\n" + markdown(report[name][field], systems, field)
            )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "wording_bench.json").write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    (args.out / "wording_bench.md").write_text("\n\n".join(text) + "\n", "utf-8")
    print("\n\n".join(text))


if __name__ == "__main__":
    main()
