"""``fortekit search``: rank an index for text queries through the Retriever.

Queries on the command line, or a query file (``--queries FILE``, ``-`` for standard input,
searched batch by batch into ``-o OUT`` with fol-refine's file handling:
:mod:`fortekit.search.cli.search_file`), are written in one format, ``--format
table|jsonl|tsv|trec`` (:func:`output_format`): the same records whichever way the queries came.
The default is a table, and JSON lines with ``-o OUT`` (``-`` for standard output). A positional
query that names an existing file is refused (E760): it would be searched as text.

Example:
    $ fortekit search --index clips.index "a dog barking without people talking" -k 5
    $ fortekit search --index clips.index "rain on a roof" --explain
    $ fortekit search --index clips.index "rain" "birds at dawn" --json
    $ fortekit search --index clips.index --queries queries.txt           # a table, as for QUERY...
    $ fortekit search --index clips.index --queries queries.csv --text-column text -o ranked.jsonl
    $ fortekit search --index clips.index --queries queries.txt --format trec -o run.trec
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from fortekit.search.cli.common import (
    add_column_options,
    add_format_option,
    add_index_option,
    add_json_option,
    add_output_option,
    add_quiet_option,
    add_stage1_option,
    add_stage_switches,
    add_threads_option,
    add_top_k_option,
    pipeline_spec,
)
from fortekit.search.cli.search_file import whole_file_reason

__all__ = ["OUTPUT_FORMATS", "add_search_command", "check_queries", "format_record", "format_table",
           "make_retriever", "output_format", "run_search"]

#: The formats of ``fortekit search --format``: a table, JSON lines, TSV rows, a TREC run file.
OUTPUT_FORMATS = ("table", "jsonl", "tsv", "trec")

_CAPTION_WIDTH = 70


def add_search_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit search`` on the ``fortekit`` sub-parsers.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_search_command(parser.add_subparsers(dest="command"))
        >>> args = parser.parse_args(["search", "--index", "idx", "a dog barking", "-k", "3"])
        >>> args.queries, args.top_k, args.formula_scoring, args.stage3, args.output
        (['a dog barking'], 3, 'auto', 'auto', None)
    """
    from fortekit.search.refine.query_io import DEFAULT_MAX_CHARS, QUERY_FORMATS

    parser = commands.add_parser(
        "search",
        help="rank an index for text queries (formula scoring and Stage 3 by default)",
        description="Search an index built by `fortekit index build` with the Retriever: the first pass, "
        "formula scoring of each query's formula and Stage 3's default re-ranking (optionally Stage 1, "
        "a lookup table of stored refinements and a Stage 2 head). Prints rank, id, score and caption; a "
        "hit whose caption names a sound the query excludes is marked with '!'. A query file is given "
        "with --queries FILE ('-' for standard input; .txt, .jsonl, .csv, .tsv) and searched into -o OUT "
        "(default: standard output), resumably. "
        "Exit status: 0 all searched, 1 a bad line or a failed query, 2 usage or unusable input, "
        "130 interrupted, 141 standard output closed. See docs/retriever.md.",
    )
    parser.add_argument("queries", nargs="*", metavar="QUERY", help="the queries (a query file: --queries)")
    add_index_option(parser, required=True, type=Path)
    add_top_k_option(parser, default=10)
    parser.add_argument("--explain", action="store_true",
                        help="show phi0/phi*, the clauses, and per hit the predicates matched, missed and "
                        "violated")
    add_json_option(parser, help="one JSON object per query (as --format jsonl)")
    add_format_option(parser, choices=OUTPUT_FORMATS, default=None,
                      help="table, jsonl (SearchResult.to_dict per query), tsv (qid, query, rank, id, score) "
                      "or trec (a TREC run file: qid Q0 docid rank score fortekit), the same for QUERY... "
                      "and --queries; default: table, jsonl with -o")
    stages = parser.add_argument_group("stages")
    add_stage1_option(stages, help="refine each query first (Stage 1); auto: the index kind's default")
    stages.add_argument("--lookup", type=Path, metavar="FILE",
                        help="stored refinements (a fol-refine output): queries it holds skip Stage 1")
    add_stage_switches(stages)
    add_threads_option(stages)
    stages.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
    files = parser.add_argument_group("query files")
    files.add_argument("--queries", dest="queries_file", metavar="FILE",
                       help="search the queries of FILE ('-' for standard input), one record per query")
    add_output_option(files, stdout=True, resumes=whole_file_reason,
                      help="where --queries writes (one record per query; default and '-': standard output); "
                      "re-running the command resumes a JSONL file; tsv and trec are written whole (an "
                      "existing file needs --overwrite) and are old or new, never half")
    files.add_argument("--input-format", choices=QUERY_FORMATS,
                       help="the query file's format (default: from its extension; standard input: txt)")
    add_column_options(files, text_help="the CSV/TSV column or JSONL field of the queries (default: query, "
                       "else text)", id_help="the CSV/TSV column or JSONL field of the query ids (the qid of "
                       "--format trec; default: _id or id, else the line number)")
    files.add_argument("--max-chars", metavar="N", type=int, default=DEFAULT_MAX_CHARS,
                       help=f"skip longer queries as bad lines (default: {DEFAULT_MAX_CHARS})")
    files.add_argument("--overwrite", action="store_true",
                       help="start the output over instead of resuming it (tsv, trec: replace it)")
    files.add_argument("--batch-size", metavar="N", type=int, default=32,
                       help="queries searched together (default: 32)")
    add_quiet_option(files)
    files.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="show a progress bar on stderr (default: when stderr is a terminal)")
    parser.set_defaults(handler=run_search)


