"""The command line of ``fol-refine``: its argument parser and the checks of option combinations.

Example:
    >>> args = build_refine_parser().parse_args(["--queries", "q.txt", "--stage1", "offline", "-B", "4"])
    >>> args.queries_file, args.stage1, args.beam_width, args.depth
    ('q.txt', 'offline', 4, None)
"""

from __future__ import annotations

import argparse
import re

from fortekit import __version__
from fortekit.errors import Errors
from fortekit.search.cli.common import (
    TopK,
    add_column_options,
    add_format_option,
    add_quiet_option,
    add_stage1_option,
    add_stage_switches,
    add_threads_option,
    add_top_k_option,
)
from fortekit.search.cli.options import option_type
from fortekit.search.cli.output_options import OutputPath
from fortekit.search.refine.query_io import DEFAULT_MAX_CHARS, QUERY_FORMATS

__all__ = ["MAX_BATCH_SIZE", "build_refine_parser", "check_usage"]

_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")


def _device(text: str) -> str:
    if not _DEVICE.match(text):
        raise argparse.ArgumentTypeError(Errors.E668.format(
            option="--device", expected="auto, cpu, cuda, cuda:N or mps", value=text, hint="",
        ))
    return text


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(Errors.E668.format(
            option="this option", expected="a whole number >= 1", value=text, hint="",
        ))
    return value


#: The most queries one batch may hold: a batch's queries, their elaborations and all their
#: candidates are in memory at once (docs/refine.md, "Limits").
MAX_BATCH_SIZE = 4096


def _batch_size(text: str) -> int:
    value = _positive_int(text)
    if value > MAX_BATCH_SIZE:
        raise argparse.ArgumentTypeError(Errors.E668.format(
            option="--batch-size", expected=f"a whole number from 1 to {MAX_BATCH_SIZE}", value=text,
            hint=" (a batch's queries and all their candidates are held in memory at once)",
        ))
    return value


