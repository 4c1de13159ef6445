"""Measure what freezing the loaded models out of the garbage collector would save Stage 1.

Loading WordNet (through NLTK), spaCy and MiniLM leaves about 834,000 tracked objects
that every full collection walks (0.5-0.6 s each here). :func:`gc.freeze` after loading
would exempt them. This script runs Stage 1 (real MiniLM, lexical elaborator) over the first N
captions of a caption CSV, in batches as fol-refine does, once as the process starts
(``default``) and once frozen (``frozen``), each in a fresh process, and prints the time
spent outside the encoder, the number of full (generation 2) collections, and the share
of the run's wall time outside the encoder::

    python scripts/gc_freeze_check.py ../shared/data/audiocaps/val.csv --queries 200 --preset online
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _one(
    captions: Path, column: str, queries: int, preset: str, mode: str, batch_size: int,
) -> dict[str, Any]:
    from fortekit.search import RefineConfig, Refiner
    from fortekit.search.stage1.relations import read_caption_column

    texts = list(dict.fromkeys(read_caption_column(captions, column)))[:queries]
    refiner = Refiner("minilm", "lexical", config=getattr(RefineConfig, preset)(), device="cpu")
    refiner.refine("a dog barks")  # loads what the first query loads, as fol-refine's first batch
    if mode == "frozen":
        gc.collect()
        gc.freeze()
    tracked = len(gc.get_objects())
    full: list[float] = []  # seconds of each full (generation 2) collection
    began = [0.0]

    def count(phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            full.append(time.perf_counter() - began[0])

    gc.callbacks.append(count)
    refiner.times.reset()
    refiner.encoder.stats.reset()
    started = time.perf_counter()
    for start in range(0, len(texts), batch_size):
        refiner.refine_many(texts[start:start + batch_size], batch_size=batch_size)
    wall = time.perf_counter() - started
    outside = wall - refiner.encoder.stats.seconds
    return {"queries": len(texts), "wall_s": wall, "outside_encoder_s": outside,
            "outside_share": outside / wall, "full_collections": len(full),
            "full_collection_s": sum(full) / len(full) if full else 0.0, "tracked_objects": tracked}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("captions", type=Path, help="a CSV with a caption column (AudioCaps val, say)")
    parser.add_argument("--column", default="caption")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--preset", choices=["online", "offline"], default="online")
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--mode", choices=["default", "frozen"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(_one(args.captions, args.column, args.queries, args.preset, args.mode,
                              args.batch_size)))
        return 0
    print(f"{args.preset}, {args.queries} queries, batches of {args.batch_size}")
    for mode in ("default", "frozen"):
        command = [sys.executable, __file__, *sys.argv[1:], "--mode", mode]
        line = subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()
        figures = json.loads(line.splitlines()[-1])
        print(f"  {mode:8s} wall {figures['wall_s']:7.2f} s, outside the encoder "
              f"{figures['outside_encoder_s']:6.2f} s ({figures['outside_share']:.1%}), "
              f"full collections {figures['full_collections']} "
              f"({figures['full_collection_s']:.2f} s each, {figures['tracked_objects']:,} objects tracked "
              "before the run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
