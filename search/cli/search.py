"""``fortekit search``: rank an index for text queries through the Retriever.

Queries on the command line print a table (or JSON with ``--json``); a query file with
``-o OUT`` is searched batch by batch into a JSONL file, with fol-refine's file handling
(:mod:`fortekit.search.cli.search_file`).

Example:
    $ fortekit search --index clips.index "a dog barking without people talking" -k 5
    $ fortekit search --index clips.index "rain on a roof" --explain
    $ fortekit search --index clips.index "rain" "birds at dawn" --json
    $ fortekit search --index clips.index queries.csv --column text -o ranked.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

__all__ = ["add_search_command", "make_retriever", "run_search"]

_CAPTION_WIDTH = 70


def add_search_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit search`` on the ``fortekit`` sub-parsers.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_search_command(parser.add_subparsers(dest="command"))
        >>> args = parser.parse_args(["search", "--index", "idx", "a dog barking", "-k", "3"])
        >>> args.queries, args.k, args.formula_scoring, args.stage3, args.output
        (['a dog barking'], 3, 'on', 'on', None)
    """
    from fortekit.search.refine.query_io import DEFAULT_MAX_CHARS, QUERY_FORMATS

    parser = commands.add_parser(
        "search",
        help="rank an index for text queries (formula scoring and Stage 3 by default)",
        description="Search an index built by `fortekit index build` with the Retriever: the first pass, "
        "formula scoring of each query's formula and Stage 3's default re-ranking (optionally Stage 1, "
        "a lookup table of stored refinements and a Stage 2 head). Prints rank, id, score and caption; a "
        "hit whose caption names a sound the query excludes is marked with '!'. With -o, the one "
        "QUERY is a query file (.txt, .jsonl, .csv, .tsv) searched into a JSONL file, resumably. "
        "Exit status: 0 all searched, 1 a bad line, a failed query or unusable input, 130 interrupted. "
        "See docs/retriever.md.",
    )
    parser.add_argument("queries", nargs="+", metavar="QUERY", help="the queries (with -o: one query file)")
    parser.add_argument("--index", required=True, type=Path, help="the index directory")
    parser.add_argument("-k", type=int, default=10, help="hits per query (default 10)")
    parser.add_argument("--explain", action="store_true",
                        help="show phi0/phi*, the clauses, and per hit the predicates matched, missed and "
                        "violated")
    parser.add_argument("--json", action="store_true", help="one JSON object per query")
    stages = parser.add_argument_group("stages")
    stages.add_argument("--stage1", choices=["off", "online", "offline"], default="off",
                        help="refine each query first (Stage 1; default off)")
    stages.add_argument("--lookup", type=Path, metavar="FILE",
                        help="stored refinements (a fol-refine output): queries it holds skip Stage 1")
    stages.add_argument("--projection", type=Path, help="a trained Stage 2 head (.safetensors or directory)")
    stages.add_argument("--formula-scoring", choices=["on", "off"], default="on",
                        help="re-score the candidates by the query's formula (default on)")
    stages.add_argument("--stage3", choices=["on", "off"], default="on",
                        help="Stage 3's default re-ranking with the items' captions (default on)")
    stages.add_argument("--order-check", action="store_true",
                        help="sort each ranking's best 50 items by whether their caption states the query's "
                             "event order ('a dog barks, then a bell rings'); off by default")
    stages.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
    files = parser.add_argument_group("query files (with -o)")
    files.add_argument("-o", "--output", metavar="OUT",
                       help="search the query file QUERY into OUT (JSONL, one record per query; '-' for "
                       "standard output); re-running the command resumes it")
    files.add_argument("--input-format", choices=QUERY_FORMATS,
                       help="the query file's format (default: from its extension)")
    files.add_argument("--column", help="the CSV/TSV column or JSONL field of the queries (default: query)")
    files.add_argument("--max-chars", metavar="N", type=int, default=DEFAULT_MAX_CHARS,
                       help=f"skip longer queries as bad lines (default: {DEFAULT_MAX_CHARS})")
    files.add_argument("--overwrite", action="store_true",
                       help="start the output over instead of resuming it")
    files.add_argument("--batch-size", metavar="N", type=int, default=32,
                       help="queries searched together (default: 32)")
    files.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    files.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="show a progress bar on stderr (default: when stderr is a terminal)")
    parser.set_defaults(handler=run_search)


def make_retriever(args: argparse.Namespace) -> Any:
    """The Retriever that ``fortekit search``'s options describe.

    Raises:
        FortekitError: an index, lookup table, backbone or projection that cannot be used.
    """
    from fortekit.search.formula.scoring import FormulaScoringConfig
    from fortekit.search.refine.lookup import LookupTable
    from fortekit.search.rerank import Reranker
    from fortekit.search.retriever import Retriever
    from fortekit.search.stage1.config import RefineConfig

    stage1 = {"online": RefineConfig.online, "offline": RefineConfig.offline}.get(args.stage1)
    return Retriever(
        args.index, stage1=stage1() if stage1 is not None else None, projection=args.projection,
        lookup=LookupTable.load(args.lookup) if args.lookup is not None else None,
        formula=None if args.formula_scoring == "off" else FormulaScoringConfig(),
        rerank=None if args.stage3 == "off" else Reranker(), device=args.device,
        order_check=args.order_check,
    )


def run_search(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``fortekit search``: 0 on success, 1 with a coded message on stderr for bad input."""
    from fortekit.errors import FortekitError

    if args.output is not None:
        from fortekit.search.cli.search_file import search_file

        return search_file(args, out)
    try:
        results = make_retriever(args).search(args.queries, k=args.k, explain=args.explain)
    except FortekitError as exc:
        print(f"fortekit search: {exc}", file=sys.stderr)
        return 1
    for result in results:
        if args.json:
            print(json.dumps(result.to_dict(), ensure_ascii=False), file=out)
        else:
            print_result(result, out, explain=args.explain)
    return 0


def print_result(result: Any, out: TextIO, *, explain: bool = False) -> None:
    """One query's ranking as a table: rank, '!' where a hit violates a negation, score, id, caption."""
    from fortekit.search.cli.main import echo_text

    print(f"query: {echo_text(result.query)}", file=out)  # cut and escaped: no raw control characters
    if explain:
        print(f"  phi0: {result.phi0}", file=out)
        if result.refined_text is not None:
            print(f"  phi*: {result.phi_star}\n  refined: {result.refined_text} ({result.source})", file=out)
        if result.clauses:
            clauses = "; ".join(f"{'not ' if negated else ''}'{text}'" for text, negated in result.clauses)
            print(f"  clauses: {clauses}", file=out)
        else:
            print(f"  formula scoring: not applied ({result.fallback})", file=out)
        for line in result.unsure:  # a negation whose scope the parser could not resolve
            print(f"  unsure: {echo_text(line)}", file=out)
    for hit in result.hits:
        mark = "!" if hit.violated else " "
        caption = echo_text((hit.caption or "")[:_CAPTION_WIDTH])
        print(f"  {hit.rank:>3}.{mark}{hit.score:8.4f}  {hit.item_id}  {caption}", file=out)
        if explain:
            sims = ", ".join(f"{value:.3f}" for value in hit.clause_similarities)
            print(f"        matched {list(hit.matched)} missed {list(hit.missed)} "
                  f"violated {list(hit.violated)}" + (f" clauses [{sims}]" if sims else ""), file=out)
