"""The default pipeline at 1,000,000 items: ANN candidates against exact ones, latency and quality.

The collection: a development negation set's corpus (``negation/clotho_development`` or
``negation/audiocaps_val``: its items embedded with MiniLM and parsed, as ``fortekit index
build`` does) hidden among distractors up to ``--items``: MiniLM rows of the captions of
AudioCaps train (parsed once; cached by scripts/default_latency.py in runs/latency/) repeated with
Gaussian noise (sigma ``--noise`` per dimension), each with its caption's predicates. AudioCaps
train shares no clip with either set's corpus. An HNSW index (``--ann hnsw``) is built over it all.

Systems, each a :class:`~fortekit.search.retriever.Retriever` over the same index, on the set's
queries one at a time (after a few unmeasured ones):

* ``ann``: ``Retriever(index)``: the default; from ANN_MIN_ITEMS items on its candidate pool
  (formula scoring, Stage 3) comes from HNSW, and the Stage 2 head is unavailable (the ANN index
  holds the unprojected rows);
* ``exact, same stages``: the same stages, exact candidates (``use_faiss=False, projection=None``);
* ``exact, default``: exact candidates with the Stage 2 head (what a smaller index gets).

Printed per system and query kind ("without", "and"), with latency p50/p95:

* ``nDCG@10``: trec_eval's, the distractors judged not relevant (many of them are relevant in
  truth: AudioCaps train holds plenty of dogs barking without people; the figure is low for
  every system and only comparable between them);
* ``own nDCG@10``: nDCG@10 of the set's own items in the order each system ranks them within its
  1,000 candidates (the distractors left out of the ranking): what the ANN candidate pool costs
  the set's items;
* ``same top 10``: the share of each query's top 10 equal to (the same items as) the first
  system's (``ann``), against which the exact systems are compared.

Run::

    python scripts/pipeline_at_scale.py --set clotho_development --stage1 off
    python scripts/pipeline_at_scale.py --set audiocaps_val --stage1 off

Figures in docs/scale.md.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _distractor_source(cache: Path):  # type: ignore[no-untyped-def]
    """The cached 100,000-item index of scripts/default_latency.py; the rows of AudioCaps train's captions."""
    from default_latency import _index

    index = _index(100_000, cache)
    with (DATA / "audiocaps" / "train.csv").open(encoding="utf-8", newline="") as handle:
        train = {row["caption"] for row in csv.DictReader(handle)}
    seen: set[str] = set()
    rows = []
    for row, caption in enumerate(index.captions):
        if caption in train and caption not in seen:
            seen.add(caption)
            rows.append(row)
    return index, np.asarray(rows)


def build(items: int, set_name: str, noise: float, cache: Path):  # type: ignore[no-untyped-def]
    from fortekit.plugins import get_backbone
    from fortekit.search.eval.beir import load_beir
    from fortekit.search.index.audio_index import AudioIndex

    collection = load_beir(DATA / "negation" / set_name)
    backbone = get_backbone("minilm", device="cpu")
    tick = time.perf_counter()
    corpus = AudioIndex.from_captions([item.id for item in collection.items],
                                      [item.text for item in collection.items], backbone)
    source, rows = _distractor_source(cache)
    count = items - len(corpus)
    rng = np.random.default_rng(0)
    picks = rows[rng.integers(0, len(rows), size=count)]
    base = np.asarray(source.embeddings)
    embeddings = np.empty((items, base.shape[1]), dtype=np.float32)
    for start in range(0, count, 100_000):
        chunk = picks[start:start + 100_000]
        block = base[chunk] + rng.standard_normal((len(chunk), base.shape[1]), dtype=np.float32) * noise
        embeddings[start:start + len(chunk)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    embeddings[count:] = np.asarray(corpus.embeddings)
    captions = [source.captions[row] for row in picks] + list(corpus.captions)
    sets = [source.predicate_sets[row] for row in picks] + list(corpus.predicate_sets)
    ids = [f"distractor{i}" for i in range(count)] + corpus.ids
    index = AudioIndex.from_captions(ids, captions, backbone, embeddings=embeddings, predicate_sets=sets)
    made = time.perf_counter() - tick
    tick = time.perf_counter()
    index.build_faiss("hnsw")
    print(f"index: {items} items ({len(corpus)} of {set_name}, {count} distractors) in {made:.0f} s; "
          f"HNSW in {time.perf_counter() - tick:.0f} s, recall@10 {index.meta.ann_recall}", flush=True)
    return index, backbone, collection


def run(retriever, collection, warm: int) -> tuple[dict[str, list[str]], list[float]]:  # type: ignore[no-untyped-def]
    """Each query's ranking of the 1,000 candidates, and the latency of a top 10 (one query at a time)."""
    for query in collection.queries[:warm]:
        retriever.search([query.text], k=10)
    rankings, times = {}, []
    for query in collection.queries:
        start = time.perf_counter()
        retriever.search([query.text], k=10)
        times.append((time.perf_counter() - start) * 1000)
        result = retriever.search(query.text, k=retriever.candidates)
        rankings[query.id] = [hit.item_id for hit in result.hits]
    return rankings, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--set", default="clotho_development",
                        choices=("clotho_development", "audiocaps_val"))
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--stage1", choices=("auto", "off"), default="off")
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=REPO / "runs" / "latency")
    args = parser.parse_args()
    from fortekit.search.eval.beir_metrics import per_query_measures
    from fortekit.search.retriever import Retriever

    print(f"pipeline_at_scale: cpus {os.cpu_count()}, load average {[round(x, 2) for x in os.getloadavg()]}")
    index, backbone, collection = build(args.items, args.set, args.noise, args.cache)
    stage1 = {} if args.stage1 == "auto" else {"stage1": None}
    systems = {
        "ann": lambda: Retriever(index, backbone, **stage1),
        "exact, same stages": lambda: Retriever(index, backbone, use_faiss=False, projection=None, **stage1),
        "exact, default": lambda: Retriever(index, backbone, use_faiss=False, **stage1),
    }
    kinds: dict[str, list[str]] = {}
    for query in collection.queries:
        kinds.setdefault(str(query.metadata.get("kind", "all")), []).append(query.id)
    own_items = {item.id for item in collection.items}
    first: dict[str, list[str]] = {}
    for name, make in systems.items():
        tick = time.perf_counter()
        retriever = make()
        ready = time.perf_counter() - tick
        rankings, times = run(retriever, collection, args.warm)
        first = first or rankings
        plain = per_query_measures(collection.qrels, {q: r[:10] for q, r in rankings.items()})
        own = per_query_measures(collection.qrels, {q: [i for i in r if i in own_items][:10]
                                                    for q, r in rankings.items()})
        same = {q: len(set(r[:10]) & set(first[q][:10])) / 10 for q, r in rankings.items()}
        print(f"{name:20} first pass {retriever.first_pass}; running {','.join(retriever.pipeline.running)}; "
              f"ready in {ready:.1f} s; latency p50 {statistics.median(times):.1f} ms, "
              f"p95 {float(np.percentile(times, 95)):.1f} ms", flush=True)
        for kind, ids in sorted(kinds.items()):
            ndcg = np.mean([plain[q]["nDCG@10"] for q in ids])
            print(f"{'':20} {kind:8} (n={len(ids)}) nDCG@10 {ndcg:.4f}  "
                  f"own nDCG@10 {np.mean([own[q]['nDCG@10'] for q in ids]):.4f}  "
                  f"same top 10 {np.mean([same[q] for q in ids]):.3f}", flush=True)
    print(f"load average at the end {[round(x, 2) for x in os.getloadavg()]}")


if __name__ == "__main__":
    main()
