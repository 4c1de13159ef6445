"""The command-line tools: ``fortekit`` (sub-commands) and ``fol-refine``.

Every command lives in this package, one module per command, and shares its options'
spellings (:mod:`fortekit.search.cli.common`). Heavy modules are imported inside the
sub-commands, so ``--help`` is instant.

Exit codes, the same for every command: 0 ok, 1 some inputs failed, 2 usage or bad input,
130 interrupted, 141 standard output closed by its reader.

Example:
    $ fortekit parse "all x.(Bird(x) -> -Loud(x))" --style all
    $ fortekit parse --file examples/formulas.txt
    $ python -m fortekit --version
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from fortekit import __version__
from fortekit.search.cli.common import run_cli
from fortekit.search.cli.parse import ECHO_CHARS, echo_text

__all__ = ["ECHO_CHARS", "build_parser", "build_refine_parser", "echo_text", "fol_refine_main", "main",
           "refuse_outputs"]


def build_parser() -> argparse.ArgumentParser:
    """The ``fortekit`` argument parser (exposed for documentation and tests).

    Example:
        >>> build_parser().parse_args(["parse", "P(a)"]).command
        'parse'
    """
    from fortekit.search.cli.bench import add_bench_commands
    from fortekit.search.cli.caption import add_caption_command
    from fortekit.search.cli.convert import add_convert_commands
    from fortekit.search.cli.eval import add_eval_commands
    from fortekit.search.cli.index import add_index_commands
    from fortekit.search.cli.parse import add_parse_command
    from fortekit.search.cli.parse_report import add_parse_report_command
    from fortekit.search.cli.plugins import add_plugin_commands
    from fortekit.search.cli.projection import add_projection_commands
    from fortekit.search.cli.relations import add_relations_commands
    from fortekit.search.cli.search import add_search_command
    from fortekit.search.cli.serve import add_serve_command
    from fortekit.search.cli.suggest import SuggestingParser
    from fortekit.search.cli.vocab import add_vocab_commands

    # "did you mean" for a misspelt option, sub-command or choice (its sub-parsers share the class)
    parser: argparse.ArgumentParser = SuggestingParser(
        prog="fortekit", description="FOL-guided text-to-audio retrieval toolkit.",
        epilog="Exit codes: 0 ok, 1 some inputs failed, 2 usage or bad input, 130 interrupted, "
        "141 standard output closed.",
    )
    parser.add_argument("--version", action="version", version=f"fortekit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_parse_command(commands)
    add_caption_command(commands)
    add_vocab_commands(commands)
    add_plugin_commands(commands)
    add_convert_commands(commands)
    add_parse_report_command(commands)
    add_index_commands(commands)
    add_projection_commands(commands)
    add_eval_commands(commands)
    add_relations_commands(commands)
    add_search_command(commands)
    add_serve_command(commands)
    add_bench_commands(commands)
    return parser


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 2
    texts = getattr(args, "texts_field", None)
    if texts is not None and not getattr(args, texts) and args.file is None:
        parser.error(f"{args.command}: give a text or --file")
    refused = refuse_outputs(parser, args)
    if refused is not None:
        return refused
    from fortekit.search.cli.common import apply_thread_option

    problem = apply_thread_option(args)
    if problem is not None:
        print(f"fortekit {args.command}: {problem}", file=sys.stderr)
        return 2
    try:
        return int(args.handler(args, sys.stdout))
    except BrokenPipeError:
        raise
    except OSError as exc:  # a named input that cannot be read is bad input (2); a failed write, 1
        print(f"fortekit: {exc}", file=sys.stderr)
        return 2 if exc.filename is not None else 1


def refuse_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int | None:
    """The one output rule on every output option of the chosen command, before it starts.

    Every command's outputs are checked here, at dispatch (see
    :mod:`fortekit.search.cli.output_options`), so a new command is checked without code of its own.

    Returns:
        None when every output may be written; else 2, with one coded line on stderr.

    Example:
        >>> parser = build_parser()
        >>> refuse_outputs(parser, parser.parse_args(["eval", "--fuse", "a", "b", "-o", "/dev/null"])) is None
        True
    """
    from fortekit.errors import FortekitError
    from fortekit.search.cli.output_options import check_output_options, chosen_parsers

    try:
        check_output_options(parser, args)
    except FortekitError as exc:
        print(f"{chosen_parsers(parser, args)[-1].prog}: {exc}", file=sys.stderr)
        return 2
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``fortekit``.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit code: 0 ok, 1 some inputs failed, 2 usage or bad input, 130 interrupted,
        141 standard output closed by its reader.

    Raises:
        SystemExit: a usage error (code 2), ``--help`` or ``--version`` (code 0), from argparse.

    Example:
        >>> main(["parse", "P(a)", "--style", "ascii"])
        arg 1: P(a)
          ascii    P(a)
          Pred     {P/1}
        0
    """
    return run_cli(lambda: _run(argv), "fortekit")


def build_refine_parser() -> argparse.ArgumentParser:
    """The ``fol-refine`` argument parser (see :mod:`fortekit.search.cli.refine`).

    Example:
        >>> build_refine_parser().prog
        'fol-refine'
    """
    from fortekit.search.cli.refine import build_refine_parser as build

    return build()


def fol_refine_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``fol-refine`` (see :mod:`fortekit.search.cli.refine`), with every command's exit codes.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit code (as :func:`main`).
    """
    from fortekit.search.cli.refine import main as refine_main

    return run_cli(lambda: refine_main(argv), "fol-refine")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
