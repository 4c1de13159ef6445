"""``fortekit relations build``: mine the (event, relation, entity) table of o_rel from caption files.

The mining is :func:`fortekit.search.stage1.relations.mine_relations`; this module is its
command line.

Example:
    $ fortekit relations build audiocaps_train.csv:caption -o vocab/relations.tsv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from fortekit.search.cli.common import add_output_option

__all__ = ["add_relations_commands", "run_relations_build"]


def run_relations_build(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``relations build``: 0 written, 2 an output that is an input or cannot be written."""
    from fortekit.errors import FortekitError
    from fortekit.safe_write import atomic_write, check_not_input
    from fortekit.search.stage1.relations import format_relations, mine_relations, read_caption_column

    specs = [spec.partition(":") for spec in args.captions]
    try:  # the table must not replace a caption file it is mined from
        check_not_input(args.out, [("caption file", path) for path, _, _ in specs])
    except FortekitError as exc:
        print(f"fortekit relations: {exc}", file=sys.stderr)
        return 2
    captions: list[str] = []
    for path, _, column in specs:
        captions.extend(read_caption_column(path, column or "caption"))
    table = mine_relations(captions, min_count=args.min_count)
    text = format_relations(table)
    try:
        atomic_write(
            Path(args.out), lambda temporary: temporary.write_text(text, encoding="utf-8", newline="\n")
        )
    except FortekitError as exc:
        print(f"fortekit relations: {exc}", file=sys.stderr)
        return 2
    print(f"{len(captions)} captions -> {len(table.by_event)} events, {args.out}", file=out)
    return 0


def add_relations_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit relations build``.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_relations_commands(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["relations", "build", "a.csv", "-o", "r.tsv"]).out
        'r.tsv'
    """
    relations = commands.add_parser("relations", help="mine the (event, relation, entity) table of o_rel")
    sub = relations.add_subparsers(dest="relations_command", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="count relations over the parses of caption CSV files")
    build.add_argument(
        "captions", nargs="+", metavar="CSV[:COLUMN]",
        help="caption files, each with the column to read (default column: caption)",
    )
    add_output_option(build, dest="out", required=True, metavar="TSV",
                      help="the TSV to write (the shipped one: vocab/relations.tsv)")
    build.add_argument("--min-count", type=int, default=3, help="drop rarer triples (default 3)")
    build.add_argument("--overwrite", action="store_true", help="replace an existing -o file (else E746)")
    build.set_defaults(handler=run_relations_build)
