"""Choose formula scoring's connectives, calibration and gamma on DEVELOPMENT data only.

Reads BEIR-layout exclusion/conjunction sets (the negation sets' ``clotho_development``
and ``audiocaps_val``; never ``audiocaps_test``, which is for reporting) and, optionally,
caption-indexed CSV collections for the plain-query check (R@1 of caption 1 against the
mean of captions 2-5: AudioCaps val, Clotho development clips 1-2000). For every setting
of the grid it prints, per set, nDCG@10 / AP / violation@10 of "without" queries and
nDCG@10 of "and" queries (measures computed here with numpy for speed; the reported
figures come from ``fortekit eval --beir``, which uses ir-measures), and R@1 on the CSVs.
Item embeddings are cached in ``--cache``::

    python scripts/choose_formula_scoring.py ../shared/data/negation/clotho_development \\
        ../shared/data/negation/audiocaps_val --csv ../shared/data/audiocaps/val.csv \\
        --csv ../shared/data/clotho/clotho_captions_development.csv:2000
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
from pathlib import Path

import numpy as np
import torch

from fortekit.fol.caption import parse_captions
from fortekit.plugins import get_backbone
from fortekit.search.eval.data import item_embeddings
from fortekit.search.eval.metrics import ranks_from_indices
from fortekit.search.formula.scoring import FormulaScorer, FormulaScoringConfig
from fortekit.search.index.item_captions import item_predicates_from_captions, predicate_sets
from fortekit.search.rerank import Reranker
from fortekit.search.stage1.encoder import CachedTextEncoder


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").split("\n") if line.strip()]


def _cached(cache: Path, key: str, make) -> torch.Tensor:
    name = cache / (hashlib.sha256(key.encode()).hexdigest()[:16] + ".npy")
    if name.is_file():
        return torch.from_numpy(np.load(name))
    value = make()
    cache.mkdir(parents=True, exist_ok=True)
    np.save(name, value.numpy())
    return value


class CaptionSet:
    """A caption-indexed collection (caption 1 the query, the mean of the others the item): R@1."""

    def __init__(self, spec: str, backbone, cache: Path) -> None:
        from fortekit.search.eval.datasets import load_collection
        from fortekit.search.eval.tasks import retrieval_task

        path, _, limit = spec.partition(":")
        clips = load_collection(path)
        if limit:  # "N": the first N clips; "N-": the clips after the first N
            start, dash, _ = limit.partition("-")
            clips = clips[int(start):] if dash else clips[: int(start)]
        task = retrieval_task(clips, item_captions="mean")
        self.name = Path(path).stem + (f":{limit}" if limit else "")
        self.items = _cached(cache, f"{Path(path).resolve()}:{limit}:mean",
                             lambda: item_embeddings(backbone, task.item_texts))
        self.query_vectors = torch.nn.functional.normalize(
            backbone.encode_text(task.queries).detach().float().cpu(), dim=1
        )
        self.formulas = [parse.formula for parse in parse_captions(task.queries)]
        self.targets = torch.tensor(task.targets)
        self.query_sets = predicate_sets(self.formulas)
        # Stage 3's item caption: the first of the item's texts (caption 2), as fortekit eval.
        self.item_sets = item_predicates_from_captions([texts[0] for texts in task.item_texts])

    def measure(self, scores: torch.Tensor) -> dict[str, float]:
        """R@1 and R@5 of the scores, and R@1 after Stage 3's default re-ranker on top of them."""
        target = scores[torch.arange(len(self.targets)), self.targets]
        ranks = (scores > target[:, None]).sum(dim=1) + 1
        _, order = Reranker().rerank(scores, self.query_sets, self.item_sets)
        reranked = torch.as_tensor(ranks_from_indices(order, self.targets.tolist()))
        return {"R@1": 100 * float((ranks == 1).float().mean()),
                "R@5": 100 * float((ranks <= 5).float().mean()),
                "+S3 R@1": 100 * float((reranked == 1).float().mean())}


