"""Choose Stage 1's complexity weight on TRAINING data (Clotho development, clips 1..N).

Caption-indexed setting of docs/refine.md: caption 1 of a clip is the query, the mean
embedding of captions 2-5 is the item; R@1 of q* = f_T(G(phi*)) against the items,
for each weight w in F = w c - u. Usage:

    python scripts/choose_complexity_weight.py CLOTHO_DEV.csv --clips 400 --weights 0,0.01,0.02,0.05,0.1,1
"""

from __future__ import annotations

import argparse
import csv
import time

import torch

from fortekit.plugins import get_backbone
from fortekit.search import RefineConfig, Refiner


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv")
    parser.add_argument("--clips", type=int, default=400, help="the first N clips (inside the training part)")
    parser.add_argument("--weights", default="0,0.01,0.02,0.05,0.1,1")
    parser.add_argument("--bank-clips", type=int, default=0,
                        help="also try anchors from a bank of the next N training clips (after --clips)")
    args = parser.parse_args()
    with open(args.csv, encoding="utf-8", newline="") as handle:
        all_rows = list(csv.DictReader(handle))
    rows = all_rows[: args.clips]
    backbone = get_backbone("minilm", device="auto")
    queries = [row["caption_1"] for row in rows]
    items = torch.stack([
        torch.nn.functional.normalize(
            backbone.encode_text([row[f"caption_{k}"] for k in range(2, 6)]).mean(0), dim=0)
        for row in rows
    ])
    targets = torch.arange(len(rows))

    def recall_at_1(vectors: torch.Tensor) -> float:
        return float(((vectors @ items.T).argmax(dim=1) == targets).float().mean())

    print(f"clips {len(rows)}; frozen baseline R@1 {recall_at_1(backbone.encode_text(queries)):.4f}")
    refiner = Refiner(backbone, "lexical")
    grid = [(float(w), output) for output in ("verbalised", "residual") for w in args.weights.split(",")]
    if args.bank_clips:
        from fortekit.fol import predicates
        from fortekit.fol.caption import parse_captions
        from fortekit.search import AnchorBank

        bank_rows = all_rows[args.clips: args.clips + args.bank_clips]
        bank_items = torch.stack([
            torch.nn.functional.normalize(
                backbone.encode_text([row[f"caption_{k}"] for k in range(2, 6)]).mean(0), dim=0)
            for row in bank_rows
        ])
        sets = [predicates(r.formula) for r in parse_captions([row["caption_2"] for row in bank_rows])]
        grid += [(float(w), "residual+bank") for w in args.weights.split(",")]
    for weight, output in grid:
        if output == "residual+bank":
            refiner.anchors = AnchorBank(bank_items, sets)
        refiner.config = RefineConfig.online(complexity_weight=weight, output=output.split("+")[0])
        started = time.perf_counter()
        results = refiner.refine_many(queries, batch_size=64)
        refined = sum(r.phi_star != r.phi0 for r in results) / len(results)
        r1 = recall_at_1(torch.stack([r.q_star for r in results]).to(items.device))
        seconds = time.perf_counter() - started
        print(f"{output:<14} w={weight:<5} R@1 {r1:.4f}  refined {refined:.1%}  ({seconds:.1f} s)")


if __name__ == "__main__":
    main()
