"""``fortekit caption``: parse captions or queries into first-order logic (the caption parser Π).

Example:
    $ fortekit caption "a dog barks while a man talks"
    $ fortekit caption --file captions.txt --json
    $ cat captions.txt | fortekit caption --file -
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from fortekit.search.cli.common import add_json_option
from fortekit.search.cli.parse import echo_text, lines_of

__all__ = ["add_caption_command", "run_caption"]


def run_caption(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``fortekit caption``: 0 all parsed, 1 some captions failed (each reported on stderr)."""
    from fortekit.errors import CaptionError
    from fortekit.fol.caption import parse_caption
    from fortekit.verbalise import verbalise

    failures = 0
    for label, text in lines_of(args, "caption"):
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


def add_caption_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit caption``.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_caption_command(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["caption", "a dog barks", "--json"]).json
        True
    """
    caption = commands.add_parser(
        "caption", help="parse captions or queries into first-order logic (the caption parser Π)"
    )
    caption.add_argument("caption", nargs="*", help="captions or queries")
    caption.add_argument("--file", metavar="FILE",
                         help="read one caption per line (# starts a comment; '-' for standard input)")
    add_json_option(caption, help="one JSON object per caption")
    caption.set_defaults(handler=run_caption, texts_field="caption")
