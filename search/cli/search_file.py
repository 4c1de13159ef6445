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
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from fortekit.errors import Errors, FortekitError, QueryFileError

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
        output is unusable, or the run stopped early; 130 when interrupted.
    """
    try:
        return _search_file(args, out)
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
    except FortekitError as exc:
        print(f"{_PROG}: {exc}", file=sys.stderr)
        return 1


def _check(args: argparse.Namespace) -> Path:
    if len(args.queries) != 1:
        raise QueryFileError(Errors.E457.format(
            option="-o", needed="exactly one QUERY, the query file",
            why=f"{len(args.queries)} were given (search several queries without -o, or put them in a file)",
        ))
    for option, value in (("-k", args.k), ("--batch-size", args.batch_size), ("--max-chars", args.max_chars)):
        if value < 1:
            raise QueryFileError(Errors.E458.format(
                option=option, expected="a whole number >= 1", value=value, hint="",
            ))
    queries = Path(args.queries[0]).expanduser()
    if args.output != "-":
        output = Path(args.output).expanduser()
        if queries.exists() and output.exists() and os.path.samefile(queries, output):
            raise QueryFileError(Errors.E454.format(path=output))  # a link or another name of the same file
        if queries.exists() and output.resolve() == queries.resolve():
            raise QueryFileError(Errors.E454.format(path=output))
    return queries


def _search_file(args: argparse.Namespace, out: TextIO) -> int:
    from tqdm import tqdm

    from fortekit.search.cli.search import make_retriever
    from fortekit.search.refine.output import ResultWriter, ResumeState, check_settings, write_settings
    from fortekit.search.refine.query_io import count_lines, detect_format, read_queries
    from fortekit.search.refine.search_run import SearchRunner

    started = time.perf_counter()
    queries = _check(args)
    output = None if args.output == "-" else Path(args.output).expanduser()
    lines = read_queries(queries, file_format=args.input_format, column=args.column,
                         field=args.column or "query", max_chars=args.max_chars)
    settings = search_settings(args)
    resume = ResumeState()
    if output is not None and not args.overwrite:
        resume = ResumeState.read(output, file_format="jsonl")
        check_settings(output, settings, resuming=resume.records > 0)
        if resume.cut_bytes and not args.quiet:
            print(f"{_PROG}: removed a torn last line ({resume.cut_bytes} bytes) from {output}",
                  file=sys.stderr)
    show_bar = args.progress if args.progress is not None else (sys.stderr.isatty() and not args.quiet)
    header = detect_format(queries, args.input_format) in ("csv", "tsv")
    total = max(count_lines(queries) - header, 0) if show_bar else 0
    bar = tqdm(total=total, unit="line", disable=not show_bar, file=sys.stderr, dynamic_ncols=True)
    writer = ResultWriter(output, file_format="jsonl", overwrite=args.overwrite, stream=out)
    if output is not None:
        write_settings(output, settings)
    runner = SearchRunner(
        lambda: make_retriever(args), writer, k=args.k, explain=args.explain, batch_size=args.batch_size,
        resume=resume, report=lambda text: tqdm.write(text, file=sys.stderr), progress=bar.update,
        where=str(queries),
    )
    stopped: str | None = None
    try:
        runner.run(lines)
        bar.update(max(bar.total - bar.n, 0))
    except KeyboardInterrupt:
        stopped = "interrupted"
    finally:
        writer.close()
        bar.close()
    report = runner.summary
    report.seconds = time.perf_counter() - started
    where = str(output) if output is not None else "standard output"
    if stopped is not None:
        print(f"{_PROG}: {Errors.E459.format(reason=stopped, path=where)}", file=sys.stderr)
    if not args.quiet:
        parts = [f"{report.refined} searched", f"{report.from_lookup} from the lookup table",
                 f"{report.already_done} already done", f"{len(report.bad)} bad lines",
                 f"{len(report.failed)} failed"]
        bad = ", ".join(map(str, (report.bad + report.failed)[:10]))
        print(f"{_PROG}: {', '.join(parts)}{f' (lines {bad})' if bad else ''} in {report.seconds:.1f} s; "
              f"results: {where}", file=sys.stderr)
    if stopped == "interrupted":
        return 130
    return 0 if report.ok else 1