def make_retriever(args: argparse.Namespace) -> Any:
    """The Retriever that ``fortekit search``'s options describe.

    Raises:
        FortekitError: an index, lookup table, backbone or projection that cannot be used.
    """
    from fortekit.search.refine.lookup import LookupTable
    from fortekit.search.retriever import Retriever

    lookup = LookupTable.load(args.lookup) if args.lookup is not None else None
    return Retriever(args.index, pipeline_spec(args, lookup=lookup), device=args.device)


def _names_a_file(text: str) -> bool:
    """Whether a query names an existing file (a text too long to be a path does not)."""
    try:
        return "\0" not in text and Path(text).expanduser().is_file()
    except (OSError, ValueError):  # a name too long, or not encodable on this system
        return False


def check_queries(args: argparse.Namespace) -> str | None:
    """Why the command's queries cannot run (a coded message), or None.

    A positional query that names an existing file is refused (E760): query files are given
    with ``--queries``.

    Example:
        >>> args = argparse.Namespace(queries=["a dog barking"], queries_file=None, output=None)
        >>> check_queries(args) is None
        True
    """
    from fortekit.errors import Errors

    for query in args.queries:
        if query != "-" and _names_a_file(query):
            return Errors.E760.format(command="fortekit search", query=query)
    if args.queries_file is None and args.output is not None:
        return Errors.E667.format(option="-o", needed="--queries FILE",
                                  why="-o writes the records of a query file (search QUERY... prints them); "
                                  "leave -o out, or put the queries in a file (docs/retriever.md)")
    if args.queries_file is not None and args.queries:
        return Errors.E667.format(option="--queries", needed="no QUERY on the command line",
                                  why="search the file's queries, or the command line's, in one run "
                                  "(docs/retriever.md)")
    if args.queries_file is None and not args.queries:
        return Errors.E667.format(option="fortekit search", needed="a QUERY or --queries FILE",
                                  why="there is nothing to search: `fortekit search --index DIR \"a dog "
                                  "barking\"` (docs/retriever.md)")
    return None


