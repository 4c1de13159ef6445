""""Did you mean": the one argument parser of every command, which names the nearest spelling.

:class:`SuggestingParser` is ``argparse.ArgumentParser`` with three changes, so that a typo gets
the command's own usage and its nearest spelling (:func:`difflib.get_close_matches`) instead of
the top-level usage:

* an unknown option (``fortekit search --explian``) is reported by the sub-command that was
  chosen, with the option it most resembles (E762), even when a required option is missing too;
* an invalid choice, a sub-command (``fortekit serch``) or an option's value (``--format jsn``),
  names the nearest valid one (E763);
* each message names the command's ``--help`` and its docs page.

Sub-parsers made by ``add_subparsers()`` are of the parent's class, so ``fortekit``'s parser and
``fol-refine``'s are the only ones built from it.

Example:
    >>> parser = SuggestingParser(prog="demo")
    >>> _ = parser.add_argument("--explain", action="store_true")
    >>> unknown_message(parser, ["--explian"])[:97]
    '[E762] unrecognized argument --explian: did you mean --explain? `demo --help` lists every option.'
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from fortekit.errors import Errors

__all__ = ["DOC_PAGES", "SuggestingParser", "doc_page", "nearest", "unknown_message", "unknown_options"]

#: The docs page of each command (its first word after ``fortekit``), named by the usage messages.
DOC_PAGES: dict[str, str] = {
    "search": "docs/retriever.md", "index": "docs/audio_index.md", "serve": "docs/serve.md",
    "eval": "docs/evaluation.md", "fol-refine": "docs/refine.md", "train-projection": "docs/projection.md",
    "parse": "docs/fol.md", "caption": "docs/parser.md", "parse-report": "docs/parser.md",
    "vocab": "docs/vocab.md", "plugins": "docs/plugins.md", "convert": "docs/plugins.md",
    "bench": "docs/soundgen.md", "relations": "docs/refine.md",
}


def doc_page(prog: str) -> str | None:
    """The docs page of the command ``prog`` (``"fortekit index add"``), or None.

    Example:
        >>> doc_page("fortekit index add"), doc_page("fol-refine"), doc_page("fortekit")
        ('docs/audio_index.md', 'docs/refine.md', None)
    """
    words = prog.split()
    if not words:
        return None
    if words[0] == "fortekit":
        return DOC_PAGES.get(words[1]) if len(words) > 1 else None
    return DOC_PAGES.get(words[0])


def nearest(word: str, options: Iterable[str]) -> str | None:
    """The option ``word`` most resembles (difflib's ratio of at least 0.6), or None.

    Example:
        >>> nearest("--explian", ["--explain", "--index", "--json"]), nearest("zzz", ["search"])
        ('--explain', None)
    """
    found = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return found[0] if found else None


def _help_line(parser: argparse.ArgumentParser) -> str:
    page = doc_page(parser.prog)
    return f"`{parser.prog} --help` lists every option" + (f" ({page})" if page else "") + "."


def _is_known(parser: argparse.ArgumentParser, token: str) -> bool:
    """Whether argparse would read ``token`` as one of ``parser``'s options (or not as an option)."""
    known = parser._option_string_actions
    if token in known or not token.startswith(tuple(parser.prefix_chars)) or len(token) < 2:
        return True
    if parser._negative_number_matcher.match(token) and not parser._has_negative_number_optionals:
        return True  # a negative number is a value
    if token.startswith("--"):
        name = token.split("=", 1)[0]
        return name in known or (parser.allow_abbrev and any(option.startswith(name) for option in known))
    return token[:2] in known  # -k5, -qv: a short option with its value or others after it


def unknown_options(parser: argparse.ArgumentParser, tokens: Sequence[str]) -> list[str]:
    """The tokens of ``tokens`` (before a ``--``) that look like options ``parser`` does not have.

    Example:
        >>> parser = SuggestingParser(prog="demo")
        >>> _ = parser.add_argument("-k", "--top-k", type=int)
        >>> unknown_options(parser, ["-k5", "--top=3", "--topk", "-1", "--", "--later"])
        ['--topk']
    """
    found: list[str] = []
    for token in tokens:
        if token == "--":
            break
        if not _is_known(parser, token):
            found.append(token)
    return found


def unknown_message(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """E762 for the arguments ``parser`` did not recognise, with the nearest option of each.

    Example:
        >>> parser = SuggestingParser(prog="demo")
        >>> _ = parser.add_argument("--json", action="store_true")
        >>> unknown_message(parser, ["--jsn", "extra"])[:75]
        '[E762] unrecognized arguments --jsn extra: did you mean --json (for --jsn)?'
    """
    options = [option for option in parser._option_string_actions if option.startswith("--")]
    shorts = [option for option in parser._option_string_actions if not option.startswith("--")]
    guesses: list[tuple[str, str]] = []
    for token in extras:
        if token.startswith("-") and token != "-":
            name = token.split("=", 1)[0]
            guess = nearest(name, options if name.startswith("--") else [*shorts, *options])
            if guess is not None:
                guesses.append((token, guess))
    if len(extras) == 1 and guesses:
        suggestion = f": did you mean {guesses[0][1]}?"
    elif guesses:
        suggestion = ": did you mean " + ", ".join(f"{guess} (for {token})" for token, guess in guesses) + "?"
    else:
        suggestion = "."
    return Errors.E762.format(plural="" if len(extras) == 1 else "s", arguments=" ".join(extras),
                              suggestion=suggestion, help=_help_line(parser))


class SuggestingParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors name the nearest spelling and the command's page.

    Example:
        >>> parser = SuggestingParser(prog="fortekit")
        >>> commands = parser.add_subparsers(dest="command")
        >>> _ = commands.add_parser("search").add_argument("--explain", action="store_true")
        >>> parser.parse_args(["search", "--explain"]).explain
        True
    """

    _given: list[str]
    _last: tuple[argparse.Namespace, list[str]] | None = None

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None,
    ) -> tuple[argparse.Namespace, list[str]]:
        """As argparse's, remembering the arguments (for the messages) and what was parsed."""
        self._given = list(sys.argv[1:] if args is None else args)
        self._last = None
        parsed = super().parse_known_args(self._given, namespace)
        self._last = parsed
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """An invalid choice names the nearest valid one (E763)."""
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(choice) for choice in choices]
        guess = nearest(str(value), names)
        raise argparse.ArgumentError(action, Errors.E763.format(
            value=value, suggestion=f"did you mean {guess!r}? " if guess is not None else "",
            options=", ".join(repr(name) for name in names), help=_help_line(self),
        ))

    def error(self, message: str) -> NoReturn:
        """Print the usage of the command that was chosen and the message, then exit 2."""
        if message.startswith("unrecognized arguments: ") and self._last is not None:
            from fortekit.search.cli.output_options import chosen_parsers

            namespace, extras = self._last
            chosen = chosen_parsers(self, namespace)[-1]
            argparse.ArgumentParser.error(chosen, unknown_message(chosen, extras))
        required = message.startswith(("the following arguments are required", "one of the arguments"))
        if required and getattr(self, "_given", None):
            unknown = unknown_options(self, self._given)
            if unknown:  # a misspelt option is the likelier cause: say it first
                message = f"{unknown_message(self, unknown)} ({message})"
        super().error(message)