class BeirSet:
    def __init__(self, folder: Path, backbone, cache: Path) -> None:
        corpus = _lines(folder / "corpus.jsonl")
        self.ids = [row["_id"] for row in corpus]
        position = {cid: i for i, cid in enumerate(self.ids)}
        self.queries = _lines(folder / "queries.jsonl")
        self.relevant: list[set[int]] = [set() for _ in self.queries]
        qpos = {q["_id"]: i for i, q in enumerate(self.queries)}
        for line in (folder / "qrels" / "test.tsv").read_text("utf-8").split("\n")[1:]:
            parts = line.split("\t")
            if len(parts) == 3 and int(parts[2]) > 0:
                self.relevant[qpos[parts[0]]].add(position[parts[1]])
        concepts = {row["_id"]: row["concepts"] for row in _lines(folder / "item_concepts.jsonl")}
        self.mentions = [concepts.get(cid, {}) for cid in self.ids]
        texts = [tuple(row.get("captions") or [row["text"]]) for row in corpus]
        self.items = _cached(cache, f"{folder.resolve()}:items", lambda: item_embeddings(backbone, texts))
        query_texts = [q["text"] for q in self.queries]
        self.query_vectors = torch.nn.functional.normalize(
            backbone.encode_text(query_texts).detach().float().cpu(), dim=1
        )
        self.formulas = [parse.formula for parse in parse_captions(query_texts)]
        self.name = folder.name

    def measure(self, scores: torch.Tensor) -> dict[str, float]:
        order = torch.argsort(scores, dim=1, descending=True).numpy()
        out: dict[str, list[float]] = {}
        for q, query in enumerate(self.queries):
            kind = query["metadata"]["kind"]
            rel = self.relevant[q]
            gains = np.array([1.0 if i in rel else 0.0 for i in order[q]])
            discounts = 1.0 / np.log2(np.arange(2, 12))
            ideal = discounts[: min(len(rel), 10)].sum()
            ndcg = float((gains[:10] * discounts).sum() / ideal) if ideal else 0.0
            hits = np.cumsum(gains)
            ap = float((gains * hits / np.arange(1, len(gains) + 1)).sum() / max(len(rel), 1))
            out.setdefault(f"{kind}_ndcg", []).append(ndcg)
            out.setdefault(f"{kind}_ap", []).append(ap)
            if kind == "without":
                b = query["metadata"]["b"]
                out.setdefault("violation", []).append(
                    float(np.mean([self.mentions[i].get(b, 0) >= 1 for i in order[q][:10]]))
                )
        return {key: float(np.mean(values)) for key, values in out.items()}


