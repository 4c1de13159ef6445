"""The command-line tools: ``fortekit`` (sub-commands) and ``fol-refine``.

Every command lives in this package, one module per command, and shares its options'
spellings (:mod:`fortekit.search.cli.common`). Heavy modules are imported inside the
sub-commands, so ``--help`` is instant. ``fortekit COMMAND ...`` builds the parser of that one
sub-command (:data:`COMMANDS`); ``fortekit --help``, no command or a misspelt one build them all,
so that the help lists every command and a typo gets its nearest spelling.

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

__all__ = ["COMMANDS", "ECHO_CHARS", "build_parser", "build_refine_parser", "chosen_command", "echo_text",
           "fol_refine_main", "main", "refuse_outputs"]

#: Every sub-command of ``fortekit``, in the order ``fortekit --help`` lists them: its name, and the
#: module and function that add its parser (tests/search/cli/test_cli.py holds each to its name).
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("parse", "fortekit.search.cli.parse", "add_parse_command"),
    ("caption", "fortekit.search.cli.caption", "add_caption_command"),
    ("vocab", "fortekit.search.cli.vocab", "add_vocab_commands"),
    ("plugins", "fortekit.search.cli.plugins", "add_plugin_commands"),
    ("convert", "fortekit.search.cli.convert", "add_convert_commands"),
    ("parse-report", "fortekit.search.cli.parse_report", "add_parse_report_command"),
    ("index", "fortekit.search.cli.index", "add_index_commands"),
    ("train-projection", "fortekit.search.cli.projection", "add_projection_commands"),
    ("eval", "fortekit.search.cli.eval", "add_eval_commands"),
    ("relations", "fortekit.search.cli.relations", "add_relations_commands"),
    ("search", "fortekit.search.cli.search", "add_search_command"),
    ("serve", "fortekit.search.cli.serve", "add_serve_command"),
    ("bench", "fortekit.search.cli.bench", "add_bench_commands"),
)


def chosen_command(argv: Sequence[str] | None) -> str | None:
    """The sub-command that ``argv``'s first argument names exactly, else None.

    Only then does :func:`main` build one sub-command's parser: an option first (``--help``,
    ``--version``), no argument or a misspelt command builds every one.

    Example:
        >>> chosen_command(["search", "--index", "idx", "rain"]), chosen_command(["serch"])
        ('search', None)
        >>> chosen_command(["--help"]), chosen_command([])
        (None, None)
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments and any(arguments[0] == name for name, _, _ in COMMANDS):
        return arguments[0]
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``fortekit`` argument parser (exposed for documentation and tests).

    Args:
        command: build only this sub-command's parser (what ``fortekit COMMAND ...`` parses
            with: its parser, usage and messages are those of the whole one); None, or a name
            that is no command: every one.

    Example:
        >>> build_parser().parse_args(["parse", "P(a)"]).command
        'parse'
        >>> build_parser("search").parse_args(["search", "--index", "idx", "rain"]).queries
        ['rain']
    """
    from fortekit.search.cli.suggest import SuggestingParser

    if all(command != name for name, _, _ in COMMANDS):
        command = None
    # "did you mean" for a misspelt option, sub-command or choice (its sub-parsers share the class)
    parser: argparse.ArgumentParser = SuggestingParser(
        prog="fortekit", description="FOL-guided text-to-audio retrieval toolkit.",
        epilog="Exit codes: 0 ok, 1 some inputs failed, 2 usage or bad input, 130 interrupted, "
        "141 standard output closed.",
    )
    parser.add_argument("--version", action="version", version=f"fortekit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module, function in COMMANDS:
        if command is None or name == command:  # __import__, so that `python -X importtime` lists it
            getattr(__import__(module, fromlist=[function]), function)(commands)
    return parser


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser(chosen_command(argv))
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
