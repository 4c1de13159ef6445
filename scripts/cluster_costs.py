"""Per-item costs on this CPU, the inputs of the cluster plan in docs/scale.md.

Each figure is measured in this process, one core's worth of work per item on this 2-core CPU
(``torch`` threads as set by ``--threads``):

* ``clap audio``: a full-size transformers CLAP (``ClapConfig()``: the layout of
  ``laion/clap-htsat-unfused``, HTSAT audio tower; randomly initialised: the cost depends on
  the layout, not on the weights), 10-second clips at 48 kHz through ``ClapFeatureExtractor``
  and ``get_audio_features``, in batches of ``--batch``;
* ``minilm text``: the bundled MiniLM embedding development captions in batches of 64;
* ``parse``: the caption parser Π on the same captions (spaCy, one at a time);
* ``refine offline``: Stage 1's offline regime (B, D) = (5, 4) with the lexical elaborator on
  development queries (AudioCaps val captions), one at a time.

Run::

    python scripts/cluster_costs.py
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def clap_audio_seconds(batch: int, batches: int) -> float:
    """Seconds a 10-second clip costs through a full-size CLAP's audio tower (median of batches)."""
    import torch
    from transformers import ClapConfig, ClapFeatureExtractor, ClapModel

    torch.manual_seed(0)
    model = ClapModel(ClapConfig()).eval()
    extractor = ClapFeatureExtractor(truncation="rand_trunc")  # the unfused model: one mel channel
    clips = [np.random.default_rng(i).uniform(-0.5, 0.5, 480_000).astype(np.float32) for i in range(batch)]
    times = []
    with torch.inference_mode():
        for _ in range(batches + 1):
            start = time.perf_counter()
            features = extractor(clips, sampling_rate=48_000, return_tensors="pt")
            model.get_audio_features(**features)
            times.append((time.perf_counter() - start) / batch)
    return statistics.median(times[1:])


def text_costs(count: int) -> tuple[float, float]:
    """Seconds an item costs to embed with MiniLM (batches of 64) and to parse with Π."""
    from default_latency import development_captions

    from fortekit.fol.caption import parse_caption
    from fortekit.plugins import get_backbone

    captions = list(dict.fromkeys(development_captions()))[:count]
    encoder = get_backbone("minilm", device="cpu")
    encoder.encode_text(captions[:8])
    start = time.perf_counter()
    for offset in range(0, len(captions), 64):
        encoder.encode_text(captions[offset:offset + 64])
    embed = (time.perf_counter() - start) / len(captions)
    parse_caption(captions[0])
    start = time.perf_counter()
    for caption in captions:
        parse_caption(caption)
    return embed, (time.perf_counter() - start) / len(captions)


def refine_seconds(count: int) -> float:
    """Seconds a query costs in Stage 1's offline regime (lexical elaborator), one at a time."""
    from fortekit.search import RefineConfig, Refiner

    with (DATA / "audiocaps" / "val.csv").open(encoding="utf-8", newline="") as handle:
        queries = list(dict.fromkeys(row["caption"] for row in csv.DictReader(handle)))[:count + 2]
    refiner = Refiner("minilm", "lexical", config=RefineConfig.offline())
    for query in queries[:2]:
        refiner.refine(query)
    start = time.perf_counter()
    for query in queries[2:]:
        refiner.refine(query)
    return (time.perf_counter() - start) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--captions", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    print(f"cluster_costs: cpus {os.cpu_count()}, torch threads {args.threads}, "
          f"load average {[round(x, 2) for x in os.getloadavg()]}", flush=True)
    embed, parse = text_costs(args.captions)
    print(f"minilm text    {1000 * embed:.2f} ms an item", flush=True)
    print(f"parse          {1000 * parse:.2f} ms a caption", flush=True)
    print(f"refine offline {1000 * refine_seconds(args.queries):.1f} ms a query", flush=True)
    clip = clap_audio_seconds(args.batch, args.batches)
    print(f"clap audio     {1000 * clip:.1f} ms a 10-s clip", flush=True)
    print(f"load average at the end {[round(x, 2) for x in os.getloadavg()]}")


if __name__ == "__main__":
    main()
