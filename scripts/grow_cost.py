"""What ``index add`` of 1% new items costs against rebuilding the whole index.

Both paths embed with MiniLM, parse the captions and build an HNSW part, in this process:

* ``rebuild``: ``AudioIndex.from_captions`` over all ``--items`` * 1.01 captions, ``build_faiss("hnsw")``,
  ``save`` (what a user without ``index add`` runs);
* ``add``: ``AudioIndex.from_captions`` over the 1% new captions and
  :func:`~fortekit.search.index.growing.add_to_index` into the index of the others (the shard's
  own HNSW part, the old files hard-linked, the folder swapped in).

The captions: distinct development captions (AudioCaps train, Clotho development; see
scripts/default_latency.py). It prints both times and their ratio (the goal: add <= 2% of a
rebuild), and that the grown index holds the same items as the rebuilt one.

Run::

    python scripts/grow_cost.py --items 10000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--share", type=float, default=0.01)
    args = parser.parse_args()
    from default_latency import development_captions

    from fortekit.plugins import get_backbone
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.growing import add_to_index

    added = max(1, round(args.items * args.share))
    captions = list(dict.fromkeys(development_captions()))[:args.items + added]
    ids = [f"c{i}" for i in range(len(captions))]
    backbone = get_backbone("minilm", device="cpu")
    backbone.encode_text(["warm up"])
    print(f"grow_cost: {args.items} items + {added}; cpus {os.cpu_count()}, "
          f"load average {[round(x, 2) for x in os.getloadavg()]}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        old = AudioIndex.from_captions(ids[:args.items], captions[:args.items], backbone)
        old.build_faiss("hnsw")
        folder = old.save(Path(scratch) / "grown.index")

        tick = time.perf_counter()
        rebuilt = AudioIndex.from_captions(ids, captions, backbone)
        rebuilt.build_faiss("hnsw")
        rebuilt.save(Path(scratch) / "rebuilt.index")
        rebuild_s = time.perf_counter() - tick

        tick = time.perf_counter()
        add_to_index(folder, AudioIndex.from_captions(ids[args.items:], captions[args.items:], backbone))
        add_s = time.perf_counter() - tick

        grown = AudioIndex.load(folder)
        same = grown.ids == rebuilt.ids and grown.predicate_sets == rebuilt.predicate_sets
    print(f"rebuild {rebuild_s:.2f} s; add {add_s:.2f} s; add / rebuild {100 * add_s / rebuild_s:.2f}%; "
          f"same items and predicates: {same}")
    print(f"load average at the end {[round(x, 2) for x in os.getloadavg()]}")


if __name__ == "__main__":
    main()
