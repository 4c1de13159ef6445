"""FAISS against USearch for the ANN index: the measurement behind the choice in docs/scale.md.

Both build an HNSW graph with the same shape (32 links a node, 80 candidates while building,
128 while searching) over the same rows, the ``captions`` rows of scripts/ann_bench.py (MiniLM
rows of development captions repeated with noise, 512-d; made by ann_bench.py), and USearch
also with int8 and binary (b1) scalar quantisation, its ways to save memory. Printed per
index: build seconds, bytes an item (serialised), single-query latency p50 (top 10), and
recall@10 against exact. USearch is not a dependency of fortekit: ``pip install usearch`` first.

Run::

    python scripts/ann_choice.py --items 200000
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

ROWS = Path(__file__).resolve().parents[1] / "runs" / "ann" / "captions_1000000_200_512.npy"


def _recall(found: np.ndarray, exact: np.ndarray) -> float:
    shares = [len(set(a[:10]) & set(b[:10])) / 10 for a, b in zip(found, exact, strict=True)]
    return round(float(np.mean(shares)), 4)


def _single_ms(search, queries: np.ndarray) -> float:  # type: ignore[no-untyped-def]
    times = []
    for row in queries:
        start = time.perf_counter()
        search(row[None, :])
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=200_000)
    args = parser.parse_args()
    from usearch.index import Index

    from fortekit.search.index.faiss_search import FaissSearcher, _exact_top

    data = np.load(ROWS, mmap_mode="r")
    rows, queries = np.ascontiguousarray(data[:args.items]), np.ascontiguousarray(data[-200:])
    exact = _exact_top(rows, queries, 10)
    print(f"ann_choice: {args.items} rows; cpus {os.cpu_count()}, load average "
          f"{[round(x, 2) for x in os.getloadavg()]}", flush=True)
    start = time.perf_counter()
    faiss_index = FaissSearcher.build(rows, kind="hnsw", ef_search=128)
    built = time.perf_counter() - start
    import faiss

    size = faiss.serialize_index(faiss_index.index).nbytes / args.items
    print(f"faiss hnsw      build {built:.1f} s  {size:.0f} B/item  "
          f"p50 {_single_ms(lambda q: faiss_index.search(q, 10), queries)} ms  "
          f"recall@10 {_recall(faiss_index.search(queries, 10)[1], exact)}", flush=True)
    for dtype in ("f32", "i8", "b1"):
        index = Index(ndim=rows.shape[1], metric="ip" if dtype != "b1" else "hamming", dtype=dtype,
                      connectivity=32, expansion_add=80, expansion_search=128)
        keys = np.arange(args.items)
        start = time.perf_counter()
        index.add(keys, rows if dtype != "b1" else np.packbits(rows > 0, axis=1), threads=os.cpu_count() or 1)
        built = time.perf_counter() - start
        with tempfile.TemporaryDirectory() as scratch:
            index.save(os.path.join(scratch, "u.index"))
            size = os.path.getsize(os.path.join(scratch, "u.index")) / args.items
        asked = queries if dtype != "b1" else np.packbits(queries > 0, axis=1)
        found = index.search(asked, 10).keys
        single = _single_ms(lambda q, i=index: i.search(q, 10), asked)
        print(f"usearch {dtype:<7} build {built:.1f} s  {size:.0f} B/item  p50 {single} ms  "
              f"recall@10 {_recall(np.asarray(found), exact)}", flush=True)


if __name__ == "__main__":
    main()
