"""Choosing the ANN defaults on development data: the search settings, and the size from which ANN pays.

Two measurements over the ``captions`` rows of scripts/ann_bench.py (MiniLM rows of 20,000
development captions, AudioCaps train and Clotho development, repeated with noise; made by
``ann_bench.py`` and cached in runs/ann/):

* ``--sweep``: at ``--items`` rows, HNSW's ``ef_search`` and IVF-PQ's ``nprobe`` over a range,
  with recall@10 against exact and single-query latency; the default is the cheapest setting
  with recall@10 >= 0.95 (HNSW) or >= 0.80 (IVF-PQ, re-scored as AudioIndex.search does).
* ``--crossover``: at growing sizes, the exact top 1,000 (the candidate pool of formula scoring
  and Stage 3) against HNSW's, single query, beside the time MiniLM takes to encode one query;
  ANN pays from the size at which the exact pool costs more than encoding the query
  (:data:`fortekit.search.index.ann.ANN_MIN_ITEMS`).

Run::

    python scripts/ann_bench.py --items 1000000 --dim 512 --collections captions   # makes the rows
    python scripts/ann_tuning.py --sweep --items 200000
    python scripts/ann_tuning.py --crossover

Figures in docs/scale.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
ROWS = REPO / "runs" / "ann" / "captions_1000000_200_512.npy"


def _latency_ms(search, queries: np.ndarray) -> float:  # type: ignore[no-untyped-def]
    times = []
    for row in queries:
        start = time.perf_counter()
        search(row[None, :])
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3)


def _recall(found: np.ndarray, exact: np.ndarray, k: int) -> float:
    shares = [len(set(a[:k]) & set(b[:k])) / k for a, b in zip(found, exact, strict=True)]
    return round(float(np.mean(shares)), 4)


def _rows(items: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    data = np.load(ROWS, mmap_mode="r")
    rows, queries = np.array(data[:items, :dim]), np.array(data[-200:, :dim])
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return rows, queries


def _exact(rows: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    import torch

    from fortekit.search.index.search import exact_top_k

    return exact_top_k(torch.from_numpy(rows), torch.from_numpy(queries), k)[1].numpy()


def sweep(items: int, kinds: tuple[str, ...] = ("hnsw", "ivfpq")) -> dict[str, list[dict[str, float]]]:
    """Recall@10 and latency of HNSW over ef_search and IVF-PQ over nprobe, at ``items`` rows."""
    from fortekit.search.index.faiss_search import FaissSearcher, rescore, rescored_pool

    rows, queries = _rows(items, 512)
    exact = _exact(rows, queries, 10)
    table: dict[str, list[dict[str, float]]] = {"hnsw": [], "ivfpq": []}
    hnsw = FaissSearcher.build(rows, kind="hnsw") if "hnsw" in kinds else None
    for ef in (16, 32, 64, 128, 256) if hnsw is not None else ():
        hnsw.index.hnsw.efSearch = ef
        found = hnsw.search(queries, 10)[1]
        table["hnsw"].append({"ef_search": ef, "recall@10": _recall(found, exact, 10),
                              "p50_ms": _latency_ms(lambda q: hnsw.search(q, 10), queries)})
        print("hnsw", table["hnsw"][-1], flush=True)
    if "ivfpq" not in kinds:
        return table
    ivfpq = FaissSearcher.build(rows, kind="ivfpq")

    def pq_search(batch: np.ndarray) -> np.ndarray:
        return rescore(rows, batch, ivfpq.search(batch, rescored_pool(10))[1], 10)[1]

    for nprobe in (8, 16, 32, 64, 128):
        ivfpq.index.nprobe = nprobe
        table["ivfpq"].append({"nprobe": nprobe, "recall@10": _recall(pq_search(queries), exact, 10),
                               "recall@10 codes only": _recall(ivfpq.search(queries, 10)[1], exact, 10),
                               "p50_ms": _latency_ms(pq_search, queries)})
        print("ivfpq", table["ivfpq"][-1], flush=True)
    return table


def encode_latency(count: int = 100) -> float:
    """MiniLM's median time to encode one query (distinct AudioCaps val captions, after 10 unmeasured)."""
    import csv

    from fortekit.plugins import get_backbone

    encoder = get_backbone("minilm", device="cpu")
    val = REPO.parent / "shared" / "data" / "audiocaps" / "val.csv"
    with val.open(encoding="utf-8", newline="") as handle:
        texts = list(dict.fromkeys(row["caption"] for row in csv.DictReader(handle)))[:count + 10]
    for text in texts[:10]:
        encoder.encode_text([text])
    times = []
    for text in texts[10:]:
        start = time.perf_counter()
        encoder.encode_text([text])
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3)


def crossover(sizes: list[int]) -> list[dict[str, float]]:
    """The exact candidate pool (top 1,000) against HNSW's, single query, at each size (384-d, as MiniLM)."""
    import torch

    from fortekit.search.index.faiss_search import FaissSearcher
    from fortekit.search.index.search import exact_top_k

    encode_ms = encode_latency()
    table = []
    for items in sizes:
        rows, queries = _rows(items, 384)
        matrix = torch.from_numpy(rows)
        exact_ms = _latency_ms(lambda q, m=matrix: exact_top_k(m, torch.from_numpy(q), 1000), queries[:50])
        start = time.perf_counter()
        hnsw = FaissSearcher.build(rows, kind="hnsw")
        build_s = time.perf_counter() - start
        hnsw_ms = _latency_ms(lambda q, h=hnsw: h.search(q, 1000), queries[:50])
        pool_recall = _recall(hnsw.search(queries[:50], 1000)[1], _exact(rows, queries[:50], 1000), 1000)
        table.append({"items": items, "exact_pool_ms": exact_ms, "hnsw_pool_ms": hnsw_ms,
                      "hnsw_build_s": round(build_s, 1), "pool_recall@1000": pool_recall,
                      "minilm_encode_ms": encode_ms})
        print(table[-1], flush=True)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--crossover", action="store_true")
    parser.add_argument("--encode", action="store_true", help="only MiniLM's time to encode one query")
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--kinds", default="hnsw,ivfpq", help="the kinds --sweep measures")
    parser.add_argument("--sizes", default="25000,50000,100000,200000,400000")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not ROWS.is_file():
        raise SystemExit(f"{ROWS} is missing: run scripts/ann_bench.py --items 1000000 "
                         "--collections captions")
    print(f"ann_tuning: cpus {os.cpu_count()}, load average {[round(x, 2) for x in os.getloadavg()]}")
    figures: dict[str, object] = {}
    if args.sweep:
        figures["sweep"] = sweep(args.items, tuple(args.kinds.split(",")))
    if args.encode:
        figures["minilm_encode_ms"] = encode_latency()
        print(figures)
    if args.crossover:
        figures["crossover"] = crossover([int(size) for size in args.sizes.split(",")])
    print(f"load average at the end {[round(x, 2) for x in os.getloadavg()]}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
