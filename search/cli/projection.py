"""``fortekit train-projection``: train the Stage 2 head h_psi from a safetensors data file.

The data file holds float tensors ``query`` (n, d) (refined queries q*), ``audio`` (n, d) and
optionally ``negative`` (n, d); write it with :func:`fortekit.search.projection.head.save_projection_data`.
Per-epoch lines go to stdout, the progress bar to stderr; an interrupted run resumes from its last
finished epoch when run again with the same arguments.

Example:
    $ fortekit train-projection --train clotho_train.safetensors --validation clotho_val.safetensors \\
        -o runs/clotho-minilm
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from fortekit.search.cli.common import add_output_option, add_quiet_option, add_threads_option

if TYPE_CHECKING:
    from fortekit.search.projection.checkpoint import EpochStats

__all__ = ["add_projection_commands", "run_train_projection"]


def add_projection_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit train-projection`` on the ``fortekit`` sub-parsers.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_projection_commands(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["train-projection", "--train", "t.safetensors", "-o", "o"]).epochs
        20
    """
    train = commands.add_parser(
        "train-projection",
        help="train the Stage 2 projection h_psi (InfoNCE + mu L_logic) and save it as safetensors",
        description="Train h_psi on a safetensors file of tensors 'query' (q*), 'audio' and optional "
        "'negative' (see docs/projection.md). Writes projection.safetensors and projection.json to -o "
        "and a checkpoint after every epoch; a re-run resumes from it.",
    )
    train.add_argument("--train", required=True, type=Path, help="training data (.safetensors)")
    add_output_option(train, dest="out", required=True, type=Path, metavar="DIR",
                      kind="folder", help="output directory")
    train.add_argument("--validation", type=Path, help="validation data for the per-epoch R@1")
    train.add_argument("--epochs", type=int, default=20, help="epochs (default 20)")
    train.add_argument("--batch-size", type=int, default=128, help="batch size (default 128)")
    train.add_argument("--lr", type=float, default=1e-4, help="peak learning rate (default 1e-4)")
    train.add_argument("--mu", type=float, default=0.1, help="weight of L_logic (default 0.1)")
    train.add_argument("--weight-decay", type=float, default=1e-2, help="AdamW weight decay (default 1e-2)")
    train.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    train.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
    add_threads_option(train)
    train.add_argument("--no-resume", action="store_true", help="start over even if -o has a checkpoint")
    add_quiet_option(train, help="no progress bar", bars=True)
    train.set_defaults(handler=run_train_projection)


def run_train_projection(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``train-projection``: exit code 0, 1 on bad input, 130 when interrupted."""
    from fortekit.errors import Errors, FortekitError
    from fortekit.search.projection.checkpoint import CHECKPOINT_NAME
    from fortekit.search.projection.head import ProjectionConfig, load_projection_data
    from fortekit.search.projection.training import train_projection

    def report_epoch(stats: EpochStats) -> None:
        r1 = "-" if stats.val_r1 is None else f"{stats.val_r1:.4f}"
        print(f"{stats.epoch:>5}  {stats.loss:8.4f}  {stats.align:8.4f}  {stats.logic:8.4f}  "
              f"{stats.temperature:6.4f}  {stats.lr:9.3g}  {r1:>6}", file=out, flush=True)

    try:
        train = load_projection_data(args.train)
        validation = None if args.validation is None else load_projection_data(args.validation)
        config = ProjectionConfig(
            dim=train.dim, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, mu=args.mu,
            weight_decay=args.weight_decay, seed=args.seed,
        )
        print(f"training h_psi on {train.size} items (d={train.dim})"
              f"{'' if validation is None else f', validating on {validation.size}'}", file=out)
        print("epoch      loss     align     logic   gamma         lr    R@1", file=out, flush=True)
        report = train_projection(
            train, config=config, validation=validation, out_dir=args.out, device=args.device,
            resume=not args.no_resume, progress=not args.quiet, on_epoch_end=report_epoch,
        )
    except FortekitError as exc:
        print(f"fortekit: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        done = _finished_epoch(args.out / f"{CHECKPOINT_NAME}.json")
        print(f"fortekit: {Errors.E471.format(epoch=done + 1, done=done, path=args.out)}", file=sys.stderr)
        return 130
    if report.start_epoch:
        print(f"resumed after epoch {report.start_epoch} of {config.epochs}", file=out)
    if report.baseline_r1 is not None:
        print(f"validation R@1: unprojected {report.baseline_r1:.4f}, untrained head "
              f"{report.initial_r1:.4f}, trained {report.final_r1:.4f}", file=out)
    print(f"wrote {report.weights_path} and {report.config_path} (device {report.device})", file=out)
    return 0


def _finished_epoch(path: Path) -> int:
    """The epoch the checkpoint holds (0 when there is none yet)."""
    try:
        return int(json.loads(path.read_text(encoding="utf-8"))["epoch"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0
