"""``python -m fortekit.search.cli.verbalise_report CAPTION_CSV``: the verbaliser's round trip.

Parses every caption of a caption CSV (Clotho: all caption columns; AudioCaps) with Π,
writes each formula back with G, parses that again and prints how many predicates of φ
(symbol and polarity) Π(G(φ)) keeps (docs/verbalise.md, "Round trip"). The figures are
computed by :mod:`fortekit.verbalise.report`; this module is its command line.

Example:
    $ python -m fortekit.search.cli.verbalise_report ../shared/data/clotho/clotho_captions_development.csv
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]

PROG = "python -m fortekit.search.cli.verbalise_report"


def build_parser() -> argparse.ArgumentParser:
    """The program's argument parser.

    Example:
        >>> build_parser().parse_args(["captions.csv"]).csv
        'captions.csv'
    """
    parser = argparse.ArgumentParser(
        prog=PROG, description="The verbaliser's round trip: how much of Pred(φ) survives Π(G(φ)).",
    )
    parser.add_argument("csv", help="a caption CSV (Clotho: file_name,caption_1..caption_5; or AudioCaps)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Print the round-trip figures of a caption CSV.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        0; 2 when the file cannot be read (the message goes to stderr).

    Example:
        >>> main(["missing.csv"])  # the message goes to stderr
        2
    """
    from fortekit.errors import FortekitError
    from fortekit.search.cli.common import run_cli
    from fortekit.verbalise.report import format_round_trip, read_captions, round_trip

    args = build_parser().parse_args(argv)

    def run() -> int:
        try:
            captions = read_captions(args.csv)
        except (FortekitError, OSError) as exc:
            print(f"{PROG}: {exc}", file=sys.stderr)
            return 2
        print(format_round_trip(round_trip(captions)))
        return 0

    return run_cli(run, PROG)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
