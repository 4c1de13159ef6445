"""``fortekit search QUERIES -o OUT``: a query file through the Retriever, with fol-refine's file handling.

The query file is read as fol-refine reads it (.txt, .jsonl, .csv, .tsv; a bad line is reported
with its number and the rest runs), each batch's records are appended and flushed as they are
made, and re-running the same command resumes: queries already in OUT are skipped, and a
resumed OUT must have been written with the same settings (``OUT.settings.json``).

Example:
    $ fortekit search --index clips.index queries.txt -o ranked.jsonl -k 20
    $ fortekit search --index clips.index log.csv --column text -o - --json
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
        >>> args = argparse.Namespace(index=Path("idx"), k=5, explain=False, stage1="off", lookup=None,
        ...                           projection=None, formula_scoring="on", stage3="on")
        >>> sorted(search_settings(args))[:4]
        ['explain', 'format', 'formula_scoring', 'index']
    """

    def resolved(path: Path | None) -> str | None:
        return None if path is None else str(Path(path).expanduser().resolve())

    return {
        "index": resolved(args.index), "k": args.k, "explain": args.explain, "stage1": args.stage1,
        "lookup": resolved(args.lookup), "projection": resolved(args.projection),
        "formula_scoring": args.formula_scoring, "stage3": args.stage3, "format": "jsonl",
    }


def search_file(args: argparse.Namespace, out: TextIO) -> int:
    """Search the query file ``args.queries[0]`` into ``args.output``.

    Returns:
        0 when every line was searched, 1 when a line was bad or failed, the input or the
        output is unusable, or the run stopped early; 130 when interrupted; 141 when standard
        output's reader went away (``-o -``).
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
        return 1


def _check(args: argparse.Namespace) -> Path:
    if len(args.queries) != 1:
        raise QueryFileError(Errors.E667.format(
            option="-o", needed="exactly one QUERY, the query file",
            why=f"{len(args.queries)} were given (search several queries without -o, or put them in a file)",
        ))
    for option, value in (("-k", args.k), ("--batch-size", args.batch_size), ("--max-chars", args.max_chars)):
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
    return Path(args.queries[0]).expanduser()


def _search_file(args: argparse.Namespace, out: TextIO) -> int:
    from fortekit.search.cli.search import make_retriever
    from fortekit.search.refine.job import QueryFileJob, SetupError, format_lines
    from fortekit.search.refine.query_io import read_queries
    from fortekit.search.refine.search_run import SearchRunner

    queries = _check(args)
    output = None if args.output == "-" else Path(args.output).expanduser()
    job = QueryFileJob(_PROG, queries, output, settings=search_settings(args), overwrite=args.overwrite,
                       input_format=args.input_format, quiet=args.quiet, progress=args.progress, stream=out,
                       other_inputs=[args.lookup],
                       inputs={"index": args.index, "Stage 2 head": args.projection})
    lines = read_queries(queries, file_format=args.input_format, column=args.column,
                         field=args.column or "query", max_chars=args.max_chars)

    def build() -> Any:
        try:
            return make_retriever(args)
        except (FortekitError, OSError) as exc:
            raise SetupError(exc) from exc

    def make_runner(writer: Any, resume: Any, report: Any, progress: Any) -> SearchRunner:
        return SearchRunner(build, writer, k=args.k, explain=args.explain, batch_size=args.batch_size,
                            resume=resume, report=report, progress=progress, where=str(queries))

    def summary(report: RunReport, runner: Any) -> str:
        parts = [f"{report.refined} searched", f"{report.from_lookup} from the lookup table",
                 f"{report.already_done} already done"]
        for label, numbers in (("bad lines", report.bad), ("failed", report.failed)):
            parts.append(f"{len(numbers)} {label}" + (f" (lines {format_lines(numbers)})" if numbers else ""))
        return f"{_PROG}: {', '.join(parts)} in {report.seconds:.1f} s; results: {job.where}"

    return job.run(lines, make_runner, summary)