def build_refine_parser() -> argparse.ArgumentParser:
    """The ``fol-refine`` argument parser (exposed for documentation and tests).

    Example:
        >>> args = build_refine_parser().parse_args(["q.txt", "--stage1", "offline", "-B", "4"])
        >>> args.stage1, args.beam_width, args.depth
        ('offline', 4, None)
    """
    from fortekit.search.cli.suggest import SuggestingParser
    from fortekit.search.stage1.config import QUERY_OUTPUTS, THRESHOLD_MODES

    parser = SuggestingParser(  # "did you mean" for a misspelt option or choice
        prog="fol-refine",
        description=(
            "Refine a file of text-to-audio search queries with FOL-guided beam search "
            "(FORTE Stage 1). Reads .txt (one query per line), .jsonl or .csv/.tsv; writes one "
            "JSON object (or TSV row) per query, line by line: re-running the same command "
            "resumes an interrupted run. Exit status: 0 all refined, 1 some lines skipped or "
            "failed, 2 usage error or unusable input."
        ),
        epilog="See docs/refine.md for the output fields, resuming and lookup tables.",
    )
    parser.add_argument("queries", nargs="?", help="the query file (.txt, .jsonl, .csv, .tsv); or --queries")
    parser.add_argument("--version", action="version", version=f"fortekit {__version__}")
    src = parser.add_argument_group("input")
    src.add_argument(
        "--input-format", choices=QUERY_FORMATS, help="the query file's format (default: from its extension)"
    )
    src.add_argument("--queries", dest="queries_file", metavar="FILE",
                     help="the query file (.txt, .jsonl, .csv or .tsv), as every command names it")
    src.add_argument("--query", metavar="TEXT",
                     help="refine this one query and print it (with --explain: its search tree)")
    add_column_options(src, text_dest="column", id_dest=None,
                       text_help="the CSV/TSV column or JSONL field of the queries (default: query, "
                       "else text)")
    src.add_argument(
        "--target-column", metavar="COLUMN",
        help="a column/field with each query's relevant item id in --index (for --anchors oracle)",
    )
    src.add_argument(
        "--max-chars", metavar="N", type=_positive_int, default=DEFAULT_MAX_CHARS,
        help=f"skip longer queries as bad lines (default: {DEFAULT_MAX_CHARS})",
    )
    out = parser.add_argument_group("output")
    out.add_argument(
        "-o", "--output", type=OutputPath("file", stdout=True, resumes=_resumed),
        help="the result file (default: QUERIES with the suffix .refined.jsonl; '-' for standard output)",
    )
    add_format_option(out, choices=("jsonl", "tsv"), default=None,
                      help="jsonl or tsv (default: from -o's extension, else jsonl)")
    out.add_argument("--overwrite", action="store_true", help="start the output over instead of resuming it")
    out.add_argument(
        "--lookup", metavar="FILE", help="an earlier fol-refine output: known queries skip the search"
    )
    out.add_argument("--index", metavar="DIR", help="an audio index: also write each query's top-K ranking")
    add_top_k_option(out, type=TopK("fol-refine"), default=10,
                     help="ranking length with --index (default: 10)")
    add_stage_switches(
        out, formula_help="with --index: re-score each query's first-pass candidates by its own formula "
        "phi0 (negations push excluded sounds down, conjunctions need every part; docs/formula_scoring.md)",
        stage3_help="with --index: Stage 3's re-ranking with the items' captions",
    )
    add_threads_option(out)
    out.add_argument(
        "--gamma", metavar="GAMMA", type=float,
        help="weight of the formula's score against q*'s similarity (default: FormulaScoringConfig's)",
    )
    refine = parser.add_argument_group("Stage 1, refine (defaults: the online regime)")
    add_stage1_option(refine, choices=("online", "offline"), default="online",
                      help="the regime: online (B, D) = (3, 2) or offline (5, 4); -B/-D override it")
    refine.add_argument("-B", "--beam-width", metavar="B", type=_positive_int,
                        help="beam width B (at most 64; B x D x candidates per node at most 4096)")
    refine.add_argument("-D", "--depth", metavar="D", type=_positive_int, help="maximum depth D (at most 16)")
    refine.add_argument("--tau", metavar="TAU", type=float, help="feasibility threshold tau (default: 0.2)")
    refine.add_argument("--threshold", choices=THRESHOLD_MODES, help="threshold mode (default: auto)")
    refine.add_argument(
        "--lambda", dest="lam", metavar="LAMBDA", type=float,
        help="weight of the negative anchor (default: 1.0)",
    )
    refine.add_argument(
        "--beta", metavar="BETA", type=float, help="weight of the pivot projection (default: 0.5)"
    )
    refine.add_argument(
        "--complexity-weight", metavar="W", type=float, help="weight w of c(phi) in F = w c - u"
    )
    refine.add_argument(
        "--query-vector", choices=QUERY_OUTPUTS,
        help="q* for --index rankings: residual, f_T(q) moved by the refinement's edit (default), "
        "or verbalised, the paper's f_T(G(phi*)); see docs/refine.md",
    )
    refine.add_argument(
        "--anchors", choices=("auto", "none", "proxy", "bank", "feedback", "oracle"), default="auto",
        help="where e+/e- come from: proxy and feedback (the first pass over --index, judged by the "
        "formula) need --index, bank --anchor-bank, oracle --index and --target-column (default: auto, "
        "feedback when --index holds captions, else none)",
    )
    refine.add_argument(
        "--anchor-bank", metavar="PATH", help="an anchor bank (or a training index) directory"
    )
    runtime = parser.add_argument_group("plug-ins and runtime")
    runtime.add_argument("--backbone", default="minilm", help="text/audio encoder plug-in (default: minilm)")
    runtime.add_argument(
        "--backbone-option", metavar="KEY=VALUE", type=option_type("--backbone-option"), action="append",
        default=[], help="an option for the backbone (repeatable), e.g. model=/models/clap; values: int, "
        "float, true/false, none, else text",
    )
    runtime.add_argument(
        "--elaborator", default="auto",
        help="corpus: phi+/phi- from the nearest human captions of --corpus, else of --index's item "
        "captions; or an elaborator plug-in, e.g. lexical (default: auto, corpus when --corpus is "
        "given or --index holds captions, else lexical)",
    )
    runtime.add_argument(
        "--corpus", metavar="PATH",
        help="captions for --elaborator corpus: a text file (one caption a line) or a directory "
        "that CaptionCorpus.save wrote",
    )
    runtime.add_argument(
        "--list-plugins", action="store_true", help="list the installed plug-ins and where each came from"
    )
    runtime.add_argument(
        "--batch-size", metavar="N", type=_batch_size, default=32,
        help=f"queries searched together (default: 32, at most {MAX_BATCH_SIZE})",
    )
    runtime.add_argument(
        "--device", metavar="DEVICE", type=_device, default="auto",
        help="auto, cpu, cuda, cuda:N or mps (default: auto)",
    )
    runtime.add_argument("--cache-dir", metavar="DIR", type=OutputPath("folder"),
                         help="keep text embeddings on disk here across runs")
    runtime.add_argument("--explain", action="store_true",
                         help="with --query: print its search tree (how each edit scored)")
    add_quiet_option(runtime)
    runtime.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None,
        help="show a progress bar on stderr (default: when stderr is a terminal)",
    )
    from fortekit.search.cli.ray_options import add_ray_options

    add_ray_options(parser.add_argument_group("Ray (a query file's batches over several processes or "
                                              "machines; docs/scale.md)"), what="refiners")
    return parser


