"""The default pipeline at 1,000,000 items: ANN candidates against exact ones, latency and quality.

The collection: a development negation set's corpus (``negation/clotho_development`` or
``negation/audiocaps_val``: its items embedded with MiniLM and parsed, as ``fortekit index
build`` does) hidden among distractors up to ``--items``: MiniLM rows of the captions of
AudioCaps train (parsed once; cached by scripts/default_latency.py in runs/latency/) repeated with
Gaussian noise (sigma ``--noise`` per dimension), each with its caption's predicates. AudioCaps
train shares no clip with either set's corpus. An HNSW index (``--ann hnsw``) is built over it all,
and (unless ``--no-projected``) an HNSW index over the rows the shipped Stage 2 head projects, as
``fortekit index build`` builds it (docs/scale.md).

Systems, each a :class:`~fortekit.search.retriever.Retriever` over the same index, on the set's
queries one at a time (after a few unmeasured ones; the systems take turns query by query, so
that a change of the machine's load falls on all of them alike):

* ``ann, no head``: HNSW candidates without the Stage 2 head (``projection=None``): what the
  default was before the index held an ANN part over projected rows;
* ``ann, head``: ``Retriever(index)``, the default: from ANN_MIN_ITEMS items on its candidate pool
  comes from the ANN part over the projected rows and the head stays on (with ``--no-projected``
  the head is off, and this is the system above);
* ``exact, head``: exact candidates with the Stage 2 head (what a smaller index gets);
* ``exact, no head``: exact candidates without it (``--all``).

Printed per system and query kind ("without", "and"), with latency p50/p95:

* ``nDCG@10``: trec_eval's, the distractors judged not relevant (many of them are relevant in
  truth: AudioCaps train holds plenty of dogs barking without people; the figure is low for
  every system and only comparable between them);
* ``own nDCG@10``: nDCG@10 of the set's own items in the order each system ranks them within its
  1,000 candidates (the distractors left out of the ranking): what the ANN candidate pool costs
  the set's items;
* ``same top 10``: the share of each query's top 10 equal to (the same items as) the top 10 of
  ``exact, head`` (the ranking an exact first pass gives the default stages).

Latency: wall-clock p50/p95 of a top 10, and the p50 of the process's CPU time for it.

Run::

    python scripts/pipeline_at_scale.py --set clotho_development --stage1 off
    python scripts/pipeline_at_scale.py --set audiocaps_val --stage1 off
    python scripts/pipeline_at_scale.py --set clotho_development --stage1 off --items 100000

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


def build(items: int, set_name: str, noise: float, cache: Path,  # type: ignore[no-untyped-def]
          projected: bool = True):
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
    if projected:
        from fortekit.search.pipeline.assemble import default_head

        tick = time.perf_counter()
        index.build_projected_ann(default_head(index))  # type: ignore[arg-type]
        part = index.projected_ann
        print(f"ANN part over projected rows ({part.describe() if part else None}) in "
              f"{time.perf_counter() - tick:.0f} s, recall@10 {part.recall if part else None}", flush=True)
    return index, backbone, collection


def run(retrievers, collection, warm: int):  # type: ignore[no-untyped-def]
    """Per system, each query's ranking of the 1,000 candidates, and the wall and CPU ms of a top 10.

    The systems take turns query by query (one query at a time each).
    """
    for retriever in retrievers.values():
        for query in collection.queries[:warm]:
            retriever.search([query.text], k=10)
    times: dict[str, list[float]] = {name: [] for name in retrievers}
    cpu: dict[str, list[float]] = {name: [] for name in retrievers}
    for query in collection.queries:
        for name, retriever in retrievers.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            retriever.search([query.text], k=10)
            times[name].append((time.perf_counter() - start) * 1000)
            cpu[name].append((time.process_time() - start_cpu) * 1000)
    rankings: dict[str, dict[str, list[str]]] = {}
    for name, retriever in retrievers.items():
        rankings[name] = {
            query.id: [hit.item_id for hit in retriever.search(query.text, k=retriever.candidates).hits]
            for query in collection.queries}
    return rankings, times, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--set", default="clotho_development",
                        choices=("clotho_development", "audiocaps_val"))
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--stage1", choices=("auto", "off"), default="off")
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--no-projected", action="store_true",
                        help="no ANN part over projected rows (the head is then off with ANN candidates)")
    parser.add_argument("--all", action="store_true", help="also exact candidates without the head")
    parser.add_argument("--cache", type=Path, default=REPO / "runs" / "latency")
    args = parser.parse_args()
    import torch

    from fortekit.search.eval.beir_metrics import per_query_measures
    from fortekit.search.pipeline import PipelineSpec
    from fortekit.search.retriever import Retriever

    torch.set_num_threads(1)  # one query at a time, as a service's worker runs (docs/retriever.md, "Threads")
    print(f"pipeline_at_scale: cpus {os.cpu_count()}, load average {[round(x, 2) for x in os.getloadavg()]}")
    index, backbone, collection = build(args.items, args.set, args.noise, args.cache,
                                        projected=not args.no_projected)
    base = PipelineSpec() if args.stage1 == "auto" else PipelineSpec(stage1=None)
    specs = {
        "ann, no head": base.replace(projection=None),
        "ann, head": base,
        "exact, head": base.replace(first_pass="exact"),
    }
    if args.all:
        specs["exact, no head"] = base.replace(first_pass="exact", projection=None)
    retrievers = {}
    for name, spec in specs.items():
        tick = time.perf_counter()
        retrievers[name] = Retriever(index, spec, backbone=backbone, threads=1)
        retriever = retrievers[name]
        print(f"{name:15} first pass {retriever.first_pass}; running {','.join(retriever.pipeline.running)}; "
              f"ready in {time.perf_counter() - tick:.1f} s", flush=True)
    kinds: dict[str, list[str]] = {}
    for query in collection.queries:
        kinds.setdefault(str(query.metadata.get("kind", "all")), []).append(query.id)
    own_items = {item.id for item in collection.items}
    rankings, times, cpu = run(retrievers, collection, args.warm)
    reference = rankings["exact, head"]
    for name in retrievers:
        ranked = rankings[name]
        plain = per_query_measures(collection.qrels, {q: r[:10] for q, r in ranked.items()})
        own = per_query_measures(collection.qrels, {q: [i for i in r if i in own_items][:10]
                                                    for q, r in ranked.items()})
        same = {q: len(set(r[:10]) & set(reference[q][:10])) / 10 for q, r in ranked.items()}
        print(f"{name:15} latency p50 {statistics.median(times[name]):.1f} ms, "
              f"p95 {float(np.percentile(times[name], 95)):.1f} ms; "
              f"CPU p50 {statistics.median(cpu[name]):.1f} ms", flush=True)
        for kind, ids in sorted(kinds.items()):
            ndcg = np.mean([plain[q]["nDCG@10"] for q in ids])
            print(f"{'':15} {kind:8} (n={len(ids)}) nDCG@10 {ndcg:.4f}  "
                  f"own nDCG@10 {np.mean([own[q]['nDCG@10'] for q in ids]):.4f}  "
                  f"same top 10 as exact, head {np.mean([same[q] for q in ids]):.3f}", flush=True)
    print(f"load average at the end {[round(x, 2) for x in os.getloadavg()]}")


if __name__ == "__main__":
    main()
