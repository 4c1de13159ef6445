"""What each part of Stage 1 earns, and why the refinement search rarely moves phi.

On a development part (default: Clotho development clips 1,001-2,000), each clip's first
caption is a query and the clips are the items (the mean of their other captions, embedded
by the embedded default backbone); the other captions are Stage 1's corpus (the corpus
elaborator's neighbours and the feedback anchors' judged captions), as on a caption index.
For each setting it prints Stage 1 alone's R@1 (q* against the items), the share of queries
whose phi* is not phi0, and the search tree's verdict on the edits it scored:

* ``search, no anchors``: the beam (B, D) = (3, 2), q* = f_T(q) + the edit's direction;
* ``search + anchors``: the same beam steered by e+ and e-, and q* moved along e+ - e-;
* ``feedback only``: no search (D = 0), q* moved along e+ - e- (the default);
* the search + anchors again at smaller complexity weights w (F = w c - u), to see whether
  a search that accepts more edits earns anything.

For the edits it reports, over the queries, the best depth-1 child's utility gain
``u(child) - u(phi0)`` against the complexity it adds, ``w (c(child) - c(phi0))``: an edit is
taken only where the gain exceeds the cost, and the cost is constant while the gain is a
difference of cosines between two verbalisations that differ by one word.

Usage::

    .venv/bin/python scripts/stage1_parts.py ../shared/data/clotho/clotho_captions_development.csv \\
        --clips 1000:2000 [--limit 300]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from fortekit.plugins import get_backbone
from fortekit.search.eval.datasets import load_collection
from fortekit.search.stage1.anchors import NoAnchors
from fortekit.search.stage1.beam import Refiner
from fortekit.search.stage1.config import RefineConfig
from fortekit.search.stage1.corpus import CaptionCorpus
from fortekit.search.stage1.corpus_elaborator import CorpusElaborator
from fortekit.search.stage1.feedback import FeedbackAnchors
from fortekit.search.stage1.result import RefinementResult


@dataclass(frozen=True)
class Row:
    name: str
    r_at_1: float
    refined: float
    ms_per_query: float
    gain_median: float
    cost_median: float
    gain_beats_cost: float
    feasible: float


def _recall_at_1(q_star: torch.Tensor, items: torch.Tensor) -> float:
    best = (q_star @ items.T).argmax(dim=1)
    return float((best == torch.arange(len(items))).float().mean()) * 100


def _edit_verdicts(results: Sequence[RefinementResult], weight: float) -> tuple[float, float, float, float]:
    """Median utility gain of the best depth-1 child, median cost, share where gain > cost, and
    the share of queries with a feasible depth-1 child (the threshold lets it be chosen)."""
    gains: list[float] = []
    costs: list[float] = []
    wins = feasible = 0
    for result in results:
        root = next((node for node in result.tree if node.node_id == 0), None)
        children = [node for node in result.tree if node.depth == 1]
        if root is None or not children:
            continue
        feasible += any(node.feasible for node in children)
        best = max(children, key=lambda node: node.terms.utility)
        gain = best.terms.utility - root.terms.utility
        cost = weight * (best.terms.complexity - root.terms.complexity)
        gains.append(gain)
        costs.append(cost)
        wins += gain > cost
    if not gains:
        return 0.0, 0.0, 0.0, 0.0
    return (statistics.median(gains), statistics.median(costs), wins / len(gains) * 100,
            feasible / len(gains) * 100)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", help="a Clotho or AudioCaps caption CSV (a development part)")
    parser.add_argument("--clips", default="1000:2000", help="the clips, as START:END (default 1000:2000)")
    parser.add_argument("--limit", type=int, default=None, help="the first N queries only")
    parser.add_argument("--weights", default="0.1,0.05,0.0", help="smaller complexity weights to try")
    args = parser.parse_args(argv)
    start, end = (int(part) for part in args.clips.split(":"))
    clips = [clip for clip in load_collection(args.collection)[start:end] if len(clip.captions) >= 2]
    backbone = get_backbone("minilm")
    queries = [clip.captions[0] for clip in clips]
    others = [clip.captions[1:] for clip in clips]
    corpus_texts = [text for texts in others for text in texts]
    corpus = CaptionCorpus.from_captions(corpus_texts, backbone)
    rows, offset = [], 0
    for texts in others:
        mean = corpus.embeddings[offset:offset + len(texts)].mean(0)
        rows.append(torch.nn.functional.normalize(mean, dim=0))
        offset += len(texts)
    items_used = torch.stack(rows)
    if args.limit is not None:
        queries = queries[: args.limit]
    plain = torch.nn.functional.normalize(backbone.encode_text(queries), dim=1)
    print(f"{len(queries)} queries, {len(items_used)} items, corpus of {len(corpus_texts)} captions")
    print(f"frozen baseline R@1 {_recall_at_1(plain, items_used):.2f}")

    settings: list[tuple[str, RefineConfig, bool]] = [
        ("search, no anchors (B, D) = (3, 2)", RefineConfig.online(), False),
        ("search + anchors (3, 2)", RefineConfig.online(), True),
        ("feedback only (D = 0, the default)", RefineConfig.feedback(), True),
    ]
    for weight in (float(w) for w in args.weights.split(",") if w.strip()):
        config = RefineConfig.online(complexity_weight=weight)
        settings.append((f"search + anchors (3, 2), w = {weight}", config, True))
    table: list[Row] = []
    for name, config, anchored in settings:
        anchors = FeedbackAnchors(corpus) if anchored else NoAnchors()
        refiner = Refiner(backbone, CorpusElaborator(corpus), config=config, anchors=anchors)
        tick = time.perf_counter()
        results = refiner.refine_many(queries)
        seconds = time.perf_counter() - tick
        q_star = torch.stack([r.q_star for r in results])
        refined = sum(r.phi_star != r.phi0 for r in results) / len(results) * 100
        gain, cost, wins, feasible = _edit_verdicts(results, config.complexity_weight)
        table.append(Row(name, _recall_at_1(q_star, items_used), refined, seconds / len(queries) * 1000,
                         gain, cost, wins, feasible))
        print(f"  {name}: done in {seconds:.0f} s", file=sys.stderr)
    print("| Stage 1 | R@1 | phi* != phi0 | ms / query | best edit's utility gain (median) | its cost w dc "
          "(median) | gain > cost | a feasible edit |")
    print("|---|---|---|---|---|---|---|---|")
    for row in table:
        edits = ("–", "–", "–", "–") if row.name.startswith("feedback") else (
            f"{row.gain_median:+.4f}", f"{row.cost_median:.3f}", f"{row.gain_beats_cost:.1f}%",
            f"{row.feasible:.1f}%")
        print(f"| {row.name} | {row.r_at_1:.2f} | {row.refined:.1f}% | {row.ms_per_query:.1f} | "
              + " | ".join(edits) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
