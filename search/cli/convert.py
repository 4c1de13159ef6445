"""``fortekit convert``: ``fortekit convert laion-clap CKPT OUT_DIR``.

Turns an original LAION-CLAP checkpoint into a transformers CLAP folder that the
``hf-clap`` backbone loads (:mod:`fortekit.plugins.backbones.laion_convert`). The handler
follows the CLI convention ``handler(args, out) -> exit code``: 0 converted, 1 a coded
error on stderr (no traceback), 130 interrupted.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="fortekit")
    >>> _ = add_convert_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["convert", "laion-clap", "ckpt.pt", "out", "--trust-pickle"])
    >>> args.trust_pickle, args.format
    (True, 'laion-clap')
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from fortekit.search.cli.output_options import OutputPath

__all__ = ["add_convert_commands", "run_convert_laion_clap"]


def run_convert_laion_clap(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``convert laion-clap``: 0 converted, 1 on a coded error, 130 on Ctrl-C."""
    from fortekit.errors import FortekitError

    try:
        from fortekit.plugins.backbones.laion_convert import convert_laion_clap

        report = convert_laion_clap(
            args.checkpoint,
            args.out_dir,
            tokenizer=args.tokenizer,
            trust_pickle=args.trust_pickle,
            text_heads=args.text_heads,
            overwrite=args.overwrite,
        )
    except FortekitError as exc:
        print(f"fortekit convert: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "fortekit convert: interrupted; the output folder may be incomplete, run the command again "
            "with --overwrite",
            file=sys.stderr,
        )
        return 130
    kind = "fused" if report.fusion else "unfused"
    print(
        f"converted {args.checkpoint} ({report.audio_model}, {kind}, {report.parameters:,} parameters) "
        f"to {report.out_dir}",
        file=out,
    )
    print(
        f"  left out {len(report.dropped)} weights inference does not use (mel front end, classifier, "
        f"training MLPs)",
        file=out,
    )
    print(
        f"  use it: get_backbone('hf-clap', model='{report.out_dir}'), or --backbone hf-clap "
        f"--backbone-option model={report.out_dir}",
        file=out,
    )
    return 0


def add_convert_commands(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``convert`` (with its one format, ``laion-clap``) to an ``add_subparsers()`` object.

    Args:
        subparsers: what ``ArgumentParser.add_subparsers()`` returned.

    Returns:
        The ``convert`` sub-parser.

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser()
        >>> _ = add_convert_commands(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["convert", "laion-clap", "a.pt", "out"]).trust_pickle
        False
    """
    convert: argparse.ArgumentParser = subparsers.add_parser(
        "convert",
        help="convert a checkpoint of another format into one a fortekit backbone loads",
        description="Convert checkpoints into folders that fortekit's backbones load.",
    )
    formats = convert.add_subparsers(dest="format", metavar="FORMAT", required=True)
    laion = formats.add_parser(
        "laion-clap",
        help="an original LAION-CLAP .pt checkpoint -> a transformers CLAP folder for the hf-clap backbone",
        description=(
            "Convert an original LAION-CLAP checkpoint (HTSAT audio tower, RoBERTa text tower, fused or "
            "not) into a folder with config.json, model.safetensors and the processor files, which the "
            "hf-clap backbone loads with no laion_clap installed. Exit status: 0 converted, 1 an error "
            "(a coded message on stderr), 130 interrupted. See docs/plugins.md."
        ),
    )
    laion.add_argument("checkpoint", type=Path, help="the LAION-CLAP checkpoint (.pt, or .safetensors)")
    laion.add_argument("out_dir", type=OutputPath("folder", convert=Path), metavar="OUT_DIR",
                       help="the folder to write (created)")
    laion.add_argument(
        "--tokenizer",
        type=Path,
        metavar="DIR",
        help="a local roberta-base folder (vocab.json and merges.txt, or tokenizer.json); default: "
        "roberta-base from the local Hugging Face cache",
    )
    laion.add_argument(
        "--trust-pickle",
        action="store_true",
        help="allow the full unpickler for a checkpoint that holds more than tensors (original LAION-CLAP "
        "files do). UNPICKLING CAN RUN ANY CODE THE FILE CONTAINS: pass this only for a file whose "
        "origin you trust",
    )
    laion.add_argument(
        "--text-heads",
        type=int,
        metavar="N",
        help="attention heads of the text tower when --tokenizer has no config.json "
        "(default: width / 64, 12 for roberta-base)",
    )
    laion.add_argument("--overwrite", action="store_true", help="replace the model files of OUT_DIR")
    laion.set_defaults(handler=run_convert_laion_clap)
    return convert
