"""Study Stage 3 on DEVELOPMENT data: which predicates s_pred compares, and alpha.

Caption-indexed setting of docs/results.md (caption 1 is the query, the item is the mean
embedding of its other captions, its caption 2 is what a captioner would write). For each
collection it prints R@1 of the frozen first pass and of the re-ranked one, for each
alpha and each predicate filter:

* ``all``: every symbol of Pred(Pi(caption)), as the paper;
* ``unary``: the unary symbols only (objects, events, attributes), leaving out the
  binary relations (``While``, ``Before``, ``On``, ``With``, ...), which connect clauses
  and match between captions of unrelated clips.

Run it on data that no reported test part holds, e.g. AudioCaps val and the training part
of Clotho development (its first 2,000 clips)::

    python scripts/choose_rerank.py audiocaps/val.csv clotho_captions_development.csv:2000
"""

from __future__ import annotations

import argparse

import torch

from fortekit.fol import PredicateSymbol
from fortekit.plugins import get_backbone
from fortekit.search.eval.data import embed_collection
from fortekit.search.eval.datasets import load_collection
from fortekit.search.eval.metrics import hits_at, ranks_from_indices, ranks_of_targets
from fortekit.search.rerank import Reranker

FILTERS = {
    "all": lambda symbol: True,
    "unary": lambda symbol: symbol.arity == 1,
}


def _keep(sets: list[frozenset[PredicateSymbol]], name: str) -> list[frozenset[PredicateSymbol]]:
    return [frozenset(s for s in symbols if FILTERS[name](s)) for symbols in sets]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collections", nargs="+", help="CSV[:N] (the first N clips only)")
    parser.add_argument("--alphas", default="0.1,0.2,0.3")
    args = parser.parse_args()
    alphas = [float(value) for value in args.alphas.split(",")]
    backbone = get_backbone("minilm", device="auto")
    for spec in args.collections:
        path, _, limit = spec.partition(":")
        clips = load_collection(path)[: int(limit)] if limit else load_collection(path)
        embedded = embed_collection(clips, backbone, item_text="mean", what=path)
        scores = embedded.queries @ embedded.items.T
        targets = embedded.task.targets
        base = hits_at(ranks_of_targets(scores, targets), 1)
        print(f"{path} ({len(embedded)} clips): baseline R@1 {100 * float(base.mean()):.2f}")
        for name in FILTERS:
            queries = _keep(list(embedded.query_predicates), name)
            items = _keep(list(embedded.index.predicate_sets), name)
            cells = []
            for alpha in alphas:
                _, order = Reranker(alpha=alpha, top_n=50).rerank(scores, queries, items)
                r1 = hits_at(ranks_from_indices(order, targets), 1)
                cells.append(f"alpha={alpha:g}: {100 * float(torch.as_tensor(r1).float().mean()):.2f}")
            print(f"  {name:6s} " + "  ".join(cells))


if __name__ == "__main__":
    main()
