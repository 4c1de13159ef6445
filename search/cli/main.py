"""The command-line tools: ``fortekit`` (sub-commands) and ``fol-refine``.

Heavy modules are imported inside the sub-commands, so ``--help`` is instant.

Example:
    $ fortekit parse "all x.(Bird(x) -> -Loud(x))" --style all
    $ fortekit parse --file examples/formulas.txt
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from fortekit import __version__


def _cmd_parse(args: argparse.Namespace, out: TextIO) -> int:
    from fortekit.errors import FormulaSyntaxError
    from fortekit.fol import STYLES, format_formula, parse_formula, predicates

    styles = list(STYLES) if args.style == "all" else [args.style]
    failures = 0
    for label, text in _lines_of(args, "formula"):
        if text is None:  # an unreadable line of --file, already reported
            failures += 1
            continue
        try:
            phi = parse_formula(text, warn_free=False)
        except FormulaSyntaxError as exc:
            failures += 1
            # errors go to stderr, the echo of the input cut and escaped (control characters)
            print(f"{label}: {echo_text(text)}\n  error: {exc}", file=sys.stderr)
            continue
        print(f"{label}: {echo_text(text)}", file=out)
        for style in styles:
            print(f"  {style:<8} {format_formula(phi, style)}", file=out)
        preds = ", ".join(sorted(map(str, predicates(phi))))
        print(f"  {'Pred':<8} {{{preds}}}", file=out)
    return 1 if failures else 0


ECHO_CHARS = 200


def echo_text(text: str) -> str:
    """An input as it may be shown in a message: printable, at most 200 characters.

    Example:
        >>> echo_text("Bird(x) ∧"), echo_text("a" + chr(7) + "b"), len(echo_text("P(" * 500))
        ('Bird(x) ∧', 'a\\\\x07b', 221)
    """
    shown = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text[:ECHO_CHARS])
    return shown + (f" … ({len(text):,} characters)" if len(text) > ECHO_CHARS else "")


def _lines_of(args: argparse.Namespace, field: str) -> Iterator[tuple[str, str | None]]:
    """(label, text) from positional arguments and --file; text is None for a bad line.

    --file is read as fol-refine reads a query file (:mod:`fortekit.textio`): strict
    UTF-8 line by line (a BOM allowed); a line that is not UTF-8 (E656) or is too long
    (E312) is reported on stderr with its number and the other lines still run; a UTF-16
    file is refused whole (E311). Blank lines and ``#`` comments are skipped.
    """
    for index, text in enumerate(getattr(args, field), start=1):
        yield f"arg {index}", text
    if args.file is None:
        return
    from fortekit.errors import Errors
    from fortekit.textio import BadLine, read_text_lines

    path = Path(args.file)
    with path.open("rb") as handle:
        if handle.read(2) in (b"\xff\xfe", b"\xfe\xff"):
            print(f"{path}: error: {Errors.E311.format(path=path, command=args.command, name=path.name)}",
                  file=sys.stderr)
            yield str(path), None
            return
    for number, line in read_text_lines(path):
        label = f"{args.file}:{number}"
        if isinstance(line, BadLine):
            if line.kind == "undecodable":
                problem = Errors.E656.format(reason=line.reason.removeprefix("not UTF-8: "))
            else:
                problem = Errors.E312.format(reason=line.reason, what=field)
            print(f"{label}: error: {problem}", file=sys.stderr)
            yield label, None
            continue
        text = line.strip()
        if text and not text.startswith("#"):
            yield label, text


def _cmd_caption(args: argparse.Namespace, out: TextIO) -> int:
    import json

    from fortekit.errors import CaptionError
    from fortekit.fol.caption import parse_caption
    from fortekit.verbalise import verbalise

    failures = 0
    for label, text in _lines_of(args, "caption"):
        if text is None:  # an unreadable line of --file, already reported
            failures += 1
            continue
        try:
            result = parse_caption(text)
        except CaptionError as exc:
            failures += 1
            # errors go to stderr, the echo of the input cut and escaped (control characters)
            print(f"{label}: {echo_text(text)}\n  error: {exc}", file=sys.stderr)
            continue
        if args.json:
            print(json.dumps(result.to_dict(), ensure_ascii=False), file=out)
            continue
        print(f"{label}: {echo_text(text)}", file=out)
        print(f"  FOL      {result.formula}", file=out)
        print(f"  G(FOL)   {verbalise(result.formula)}", file=out)
        grounding = ", ".join(f"{r.symbol}:{r.rule}/{r.tier}" for r in result.predicates)
        print(f"  rules    {grounding}", file=out)
        if result.used_fallback:
            print("  (fallback rule)", file=out)
    return 1 if failures else 0


def build_parser() -> argparse.ArgumentParser:
    """The ``fortekit`` argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(
        prog="fortekit", description="FOL-guided text-to-audio retrieval toolkit."
    )
    parser.add_argument("--version", action="version", version=f"fortekit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    parse = commands.add_parser(
        "parse", help="parse first-order formulas and print them in every notation"
    )
    parse.add_argument("formula", nargs="*", help="formulas (Unicode, ASCII/NLTK or FOLIO notation)")
    parse.add_argument("--file", help="read one formula per line (# starts a comment)")
    parse.add_argument(
        "--style", default="all", choices=["all", "unicode", "ascii", "nltk", "latex"],
        help="notation to print (default: all)",
    )
    parse.set_defaults(handler=_cmd_parse)
    caption = commands.add_parser(
        "caption", help="parse captions or queries into first-order logic (the caption parser Π)"
    )
    caption.add_argument("caption", nargs="*", help="captions or queries")
    caption.add_argument("--file", help="read one caption per line (# starts a comment)")
    caption.add_argument("--json", action="store_true", help="one JSON object per caption")
    caption.set_defaults(handler=_cmd_caption)
    _add_optional_commands(commands)
    return parser


def _add_optional_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Sub-commands that other folders own; each module is light to import."""
    from fortekit.fol.caption import add_parse_report_command
    from fortekit.plugins.cli import add_plugin_commands
    from fortekit.plugins.convert_cli import add_convert_commands
    from fortekit.search.cli.bench import add_bench_commands
    from fortekit.search.cli.eval import add_eval_commands
    from fortekit.search.cli.index import add_index_commands
    from fortekit.search.cli.projection import add_projection_commands
    from fortekit.search.cli.search import add_search_command
    from fortekit.search.stage1.relations import add_relations_commands
    from fortekit.vocab.cli import add_vocab_commands

    add_vocab_commands(commands)
    add_plugin_commands(commands)
    add_convert_commands(commands)
    add_parse_report_command(commands)
    add_index_commands(commands)
    add_projection_commands(commands)
    add_eval_commands(commands)
    add_relations_commands(commands)
    add_search_command(commands)
    add_bench_commands(commands)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``fortekit``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 2
    texts = {"parse": "formula", "caption": "caption"}.get(args.command)
    if texts is not None and not getattr(args, texts) and args.file is None:
        parser.error(f"{args.command}: give a text or --file")
    try:
        return int(args.handler(args, sys.stdout))
    except OSError as exc:
        print(f"fortekit: {exc}", file=sys.stderr)
        return 1


def build_refine_parser() -> argparse.ArgumentParser:
    """The ``fol-refine`` argument parser (see :mod:`fortekit.search.cli.refine`)."""
    from fortekit.search.cli.refine import build_refine_parser as build

    return build()


def fol_refine_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``fol-refine`` (see :mod:`fortekit.search.cli.refine`)."""
    from fortekit.search.cli.refine import main as refine_main

    return refine_main(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
