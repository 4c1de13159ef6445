"""Choose the settings of exclusion by evidence on development sets (issue 42).

Runs formula scoring (``formula``: Π(q), no Stage 1, no Stage 3) over BEIR exclusion /
conjunction sets for a grid of :class:`~fortekit.search.formula.config.FormulaScoringConfig`
settings, each with the items' caption predicates (the caption path: every caption of a clip)
and without them (the contrastive test of audio-indexed collections), and prints per setting
"without" nDCG@10 / AP / violation@10 and "and" nDCG@10, beside the frozen baseline::

    python scripts/choose_exclusion.py ../shared/data/negation/audiocaps_val \\
        ../shared/data/negation/clotho_development --grid '{"source_weight": [0, 0.5, 1]}'

Development sets only: defaults are chosen here, never on a set that is reported.
``--grid`` is a JSON object of setting -> values (their product is run); ``--paths`` picks
``captions``, ``contrast`` or both. Figures are trec_eval's (ir-measures) and violation@10
as ``fortekit eval --beir`` computes it (item_concepts.jsonl, read for scoring only).
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np

from fortekit.plugins import get_backbone
from fortekit.search.eval.beir import load_beir
from fortekit.search.eval.beir_data import BeirData
from fortekit.search.eval.beir_metrics import per_query_measures, violation_at
from fortekit.search.eval.beir_systems import _ranking
from fortekit.search.formula.config import FormulaScoringConfig
from fortekit.search.stage1.config import RefineConfig


def measure(data: BeirData, order: np.ndarray) -> dict[str, float]:
    """Mean "without" nDCG@10 / AP / violation@10 and "and" nDCG@10 of a ranking."""
    collection = data.collection
    ids = data.item_ids
    rankings = {q.id: [ids[i] for i in order[n]] for n, q in enumerate(collection.queries)}
    values = per_query_measures(collection.qrels, rankings)
    names = ("without nDCG@10", "without AP", "violation@10", "and nDCG@10")
    out: dict[str, list[float]] = {name: [] for name in names}
    for query in collection.queries:
        kind = query.metadata.get("kind")
        if kind == "without":
            out["without nDCG@10"].append(values[query.id]["nDCG@10"])
            out["without AP"].append(values[query.id]["AP"])
            concept = query.metadata.get("b")
            concepts = collection.item_concepts or {}
            out["violation@10"].append(violation_at(rankings[query.id], concept, concepts))
        elif kind == "and":
            out["and nDCG@10"].append(values[query.id]["nDCG@10"])
    return {name: float(np.mean(v)) if v else float("nan") for name, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+", type=Path, help="BEIR development folders")
    parser.add_argument("--grid", default="{}", help="JSON: setting -> list of values")
    parser.add_argument("--paths", default="captions,contrast", help="captions, contrast or both")
    parser.add_argument("--json", type=Path, help="write every row here")
    parser.add_argument("--backbone", default="minilm", help="a registered backbone (default minilm)")
    parser.add_argument("--backbone-option", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--captioner", help="a captioner plug-in for audio items (e.g. tagger)")
    parser.add_argument("--captioner-option", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--evidence", action="store_true",
                        help="also run each setting with the captioner's label evidence (a tagger)")
    args = parser.parse_args()
    grid: dict[str, list[Any]] = json.loads(args.grid)
    names = list(grid)
    settings = [dict(zip(names, values, strict=True)) for values in itertools.product(*grid.values())] or [{}]
    backbone = get_backbone(args.backbone, **_options(args.backbone_option))
    captioner = None
    if args.captioner:
        from fortekit.plugins import get_captioner

        captioner = get_captioner(args.captioner, **_options(args.captioner_option))
    rows: list[dict[str, Any]] = []
    for folder in args.sets:
        data = BeirData(load_beir(folder), backbone, refine=RefineConfig.online(), captioner=captioner)
        base = data.retriever(formula=False, rerank=None)
        baseline = measure(data, _ranking(base, data.queries, None).order)
        print(f"{folder.name} baseline: {fmt(baseline)}", flush=True)
        rows.append({"set": folder.name, "path": "baseline", "setting": {}, **baseline})
        resemblance = FormulaScoringConfig(exclusion="resemblance")
        old = measure(data, _ranking(base.replace(formula=resemblance, captions=None,
                                                      evidence=data.evidence if args.evidence else None),
                                     data.queries, data.query_formulas).order)
        print(f"{folder.name} resemblance (before): {fmt(old)}", flush=True)
        rows.append({"set": folder.name, "path": "resemblance", "setting": {}, **old})
        evidence = data.evidence if args.evidence else None
        for path in args.paths.split(","):
            captions = data.caption_sets if path == "captions" else None
            for setting in settings:
                config = FormulaScoringConfig(**setting)
                retriever = base.replace(formula=config, captions=captions, evidence=evidence)
                result = measure(data, _ranking(retriever, data.queries, data.query_formulas).order)
                print(f"{folder.name} {path} {setting}: {fmt(result)}", flush=True)
                rows.append({"set": folder.name, "path": path, "setting": setting, **result})
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


def _options(pairs: list[str]) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in pairs)


def fmt(values: dict[str, float]) -> str:
    return (f"without {values['without nDCG@10']:.3f} / {values['without AP']:.3f} / "
            f"{values['violation@10']:.3f}; and {values['and nDCG@10']:.3f}")


if __name__ == "__main__":
    main()
