"""Every option that names an output: declared one way (:class:`OutputPath`), checked one way.

An option whose value is a path fortekit writes (``-o/--output``, ``--png``, ``--cache-dir``,
a positional ``OUT_DIR`` ...) is declared with ``type=OutputPath(...)`` (``add_output_option``
does it for ``-o``). Before any command starts, :func:`check_output_options` finds every such
option of the command that was chosen and applies the one rule of
:func:`fortekit.safe_write.check_output_target` to its value: a FIFO or a character device is
written in place (never renamed over), a link (E741), a folder where a file is needed (E745)
and any other special file (E748) are refused, an existing file needs ``--overwrite`` unless the
command resumes it (E746, E749), and the folder it goes into must be writable (E743). A new
command gets these checks by declaring its outputs so; tests/test_output_rules.py walks every
parser and fails on an option that names an output without the marker.

Example:
    >>> parser = argparse.ArgumentParser(prog="demo")
    >>> _ = parser.add_argument("-o", type=OutputPath("file"))
    >>> _ = parser.add_argument("--overwrite", action="store_true")
    >>> check_output_options(parser, parser.parse_args(["-o", "/dev/null"]))
    >>> check_output_options(parser, parser.parse_args(["-o", "/"]))
    Traceback (most recent call last):
    ...
    fortekit.errors.OutputError: [E745] / exists and is a folder, where a file is needed. ...
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["OutputKind", "OutputPath", "check_output_options", "chosen_parsers", "output_actions",
           "walk_parsers"]

OutputKind = Literal["file", "folder"]


@dataclass(frozen=True)
class OutputPath:
    """The ``type=`` of every option that names an output: converts the text and marks the option.

    Attributes:
        kind: ``"file"`` or ``"folder"``, or a function of the parsed arguments giving it (``eval
            -o`` is a folder, or the fused run file with ``--fuse``).
        convert: what the text becomes (``str``, ``Path``); the check reads it as a path.
        stdout: ``-`` means standard output (nothing to check).
        resumes: for an output its command resumes: a function of the parsed arguments giving
            None when this run resumes an existing file (the command checks it), else why it is
            written whole (E749 without ``--overwrite``). None: never resumed (E746).

    Example:
        >>> OutputPath("folder", convert=Path)("runs/a")
        PosixPath('runs/a')
    """

    kind: OutputKind | Callable[[argparse.Namespace], OutputKind] = "file"
    convert: Callable[[str], Any] = str
    stdout: bool = False
    resumes: Callable[[argparse.Namespace], str | None] | None = None

    __name__ = "output path"  # argparse names a type in the message of a value it cannot convert

    def __call__(self, text: str) -> Any:
        """The option's value, as ``convert`` makes it."""
        return self.convert(text)

    def kind_for(self, args: argparse.Namespace) -> OutputKind:
        """Whether this run writes a file or a folder at the option's path."""
        return self.kind if isinstance(self.kind, str) else self.kind(args)


def walk_parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser`` (itself first), with the sub-command names that lead to it.

    Example:
        >>> from fortekit.search.cli.main import build_parser
        >>> dict(walk_parsers(build_parser()))[("index", "build")].prog
        'fortekit index build'
    """
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # an alias names the same parser
                    seen.add(id(sub))
                    yield from walk_parsers(sub, (*path, name))


def chosen_parsers(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> list[argparse.ArgumentParser]:
    """``parser`` and the sub-command parsers that ``args`` chose (each sub-parser set has a dest).

    Example:
        >>> from fortekit.search.cli.main import build_parser
        >>> parser = build_parser()
        >>> [p.prog for p in chosen_parsers(parser, parser.parse_args(["index", "info", "--index", "i"]))]
        ['fortekit', 'fortekit index', 'fortekit index info']
    """
    chosen = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None) if action.dest != argparse.SUPPRESS else None
            if isinstance(name, str) and name in action.choices:
                chosen += chosen_parsers(action.choices[name], args)
    return chosen


def output_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options of ``parser`` itself (not its sub-commands') declared as outputs, one per dest.

    Example:
        >>> from fortekit.search.cli.main import build_refine_parser
        >>> [a.dest for a in output_actions(build_refine_parser())]
        ['output', 'cache_dir']
    """
    found: dict[str, argparse.Action] = {}
    for action in parser._actions:
        if isinstance(action.type, OutputPath) and action.dest not in found:
            found[action.dest] = action
    return list(found.values())


def check_output_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Apply the one output rule to every output option of the chosen command, before it starts.

    Args:
        parser: the top-level parser (``fortekit`` or ``fol-refine``).
        args: what it parsed (after the fix-ups of old spellings).

    Raises:
        OutputError: a link (E741), the wrong kind (E745), an existing file without
            ``--overwrite`` (E746, E749), a special file (E748).
        OutputWriteError: a folder that may not be written (E743).

    Example:
        >>> from fortekit.search.cli.main import build_parser
        >>> parser = build_parser()
        >>> check_output_options(parser, parser.parse_args(["eval", "--fuse", "a", "b", "-o", "/dev/null"]))
    """
    from fortekit.errors import FortekitError
    from fortekit.safe_write import check_output_target

    overwrite = bool(getattr(args, "overwrite", False))
    chain = chosen_parsers(parser, args)
    for chosen in chain:
        for action in output_actions(chosen):
            spec = action.type
            value = getattr(args, action.dest, None)
            if not isinstance(spec, OutputPath) or value is None or value == argparse.SUPPRESS:
                continue
            why = spec.resumes(args) if spec.resumes is not None else None
            for one in _values(value):
                if spec.stdout and str(one) == "-":
                    continue
                path = Path(one).expanduser()
                try:
                    check_output_target(path, overwrite=overwrite, kind=spec.kind_for(args),
                                        resumable=spec.resumes is not None and why is None, whole_file=why,
                                        links=True)
                except FortekitError:
                    _refuse_an_input(path, chain, args)  # the more telling reason, where it is one
                    raise


def _values(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _refuse_an_input(output: Path, chain: list[argparse.ArgumentParser], args: argparse.Namespace) -> None:
    """E740 when the refused output is the very file (or folder) another option names: an input."""
    from fortekit.errors import Errors, OutputError
    from fortekit.safe_write import same_file

    for chosen in chain:
        for action in chosen._actions:
            if isinstance(action.type, OutputPath) or action.dest == argparse.SUPPRESS:
                continue
            for given in _values(getattr(args, action.dest, None)):
                named = isinstance(given, (str, Path)) and str(given) not in ("", "-")
                if named and same_file(output, given):
                    spelling = "/".join(action.option_strings) or action.metavar or action.dest
                    relation = "the same folder as" if output.is_dir() else "the same file as"
                    raise OutputError(Errors.E740.format(output=output, relation=relation,
                                                         what=f"input {spelling}", path=given))