def _pooled(scorer: FormulaScorer, beir: BeirSet, pool: int) -> torch.Tensor:
    """Scores when only each query's first ``pool`` items are re-scored; the rest rank below them."""
    first = beir.query_vectors @ beir.items.T
    top, rows = torch.topk(first, k=min(pool, first.shape[1]), dim=1)
    scores, order = scorer.rescore(beir.formulas, top, rows, beir.items)
    full = torch.full_like(first, -1e9)
    return full.scatter_(1, order, scores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+", type=Path, help="BEIR-layout development folders")
    parser.add_argument("--csv", action="append", default=[],
                        help="CSV[:N] (first N clips) or CSV[:N-] (the clips after them), caption-indexed")
    parser.add_argument("--cache", type=Path, default=Path(".cache/choose_formula_scoring"))
    parser.add_argument("--gammas", default="0.3,0.5,0.7,1.0")
    parser.add_argument("--tnorms", default="product,min")
    parser.add_argument("--negations", default="complement,subtract")
    parser.add_argument("--calibrations", default="zscore,minmax,none")
    parser.add_argument("--slopes", default="1,2,3")
    parser.add_argument("--shifts", default="1,2,3")
    parser.add_argument("--weights", default="1", help="negation_weight values (subtract)")
    parser.add_argument("--scopes", default="none", help="negated_scope values ('none': the collection)")
    parser.add_argument("--saturations", default="none", help="saturation values ('none': off)")
    parser.add_argument("--pools", default="",
                        help="also re-score only each query's first N items (comma-separated N), as "
                        "fol-refine and fortekit search do with their candidates")
    parser.add_argument("--conjunction-gammas", default="same",
                        help="conjunction_gamma values ('same': gamma)")
    parser.add_argument("--conjunctions", default="guard",
                        help="conjunction modes, comma-separated (guard, blend)")
    parser.add_argument("--conjunction-thresholds", default="1.5", help="the guard's z thresholds")
    parser.add_argument("--conjunction-blends", default="0.2",
                        help="the guard's t-norm weight where the first hit lacks a clause")
    parser.add_argument("--negated", default="same",
                        help="slope:shift pairs for negated clauses, comma-separated ('same': as asserted)")
    args = parser.parse_args()
    backbone = get_backbone("minilm", device="cpu")
    sets = [BeirSet(folder, backbone, args.cache) for folder in args.sets]
    captions = [CaptionSet(spec, backbone, args.cache) for spec in args.csv]
    for collection in captions:
        base = collection.measure(collection.query_vectors @ collection.items.T)
        print(collection.name, "baseline", {k: round(v, 2) for k, v in base.items()})
    encoder = CachedTextEncoder(backbone)  # clause texts are encoded once for the whole grid
    for beir in sets:
        base = beir.measure(beir.query_vectors @ beir.items.T)
        print(beir.name, "baseline", {k: round(v, 3) for k, v in base.items()})
    grid = itertools.product(
        [float(v) for v in args.gammas.split(",")], args.tnorms.split(","), args.negations.split(","),
        args.calibrations.split(","), [float(v) for v in args.slopes.split(",")],
        [float(v) for v in args.shifts.split(",")], [float(v) for v in args.weights.split(",")],
        args.negated.split(","), args.scopes.split(","), args.conjunction_gammas.split(","),
        args.saturations.split(","), args.conjunctions.split(","),
        [float(v) for v in args.conjunction_thresholds.split(",")],
        [float(v) for v in args.conjunction_blends.split(",")],
    )
    seen: set[tuple] = set()
    for setting in grid:
        (gamma, tnorm, negation, calibration, slope, shift, weight, negated, scope, conjunction,
         saturation, mode, threshold, relief) = setting
        if calibration != "zscore":
            slope, shift = 2.0, 2.0  # unused by the other calibrations
        if negation != "subtract":
            weight = 1.0
        if calibration != "zscore":
            negated = "same"
        key = (gamma, tnorm, negation, calibration, slope, shift, weight, negated, scope, conjunction,
               saturation, mode, threshold, relief)
        neg_slope, neg_shift = (None, None) if negated == "same" else map(float, negated.split(":"))
        if key in seen:
            continue
        seen.add(key)
        config = FormulaScoringConfig(gamma=gamma, tnorm=tnorm, negation=negation,  # type: ignore[arg-type]
                                      calibration=calibration, slope=slope, shift=shift,
                                      negation_weight=weight, negated_slope=neg_slope,
                                      negated_shift=neg_shift,
                                      negated_scope=None if scope == "none" else int(scope),
                                      conjunction_gamma=None if conjunction == "same" else float(conjunction),
                                      saturation=None if saturation == "none" else float(saturation),
                                      conjunction=mode, conjunction_threshold=threshold,  # type: ignore[arg-type]
                                      conjunction_blend=relief)
        cells = []
        for beir in sets:
            scorer = FormulaScorer(encoder, config)
            m = beir.measure(scorer.score(beir.formulas, beir.query_vectors @ beir.items.T, beir.items))
            cells.append(f"{beir.name[:8]} w {m['without_ndcg']:.3f}/{m['without_ap']:.3f}/"
                         f"{m['violation']:.3f} and {m['and_ndcg']:.3f}")
        for beir in sets:
            for pool in [int(v) for v in args.pools.split(",") if v]:
                m = beir.measure(_pooled(FormulaScorer(encoder, config), beir, pool))
                cells.append(f"{beir.name[:8]} top {pool}: w {m['without_ndcg']:.3f}/{m['without_ap']:.3f}/"
                             f"{m['violation']:.3f} and {m['and_ndcg']:.3f}")
        for collection in captions:
            scorer = FormulaScorer(encoder, config)
            m = collection.measure(scorer.score(
                collection.formulas, collection.query_vectors @ collection.items.T, collection.items,
            ))
            cells.append(f"{collection.name[:12]} R@1 {m['R@1']:.2f} R@5 {m['R@5']:.2f} "
                         f"+S3 {m['+S3 R@1']:.2f}")
        print(" ".join(map(str, key)), "|", " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
