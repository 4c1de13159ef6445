"""Warm latency of the default pipeline at 100,000 caption-indexed items, against its parts.

Figures in docs/defaults.md.

The index: the captions of AudioCaps train and Clotho development (64,303; repeated, under
their own ids, up to ``--items``), embedded with the bundled MiniLM and parsed once, built
with :meth:`fortekit.search.index.audio_index.AudioIndex.from_captions` and kept in ``--cache``
(the first run builds it: minutes). The queries: captions of AudioCaps val (a development
part), one at a time, after ``--warm`` unmeasured ones, each system on the same queries in
the same process:

* ``first pass``: every stage off (the encoder and the exact top k: the floor);
* ``formula+S3``: formula scoring and Stage 3 (the default before the defaults depended on the
  kind of index);
* ``default``: ``Retriever(index)``: what ``fortekit search`` does on a caption index;
* ``default-S1``: the default without Stage 1.

It prints p50, p95 and the mean per system in milliseconds, and the machine's thread count.

Run::

    python scripts/default_latency.py                        # 100,000 items, 200 queries
    python scripts/default_latency.py --items 20000 --queries 50
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"


def development_captions() -> list[str]:
    """The captions of AudioCaps train and Clotho development (64,303), in file order."""
    texts: list[str] = []
    with (DATA / "audiocaps" / "train.csv").open(encoding="utf-8", newline="") as handle:
        texts += [row["caption"] for row in csv.DictReader(handle)]
    with (DATA / "clotho" / "clotho_captions_development.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            texts += [row[f"caption_{i}"] for i in range(1, 6)]
    return texts


def _captions(limit: int) -> list[str]:
    texts = development_captions()
    return [texts[i % len(texts)] for i in range(limit)]


def _index(items: int, cache: Path):  # type: ignore[no-untyped-def]
    from fortekit.search.index.audio_index import AudioIndex

    folder = cache / f"captions_{items}.index"
    if (folder / "index.json").is_file():
        return AudioIndex.load(folder)
    captions = _captions(items)
    unique = list(dict.fromkeys(captions))
    print(f"building {items} items ({len(unique)} distinct captions) into {folder} ...", flush=True)
    tick = time.perf_counter()
    built = AudioIndex.from_captions([f"u{i}" for i in range(len(unique))], unique, "minilm", progress=True)
    row = {caption: i for i, caption in enumerate(unique)}
    order = [row[caption] for caption in captions]
    index = AudioIndex.from_captions(
        [f"item{i}" for i in range(items)], captions, "minilm", embeddings=built.embeddings[order],
        predicate_sets=[built.predicate_sets[i] for i in order],
    )
    index.save(folder, overwrite=True)
    print(f"built in {time.perf_counter() - tick:.0f} s", flush=True)
    return AudioIndex.load(folder)


def _queries(count: int) -> list[str]:
    with (DATA / "audiocaps" / "val.csv").open(encoding="utf-8", newline="") as handle:
        texts = [row["caption"] for row in csv.DictReader(handle)]
    return list(dict.fromkeys(texts))[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warm", type=int, default=20)
    parser.add_argument("--cache", type=Path, default=REPO / "runs" / "latency")
    args = parser.parse_args()

    import torch

    from fortekit.plugins import get_backbone
    from fortekit.search.pipeline import PipelineSpec
    from fortekit.search.retriever import Retriever

    index = _index(args.items, args.cache)
    backbone = get_backbone("minilm", device="cpu")
    systems = {
        "first pass": Retriever(index, PipelineSpec(stage1=None, projection=None, formula=None, rerank=None),
                                backbone=backbone),
        "formula+S3": Retriever(index, PipelineSpec(stage1=None, projection=None), backbone=backbone),
        "default": Retriever(index, backbone=backbone),
        "default-S1": Retriever(index, PipelineSpec(stage1=None), backbone=backbone),
    }
    queries = _queries(args.queries + args.warm)
    warm, measured = queries[:args.warm], queries[args.warm:]
    print(f"{len(index)} items, {len(measured)} queries one at a time, torch threads "
          f"{torch.get_num_threads()}, cpus {os.cpu_count()}")
    print(f"default pipeline: {', '.join(systems['default'].pipeline.running)}")
    for name, retriever in systems.items():
        for text in warm:
            retriever.search(text, k=10)
        times = []
        for text in measured:
            tick = time.perf_counter()
            retriever.search(text, k=10)
            times.append(1000 * (time.perf_counter() - tick))
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        print(f"{name:<12} p50 {statistics.median(times):7.1f} ms  p95 {p95:7.1f} ms  "
              f"mean {statistics.fmean(times):7.1f} ms", flush=True)


if __name__ == "__main__":
    main()
