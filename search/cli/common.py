"""What every command shares: one spelling per idea, the exit codes, progress bars.

Each ``add_*_option`` function adds one idea to a parser with the one spelling every command uses:

==================  ==============================================================
idea                spelling
==================  ==============================================================
the index           ``--index DIR``
hits per query      ``-k/--top-k``
what is written     ``-o/--output`` (``-`` for standard output)
less on stderr      ``-q/--quiet``
JSON lines          ``--json``
Stage 1             ``--stage1 off|feedback|online|offline``
columns             ``--id-column`` / ``--text-column``
ranked output       ``--format jsonl|tsv|trec``
Stage 1's beam      ``-B/--beam-width``, ``-D/--depth``
==================  ==============================================================

Exit codes, the same for every command (:data:`EXIT_CODES`): 0 ok, 1 some inputs failed, 2 usage
or bad input, 130 interrupted, 141 standard output's reader went away.

Example:
    >>> parser = argparse.ArgumentParser(prog="demo")
    >>> add_output_option(parser)
    >>> add_top_k_option(parser)
    >>> args = parser.parse_args(["-o", "ranked.jsonl", "--top-k", "3"])
    >>> args.output, args.top_k
    ('ranked.jsonl', 3)
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from fortekit.search.cli.output_options import OutputKind, OutputPath

__all__ = [
    "CLI_FULL_COLLECTIONS",
    "EXIT_CODES",
    "TopK",
    "add_column_options",
    "add_depth_options",
    "add_format_option",
    "add_index_option",
    "add_json_option",
    "add_output_option",
    "add_quiet_option",
    "add_stage1_option",
    "add_top_k_option",
    "rarer_full_collections",
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

#: While a command runs, the garbage collector's third threshold (Python's default: 10): a full
#: collection after this many collections of the middle generation. What a command loads
#: (torch, spaCy, the models, the vocabulary's tables) lives as long as the process, and every
#: full collection walks all of it to free next to nothing: a cold ``fortekit search`` made 5,
#: 0.30-0.35 s of CPU, to free 55 objects (docs/cold_start.md). At 100 it makes none. Once the
#: loaded objects are many, Python's own rule (a full collection only when the objects waiting
#: for one are a quarter of those it would walk) decides, as before.
CLI_FULL_COLLECTIONS = 100


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


def add_index_option(
    parser: argparse.ArgumentParser, *, dest: str = "index", required: bool = False,
    help: str = "the index directory (written by `fortekit index build`)",
    type: Callable[[str], Any] | None = None,
) -> None:
    """``--index DIR``.

    Args:
        parser: the command's parser.
        dest: where the value goes.
        required: whether the command needs it.
        help: the help text.
        type: the value's type (e.g. :class:`pathlib.Path`).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_index_option(parser, required=True)
        >>> parser.parse_args(["--index", "clips.index"]).index
        'clips.index'
    """
    parser.add_argument("--index", dest=dest, metavar="DIR", required=required, help=help, **_typed(type))


class TopK:
    """The ``type=`` of ``-k/--top-k``: a whole number >= 1, else E764 naming the command's docs page.

    Args:
        command: the command the option belongs to (``"fortekit search"``, ``"fol-refine"``).

    Example:
        >>> TopK("fortekit search")("5")
        5
        >>> TopK("fortekit search")("0")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: [E764] -k/--top-k is the number of hits per query, ...
    """

    __name__ = "top-k"  # argparse names a type in the message of a value it cannot convert

    def __init__(self, command: str) -> None:
        self.command = command

    def __call__(self, text: str) -> int:
        """``text`` as the number of hits, or ``argparse.ArgumentTypeError`` (E764)."""
        from fortekit.errors import Errors
        from fortekit.search.cli.suggest import doc_page

        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(Errors.E764.format(
                value=text, command=self.command, page=doc_page(self.command) or "docs/retriever.md"))
        return value


def add_top_k_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, default: int = 10, dest: str = "top_k",
    type: Callable[[str], Any] | None = None, help: str | None = None,
) -> None:
    """``-k/--top-k K``: hits per query (by default a whole number >= 1: :class:`TopK`, E764).

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit search")
        >>> add_top_k_option(parser, default=5)
        >>> parser.parse_args([]).top_k, parser.parse_args(["-k", "2"]).top_k
        (5, 2)
    """
    if type is None:
        type = TopK(getattr(parser, "prog", None) or "fortekit search")
    parser.add_argument("-k", "--top-k", dest=dest, metavar="K", type=type, default=default,
                        help=help or f"hits per query (default: {default})")


def add_output_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, dest: str = "output",
    required: bool = False, metavar: str = "OUT", help: str = "where to write ('-' for standard output)",
    type: Callable[[str], Any] | None = None, default: Any = None,
    kind: OutputKind | Callable[[argparse.Namespace], OutputKind] = "file", stdout: bool = False,
    resumes: Callable[[argparse.Namespace], str | None] | None = None,
) -> None:
    """``-o/--output OUT``.

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
        kind: ``"file"`` or ``"folder"`` (or a function of the parsed arguments giving it).
        stdout: ``-`` means standard output.
        resumes: for an output the command resumes (see ``OutputPath.resumes``).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_output_option(parser, dest="out", required=True)
        >>> parser.parse_args(["-o", "report.md"]).out
        'report.md'
    """
    marked = OutputPath(kind, convert=type or str, stdout=stdout, resumes=resumes)
    parser.add_argument("-o", "--output", dest=dest, metavar=metavar, default=default,
                        required=required, help=help, type=marked)


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


def add_stage1_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *,
    choices: Sequence[str] = ("auto", "off", "feedback", "online", "offline"), default: str | None = "auto",
    help: str = "refine each query first (Stage 1)",
) -> None:
    """``--stage1 off|feedback|online|offline``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_stage1_option(parser)
        >>> parser.parse_args(["--stage1", "online"]).stage1
        'online'
    """
    parser.add_argument("--stage1", choices=list(choices), default=default,
                        help=f"{help} (default: {default})")


SWITCH_CHOICES: tuple[str, ...] = ("auto", "on", "off")


def pipeline_spec(args: argparse.Namespace, **given: Any) -> Any:
    """The :class:`~fortekit.search.pipeline.spec.PipelineSpec` of a command's stage flags.

    Only forwards: :meth:`PipelineSpec.from_switches` reads the switches. A flag the command does
    not have is left "auto"; ``given`` adds what the command built itself (a lookup table, a refiner).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_stage_switches(parser)
        >>> pipeline_spec(parser.parse_args(["--stage3", "off"])).rerank is None
        True
    """
    from fortekit.search.pipeline import PipelineSpec

    switches = {name: getattr(args, name) for name in (
        "stage1", "projection", "formula_scoring", "gamma", "stage3", "order_check", "first_pass")
        if getattr(args, name, None) is not None}
    switches.update(given)
    return PipelineSpec.from_switches(**switches)


def add_threads_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, role: str = "batch",
) -> None:
    """``--threads N|auto``: torch's CPU threads, by the one policy (:mod:`fortekit._threads`).

    The dispatcher applies it before the handler runs (:func:`apply_thread_option`), so every
    command that encodes follows the same rule: the physical cores for a batch job, a fixed
    share per worker for the service.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_threads_option(parser)
        >>> parser.parse_args(["--threads", "2"]).threads, parser.parse_args([]).threads
        ('2', 'auto')
    """
    what = ("the physical cores this process may use" if role == "batch"
            else "the physical cores divided among the workers")
    parser.add_argument("--threads", metavar="N|auto", default="auto",
                        help=f"torch's CPU threads (default: auto, {what}; docs/retriever.md, \"Threads\")")
    parser.set_defaults(thread_role=role)


def apply_thread_option(args: argparse.Namespace) -> str | None:
    """Apply a command's ``--threads`` (if it has one); a coded message for a bad value, else None.

    Example:
        >>> apply_thread_option(argparse.Namespace()) is None
        True
    """
    if not hasattr(args, "threads"):
        return None
    from fortekit._threads import apply_threads
    from fortekit.errors import FortekitError

    try:
        apply_threads(args.threads, role=getattr(args, "thread_role", "batch"),
                      workers=getattr(args, "workers", 1) or 1)
    except FortekitError as exc:
        return str(exc)
    return None


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
    parser.add_argument("--first-pass", choices=["auto", "exact", "ann"], default="auto",
                        help="the candidate pool: exact cosine, or the index's saved ANN index "
                        "(fortekit index build --ann); auto: ANN from 100,000 items on, without a "
                        "Stage 2 head (default: auto)")


def add_column_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, text_dest: str = "text_column",
    id_dest: str | None = "id_column", text_help: str = "the CSV/TSV column or JSONL field of the texts",
    id_help: str = "the CSV/TSV column or JSONL field of the ids",
) -> None:
    """``--id-column`` and ``--text-column``.

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
    type: Callable[[str], Any] = int,
) -> None:
    """Stage 1's beam search: ``-B/--beam-width B`` and ``-D/--depth D``.

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
                        help="Stage 1 maximum depth D" + shown["depth"]
                        + ("; 0 searches no refinement, q* moved by the feedback anchors only"
                           if depth_default == 0 else ""))


@contextlib.contextmanager
def cli_warnings(prog: str) -> Iterator[None]:
    """Show fortekit's warnings on stderr as ``PROG: warning: [Wnnn] ...``, always.

    Example:
        >>> import io, contextlib as c
        >>> from fortekit.errors import FortekitWarning
        >>> err = io.StringIO()
        >>> with c.redirect_stderr(err), cli_warnings("fortekit"):
        ...     warnings.warn("[W870] open to the network", FortekitWarning)
        >>> err.getvalue().rstrip()
        'fortekit: warning: [W870] open to the network'
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


