"""Train the Stage 2 head that ships for the default encoder ``minilm`` (reproducible for a seed).

It trains exactly as ``fortekit eval --test CLOTHO_DEV --n-train 2000`` trains its Stage 2
(:meth:`fortekit.search.eval.benchmark.CaptionBenchmark.train_stage2`): backbone minilm,
Clotho development clips 1-2,000 only (the benchmark's training part; clips 2,001-2,893 are
the reporting part and stay unseen), item text "mean" (captions 2-5 averaged), Stage 1's
online configuration with the corpus elaborator and feedback anchors giving the training
queries q*, 20 epochs, batch 128, seed 0, on the CPU. It writes into ``--out``:

* ``projection.safetensors`` and ``projection.json`` (:func:`save_projection`; the JSON's
  ``training`` block records the data file and its SHA-256, the clips, the settings, the
  versions and this command line);
* ``training_captions.txt``: the sorted distinct hashes
  (:func:`fortekit.search.projection.shipped.caption_hash`) of every caption (all five per
  clip) of the training clips, for the evaluation's contamination guard.

The per-epoch wall times are left out of the history, so two runs with one seed write the
same bytes. Usage (from the repository root)::

    .venv/bin/python scripts/train_default_head.py \\
        --data ../shared/data/clotho/clotho_captions_development.csv
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fortekit import __version__
from fortekit.safe_write import atomic_write_text
from fortekit.search.eval.benchmark import CaptionBenchmark
from fortekit.search.eval.data import file_sha256, load_split
from fortekit.search.eval.evaluate import EvalSettings
from fortekit.search.projection.files import load_projection, read_projection_config, save_projection
from fortekit.search.projection.head import ProjectionConfig
from fortekit.search.projection.shipped import TRAINING_CAPTIONS_NAME, caption_hash
from fortekit.search.stage1.config import RefineConfig

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "search" / "projection" / "shipped" / "minilm"
DEFAULT_DATA = Path("../shared/data/clotho/clotho_captions_development.csv")
SCRIPT = "scripts/train_default_head.py"
N_TRAIN = 2000
BACKBONE = "minilm"
ANCHORS = ("feedback",)
ELABORATOR = "corpus"
ITEM_TEXT = "mean"


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the Clotho development caption CSV")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="output folder (default: the package's search/projection/shipped/minilm)")
    parser.add_argument("--seed", type=int, default=0, help="Stage 2's seed (default 0)")
    parser.add_argument("--epochs", type=int, default=20, help="Stage 2 epochs (default 20)")
    parser.add_argument("--batch-size", type=int, default=128, help="Stage 2 batch size (default 128)")
    parser.add_argument("--device", default="cpu", help="where to encode and train (default cpu)")
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for the benchmark's Stage 1 cache and raw head (default: a temporary "
                        "one)")
    return parser.parse_args(argv)


def training_captions(data: Path) -> tuple[list[str], int, list[str]]:
    """(sorted distinct caption hashes, number of captions, clip ids) of the training clips."""
    split = load_split(data, None, n_train=N_TRAIN, limit_test=2)
    captions = [caption for clip in split.train for caption in clip.captions]
    return sorted({caption_hash(caption) for caption in captions}), len(captions), [
        clip.clip_id for clip in split.train
    ]


def train(args: argparse.Namespace, work: Path, log: Any) -> dict[str, Any]:
    """Run the benchmark's Stage 2 training in ``work``; return its projection.json and summary."""
    settings = EvalSettings(
        test=args.data, out=work, n_train=N_TRAIN, limit_test=2, item_text=ITEM_TEXT, backbone=BACKBONE,
        device=args.device, epochs=args.epochs, batch_size=args.batch_size, anchors=ANCHORS,
        elaborator=ELABORATOR, refine=RefineConfig.online(), directions=("t2a",), umap=False,
        seed=args.seed,
    )
    bench = CaptionBenchmark(settings, log=log)
    bench.summary["data"] = {"test": {"path": str(args.data.resolve()), "sha256": file_sha256(args.data)},
                             "train": None}
    bench.prepare()
    bench.train_stage2()
    stage1 = bench.stage1[f"train-{bench.primary}"]
    return {
        "document": read_projection_config(work / "projection"), "weights": work / "projection",
        "clip_ids": list(bench.train.task.clip_ids), "summary": bench.summary["stage2"],
        "refined": stage1.refined, "settings": settings,
    }


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    started = time.perf_counter()

    def log(line: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {line}", file=sys.stderr, flush=True)

    import torch

    hashes, n_captions, clip_ids = training_captions(args.data)
    with tempfile.TemporaryDirectory(prefix="fortekit-head-") as scratch:
        work = args.work or Path(scratch)
        result = train(args, work, log)
        head = load_projection(result["weights"])
    if result["clip_ids"] != clip_ids:
        raise SystemExit("the benchmark's training items are not Clotho development clips 1-2000")
    document, settings = result["document"], result["settings"]
    training = {
        "data": {"file": args.data.name, "sha256": file_sha256(args.data)},
        "clips": f"clotho development clips 1-{N_TRAIN}",
        "n_clips": len(clip_ids), "first_clip": clip_ids[0], "last_clip": clip_ids[-1],
        "captions": n_captions, "distinct_caption_hashes": len(hashes),
        "unseen": "clotho development clips 2001-2893 (the benchmark's reporting part)",
        "backbone": BACKBONE, "item_text": ITEM_TEXT,
        "stage1": {"anchors": list(ANCHORS), "elaborator": ELABORATOR, "config": settings.refine.to_dict(),
                   "refined": result["refined"]},
        "epochs": args.epochs, "batch_size": int(result["summary"]["batch_size"]), "seed": args.seed,
        "device": args.device, "final_loss": result["summary"]["final_loss"],
        "versions": {"torch": torch.__version__, "fortekit": __version__},
        "command": shlex.join(["python", SCRIPT, *(sys.argv[1:] if argv is None else argv)]),
    }
    history = [{k: v for k, v in record.items() if k != "seconds"} for record in document["history"]]
    config = ProjectionConfig.from_dict(document["config"])
    weights = save_projection(head, args.out, config=config, history=history, extra={
        "baseline_r1": document.get("baseline_r1"), "initial_r1": document.get("initial_r1"),
        "training": training,
    })
    atomic_write_text(args.out / TRAINING_CAPTIONS_NAME, "\n".join(hashes) + "\n")
    last = history[-1]
    log(f"wrote {weights} ({weights.stat().st_size} bytes) and {TRAINING_CAPTIONS_NAME} "
        f"({len(hashes)} hashes of {n_captions} captions); final loss {last['loss']:.4f}, "
        f"temperature {last['temperature']:.4f}, {result['refined']:.0%} of the training queries refined")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
