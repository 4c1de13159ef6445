"""``fortekit bench stage2-data``: Stage 2 training pairs from a generated collection's training clips.

Writes one safetensors file of tensors ``query`` (f_T of each training caption) and ``audio``
(the backbone's embedding of the clip) for ``fortekit train-projection --train FILE``; the
head it trains is then passed to ``fortekit eval --beir --projection``. Only the ``train``
split is read (docs/results.md, "Audio, end to end").

Example:
    $ fortekit bench stage2-data --data runs/gen2000 --backbone small-clap \\
        --backbone-option model=runs/clap -o runs/stage2/train.safetensors
    $ fortekit train-projection --train runs/stage2/train.safetensors -o runs/stage2
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from fortekit.search.cli.common import add_output_option
from fortekit.search.cli.options import option_type

__all__ = ["add_stage2_data_action", "run_stage2_data"]


def add_stage2_data_action(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``stage2-data`` on the sub-parsers of ``fortekit bench``.

    Args:
        actions: what ``add_subparsers()`` of the ``bench`` parser returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit bench")
        >>> add_stage2_data_action(parser.add_subparsers(dest="action"))
        >>> args = parser.parse_args(["stage2-data", "--data", "gen", "-o", "t.safetensors",
        ...                           "--backbone-option", "model=clap"])
        >>> args.backbone, dict(args.backbone_option), args.captions_per_clip, args.split
        ('small-clap', {'model': 'clap'}, 2, 'train')
    """
    action = actions.add_parser(
        "stage2-data",
        help="Stage 2 training pairs (caption, clip) of a generated collection's training clips",
        description="Encode the training clips of a generated collection with an audio-text backbone "
        "and their captions with its text encoder; write query/audio tensors as safetensors for "
        "`fortekit train-projection --train FILE`.",
    )
    action.add_argument("--data", required=True, type=Path, help="the generated collection (its folder)")
    add_output_option(action, dest="out", required=True, type=Path, metavar="FILE",
                      help="the .safetensors file to write")
    action.add_argument("--overwrite", action="store_true", help="replace an existing -o file (else E746)")
    action.add_argument("--backbone", default="small-clap", help="audio-text backbone (default small-clap)")
    action.add_argument("--backbone-option", action="append", metavar="KEY=VALUE",
                        type=option_type("--backbone-option"),
                        help="an option of the backbone, repeatable (e.g. model=runs/clap)")
    action.add_argument("--split", default="train", help="which clips (default train)")
    action.add_argument("--captions-per-clip", type=int, default=2,
                        help="captions of each clip that become rows, 1-5 (default 2)")
    action.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
    action.set_defaults(handler=run_stage2_data)


def run_stage2_data(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``bench stage2-data``: exit code 0, 1 on bad input (a coded message on stderr)."""
    from fortekit.errors import FortekitError
    from fortekit.plugins import get_backbone
    from fortekit.safe_write import check_not_input
    from fortekit.search.cli.options import option_paths
    from fortekit.search.eval.bench.soundclap.stage2_data import stage2_data
    from fortekit.search.projection.data import save_projection_data

    options = dict(args.backbone_option or [])
    # inputs: the collection's existing files and any model file or folder an option names
    inputs: list[tuple[str, Path]] = list(option_paths(options.items()).items())
    if Path(args.out).exists() and not str(args.out).endswith(".safetensors"):
        inputs.append(("generated collection", Path(args.data)))  # a file of it, not an earlier output
    try:
        check_not_input(args.out, inputs)
        backbone = get_backbone(args.backbone, **{"device": args.device, **options})
        data = stage2_data(args.data, backbone, split=args.split, captions_per_clip=args.captions_per_clip)
        path = save_projection_data(args.out, data, metadata={
            "backbone": args.backbone, "collection": str(args.data), "split": args.split,
        })
    except FortekitError as exc:
        print(f"fortekit: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {path}: {data.size} pairs (d={data.dim}) of the {args.split} clips of {args.data}",
          file=out)
    return 0
