"""Choose Stage 3's default on DEVELOPMENT data: re-rankers that must not lose R@1 anywhere.

The caption-indexed setting of docs/results.md (caption 1 is the query, the item is the
mean embedding of captions 2-5, caption 2 is the item's own caption for Stage 3), on
collections no reported test part holds: AudioCaps val and the Clotho development
training part (clips 1-2000). Prints R@1 (and R@5) of the frozen first pass and of each
candidate re-ranker:

* ``alpha``: the paper's fusion ``(1 - a) sim + a s_pred`` (polarity-aware) over the top 50;
* ``window``: the same, re-ranking only the top W items;
* ``gate``: the same, only for queries whose first-pass margin (top-1 minus top-2
  similarity) is below a threshold (the first pass is unsure);
* ``z``: ``z(sim) + w z(s_pred)``, both standardised over each query's top 50;
* ``gate share``: the same, only for queries whose predicates are, on average, in
  fewer than a given share of the item captions (overlap on rare predicates is informative);
* ``coverage``: s_pred replaced by the share of the query's predicates the item's
  caption asserts, minus the share it contradicts.

    python scripts/choose_rerank_default.py ../shared/data/audiocaps/val.csv \\
        ../shared/data/clotho/clotho_captions_development.csv:2000
"""

from __future__ import annotations

import argparse

import torch

from fortekit.fol import PredicateSymbol
from fortekit.plugins import get_backbone
from fortekit.search.eval.data import embed_collection
from fortekit.search.eval.datasets import load_collection
from fortekit.search.eval.metrics import hits_at, ranks_from_indices, ranks_of_targets
from fortekit.search.rerank import Reranker, polarity_overlap

TOP = 50


def _r(order: torch.Tensor, targets: list[int], k: int = 1) -> float:
    return 100 * float(torch.as_tensor(hits_at(ranks_from_indices(order, targets), k)).float().mean())


def _coverage(query: frozenset[PredicateSymbol], item: frozenset[PredicateSymbol]) -> float:
    if not query:
        return 0.0
    agree = len(query & item)
    flipped = {PredicateSymbol(s.name, s.arity, s.polarity.flipped()) for s in query}
    return (agree - len(flipped & item)) / len(query)


def _fuse(scores: torch.Tensor, preds: list[list[float]], weight: float, standardise: bool,
          window: int = TOP, unsure: torch.Tensor | None = None) -> torch.Tensor:
    top_scores, top_idx = torch.sort(scores, dim=1, descending=True, stable=True)
    head_s, head_i = top_scores[:, :window], top_idx[:, :window]
    pred = torch.tensor(preds)[:, :window]
    if standardise:
        zs = (head_s - head_s.mean(1, keepdim=True)) / head_s.std(1, keepdim=True).clamp_min(1e-6)
        zp = (pred - pred.mean(1, keepdim=True)) / pred.std(1, keepdim=True).clamp_min(1e-6)
        fused = zs + weight * zp
    else:
        fused = (1 - weight) * head_s + weight * pred
    if unsure is not None:
        fused = torch.where(unsure[:, None], fused, head_s)
    _, order = torch.sort(fused, dim=1, descending=True, stable=True)
    return torch.cat([torch.gather(head_i, 1, order), top_idx[:, window:]], dim=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collections", nargs="+", help="CSV[:N] (the first N clips only)")
    args = parser.parse_args()
    backbone = get_backbone("minilm", device="cpu")
    for spec in args.collections:
        path, _, limit = spec.partition(":")
        clips = load_collection(path)[: int(limit)] if limit else load_collection(path)
        data = embed_collection(clips, backbone, item_text="mean", what=path)
        scores = data.queries @ data.items.T
        targets = list(data.task.targets)
        qp, ip = list(data.query_predicates), list(data.index.predicate_sets)
        base = hits_at(ranks_of_targets(scores, targets), 1)
        print(f"{path} ({len(data)} clips): baseline R@1 {100 * float(base.mean()):.2f}", flush=True)
        _, top_idx = torch.sort(scores, dim=1, descending=True, stable=True)
        pol = [[polarity_overlap(qp[q], ip[i]) for i in row[:TOP]] for q, row in enumerate(top_idx.tolist())]
        cov = [[_coverage(qp[q], ip[i]) for i in row[:TOP]] for q, row in enumerate(top_idx.tolist())]
        sorted_scores = torch.sort(scores, dim=1, descending=True).values
        margin = sorted_scores[:, 0] - sorted_scores[:, 1]
        rows = []
        for alpha in (0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3):
            _, order = Reranker(alpha=alpha, top_n=TOP, mode="polarity").rerank(scores, qp, ip)
            rows.append((f"alpha {alpha}", order))
        # A gate on how common the query's predicates are among the item captions: where
        # they are shared by many items, overlap says little about which item is meant.
        df: dict[PredicateSymbol, int] = {}
        for symbols in ip:
            for symbol in symbols:
                df[symbol] = df.get(symbol, 0) + 1
        share = torch.tensor([
            sum(df.get(s, 0) for s in q) / (len(ip) * len(q)) if q else 1.0 for q in qp
        ])
        for threshold in (0.02, 0.03, 0.05, 0.08):
            for alpha in (0.1, 0.2, 0.3):
                rows.append((f"gate share<{threshold} alpha {alpha}",
                             _fuse(scores, pol, alpha, False, unsure=share < threshold)))
        quartiles = [round(float(v), 4) for v in torch.quantile(share, torch.tensor([0.25, 0.5, 0.75]))]
        print(f"  document-frequency share of the query predicates, quartiles {quartiles}")
        for window in (3, 5, 10):
            for alpha in (0.1, 0.2, 0.3):
                rows.append((f"window {window} alpha {alpha}", _fuse(scores, pol, alpha, False, window)))
        for quantile in (0.25, 0.5):
            threshold = float(torch.quantile(margin, quantile))
            for alpha in (0.1, 0.2, 0.3):
                rows.append((f"gate margin<q{quantile} alpha {alpha}",
                             _fuse(scores, pol, alpha, False, unsure=margin < threshold)))
        for weight in (0.1, 0.2, 0.3, 0.5):
            rows.append((f"z w {weight}", _fuse(scores, pol, weight, True)))
            rows.append((f"z-coverage w {weight}", _fuse(scores, cov, weight, True)))
        for alpha in (0.1, 0.2, 0.3):
            rows.append((f"coverage alpha {alpha}", _fuse(scores, cov, alpha, False)))
        for name, order in rows:
            print(f"  {name:32s} R@1 {_r(order, targets):6.2f}  R@5 {_r(order, targets, 5):6.2f}", flush=True)


if __name__ == "__main__":
    main()
