"""``fortekit search --queries FILE -o OUT``: a query file through the Retriever, fol-refine's way.

The query file is read as fol-refine reads it (.txt, .jsonl, .csv, .tsv; a bad line is reported
with its number and the rest runs), each batch's records are appended and flushed as they are
made, and re-running the same command resumes: queries already in OUT are skipped, and a
resumed OUT must have been written with the same settings (``OUT.settings.json``), against the
index in the same state (E638 after ``fortekit index add``, ``remove`` or ``compact``).
``--queries -`` reads standard input. The records are in the one format of ``fortekit search``
(:func:`~fortekit.search.cli.search.output_format`: a table without ``-o``, JSON lines with it,
or ``--format``); ``--format table|tsv|trec`` into a file is written whole, never resumed: into
a temporary file beside OUT, renamed over it when every query is done (a kill leaves the old
OUT), so an existing OUT needs ``--overwrite`` (E749); a FIFO or a device is written in place.
``--format trec`` refuses an id a TREC line cannot hold (E750).

Example:
    $ fortekit search --index clips.index --queries queries.txt -o ranked.jsonl -k 20
    $ fortekit search --index clips.index --queries log.csv --text-column text --format trec -o run.trec
    $ cat queries.txt | fortekit search --index clips.index --queries - --json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from fortekit.errors import Errors, FortekitError, QueryFileError

if TYPE_CHECKING:
    from fortekit.search.refine.run import RunReport

__all__ = ["search_file", "search_settings", "whole_file_reason"]

_PROG = "fortekit search"


def search_settings(args: argparse.Namespace, index_state: str | None = None) -> dict[str, Any]:
    """What changes the records: a resumed output must have been written with the same.

    Args:
        args: the parsed arguments of ``fortekit search``.
        index_state: the index's state (:func:`~fortekit.search.index.state.index_state`), recorded
            so that a resume after ``fortekit index add|remove|compact`` is refused (E638); None
            records none (standard output, which is not resumed).

    Returns:
        The settings, as JSON values.

    Example:
        >>> args = argparse.Namespace(index=Path("idx"), top_k=5, explain=False, stage1="off", lookup=None,
        ...                           projection="auto", formula_scoring="on", stage3="on", format=None)
        >>> sorted(search_settings(args))[:4]
        ['explain', 'format', 'formula_scoring', 'index']
    """

    def resolved(path: Path | str | None) -> str | None:
        return None if path is None else str(Path(path).expanduser().resolve())

    projection = args.projection if args.projection in (None, "auto", "none") else resolved(args.projection)
    settings: dict[str, Any] = {
        "index": resolved(args.index), "k": args.top_k, "explain": args.explain, "stage1": args.stage1,
        "lookup": resolved(args.lookup), "projection": projection,
        "formula_scoring": args.formula_scoring, "stage3": args.stage3,
        "order_check": getattr(args, "order_check", "auto"),
        "format": _format(args),
    }
    if index_state is not None:
        settings["index_state"] = index_state
    return settings


def whole_file_reason(args: argparse.Namespace) -> str | None:
    """None when ``-o`` is resumed (JSON lines); else why it is written whole (E749 without --overwrite).

    Example:
        >>> whole_file_reason(argparse.Namespace(format=None)) is None
        True
        >>> whole_file_reason(argparse.Namespace(format="trec"))
        '--format trec writes a whole TREC run file'
    """
    file_format = getattr(args, "format", None) or "jsonl"  # with -o, JSON lines unless --format says
    if file_format == "jsonl":
        return None
    kind = {"trec": "TREC run", "tsv": "TSV", "table": "table"}.get(file_format, file_format)
    return f"--format {file_format} writes a whole {kind} file"


def _format(args: argparse.Namespace) -> str:
    from fortekit.search.cli.search import output_format

    return output_format(args)


def search_file(args: argparse.Namespace, out: TextIO) -> int:
    """Search the query file ``args.queries_file`` into ``args.output``.

    Args:
        args: the parsed arguments of ``fortekit search``.
        out: standard output (for ``-o -`` and no ``-o``).

    Returns:
        0 when every line was searched; 1 when a line was bad or failed, or the run stopped
        early; 2 when the input or the output is unusable; 130 when interrupted; 141 when
        standard output's reader went away.
    """
    from fortekit.search.refine.job import stdout_closed

    try:
        return _search_file(args, out)
    except BrokenPipeError:
        return stdout_closed()
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
    except (FortekitError, OSError) as exc:
        print(f"{_PROG}: {exc}", file=sys.stderr)
        return 2


def _check(args: argparse.Namespace) -> None:
    checked = (("-k", args.top_k), ("--batch-size", args.batch_size), ("--max-chars", args.max_chars))
    for option, value in checked:
        if value < 1:
            raise QueryFileError(Errors.E668.format(
                option=option, expected="a whole number >= 1", value=value, hint=" (docs/retriever.md)",
            ))
    from fortekit.search.cli.refine_args import MAX_BATCH_SIZE

    if args.batch_size > MAX_BATCH_SIZE:
        raise QueryFileError(Errors.E668.format(
            option="--batch-size", expected=f"a whole number from 1 to {MAX_BATCH_SIZE}",
            value=args.batch_size,
            hint=" (a batch's queries and their rankings are held in memory at once)",
        ))


def _stdin_file(args: argparse.Namespace) -> Path:
    """Standard input, spooled to a private temporary file (the job reads its file twice)."""
    import atexit
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="fortekit-search-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / f"stdin.{args.input_format or 'txt'}"
    with path.open("wb") as handle:
        shutil.copyfileobj(sys.stdin.buffer, handle)
    return path


class _RowWriter:
    """Writes each record as a table, TSV or TREC rows through a ResultWriter (its file, stream, errors)."""

    def __init__(self, writer: Any, file_format: str, ids: dict[int, str], *, explain: bool = False) -> None:
        self.writer, self.file_format, self.ids, self.explain = writer, file_format, ids, explain

    def write(self, record: dict[str, Any]) -> None:
        from fortekit.search.cli.search import format_record

        text = format_record(record, self.file_format, self.ids.get(record["line"]), explain=self.explain)
        if text:
            self.writer._emit(text)
        self.writer.written += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.writer, name)


def _search_file(args: argparse.Namespace, out: TextIO) -> int:
    from fortekit.search.cli.search import make_retriever
    from fortekit.search.refine.job import QueryFileJob, SetupError, format_lines
    from fortekit.search.refine.query_io import read_queries
    from fortekit.search.refine.search_run import SearchRunner

    _check(args)
    queries = _stdin_file(args) if args.queries_file == "-" else Path(args.queries_file).expanduser()
    output = None if args.output in (None, "-") else Path(args.output).expanduser()
    file_format = _format(args)
    # The index's state, for a resumable output: recorded beside it, and the index loaded must be in it.
    state = _index_state(args.index) if output is not None else None
    inputs = {"index": args.index, "Stage 2 head": _head_file(args.projection)}
    # TSV and TREC are written whole (old or new, never half): the job streams into the file's
    # temporary twin, renamed over OUT once every query is done (_WholeFile).
    whole = _WholeFile(output, args, [("query file", queries), ("lookup table", args.lookup),
                                      *inputs.items()]) if file_format != "jsonl" and output else None
    try:
        job = QueryFileJob(_PROG, queries, None if whole else output, settings=search_settings(args, state),
                           overwrite=args.overwrite, input_format=args.input_format, quiet=args.quiet,
                           progress=args.progress, stream=whole.handle if whole else out,
                           other_inputs=[args.lookup], inputs=inputs)
        input_format = args.input_format or ("txt" if args.queries_file == "-" else None)
        lines = read_queries(queries, file_format=input_format, column=args.text_column,
                             field=args.text_column, max_chars=args.max_chars, target=args.id_column)
    except BaseException:
        if whole:  # a query file or an output refused before the run: nothing left beside OUT
            whole.discard()
        raise
    if whole:
        job.where = str(output)
    ids: dict[int, str] = {}

    def remember(items: Any) -> Any:
        for item in items:  # the query's id: --id-column's, else the file's own (a BEIR _id)
            qid = item.target if item.target is not None else item.query_id
            if qid is not None:
                ids[item.line] = qid
            yield item

    def build() -> Any:
        try:
            retriever = make_retriever(args)
            _check_loaded_state(args.index, state, retriever.index)
            if file_format == "trec":  # every id must fit a TREC line (E750) before a query is searched
                from fortekit.search.eval.runs import check_trec_ids

                check_trec_ids(retriever.index.ids)
        except (FortekitError, OSError) as exc:
            raise SetupError(exc) from exc
        return retriever

    def make_runner(writer: Any, resume: Any, report: Any, progress: Any) -> SearchRunner | _Finished:
        if file_format != "jsonl":
            writer = _RowWriter(writer, file_format, ids, explain=args.explain)
        runner = SearchRunner(build, writer, k=args.top_k, explain=args.explain, batch_size=args.batch_size,
                              resume=resume, report=report, progress=progress, where=str(queries))
        return whole.watch(runner) if whole else runner

    def summary(report: RunReport, runner: Any) -> str:
        parts = [f"{report.refined} searched", f"{report.from_lookup} from the lookup table",
                 f"{report.already_done} already done"]
        for label, numbers in (("bad lines", report.bad), ("failed", report.failed)):
            parts.append(f"{len(numbers)} {label}" + (f" (lines {format_lines(numbers)})" if numbers else ""))
        return f"{_PROG}: {', '.join(parts)} in {report.seconds:.1f} s; results: {job.where}"

    if whole is None:
        return job.run(remember(lines), make_runner, summary)
    try:
        return whole.finish(job.run(remember(lines), make_runner, summary), quiet=args.quiet)
    finally:
        whole.discard()


class _Finished:
    """A runner that records whether its run returned (not interrupted, not stopped by an error)."""

    def __init__(self, runner: Any) -> None:
        self.runner, self.finished = runner, False

    def run(self, lines: Any) -> Any:
        report = self.runner.run(lines)
        self.finished = True
        return report

    def __getattr__(self, name: str) -> Any:
        return getattr(self.runner, name)


class _WholeFile:
    """``--format tsv|trec -o OUT``: OUT written whole, under its lock, by the one output rule.

    A regular file is written to a temporary file beside it and renamed over it only when the
    run finished: a kill, a Ctrl-C or an error leaves the old OUT (or none) as it was. A FIFO or
    a device is written in place. An existing OUT needs --overwrite (E749): it is not resumed.
    """

    def __init__(self, output: Path, args: argparse.Namespace, inputs: list[tuple[str, Any]]) -> None:
        from fortekit.safe_write import (
            AtomicFile,
            OutputLock,
            OutputTarget,
            check_not_input,
            check_output_target,
            remove_stale_temporaries,
        )

        check_not_input(output, [(what, path) for what, path in inputs if path is not None])
        self.output, self.format = output, _format(args)
        self.lock: OutputLock | None = None
        self.runner: _Finished | None = None
        # the rule (E741-E749) before anything is made beside OUT, its lock file included
        target = check_output_target(output, overwrite=args.overwrite, whole_file=whole_file_reason(args),
                                     links=True)
        if target is not OutputTarget.STREAM:  # nothing to lock or clean up beside a pipe or a device
            self.lock = OutputLock(output).acquire()
            remove_stale_temporaries(output)  # a run killed before it finished left its temporary file
        try:
            self.file = AtomicFile(output, overwrite=True, links=True)
        except BaseException:
            self._unlock()
            raise
        self.handle = self.file.handle

    def watch(self, runner: Any) -> _Finished:
        self.runner = _Finished(runner)
        return self.runner

    def finish(self, status: int, *, quiet: bool) -> int:
        """Rename the file into place if the run finished (some bad lines included), else keep the old."""
        if self.runner is not None and self.runner.finished and status in (0, 1):
            self.file.commit()
            return status
        self.discard()
        if not quiet and self.file.temporary is not None:
            print(f"{_PROG}: {self.output} was left as it was: --format {self.format} writes it whole, "
                  "when every query is done; run the command again (with --overwrite if it exists)",
                  file=sys.stderr)
        return status

    def discard(self) -> None:
        self.file.discard()
        self._unlock()

    def _unlock(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None


def _index_state(index: str | Path) -> str:
    from fortekit.search.index.state import index_state

    return index_state(Path(index).expanduser())


def _check_loaded_state(directory: str | Path, recorded: str | None, index: Any) -> None:
    """E642 when the index loaded is not in the state recorded beside the output (it was written
    between the two reads): its rankings would be recorded as the other state's."""
    if recorded is None or index.state == recorded:
        return
    from fortekit.errors import AudioIndexError

    raise AudioIndexError(Errors.E642.format(directory=directory, then=recorded, now=index.state))


def _head_file(projection: str | None) -> Path | None:
    """The Stage 2 head file -o must not overwrite (none for auto and none)."""
    return None if projection in (None, "auto", "none") else Path(projection)
