"""Choose Stage 1's elaborator, anchors, complexity weight and q* form on DEVELOPMENT data.

Caption-indexed setting of docs/results.md: caption 1 of a clip is the query, the mean
embedding of captions 2-5 the item, caption 2 the item's caption (what the index's
corpus and the feedback anchors read). Development collections only: Clotho development
clips 1..2,000 (the benchmark's training part) and AudioCaps val. Prints R@1 (and the
paired t-test p against the frozen baseline), the share of queries refined and the
time per query for each setting. Usage:

    python scripts/choose_stage1.py ../shared/data/clotho/clotho_captions_development.csv:2000 \\
        ../shared/data/audiocaps/val.csv --grid "corpus,feedback,0.2,0.2;lexical,none,0.2,0"

A grid entry is
``elaborator,anchors,complexity_weight,feedback_weight[,coverage[,k[,q*_form[,tau]]]]``
(q*_form ``residual`` or ``verbalised``; tau the feasibility threshold, default 0.2).
"""

from __future__ import annotations

import argparse
import time

import torch
from scipy import stats

from fortekit.plugins import get_backbone
from fortekit.search import RefineConfig, Refiner
from fortekit.search.eval.datasets import load_collection
from fortekit.search.stage1.corpus import CaptionCorpus
from fortekit.search.stage1.corpus_elaborator import CorpusElaborator
from fortekit.search.stage1.feedback import FeedbackAnchors


def _collection(spec: str, backbone) -> tuple[list[str], torch.Tensor, CaptionCorpus]:
    path, _, limit = spec.partition(":")
    clips = [clip for clip in load_collection(path) if len(clip.captions) >= 5]
    clips = clips[: int(limit)] if limit else clips
    queries = [clip.captions[0] for clip in clips]
    rows = [backbone.encode_text(list(clip.captions[1:5])).mean(0) for clip in clips]
    items = torch.nn.functional.normalize(torch.stack(rows), dim=-1)
    from fortekit.search.stage1.corpus import parse_captions_once

    captions = [clip.captions[1] for clip in clips]
    return queries, items, CaptionCorpus(items, captions, parse_captions_once(captions, None))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("collections", nargs="+", help="CSV[:first N clips] of development collections")
    parser.add_argument("--grid", default="lexical,none,0.2,0;corpus,none,0.2,0;corpus,feedback,0.2,0;"
                        "corpus,feedback,0.2,0.2")
    args = parser.parse_args()
    backbone = get_backbone("minilm", device="auto")
    for spec in args.collections:
        queries, items, corpus = _collection(spec, backbone)
        targets = torch.arange(len(queries))

        def hits(
            vectors: torch.Tensor, items: torch.Tensor = items, targets: torch.Tensor = targets
        ) -> torch.Tensor:
            return ((vectors @ items.T).argmax(dim=1) == targets).float()

        base = hits(backbone.encode_text(queries))
        print(f"{spec}: {len(queries)} queries; frozen baseline R@1 {100 * base.mean():.2f}")
        for entry in args.grid.split(";"):
            fields = entry.split(",")
            elaborator, anchors, weight, rho = fields[0], fields[1], float(fields[2]), float(fields[3])
            coverage = float(fields[4]) if len(fields) > 4 else 0.7
            k = int(fields[5]) if len(fields) > 5 else 10
            output = fields[6] if len(fields) > 6 else "residual"
            tau = float(fields[7]) if len(fields) > 7 else 0.2
            source = None
            if anchors == "feedback":
                source = FeedbackAnchors(corpus, k=k, coverage=coverage, weight=rho)
            chosen = CorpusElaborator(corpus, coverage=coverage) if elaborator == "corpus" else elaborator
            refiner = Refiner(backbone, chosen, anchors=source,
                              config=RefineConfig.online(complexity_weight=weight, output=output, tau=tau))
            started = time.perf_counter()
            results = refiner.refine_many(queries, batch_size=64)
            seconds = (time.perf_counter() - started) / len(queries)
            found = hits(torch.stack([r.q_star for r in results]))
            refined = sum(r.phi_star != r.phi0 for r in results) / len(results)
            p = stats.ttest_rel(found.numpy(), base.numpy()).pvalue if not torch.equal(found, base) else 1.0
            print(f"  {entry:<36} R@1 {100 * found.mean():6.2f} ({100 * (found.mean() - base.mean()):+.2f}, "
                  f"p {p:.3f}, won {int(((found > base)).sum())}, lost {int((found < base).sum())})  "
                  f"refined {refined:5.1%}  {1000 * seconds:.0f} ms/query", flush=True)


if __name__ == "__main__":
    main()
