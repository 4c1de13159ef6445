"""``fortekit search --queries FILE -o OUT``: a query file through the Retriever, fol-refine's way.

The query file is read as fol-refine reads it (.txt, .jsonl, .csv, .tsv; a bad line is reported
with its number and the rest runs), each batch's records are appended and flushed as they are
made, and re-running the same command resumes: queries already in OUT are skipped, and a
resumed OUT must have been written with the same settings (``OUT.settings.json``).
``--queries -`` reads standard input; ``--format tsv|trec`` writes rows instead of JSON lines
(such an output is written afresh, not resumed).

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

__all__ = ["search_file", "search_settings"]

_PROG = "fortekit search"


def search_settings(args: argparse.Namespace) -> dict[str, Any]:
    """What changes the records: a resumed output must have been written with the same.

    Example:
        >>> args = argparse.Namespace(index=Path("idx"), top_k=5, explain=False, stage1="off", lookup=None,
        ...                           projection="auto", formula_scoring="on", stage3="on", format=None)
        >>> sorted(search_settings(args))[:4]
        ['explain', 'format', 'formula_scoring', 'index']
    """

    def resolved(path: Path | str | None) -> str | None:
        return None if path is None else str(Path(path).expanduser().resolve())

    projection = args.projection if args.projection in (None, "auto", "none") else resolved(args.projection)
    return {
        "index": resolved(args.index), "k": args.top_k, "explain": args.explain, "stage1": args.stage1,
        "lookup": resolved(args.lookup), "projection": projection,
        "formula_scoring": args.formula_scoring, "stage3": args.stage3,
        "order_check": getattr(args, "order_check", "auto"),
        "format": getattr(args, "format", None) or "jsonl",
    }


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
                option=option, expected="a whole number >= 1", value=value, hint="",
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
    """Writes each record as TSV or TREC rows through a ResultWriter (its file, stream and errors)."""

    def __init__(self, writer: Any, file_format: str, ids: dict[int, str]) -> None:
        self.writer, self.file_format, self.ids = writer, file_format, ids

    def write(self, record: dict[str, Any]) -> None:
        from fortekit.search.cli.search import format_record

        text = format_record(record, self.file_format, self.ids.get(record["line"]))
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
    file_format = args.format or "jsonl"
    job = QueryFileJob(_PROG, queries, output, settings=search_settings(args),
                       overwrite=args.overwrite or file_format != "jsonl",
                       input_format=args.input_format, quiet=args.quiet, progress=args.progress, stream=out,
                       other_inputs=[args.lookup],
                       inputs={"index": args.index, "Stage 2 head": _head_file(args.projection)})
    input_format = args.input_format or ("txt" if args.queries_file == "-" else None)
    lines = read_queries(queries, file_format=input_format, column=args.text_column,
                         field=args.text_column or "query", max_chars=args.max_chars, target=args.id_column)
    ids: dict[int, str] = {}

    def remember(items: Any) -> Any:
        for item in items:
            if item.target is not None:
                ids[item.line] = item.target
            yield item

    def build() -> Any:
        try:
            return make_retriever(args)
        except (FortekitError, OSError) as exc:
            raise SetupError(exc) from exc

    def make_runner(writer: Any, resume: Any, report: Any, progress: Any) -> SearchRunner:
        if file_format != "jsonl":
            writer = _RowWriter(writer, file_format, ids)
        return SearchRunner(build, writer, k=args.top_k, explain=args.explain, batch_size=args.batch_size,
                            resume=resume, report=report, progress=progress, where=str(queries))

    def summary(report: RunReport, runner: Any) -> str:
        parts = [f"{report.refined} searched", f"{report.from_lookup} from the lookup table",
                 f"{report.already_done} already done"]
        for label, numbers in (("bad lines", report.bad), ("failed", report.failed)):
            parts.append(f"{len(numbers)} {label}" + (f" (lines {format_lines(numbers)})" if numbers else ""))
        return f"{_PROG}: {', '.join(parts)} in {report.seconds:.1f} s; results: {job.where}"

    return job.run(remember(lines), make_runner, summary)


def _head_file(projection: str | None) -> Path | None:
    """The Stage 2 head file -o must not overwrite (none for auto and none)."""
    return None if projection in (None, "auto", "none") else Path(projection)
