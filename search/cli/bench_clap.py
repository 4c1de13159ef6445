"""``fortekit bench train-clap``: train the small CLAP and its tagger on a generated collection.

Writes small_clap.{json,safetensors} (the ``small-clap`` backbone), tagger.{json,safetensors}
(the ``tagger`` captioner) and result.json to -o; one line per epoch goes to stdout.

Example:
    $ fortekit bench generate --n 2000 -o runs/gen2000
    $ fortekit bench train-clap --data runs/gen2000 -o runs/clap
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from fortekit.search.cli.common import add_output_option, add_quiet_option

__all__ = ["add_train_clap_action", "run_train_clap"]


def add_train_clap_action(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``train-clap`` on the sub-parsers of ``fortekit bench``.

    Args:
        actions: what ``add_subparsers()`` of the ``bench`` parser returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit bench")
        >>> add_train_clap_action(parser.add_subparsers(dest="action"))
        >>> args = parser.parse_args(["train-clap", "--data", "gen", "-o", "clap"])
        >>> args.epochs, args.batch_size, args.device
        (8, 128, 'auto')
    """
    train = actions.add_parser(
        "train-clap",
        help="train the small CLAP (log-mel CNN + frozen MiniLM) and its tagger on a generated collection",
        description="Train the small CLAP and the tagger captioner on a collection written by "
        "`fortekit bench generate` (see docs/soundclap.md). Writes small_clap.json/.safetensors, "
        "tagger.json/.safetensors and result.json to -o; log-mels and caption embeddings are "
        "cached in OUT/cache.",
    )
    train.add_argument("--data", required=True, type=Path, help="the generated collection (its folder)")
    add_output_option(train, dest="out", required=True, type=Path, metavar="DIR",
                      kind="folder", help="output folder")
    train.add_argument("--epochs", type=int, default=8, help="epochs (default 8)")
    train.add_argument("--batch-size", type=int, default=128, help="clips per step (default 128)")
    train.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    train.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
    train.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    add_quiet_option(train, help="print only the final figures")
    train.set_defaults(handler=run_train_clap)


def run_train_clap(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``bench train-clap``: exit code 0, 1 on bad input (a coded message on stderr)."""
    from fortekit.errors import FortekitError
    from fortekit.search.eval.bench.soundclap.config import TrainClapConfig
    from fortekit.search.eval.bench.soundclap.train import train_small_clap

    def log(line: str) -> None:
        print(line, file=out, flush=True)

    try:
        result = train_small_clap(
            args.data, args.out, epochs=args.epochs, batch_size=args.batch_size, seed=args.seed,
            device=args.device, config=TrainClapConfig(threads=args.threads), log=None if args.quiet else log,
        )
    except FortekitError as exc:
        print(f"fortekit: {exc}", file=sys.stderr)
        return 1
    recall = "  ".join(f"R@{k} {value:.4f} (chance {result.chance[k]:.4f})"
                       for k, value in result.val_recall.items())
    print(f"text-to-audio on {result.n_validation} validation clips: {recall}", file=out)
    if result.tag_f1 is not None:
        print(f"tagger: class F1 {result.tag_f1:.4f}", file=out)
    print(f"wrote {result.clap_config} and {result.tagger_config or 'no tagger'} "
          f"({result.seconds:.1f} s on {result.device})", file=out)
    return 0
