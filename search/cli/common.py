"""What every command shares: one spelling per idea, the old spellings, the exit codes, progress bars.

Each ``add_*_option`` function adds one idea to a parser with the one spelling every command uses:

==================  ==============================================================
idea                spelling
==================  ==============================================================
the index           ``--index DIR``
hits per query      ``-k/--top-k``
what is written     ``-o/--output`` (``-`` for standard output)
less on stderr      ``-q/--quiet``
JSON lines          ``--json``
Stage 1             ``--stage1 off|online|offline``
columns             ``--id-column`` / ``--text-column``
ranked output       ``--format jsonl|tsv|trec``
Stage 1's search    ``-B/--beam-width``, ``-D/--depth``
==================  ==============================================================

An old spelling (``--out``, ``--online``, ``--column``, ``--max-depth``, a positional index ...)
keeps working for one release as a hidden alias that warns (W800).

Exit codes, the same for every command (:data:`EXIT_CODES`): 0 ok, 1 some inputs failed, 2 usage
or bad input, 130 interrupted, 141 standard output's reader went away.

Example:
    >>> parser = argparse.ArgumentParser(prog="demo")
    >>> add_output_option(parser, old=("--out",))
    >>> add_top_k_option(parser)
    >>> args = parser.parse_args(["-o", "ranked.jsonl", "--top-k", "3"])
    >>> args.output, args.top_k
    ('ranked.jsonl', 3)
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from fortekit.search.cli.output_options import OutputKind, OutputPath

__all__ = [
    "EXIT_CODES",
    "add_column_options",
    "add_depth_options",
    "add_format_option",
    "add_index_option",
    "add_json_option",
    "add_output_option",
    "add_quiet_option",
    "add_stage1_option",
    "add_top_k_option",
    "apply_fixups",
    "deprecated_alias",
    "run_cli",
    "stderr_is_terminal",
]

#: The exit codes of every command.
EXIT_CODES: dict[int, str] = {
    0: "ok",
    1: "some inputs failed (bad lines, failed queries); the others were done",
    2: "usage error or bad input (unknown option, unusable file or index)",
    130: "interrupted (Ctrl-C)",
    141: "standard output was closed by its reader (`... | head`)",
}

Fixup = Callable[[argparse.Namespace], None]


def stderr_is_terminal() -> bool:
    """Whether standard error is a terminal: progress bars are drawn only then.

    Example:
        >>> isinstance(stderr_is_terminal(), bool)
        True
    """
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        return False


def _typed(type: Callable[[str], Any] | None) -> dict[str, Any]:
    """``type=`` for ``add_argument`` when there is one (argparse's default is the text itself)."""
    return {} if type is None else {"type": type}


def _add_fixup(parser: argparse.ArgumentParser, fixup: Fixup) -> None:
    """Run ``fixup(args)`` after parsing (see :func:`apply_fixups`)."""
    parser.set_defaults(_fixups=(*(parser.get_default("_fixups") or ()), fixup))


def apply_fixups(args: argparse.Namespace) -> argparse.Namespace:
    """Finish what the parser cannot: old positional spellings, options an alias may give.

    Args:
        args: what ``parse_args`` returned.

    Returns:
        The same namespace, changed in place.

    Raises:
        SystemExit: a usage error (exit code 2), from the parser.

    Example:
        >>> apply_fixups(argparse.Namespace(k=1)).k
        1
    """
    for fixup in getattr(args, "_fixups", ()) or ():
        fixup(args)
    return args


class _DeprecatedSpelling(argparse.Action):
    """A hidden old spelling: stores into the new option's dest and warns (W800)."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, new: str = "",
                 also: Callable[[argparse.Namespace, Any], None] | None = None, **kwargs: Any) -> None:
        self.new, self.also = new, also
        kwargs["help"] = argparse.SUPPRESS
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from fortekit._deprecated import warn_moved

        old = option_string or self.dest
        if self.const is not None and self.nargs == 0:
            values = self.const
        warn_moved(old, self.new, stacklevel=2)
        setattr(namespace, self.dest, values)
        if self.also is not None:
            self.also(namespace, values)


def deprecated_alias(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, old: str, new: str, *, dest: str,
    const: Any = None, type: Callable[[str], Any] | None = None, metavar: str | None = None,
    also: Callable[[argparse.Namespace, Any], None] | None = None,
) -> None:
    """Add ``old`` as a hidden spelling of ``new`` (same dest) that warns W800 when used.

    Args:
        parser: the parser (or group) to add it to.
        old: the old option string (``--out``).
        new: the spelling to use now, for the message (``-o/--output``).
        dest: the new option's dest.
        const: for an old flag that takes no value, the value it stands for (``--online``
            is ``--stage1 online``).
        type: the value's type (as the new option's).
        metavar: unused in help (hidden), kept for messages.
        also: called with (namespace, value) after the value is stored.

    Example:
        >>> import warnings
        >>> parser = argparse.ArgumentParser()
        >>> deprecated_alias(parser, "--online", "--stage1 online", dest="stage1", const="online")
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     parser.parse_args(["--online"]).stage1
        'online'
    """
    if const is not None:
        parser.add_argument(old, dest=dest, action=_DeprecatedSpelling, new=new, nargs=0, const=const,
                            default=argparse.SUPPRESS, also=also)
    else:
        parser.add_argument(old, dest=dest, action=_DeprecatedSpelling, new=new, **_typed(type),
                            metavar=metavar, default=argparse.SUPPRESS, also=also)


def _require(parser: argparse.ArgumentParser, dest: str, spelling: str) -> None:
    """Fail (exit code 2) after parsing when ``dest`` was given by no spelling."""

    def check(args: argparse.Namespace) -> None:
        if getattr(args, dest, None) is None:
            parser.error(f"the following arguments are required: {spelling}")

    _add_fixup(parser, check)


def add_index_option(
    parser: argparse.ArgumentParser, *, dest: str = "index", required: bool = False,
    help: str = "the index directory (written by `fortekit index build`)",
    positional: str | None = None, type: Callable[[str], Any] | None = None,
) -> None:
    """``--index DIR``; ``positional`` names an old positional index that still works (W800).

    Args:
        parser: the command's parser.
        dest: where the value goes.
        required: whether the command needs it.
        help: the help text.
        positional: the dest of a positional argument that the index may still be given as,
            its first value when it takes several (``index query DIR TEXT...``); None: none.
        type: the value's type (e.g. :class:`pathlib.Path`).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_index_option(parser, required=True)
        >>> parser.parse_args(["--index", "clips.index"]).index
        'clips.index'
    """
    if positional is None:
        parser.add_argument("--index", dest=dest, metavar="DIR", required=required, help=help, **_typed(type))
        return
    parser.add_argument("--index", dest=dest, metavar="DIR", help=help, **_typed(type))
    convert = type or (lambda text: text)

    def from_positional(args: argparse.Namespace) -> None:
        from fortekit._deprecated import warn_moved

        if getattr(args, dest, None) is not None:
            return
        value = getattr(args, positional, None)
        if isinstance(value, list):
            if len(value) < 2:
                parser.error(f"the following arguments are required: --index DIR ({value and value[0]!r} "
                             "is a query, not an index)")
            setattr(args, dest, convert(value[0]))
            setattr(args, positional, value[1:])
        elif value is not None:
            setattr(args, dest, convert(value))
        elif required:
            parser.error("the following arguments are required: --index DIR")
        else:
            return
        warn_moved(f"a positional index ({getattr(args, dest)})", f"--index {getattr(args, dest)}",
                   stacklevel=2)

    _add_fixup(parser, from_positional)


def add_top_k_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, default: int = 10, dest: str = "top_k",
    type: Callable[[str], Any] = int, help: str | None = None,
) -> None:
    """``-k/--top-k K``: hits per query.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_top_k_option(parser, default=5)
        >>> parser.parse_args([]).top_k, parser.parse_args(["-k", "2"]).top_k
        (5, 2)
    """
    parser.add_argument("-k", "--top-k", dest=dest, metavar="K", type=type, default=default,
                        help=help or f"hits per query (default: {default})")


def add_output_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, dest: str = "output",
    required: bool = False, metavar: str = "OUT", help: str = "where to write ('-' for standard output)",
    type: Callable[[str], Any] | None = None, default: Any = None, old: Sequence[str] = (),
    kind: OutputKind | Callable[[argparse.Namespace], OutputKind] = "file", stdout: bool = False,
    resumes: Callable[[argparse.Namespace], str | None] | None = None,
) -> None:
    """``-o/--output OUT``; each of ``old`` (``--out``) still works for one release (W800).

    The option is declared an output (:class:`~fortekit.search.cli.output_options.OutputPath`),
    so the one output rule is checked on it before the command starts.

    Args:
        parser: the command's parser (or one of its groups).
        dest: where the value goes.
        required: the option must be given.
        metavar: its name in the help.
        help: the help text.
        type: what the text becomes (default: the text).
        default: the value when it is not given.
        old: old spellings (hidden, warning W800).
        kind: ``"file"`` or ``"folder"`` (or a function of the parsed arguments giving it).
        stdout: ``-`` means standard output.
        resumes: for an output the command resumes (see ``OutputPath.resumes``).

    Example:
        >>> import warnings
        >>> parser = argparse.ArgumentParser()
        >>> add_output_option(parser, dest="out", required=True, old=("--out",))
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     args = apply_fixups(parser.parse_args(["--out", "report.md"]))
        >>> args.out
        'report.md'
    """
    marked = OutputPath(kind, convert=type or str, stdout=stdout, resumes=resumes)
    parser.add_argument("-o", "--output", dest=dest, metavar=metavar, default=default,
                        required=required and not old, help=help, type=marked)
    for spelling in old:
        deprecated_alias(parser, spelling, "-o/--output", dest=dest, type=marked, metavar=metavar)
    if required and old:
        if not isinstance(parser, argparse.ArgumentParser):
            raise TypeError("a required -o/--output with old spellings needs the parser, not a group")
        _require(parser, dest, "-o/--output")


def add_quiet_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *,
    help: str = "no progress bar and no summary", bars: bool = False,
) -> None:
    """``-q/--quiet``; with ``bars``, quiet is the default when standard error is not a terminal.

    Args:
        parser: the command's parser.
        help: the help text.
        bars: the option only turns progress bars off: they are drawn on a terminal only, so
            a redirected log gets no progress lines.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_quiet_option(parser)
        >>> parser.parse_args(["-q"]).quiet
        True
    """
    if bars:
        help = f"{help} (the default when standard error is not a terminal)"
    parser.add_argument("-q", "--quiet", action="store_true",
                        default=bars and not stderr_is_terminal(), help=help)


def add_json_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                    help: str = "one JSON object per line") -> None:
    """``--json``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_json_option(parser)
        >>> parser.parse_args(["--json"]).json
        True
    """
    parser.add_argument("--json", action="store_true", help=help)


def _set_regime(namespace: argparse.Namespace, value: Any) -> None:
    """The booleans ``online`` and ``offline`` that fol-refine's code reads, from ``--stage1``."""
    namespace.online, namespace.offline = value == "online", value == "offline"


