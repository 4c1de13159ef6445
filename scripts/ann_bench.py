"""Exact search against FAISS's HNSW and IVF-PQ at scale: build time, memory, bytes, latency, recall.

For each of two collections of ``--items`` unit rows of ``--dim`` dimensions,

* ``random``: Gaussian rows, normalised (no structure: the hardest case for an ANN index);
* ``captions``: MiniLM rows of real captions (AudioCaps train, Clotho development), repeated
  with Gaussian noise (sigma ``--noise``) up to ``--items`` and, for ``--dim`` other than 384,
  zero-padded (so the neighbourhoods are those of real captions);

it builds every kind (``exact``: the matrix product fortekit runs by default; ``hnsw``; ``ivfpq``)
and reports, per kind: build seconds, the peak memory of the process that loads the rows, builds
and searches (MB, ``ru_maxrss``; each kind runs in a fresh subprocess, so the rows themselves,
``items x dim x 4`` bytes, are part of every kind's peak), bytes per item (the FAISS
index serialised, or the float32 rows for exact), single-query latency p50/p95 (ms, ``--queries``
queries one at a time), batch throughput (queries/s, all queries at once), and recall@10 and
recall@100 against the exact top 100. Queries are other rows of the same kind (held out).

Run::

    python scripts/ann_bench.py --items 200000 --dim 512 --json runs/ann_200k.json
    python scripts/ann_bench.py --items 1000000 --dim 512     # about an hour on 2 cores

Figures in docs/scale.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
KINDS = ("exact", "hnsw", "ivfpq")


def _captions(limit: int) -> list[str]:
    """The first ``limit`` distinct captions of scripts/default_latency.py's development captions."""
    from default_latency import development_captions  # beside this script

    return list(dict.fromkeys(development_captions()))[:limit]


def make_rows(name: str, items: int, queries: int, dim: int, noise: float, cache: Path) -> Path:
    """Write (items + queries, dim) float32 unit rows to ``cache`` once; the last ``queries`` are queries."""
    path = cache / f"{name}_{items}_{queries}_{dim}.npy"
    if path.is_file():
        return path
    rng = np.random.default_rng(0)
    total = items + queries
    if name == "random":
        rows = rng.standard_normal((total, dim), dtype=np.float32)
    else:
        from fortekit.plugins import get_backbone

        base = np.asarray(get_backbone("minilm", device="cpu").encode_text(_captions(20_000)), np.float32)
        picks = rng.integers(0, len(base), size=total)
        rows = np.zeros((total, dim), dtype=np.float32)
        width = min(dim, base.shape[1])
        for start in range(0, total, 100_000):
            chunk = slice(start, min(total, start + 100_000))
            rows[chunk, :width] = base[picks[chunk], :width]
            rows[chunk] += rng.standard_normal(rows[chunk].shape, dtype=np.float32) * noise
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, rows)
    return path


def measure(path: Path, items: int, kind: str, k: int = 100) -> dict[str, float]:
    """Build one kind over the rows in ``path`` and time it (run in a subprocess of its own)."""
    import faiss
    import torch

    from fortekit.search.index.faiss_search import COMPRESSED_KINDS, FaissSearcher, rescore, rescored_pool
    from fortekit.search.index.search import exact_top_k

    data = np.load(path, mmap_mode="r")
    rows, queries = np.ascontiguousarray(data[:items]), np.ascontiguousarray(data[items:])
    tick = time.perf_counter()
    if kind == "exact":
        matrix = torch.from_numpy(rows)

        def search(batch: np.ndarray, top: int) -> np.ndarray:
            return exact_top_k(matrix, torch.from_numpy(batch), top)[1].numpy()

        size = rows.nbytes
    else:
        searcher = FaissSearcher.build(rows, kind=kind)

        def search(batch: np.ndarray, top: int) -> np.ndarray:
            if kind in COMPRESSED_KINDS:  # as AudioIndex.search answers: a wider pool re-scored exactly
                return rescore(rows, batch, searcher.search(batch, rescored_pool(top))[1], top)[1]
            return searcher.search(batch, top)[1]

        size = int(faiss.serialize_index(searcher.index).nbytes)
    build_s = time.perf_counter() - tick
    single = []
    for row in queries:
        start = time.perf_counter()
        search(row[None, :], 10)
        single.append((time.perf_counter() - start) * 1000)
    start = time.perf_counter()
    found = search(queries, k)
    batch_s = time.perf_counter() - start
    np.save(path.with_suffix(f".{kind}.npy"), found)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"build_s": round(build_s, 2), "peak_mb": round(peak, 1),
            "bytes_per_item": round(size / items, 1),
            "single_p50_ms": round(statistics.median(single), 3),
            "single_p95_ms": round(float(np.percentile(single, 95)), 3),
            "batch_queries_per_s": round(len(queries) / batch_s, 1)}


def recall(found: np.ndarray, exact: np.ndarray, k: int) -> float:
    """The mean share of the exact top k that ``found``'s top k holds."""
    shares = [len(set(a[:k]) & set(b[:k])) / k for a, b in zip(found, exact, strict=True)]
    return round(float(np.mean(shares)), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--collections", default="random,captions")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="the kinds to measure (exact's answers, cached beside the rows, are reused)")
    parser.add_argument("--cache", type=Path, default=REPO / "runs" / "ann")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--one", nargs=3, metavar=("PATH", "ITEMS", "KIND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # the child process: one kind, its figures on stdout
        print(json.dumps(measure(Path(args.one[0]), int(args.one[1]), args.one[2])))
        return
    print(f"ann_bench: {args.items} items x {args.dim}, {args.queries} queries; cpus {os.cpu_count()}, "
          f"load average {[round(x, 2) for x in os.getloadavg()]}", flush=True)
    figures: dict[str, dict[str, dict[str, float]]] = {}
    for name in args.collections.split(","):
        path = make_rows(name, args.items, args.queries, args.dim, args.noise, args.cache)
        figures[name] = {}
        kinds = [kind for kind in KINDS if kind in args.kinds.split(",")]
        if "exact" not in kinds and not path.with_suffix(".exact.npy").is_file():
            kinds.insert(0, "exact")
        for kind in kinds:
            done = subprocess.run([sys.executable, __file__, "--one", str(path), str(args.items), kind],
                                  check=True, capture_output=True, text=True)
            figures[name][kind] = json.loads(done.stdout.strip().splitlines()[-1])
        exact = np.load(path.with_suffix(".exact.npy"))
        for kind in kinds:
            found = np.load(path.with_suffix(f".{kind}.npy"))
            row = figures[name][kind]
            row.update({"recall@10": recall(found, exact, 10), "recall@100": recall(found, exact, 100)})
            shown = "  ".join(f"{key} {value}" for key, value in row.items())
            print(f"{name:9} {kind:6} {shown}", flush=True)
    print(f"load average at the end {[round(x, 2) for x in os.getloadavg()]}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"items": args.items, "dim": args.dim, "queries": args.queries,
                                         "noise": args.noise, "figures": figures}, indent=2))


if __name__ == "__main__":
    main()