@contextlib.contextmanager
def rarer_full_collections(every: int = CLI_FULL_COLLECTIONS) -> Iterator[None]:
    """Full garbage collections at most every ``every`` middle-generation ones, inside the block.

    A command's start-up makes objects that live as long as the process: full collections
    walk them and free nothing (:data:`CLI_FULL_COLLECTIONS`). The thresholds are put back on
    leaving, so that :func:`fortekit.search.cli.main` called from Python leaves them as they were;
    a threshold already higher, or automatic collection switched off, is kept.

    Example:
        >>> import gc
        >>> before = gc.get_threshold()
        >>> with rarer_full_collections(100):
        ...     gc.get_threshold()[2] >= 100
        True
        >>> gc.get_threshold() == before
        True
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], max(thresholds[2], every))
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def run_cli(call: Callable[[], int], prog: str) -> int:
    """Run a command with the exit codes of every command (:data:`EXIT_CODES`).

    Ctrl-C is 130 with one line on stderr; a closed standard output (``... | head``) is 141
    with no traceback and no "Broken pipe" message (standard output is pointed at /dev/null,
    as Python's documentation recommends); fortekit's warnings are shown on stderr. Full
    garbage collections are rarer while it runs (:func:`rarer_full_collections`).

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
    try:
        with cli_warnings(prog), rarer_full_collections():
            status = int(call())
            sys.stdout.flush()  # a reader that went away shows here, not at exit
            return status
    except BrokenPipeError:
        from fortekit.search.refine.job import stdout_closed

        return stdout_closed()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
