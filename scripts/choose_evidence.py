"""Choose label evidence's settings (docs/formula_scoring.md, "Label evidence") on DEVELOPMENT data.

Reads a generated collection made for development only (``SEED=1 scripts/audio_bench.sh 2000
runs/audio_dev2000_seed1``: its own clips, small CLAP and tagger; never the seed-0 collections
that docs/results.md reports), and for every setting of a JSON grid of ``FormulaScoringConfig``
fields prints nDCG@10 per query kind and violation@10 of ``formula+evidence`` and
``default+evidence``, after ``baseline``, ``formula`` and ``default``. The rankings come from
the systems' own code (search/eval/beir_systems.py); the item embeddings and the tagger's
captions and evidence are computed once::

    python scripts/choose_evidence.py runs/audio_dev2000_seed1 \\
        '{"evidence_match": [0.5, 0.6, 0.7], "evidence_gamma": [0.8, 0.9, 0.95]}'
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from fortekit.plugins import get_backbone, get_captioner
from fortekit.search.eval import beir_systems
from fortekit.search.eval.beir import load_beir
from fortekit.search.eval.beir_data import BeirData
from fortekit.search.eval.beir_eval import _rankings, _records
from fortekit.search.formula.scoring import FormulaScoringConfig
from fortekit.search.stage1.config import RefineConfig

KINDS = ("without", "and", "order", "attribute", "plain")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="an audio_bench.sh output folder (gen/test, clap/)")
    parser.add_argument("grid", nargs="?", default="{}", help="JSON: FormulaScoringConfig field -> values")
    args = parser.parse_args()
    collection = load_beir(args.run / "gen" / "test")
    backbone = get_backbone("small-clap", model=str(args.run / "clap"), device="cpu")
    tagger = get_captioner("tagger", model=str(args.run / "clap"), device="cpu")
    data = BeirData(collection, backbone, refine=RefineConfig(), captioner=tagger, top_n=50)
    kinds = [query.metadata.get("kind") for query in collection.queries]

    def evaluate(name: str, rank: Callable[[BeirData], beir_systems.SystemRanking],
                 config: FormulaScoringConfig | None = None) -> None:
        data.formula_config = config
        ranking = rank(data)
        records = _records(collection, _rankings(collection, ranking.order), ranking.extra, ("without",))
        row = {"all": float(np.mean([r["nDCG@10"] for r in records]))}
        for kind in KINDS:
            values = [r["nDCG@10"] for r, k in zip(records, kinds, strict=True) if k == kind]
            if values:
                row[kind] = float(np.mean(values))
        violations = [r["violation@10"] for r in records if r["violation@10"] is not None]
        row["violation@10"] = float(np.mean(violations)) if violations else float("nan")
        print(f"{name:70s} " + " ".join(f"{key} {value:.3f}" for key, value in row.items()), flush=True)

    evaluate("baseline", beir_systems.SYSTEMS["baseline"].rank)
    evaluate("formula", beir_systems.SYSTEMS["formula"].rank)
    evaluate("default", beir_systems.SYSTEMS["default"].rank)
    grid: dict[str, list[object]] = json.loads(args.grid)
    for values in itertools.product(*grid.values()):
        settings = dict(zip(grid, values, strict=True))
        config = FormulaScoringConfig(**settings)  # type: ignore[arg-type]
        for system in ("formula+evidence", "default+evidence"):
            evaluate(f"{system} {settings}", beir_systems.SYSTEMS[system].rank, config)


if __name__ == "__main__":
    main()
