"""A query file through a runner into an output: the file handling of ``fol-refine`` and ``fortekit search``.

One :class:`QueryFileJob` owns everything around the batch loop: the output may not be the
query file under any name (E664), nor any other input (the corpus, the anchor bank, the
index folder or a file inside it, the lookup table, the text-embedding cache), and neither
may its settings sidecar (E740), all checked before anything is opened for writing; an output
or sidecar that is a symbolic link to a file is refused (E741); the output and its sidecar are
locked for the whole run, so a second run on them stops at once (E742, naming the holder's
pid); a resumed output must be fol-refine-style records written with the same settings, each
query once (E662, E663, E670; a torn last line is cut), the settings sidecar is written
atomically, a progress bar runs on stderr, and the output is closed whatever happens, so that
a full disk or a closed pipe is a coded error (E661, E666) and not a traceback. The runner
(:class:`~fortekit.search.refine.run.BatchRunner` for Stage 1,
:class:`~fortekit.search.refine.search_run.SearchRunner` for the Retriever) does the work.

Example:
    >>> job = QueryFileJob("fortekit search", Path("q.txt"), Path("out.jsonl"),
    ...                    settings={"k": 5})  # doctest: +SKIP
    >>> status = job.run(read_queries(Path("q.txt")), make_runner, summary)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fortekit.errors import Errors, FortekitError, QueryFileError, ResumeConflictError

if TYPE_CHECKING:
    from fortekit.search.refine.output import OutputFormat, ResultWriter
    from fortekit.search.refine.query_io import QueryFormat, QueryLine
    from fortekit.search.refine.resume import ResumeState
    from fortekit.search.refine.run import RunReport

__all__ = ["QueryFileJob", "SetupError", "exit_at_next_interrupt", "format_lines", "stdout_closed"]

_SHOWN_LINES = 12


class SetupError(Exception):
    """Building the model side failed inside the run (it is built on first need): a usage-level error."""

    def __init__(self, error: FortekitError | OSError) -> None:
        super().__init__(str(error))
        self.error = error


class Runner(Protocol):
    """What a job drives: a batch loop with a report."""

    summary: RunReport

    def run(self, lines: Iterable[QueryLine]) -> RunReport:
        """Handle every line; keep ``summary`` up to date when interrupted."""


class QueryFileJob:
    """The file handling of one run over a query file.

    Args:
        prog: the command's name, for messages ("fol-refine", "fortekit search").
        queries: the query file.
        output: the output file, or None for standard output.
        file_format: the output's format, "jsonl" or "tsv".
        settings: what changes the results (recorded beside the output; a resumed output must match).
        ranking: whether TSV records carry the ranking columns.
        overwrite: start the output over instead of resuming it.
        input_format: the query file's format (None: from its extension).
        quiet: no summary and no notes on stderr.
        progress: a progress bar on stderr (None: when stderr is a terminal and not quiet).
        stream: where standard output goes (``output`` None).
        other_inputs: further files the run reads (a lookup table): the output may not be one of them.
        inputs: everything else the run reads, by what it is ({"corpus": path, "index": folder,
            ...}; None entries are skipped): the output and its sidecar may not be one of them,
            inside one of the folders, or a folder that holds one (E740).

    Raises:
        QueryFileError: the output is the query file or the lookup table (E664).
        OutputError: the output or its sidecar is (inside) another input (E740), or a
            symbolic link to a file (E741).
    """

    def __init__(
        self,
        prog: str,
        queries: Path,
        output: Path | None,
        *,
        file_format: OutputFormat = "jsonl",
        settings: Mapping[str, Any],
        ranking: bool = False,
        overwrite: bool = False,
        input_format: QueryFormat | None = None,
        quiet: bool = False,
        progress: bool | None = None,
        stream: Any = None,
        other_inputs: Sequence[Path | None] = (),
        inputs: Mapping[str, Path | None] | None = None,
    ) -> None:
        from fortekit.search.refine.output import same_file

        for source in (queries, *other_inputs):
            if output is not None and source is not None and same_file(output, source):
                # a symlink, ./, a hard link: one inode; writing would destroy what the run reads
                raise QueryFileError(Errors.E664.format(path=output, source=source))
        if output is not None:
            everything = [("query file", queries), *(("lookup table", path) for path in other_inputs),
                          *(inputs or {}).items()]
            _check_output(output, everything)
        self.prog, self.queries, self.output = prog, queries, output
        self.file_format, self.settings, self.ranking = file_format, dict(settings), ranking
        self.overwrite, self.input_format, self.quiet = overwrite, input_format, quiet
        self.show_bar = progress if progress is not None else (sys.stderr.isatty() and not quiet)
        self.stream = stream
        self.where = str(output) if output is not None else "standard output"

    def say(self, text: str) -> None:
        """A note on stderr, unless quiet."""
        if not self.quiet:
            print(text, file=sys.stderr)

    def resume(self) -> ResumeState:
        """What the output already holds (checked against this run's settings; a torn last line cut).

        Raises:
            QueryFileError: not a fol-refine-style output (E662), other or unknown settings (E663).
        """
        from fortekit.search.refine.resume import ResumeState

        if self.output is None or self.overwrite:
            return ResumeState()
        state = ResumeState.read(self.output, file_format=self.file_format, ranking=self.ranking,
                                 settings=self.settings)
        if state.cut_bytes:
            self.say(f"{self.prog}: removed a torn last line ({state.cut_bytes} bytes) from {self.output}")
        return state

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the output's and its sidecar's locks (a second run on them gets E742).

        A device or a pipe (``/dev/null``, ``-o -``) is not locked: nothing is resumed there.

        Raises:
            OutputLockedError: another run holds a lock (E742, with its pid).
            OutputError: a lock file is a symbolic link (E741).
            QueryFileError: the folder or the lock file cannot be made (E661; E666 without
                permission), named as the output.
        """
        from fortekit.errors import OutputWriteError
        from fortekit.safe_write import output_lock
        from fortekit.search.refine.output import write_error
        from fortekit.search.refine.resume import settings_path

        output = self.output
        if output is None or (output.exists() and not output.is_file()):
            yield
            return
        with contextlib.ExitStack() as stack:
            try:
                output.parent.mkdir(parents=True, exist_ok=True)
                stack.enter_context(output_lock(output, settings_path(output)))
            except OutputWriteError as exc:  # no lock file in a folder we may not write: as for the output
                number = exc.errno or 0
                raise write_error(output, OSError(number, os.strerror(number))) from None
            except OSError as exc:  # its folder cannot be made (OutputWriteError is an OSError: first)
                raise write_error(output, exc) from None
            yield

    def run(
        self,
        lines: Iterable[QueryLine],
        make_runner: Callable[
            [ResultWriter, ResumeState, Callable[[str], None], Callable[[int], None]], Runner
        ],
        summary: Callable[[RunReport, Runner], str],
    ) -> int:
        """Run the runner over ``lines`` into the output, holding its locks (:meth:`locked`).

        Returns:
            0 every line done, 1 a line bad or failed or the run stopped early, 130 interrupted.

        Raises:
            QueryFileError: the output is unusable before anything was written (E661-E666, E670);
                it holds a query line whose text has changed since (E672, when the run reaches it).
            OutputError: another run holds the output (E742); a sidecar that cannot be written.
            FortekitError, OSError: the model side cannot be built (from a :class:`SetupError`).
            BrokenPipeError: standard output's reader went away (see :func:`stdout_closed`).
        """
        with self.locked():
            return self._run(lines, make_runner, summary)

    def _run(
        self,
        lines: Iterable[QueryLine],
        make_runner: Callable[
            [ResultWriter, ResumeState, Callable[[str], None], Callable[[int], None]], Runner
        ],
        summary: Callable[[RunReport, Runner], str],
    ) -> int:
        """Run the runner over ``lines`` into the output (the locks are held).

        Args:
            lines: the query file's lines.
            make_runner: builds the runner from (writer, resume state, report, progress).
            summary: the closing line, from the report and the runner.

        Returns:
            0 every line done, 1 a line bad or failed or the run stopped early, 130 interrupted.

        Raises:
            QueryFileError: the output is unusable before anything was written (E661-E666).
            FortekitError, OSError: the model side cannot be built (from a :class:`SetupError`).
            BrokenPipeError: standard output's reader went away (see :func:`stdout_closed`).
        """
        from tqdm import tqdm

        from fortekit.search.refine.output import ResultWriter
        from fortekit.search.refine.query_io import count_lines, detect_format
        from fortekit.search.refine.resume import write_settings

        started = time.perf_counter()
        resume = self.resume()
        header = detect_format(self.queries, self.input_format) in ("csv", "tsv")
        total = max(count_lines(self.queries) - header, 0) if self.show_bar else 0
        bar = tqdm(total=total, unit="line", disable=not self.show_bar, file=sys.stderr, dynamic_ncols=True)
        writer = ResultWriter(self.output, file_format=self.file_format, ranking=self.ranking,
                              overwrite=self.overwrite, stream=self.stream)
        if self.output is not None and self.output.is_file():  # no sidecar beside /dev/null or a FIFO
            _remove_stale_sidecars(self.output)
            try:
                write_settings(self.output, self.settings)
            except FortekitError:
                _close(writer)
                bar.close()
                raise
        runner = make_runner(writer, resume, lambda text: tqdm.write(text, file=sys.stderr), bar.update)
        stopped: str | None = None
        try:
            runner.run(lines)
            bar.update(max(bar.total - bar.n, 0))  # comment lines are not counted as they pass
        except KeyboardInterrupt:
            stopped = "interrupted"
        except SetupError as exc:
            raise exc.error from None  # the model or the index cannot be used: a usage-level error
        except ResumeConflictError:
            raise  # the query file changed under the output: running again cannot resume it (E672)
        except BrokenPipeError:
            raise  # standard output's reader is gone: the command stops quietly
        except (FortekitError, OSError) as exc:
            stopped = str(exc)
        finally:
            bar.close()
            closing = _close(writer)
        stopped = stopped or closing
        report = runner.summary
        report.seconds = time.perf_counter() - started
        if stopped is not None and self.output is None:  # standard output cannot be resumed: no E669 hint
            print(f"{self.prog}: {stopped}", file=sys.stderr)
        elif stopped is not None:
            print(f"{self.prog}: {Errors.E669.format(reason=stopped, path=self.where)}", file=sys.stderr)
        self.say(summary(report, runner))
        if stopped == "interrupted":
            return 130
        return 0 if report.ok and stopped is None else 1


def _check_output(output: Path, inputs: Sequence[tuple[str, Path | None]]) -> None:
    """Refuse an output (or its sidecar) that is an input or a link to a file, before anything is written.

    An output that is a link to a device or a pipe (``/dev/stdout``) is taken: nothing there
    can be destroyed or resumed.
    """
    from fortekit.safe_write import check_not_input, check_not_symlink
    from fortekit.search.refine.resume import settings_path

    sidecar = settings_path(output)
    for target in (output, sidecar):
        check_not_input(target, [(what, path) for what, path in inputs if path is not None])
    if output.is_symlink() and (output.is_file() or not output.exists()):
        check_not_symlink(output)  # --overwrite would empty the file it points at: E741
    check_not_symlink(sidecar)  # the sidecar is rewritten every run: never through a link


def _remove_stale_sidecars(output: Path) -> None:
    """Remove the temporary settings files of a run killed while it wrote one (we hold the lock).

    They are named ``.OUTPUT.settings.json.*.tmp`` (:func:`fortekit.safe_write.atomic_write`);
    a plain file of that name is ours, a link or a folder is left alone.
    """
    from fortekit.search.refine.resume import settings_path

    sidecar = settings_path(output)
    with contextlib.suppress(OSError):
        for stale in sidecar.parent.glob(f".{sidecar.name}.*.tmp"):
            if stale.is_file() and not stale.is_symlink():
                stale.unlink(missing_ok=True)


def _close(writer: ResultWriter) -> str | None:
    """Close the output: None, or the coded error its last write met (a broken pipe is passed on)."""
    try:
        writer.close()
    except (FortekitError, OSError) as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        return str(exc)
    return None


def format_lines(numbers: Sequence[int]) -> str:
    """Line numbers for a summary, the first twelve then a count.

    Example:
        >>> format_lines(list(range(1, 15)))
        '1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, ... (14 in all)'
    """
    shown = ", ".join(map(str, numbers[:_SHOWN_LINES]))
    return shown + (f", ... ({len(numbers)} in all)" if len(numbers) > _SHOWN_LINES else "")


def stdout_closed() -> int:
    """Standard output's reader went away (``... -o - | head``): stop quietly, status 141.

    141 is what a shell reports for a program ended by SIGPIPE. Standard output is pointed at
    /dev/null first, so that Python's flush at exit does not fail again (the recipe of Python's
    documentation of the signal module).
    """
    with contextlib.suppress(OSError, ValueError):  # not a file (an io.StringIO): nothing to flush
        descriptor = sys.stdout.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, descriptor)
        os.close(devnull)
    return 141


def exit_at_next_interrupt() -> None:
    """From now on a Ctrl-C ends the process at once, quietly, with status 130.

    Called when an interrupted run returns: a second Ctrl-C while the process shuts down
    would otherwise break into torch's exit hooks and print their traceback.
    """

    def _exit(signum: int, frame: object) -> None:
        os._exit(130)

    with contextlib.suppress(ValueError):  # not the main thread: Python's handler stays
        signal.signal(signal.SIGINT, _exit)