def run_search(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``fortekit search``: 0 on success, 1 the queries failed, 2 usage or unusable input.

    Args:
        args: the parsed arguments.
        out: where the rankings go.

    Returns:
        The exit code; a coded message on stderr for each problem.
    """
    from fortekit.errors import FortekitError

    problem = check_queries(args)
    if problem is not None:
        print(f"fortekit search: {problem}", file=sys.stderr)
        return 2
    if args.queries_file is not None:
        from fortekit.search.cli.search_file import search_file

        return search_file(args, out)
    try:
        retriever = make_retriever(args)
    except FortekitError as exc:  # an index, lookup table, backbone or head that cannot be used
        print(f"fortekit search: {exc}", file=sys.stderr)
        return 2
    try:
        results = retriever.search(list(args.queries), k=args.top_k, explain=args.explain)
    except FortekitError as exc:  # the queries themselves (an empty one, one too long ...)
        print(f"fortekit search: {exc}", file=sys.stderr)
        return 1
    file_format = output_format(args)
    if args.explain and file_format == "table":  # which stages run, and why (docs/defaults.md)
        print("pipeline:", file=out)
        for line in retriever.pipeline.lines():
            print(f"  {line}", file=out)
        print(f"  first pass   {retriever.first_pass}", file=out)
    for number, result in enumerate(results, start=1):
        out.write(format_record({"line": number, **result.to_dict()}, file_format, explain=args.explain))
        if result.confidence.low:  # a coded warning, not a confident top k (docs/retriever.md, "Confidence")
            print(f"fortekit search: query {number}: {result.confidence.reason}", file=sys.stderr)
    return 0


def output_format(args: argparse.Namespace) -> str:
    """The one output format of ``fortekit search``, whether its queries are QUERY... or ``--queries``.

    ``--format`` when given, else jsonl with ``--json``; else a table without ``-o`` and JSON lines
    with it (``-o FILE``, which a re-run resumes, or ``-o -`` for standard output).

    Example:
        >>> output_format(argparse.Namespace(format=None, json=False, output=None))
        'table'
        >>> output_format(argparse.Namespace(format=None, json=False, output="ranked.jsonl"))
        'jsonl'
        >>> output_format(argparse.Namespace(format="tsv", json=True, output=None))
        'tsv'
    """
    chosen = getattr(args, "format", None)
    if chosen:
        return str(chosen)
    if getattr(args, "json", False):
        return "jsonl"
    return "table" if getattr(args, "output", None) is None else "jsonl"


def format_record(record: dict[str, Any], file_format: str, qid: str | int | None = None, *,
                  explain: bool = False) -> str:
    """One query's record as text: a table, a JSON line, TSV rows or TREC run lines (each ending in "\\n").

    Args:
        record: the query's record (``line``, ``query`` and ``hits``, as ``search_record`` makes).
        file_format: "table" (:func:`format_table`), "jsonl", "tsv" (qid, query, rank, id, score) or
            "trec" (qid Q0 docid rank score fortekit).
        qid: the query's id (default: its line number).
        explain: with "table", the formulas, clauses and each hit's predicates too.

    Returns:
        The lines.

    Raises:
        OutputError: with "trec", a query or item id that a TREC run file cannot hold (white
            space, empty: E750), so the file is always one ``fortekit eval --run`` reads back.

    Example:
        >>> record = {"line": 3, "query": "rain", "hits": [{"rank": 1, "id": "clip7", "score": 0.5}]}
        >>> format_record(record, "trec")
        '3 Q0 clip7 1 0.500000 fortekit\\n'
        >>> format_record({**record, "hits": [{"rank": 1, "id": "a\\tb", "score": 0.5}]}, "tsv")
        '3\\train\\t1\\ta\\\\tb\\t0.500000\\n'
    """
    if file_format == "jsonl":
        return json.dumps(record, ensure_ascii=False) + "\n"
    if file_format == "table":
        return format_table(record, explain=explain)
    qid = record.get("line") if qid is None else qid
    lines = []
    if file_format == "trec":
        from fortekit.search.eval.runs import check_trec_id

        check_trec_id(str(qid), "query id")
        for hit in record.get("hits", []):
            check_trec_id(str(hit["id"]), "item id")
            lines.append(f"{qid} Q0 {hit['id']} {hit['rank']} {hit['score']:.6f} fortekit\n")
        return "".join(lines)
    from fortekit.search.refine.output import tsv_escape

    query = " ".join(str(record.get("query", "")).split())  # no tab or newline inside a field
    for hit in record.get("hits", []):  # ids escaped as fol-refine's TSV cells are (tsv_escape)
        lines.append(f"{tsv_escape(str(qid))}\t{query}\t{hit['rank']}\t{tsv_escape(str(hit['id']))}\t"
                     f"{hit['score']:.6f}\n")
    return "".join(lines)


def format_table(record: dict[str, Any], *, explain: bool = False) -> str:
    """One query's record as a table: rank, '!' where a hit violates a negation, score, id, caption.

    With ``explain``: phi0 (phi* and the refined text with Stage 1 or a lookup), the clauses or
    why formula scoring was not applied, the unresolved negations, and per hit the predicates its
    caption matched, missed and violated with each clause's similarity.

    Example:
        >>> record = {"query": "rain", "hits": [{"rank": 1, "id": "clip7", "score": 0.5, "caption": "rain",
        ...           "violated": []}]}
        >>> print(format_table(record), end="")
        query: rain
            1.   0.5000  clip7  rain
    """
    from fortekit.search.cli.parse import echo_text
    from fortekit.search.hits import format_score_parts

    # cut and escaped: no raw control characters
    lines = [f"query: {echo_text(str(record.get('query', '')))}"]
    if explain:
        lines.append(f"  phi0: {record.get('phi0')}")
        if record.get("refined_text") is not None:
            lines.append(f"  phi*: {record.get('phi_star')}")
            lines.append(f"  refined: {echo_text(str(record['refined_text']))} ({record.get('source')})")
        clauses = record.get("clauses") or []
        if clauses:
            lines.append("  clauses: " + "; ".join(
                f"{'not ' if clause['negated'] else ''}'{clause['text']}'" for clause in clauses))
        else:
            lines.append(f"  formula scoring: not applied ({record.get('fallback')})")
        for line in record.get("unsure") or []:  # a negation whose scope the parser could not resolve
            lines.append(f"  unsure: {echo_text(str(line))}")
        confidence = record.get("confidence") or {}
        if confidence.get("low"):
            lines.append(f"  low confidence: {echo_text(str(confidence.get('reason', '')))}")
        for item in record.get("pushed_down") or []:  # what the exclusion moved out of the top k
            now = "out of the candidates" if item.get("now") is None else f"#{item['now']}"
            why = "; ".join(str(line) for line in item.get("evidence") or [])
            lines.append(f"  pushed down: {item['id']} #{item['was']} -> {now}: {echo_text(why)}")
    for hit in record.get("hits", []):
        mark = "!" if hit.get("violated") else " "
        caption = echo_text((hit.get("caption") or "")[:_CAPTION_WIDTH])
        lines.append(f"  {hit['rank']:>3}.{mark}{hit['score']:8.4f}  {hit['id']}  {caption}")
        if explain:
            sims = ", ".join(f"{value:.3f}" for value in hit.get("clause_similarities") or [])
            lines.append(f"        matched {list(hit.get('matched', []))} "
                         f"missed {list(hit.get('missed', []))} violated {list(hit.get('violated', []))}"
                         + (f" clauses [{sims}]" if sims else ""))
            parts = tuple((part["stage"], float(part["amount"])) for part in hit.get("score_parts") or [])
            if parts:  # why the hit ranks here: the first pass, then what each stage added
                lines.append(f"        score = {format_score_parts(parts)}")
    return "\n".join(lines) + "\n"


def print_result(result: Any, out: TextIO, *, explain: bool = False) -> None:
    """One :class:`~fortekit.search.hits.SearchResult` as a table (:func:`format_table`)."""
    out.write(format_table(result.to_dict(), explain=explain))