class _Stage1Action(argparse.Action):
    """``--stage1`` that also sets ``online``/``offline`` (fol-refine's regime flags)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        _set_regime(namespace, values)


def add_stage1_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *,
    choices: Sequence[str] = ("auto", "off", "online", "offline"), default: str | None = "auto",
    help: str = "refine each query first (Stage 1)", old_flags: bool = False,
) -> None:
    """``--stage1 off|online|offline``; with ``old_flags``, ``--online``/``--offline`` still work (W800).

    With ``old_flags`` the namespace also gets the booleans ``online`` and ``offline``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_stage1_option(parser)
        >>> parser.parse_args(["--stage1", "online"]).stage1
        'online'
    """
    if not old_flags:
        parser.add_argument("--stage1", choices=list(choices), default=default,
                            help=f"{help} (default: {default})")
        return
    parser.add_argument("--stage1", choices=list(choices), default=default, action=_Stage1Action,
                        help=f"{help} (default: {default})")
    parser.set_defaults(online=default == "online", offline=default == "offline")
    for regime in ("online", "offline"):
        deprecated_alias(parser, f"--{regime}", f"--stage1 {regime}", dest="stage1", const=regime,
                         also=_set_regime)


SWITCH_CHOICES: tuple[str, ...] = ("auto", "on", "off")


def switch_value(value: str | None) -> bool | None:
    """An ``auto|on|off`` switch as the Python API takes it: None (the kind's default), True, False.

    Example:
        >>> switch_value("auto"), switch_value("on"), switch_value("off")
        (None, True, False)
    """
    return None if value in (None, "auto") else value == "on"


def projection_value(value: str | None) -> Any:
    """``--projection auto|none|FILE`` as the Python API takes it: the default, None, or the file.

    Example:
        >>> projection_value("none") is None, projection_value("head/projection.safetensors")
        (True, 'head/projection.safetensors')
    """
    from fortekit.search.stages import DEFAULT

    if value in (None, "auto"):
        return DEFAULT
    return None if value == "none" else value


def add_stage_switches(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, projection: bool = True,
    order_check: bool = True, formula_help: str = "re-score the candidates by the query's formula",
    stage3_help: str = "Stage 3's re-ranking with the items' captions",
) -> None:
    """The stages of the ranking, each switched by name: ``auto`` (default) is what the table of
    defaults gives the index's kind (docs/defaults.md; ``fortekit index info`` shows it).

    ``--projection auto|none|FILE``, ``--formula-scoring auto|on|off``, ``--stage3 auto|on|off``
    and ``--order-check [auto|on|off]`` (alone: on).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_stage_switches(parser)
        >>> args = parser.parse_args(["--stage3", "off", "--order-check"])
        >>> args.projection, args.formula_scoring, args.stage3, args.order_check
        ('auto', 'auto', 'off', 'on')
    """
    if projection:
        parser.add_argument("--projection", metavar="auto|none|FILE", default="auto",
                            help="the Stage 2 head: auto (the head shipped for the backbone where the "
                            "index's kind uses one), none, or a trained head (.safetensors or directory)")
    parser.add_argument("--formula-scoring", choices=list(SWITCH_CHOICES), default="auto",
                        help=f"{formula_help} (default: auto, the index kind's default)")
    parser.add_argument("--stage3", choices=list(SWITCH_CHOICES), default="auto",
                        help=f"{stage3_help} (default: auto)")
    if order_check:
        parser.add_argument("--order-check", choices=list(SWITCH_CHOICES), nargs="?", const="on",
                            default="auto", help="sort each ranking's best 50 items by whether their "
                            "caption states the query's event order ('a dog barks, then a bell rings'); "
                            "alone: on (default: auto)")


def add_column_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, text_dest: str = "text_column",
    id_dest: str | None = "id_column", text_help: str = "the CSV/TSV column or JSONL field of the texts",
    id_help: str = "the CSV/TSV column or JSONL field of the ids", old_text: Sequence[str] = (),
) -> None:
    """``--id-column`` and ``--text-column``; each of ``old_text`` (``--column``) still works (W800).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_column_options(parser)
        >>> args = parser.parse_args(["--text-column", "caption", "--id-column", "file"])
        >>> args.text_column, args.id_column
        ('caption', 'file')
    """
    if id_dest is not None:
        parser.add_argument("--id-column", dest=id_dest, metavar="COLUMN", help=id_help)
    parser.add_argument("--text-column", dest=text_dest, metavar="COLUMN", help=text_help)
    for spelling in old_text:
        deprecated_alias(parser, spelling, "--text-column", dest=text_dest)


def add_format_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *,
    choices: Sequence[str] = ("jsonl", "tsv", "trec"), default: str | None = "jsonl",
    help: str = "the output's format: jsonl, tsv or trec (a TREC run file: qid Q0 docid rank score tag)",
) -> None:
    """``--format jsonl|tsv|trec``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_format_option(parser)
        >>> parser.parse_args(["--format", "trec"]).format
        'trec'
    """
    parser.add_argument("--format", choices=list(choices), default=default, help=help)


def add_depth_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, beam_dest: str = "beam_width",
    depth_dest: str = "depth", beam_default: Any = None, depth_default: Any = None,
    type: Callable[[str], Any] = int, old_depth: Sequence[str] = (),
) -> None:
    """Stage 1's search: ``-B/--beam-width B`` and ``-D/--depth D`` (``--max-depth`` still works, W800).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_depth_options(parser, depth_default=2)
        >>> args = parser.parse_args(["-B", "4"])
        >>> args.beam_width, args.depth
        (4, 2)
    """
    shown = {"beam": "" if beam_default is None else f" (default {beam_default})",
             "depth": "" if depth_default is None else f" (default {depth_default})"}
    parser.add_argument("-B", "--beam-width", dest=beam_dest, metavar="B", type=type, default=beam_default,
                        help="Stage 1 beam width B" + shown["beam"])
    parser.add_argument("-D", "--depth", dest=depth_dest, metavar="D", type=type, default=depth_default,
                        help="Stage 1 maximum depth D" + shown["depth"])
    for spelling in old_depth:
        deprecated_alias(parser, spelling, "-D/--depth", dest=depth_dest, type=type)


@contextlib.contextmanager
def cli_warnings(prog: str) -> Iterator[None]:
    """Show fortekit's warnings (W800 among them) on stderr as ``PROG: warning: [Wnnn] ...``, always.

    Example:
        >>> import io, contextlib as c
        >>> from fortekit._deprecated import warn_moved
        >>> err = io.StringIO()
        >>> with c.redirect_stderr(err), cli_warnings("fortekit"):
        ...     warn_moved("--out", "-o/--output")
        >>> err.getvalue()[:27]
        'fortekit: warning: [W800] -'
    """
    from fortekit.errors import FortekitWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", FortekitWarning)
        shown = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
            if issubclass(category, FortekitWarning):
                print(f"{prog}: warning: {message}", file=sys.stderr)
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


def run_cli(call: Callable[[], int], prog: str) -> int:
    """Run a command with the exit codes of every command (:data:`EXIT_CODES`).

    Ctrl-C is 130 with one line on stderr; a closed standard output (``... | head``) is 141
    with no traceback and no "Broken pipe" message (standard output is pointed at /dev/null,
    as Python's documentation recommends); fortekit's warnings are shown on stderr.

    Args:
        call: runs the command and returns its exit code.
        prog: the command's name, for the messages.

    Returns:
        The exit code.

    Example:
        >>> def interrupted() -> int:
        ...     raise KeyboardInterrupt
        >>> import contextlib, io
        >>> with contextlib.redirect_stderr(io.StringIO()):
        ...     run_cli(interrupted, "demo")
        130
    """
    from fortekit.search.refine.job import stdout_closed

    try:
        with cli_warnings(prog):
            status = int(call())
            sys.stdout.flush()  # a reader that went away shows here, not at exit
            return status
    except BrokenPipeError:
        return stdout_closed()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
