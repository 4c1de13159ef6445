"""``fortekit parse``: parse first-order formulas and print them in every notation.

Texts come from the command line and from ``--file FILE`` (``-`` reads standard input).
A text that reads like English rather than a formula gets a hint (E761) to use
``fortekit caption``, which parses captions and queries.

Example:
    $ fortekit parse "all x.(Bird(x) -> -Loud(x))" --style all
    $ fortekit parse --file examples/formulas.txt
    $ cat formulas.txt | fortekit parse --file -
"""

from __future__ import annotations

import argparse
import io
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TextIO

__all__ = ["ECHO_CHARS", "add_parse_command", "echo_text", "lines_of", "looks_like_english", "run_parse"]

ECHO_CHARS = 200
_ENGLISH = re.compile(r"[A-Za-z][A-Za-z'\-]*(?:[ ,]+[A-Za-z][A-Za-z'\-]*)+[.!?]?")
_LOGIC_WORDS = frozenset({"all", "exists", "some", "and", "or", "not", "forall", "iff", "implies"})


def echo_text(text: str) -> str:
    """An input as it may be shown in a message: printable, at most 200 characters.

    Example:
        >>> echo_text("Bird(x) ∧"), echo_text("a" + chr(7) + "b"), len(echo_text("P(" * 500))
        ('Bird(x) ∧', 'a\\\\x07b', 221)
    """
    shown = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text[:ECHO_CHARS])
    return shown + (f" … ({len(text):,} characters)" if len(text) > ECHO_CHARS else "")


def looks_like_english(text: str) -> bool:
    """Whether a text that is not a formula reads like words of English (a caption, a query).

    Args:
        text: the text that did not parse.

    Returns:
        True for several plain words (not only logic keywords); False for anything with
        brackets, operators or a single word.

    Example:
        >>> looks_like_english("a dog barking"), looks_like_english("Bird(x) &"), looks_like_english("x")
        (True, False, False)
    """
    text = text.strip()
    if not _ENGLISH.fullmatch(text):
        return False
    words = {word.lower() for word in re.findall(r"[A-Za-z'\-]+", text)}
    return not words <= _LOGIC_WORDS


def _open_file(name: str) -> IO[bytes]:
    """The bytes of ``--file``: standard input for ``-``."""
    if name == "-":
        return io.BytesIO(sys.stdin.buffer.read())
    return Path(name).open("rb")


def lines_of(args: argparse.Namespace, field: str) -> Iterator[tuple[str, str | None]]:
    """(label, text) from positional arguments and --file; text is None for a bad line.

    --file is read as fol-refine reads a query file (:mod:`fortekit.textio`): strict
    UTF-8 line by line (a BOM allowed); a line that is not UTF-8 (E656) or is too long
    (E312) is reported on stderr with its number and the other lines still run; a UTF-16
    file is refused whole (E311). Blank lines and ``#`` comments are skipped. ``--file -``
    reads standard input.

    Args:
        args: the parsed arguments (``args.file`` and the texts in ``args.<field>``).
        field: the name of the positional texts ("formula", "caption").

    Returns:
        An iterator of (label, text or None).

    Example:
        >>> args = argparse.Namespace(formula=["P(a)"], file=None, command="parse")
        >>> list(lines_of(args, "formula"))
        [('arg 1', 'P(a)')]
    """
    for index, text in enumerate(getattr(args, field), start=1):
        yield f"arg {index}", text
    if args.file is None:
        return
    from fortekit.errors import Errors
    from fortekit.textio import BadLine, read_text_lines

    path = Path(args.file) if args.file != "-" else Path("<stdin>")
    with _open_file(args.file) as handle:
        if handle.read(2) in (b"\xff\xfe", b"\xfe\xff"):
            print(f"{path}: error: {Errors.E311.format(path=path, command=args.command, name=path.name)}",
                  file=sys.stderr)
            yield str(path), None
            return
        handle.seek(0)
        for number, line in read_text_lines(handle):
            label = f"{path if args.file == '-' else args.file}:{number}"
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


def run_parse(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``fortekit parse``: 0 all parsed, 1 some texts failed (each reported on stderr).

    Example:
        >>> args = argparse.Namespace(formula=["P(a) & Q(a)"], file=None, style="ascii", command="parse")
        >>> out = io.StringIO()
        >>> run_parse(args, out), out.getvalue().splitlines()[1].split()
        (0, ['ascii', 'P(a)', '&', 'Q(a)'])
    """
    from fortekit.errors import Errors, FormulaSyntaxError
    from fortekit.fol import STYLES, format_formula, parse_formula, predicates

    styles = list(STYLES) if args.style == "all" else [args.style]
    failures = 0
    for label, text in lines_of(args, "formula"):
        if text is None:  # an unreadable line of --file, already reported
            failures += 1
            continue
        try:
            phi = parse_formula(text, warn_free=False)
        except FormulaSyntaxError as exc:
            failures += 1
            # errors go to stderr, the echo of the input cut and escaped (control characters)
            print(f"{label}: {echo_text(text)}\n  error: {exc}", file=sys.stderr)
            if looks_like_english(text):
                print(f"  hint: {Errors.E761.format(text=echo_text(text), quoted=shlex.quote(text))}",
                      file=sys.stderr)
            continue
        print(f"{label}: {echo_text(text)}", file=out)
        for style in styles:
            print(f"  {style:<8} {format_formula(phi, style)}", file=out)
        preds = ", ".join(sorted(map(str, predicates(phi))))
        print(f"  {'Pred':<8} {{{preds}}}", file=out)
    return 1 if failures else 0


def add_parse_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit parse``.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_parse_command(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["parse", "P(a)", "--style", "nltk"]).style
        'nltk'
    """
    parse = commands.add_parser(
        "parse", help="parse first-order formulas and print them in every notation",
        description="Parse first-order formulas and print them in every notation. For captions and "
        "queries in English use `fortekit caption`.",
    )
    parse.add_argument("formula", nargs="*", help="formulas (Unicode, ASCII/NLTK or FOLIO notation)")
    parse.add_argument("--file", metavar="FILE",
                       help="read one formula per line (# starts a comment; '-' for standard input)")
    parse.add_argument(
        "--style", default="all", choices=["all", "unicode", "ascii", "nltk", "latex"],
        help="notation to print (default: all)",
    )
    parse.set_defaults(handler=run_parse, texts_field="formula")