def _resumed(args: argparse.Namespace) -> str | None:
    """fol-refine resumes an existing -o (JSON lines or TSV), which it checks itself (E662, E663)."""
    return None


def check_usage(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse inconsistent options before anything is loaded (argparse exits with 2)."""
    from fortekit.fol.caption.pipeline import MAX_CHARS
    from fortekit.plugins import available_backbones, available_elaborators

    if args.queries_file is not None:
        if args.queries is not None:
            parser.error("give the query file once: --queries FILE (or the positional QUERIES)")
        args.queries = args.queries_file
    if args.query is not None and args.queries is not None:
        parser.error("give a query file (--queries FILE) or one query (--query TEXT), not both")
    if args.explain and args.query is None:
        parser.error("--explain prints the search tree of one query: add --query TEXT")
    if args.queries is None and args.query is None:
        parser.error("give a query file (--queries FILE), or one query: --query TEXT [--explain]")
    for kind, name, installed in (
        ("backbone", args.backbone, available_backbones()),
        ("elaborator", args.elaborator, [*available_elaborators(), "corpus", "auto"]),
    ):
        if name not in installed:
            parser.error(f"unknown {kind} {name!r}; installed: {', '.join(installed)}")
    if args.max_chars > MAX_CHARS:
        parser.error(Errors.E668.format(
            option="--max-chars", expected=f"at most the caption parser's limit, {MAX_CHARS}",
            value=args.max_chars, hint="",
        ))
    needs = {
        "proxy": ("index", "--index DIR", "proxy anchors come from a first retrieval pass over the index"),
        "bank": ("anchor_bank", "--anchor-bank PATH", "the bank holds the training embeddings"),
        "oracle": ("index", "--index DIR", "oracle anchors are the embeddings of the relevant items"),
        "feedback": ("index", "--index DIR", "feedback anchors judge a first retrieval pass over the index"),
    }.get(args.anchors)
    if args.elaborator == "corpus" and args.index is None and args.corpus is None:
        parser.error(Errors.E667.format(
            option="--elaborator corpus", needed="--corpus PATH or --index DIR",
            why="its elaborations are the nearest human captions of a corpus",
        ))
    if needs is not None and getattr(args, needs[0]) is None:
        parser.error(Errors.E667.format(option=f"--anchors {args.anchors}", needed=needs[1], why=needs[2]))
    if args.anchors == "oracle" and args.target_column is None and args.query is None:
        parser.error(Errors.E667.format(
            option="--anchors oracle", needed="--target-column COLUMN",
            why="each query's relevant item id, as the index names it",
        ))
    if args.query is not None and args.anchors == "oracle":
        parser.error(Errors.E667.format(
            option="--anchors oracle", needed="a query file", why="--explain has no ground truth to use",
        ))
