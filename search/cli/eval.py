"""``fortekit eval``: the benchmark of every S1/S2/S3 system on a caption collection.

Heavy modules load inside the handler, so ``fortekit --help`` stays instant.

Two kinds of collection: ``--test`` a caption CSV (one relevant clip per query, the
S1/S2/S3 ablation, :mod:`fortekit.search.eval.evaluate`), or ``--beir`` a multi-relevance folder
in the BEIR layout (trec_eval metrics, :mod:`fortekit.search.eval.beir_eval`).

Example:
    $ fortekit eval --test clotho_captions_development.csv --n-train 2000 --item-text mean \\
        -o runs/clotho_mean
    $ fortekit eval --test test.csv --train train.csv --sweep alpha=0,0.1,0.3,0.5 -o runs/ac
    $ fortekit eval --beir negation/audiocaps_val --systems baseline,S3-polarity -o runs/val
    $ fortekit eval --beir gen/test --backbone small-clap --backbone-option model=clap \\
        --captioner tagger --captioner-option model=clap -o runs/audio
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from fortekit.search.cli.common import add_depth_options, add_output_option, add_threads_option
from fortekit.search.cli.eval_runs import add_run_options, fused_output_kind, run_runs, wants_runs
from fortekit.search.cli.options import option_type

__all__ = ["add_eval_commands", "run_eval"]


def add_eval_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit eval`` on the ``fortekit`` sub-parsers.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_eval_commands(parser.add_subparsers(dest="command"))
        >>> args = parser.parse_args(["eval", "--test", "t.csv", "--n-train", "5", "-o", "o"])
        >>> args.item_text, args.anchors, args.direction  # --anchors: feedback,none for --test
        ('mean', None, 'both')
        >>> args = parser.parse_args(["eval", "--beir", "negation/audiocaps_val", "-o", "o"])
        >>> args.beir.name, args.systems, args.gamma
        ('audiocaps_val', None, None)
    """
    parser = commands.add_parser(
        "eval",
        help="benchmark the S1/S2/S3 systems on a caption CSV (--test) or a BEIR folder (--beir)",
        description="Caption-indexed benchmark: caption 1 of each test clip is the query, the item is the "
        "mean of its other captions (or caption 2). Trains Stage 2 and the anchor bank on the training "
        "collection, evaluates the 8 S1/S2/S3 combinations (and S1 per anchor setting) and writes "
        "metrics.json, results.md, ablation.png, per_query/, modality_gap.png and config.json to -o. "
        "With --beir DIR instead: a multi-relevance collection in the BEIR layout (corpus.jsonl, "
        "queries.jsonl, qrels/test.tsv), the systems of --systems, trec_eval's nDCG@10, AP, P@10, "
        "R@1/5/10 and violation@10, broken down by query metadata, text to audio and audio to text "
        "(each item ranks the query texts by the scores the system gave the pairs). See docs/evaluation.md.",
    )
    data = parser.add_argument_group("data")
    data.add_argument("--test", type=Path, help="the test collection (caption CSV); or --beir")
    data.add_argument("--beir", type=Path, metavar="DIR",
                      help="a multi-relevance collection in the BEIR layout, instead of --test")
    data.add_argument("--train", type=Path, help="the training collection (default: split --test)")
    data.add_argument("--n-train", type=int, help="split --test: the first N clips train, the rest test")
    data.add_argument("--item-text", choices=["mean", "single"], default="mean",
                      help="item = mean of captions 2-5 (mean) or caption 2 (single); default mean")
    data.add_argument("--limit-test", type=int, help="only the first N test clips (quick runs)")
    data.add_argument("--limit-train", type=int, help="only the first N training clips (quick runs)")
    add_output_option(data, dest="out", type=Path, metavar="DIR", kind=fused_output_kind,
                      help="output directory (re-runs reuse its caches); required with --test and --beir; "
                      "with --fuse, the fused run file")
    model = parser.add_argument_group("model and stages")
    model.add_argument("--backbone", default="minilm", help="registered text encoder (default minilm)")
    model.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
    add_threads_option(model)
    model.add_argument("--anchors",
                       help="Stage 1 anchor settings, comma-separated; the first drives the S1/S2/S3 "
                       "combinations and Stage 2's training queries (default feedback,none, what fortekit "
                       "search uses; the paper's bank, proxy and oracle on request); with --beir one of "
                       "feedback (default), none, proxy")
    model.add_argument("--elaborator", choices=["lexical", "corpus"], default="corpus",
                       help="Stage 1 elaborator: corpus (the nearest item captions of the collection "
                       "searched: the default, as in fortekit search) or lexical (vocabulary templates)")
    # D = 0 is the feedback regime fortekit search runs; -D 2 is the paper's online beam
    add_depth_options(model, depth_dest="max_depth", beam_default=3, depth_default=0)
    model.add_argument("--lambda", dest="lam", type=float, default=1.0, help="Stage 1 lambda (default 1.0)")
    model.add_argument("--beta", type=float, default=0.5, help="Stage 1 beta (default 0.5)")
    model.add_argument("--tau", type=float, default=0.2, help="Stage 1 tau (default 0.2)")
    model.add_argument("--epochs", type=int, default=20, help="Stage 2 epochs (default 20)")
    model.add_argument("--batch-size", type=int, default=128, help="Stage 2 batch size (default 128)")
    model.add_argument("--alpha", type=float,
                       help="Stage 3 weight of s_pred: with --test, of the S3 rows (default 0.03, Stage 3's "
                       "default, as fortekit search runs it; the paper's 0.3 on request); with --beir, of "
                       "S3-paper and S3-polarity (default 0.3)")
    model.add_argument("--top-n", type=int, default=50, help="Stage 3 re-ranks the top N (default 50)")
    model.add_argument("--seed", type=int, default=0, help="Stage 2 and UMAP seed (default 0)")
    report = parser.add_argument_group("report")
    report.add_argument("--direction", choices=["t2a", "a2t", "both"], default="both",
                        help="text-to-audio, audio-to-text or both (default both); with --beir, a2t "
                        "ranks the query texts for each item by each system's (query, item) scores, "
                        "a breakdown value restricting the candidate texts to its queries")
    report.add_argument("--sweep", action="append", default=[], metavar="NAME=V1,V2,...",
                        help="sensitivity sweep on the test part (alpha, lambda, beta, tau); repeatable")
    report.add_argument("--no-umap", action="store_true", help="skip the modality-gap UMAP plot")
    beir = parser.add_argument_group("multi-relevance collections (--beir)")
    beir.add_argument("--systems", help="systems to run, comma-separated (default all: baseline, S3-paper, "
                      "S3-polarity, formula, S1+formula, S3-default, default, full); baseline always runs")
    beir.add_argument("--by", help="metadata fields to break the results down by, comma-separated "
                      "(default: every field with 2-10 distinct values)")
    beir.add_argument("--projection", type=Path, help="a trained Stage 2 head for the system full")
    beir.add_argument("--backbone-option", action="append", metavar="KEY=VALUE",
                      type=option_type("--backbone-option"),
                      help="an option of --backbone, repeatable (e.g. model=runs/clap for small-clap)")
    beir.add_argument("--captioner", help="a captioner plug-in (e.g. tagger) that captions the AUDIO "
                      "items for Stage 3 and Stage 1's corpus, instead of their stored text")
    beir.add_argument("--captioner-option", action="append", metavar="KEY=VALUE",
                      type=option_type("--captioner-option"),
                      help="an option of --captioner, repeatable (e.g. model=runs/clap)")
    beir.add_argument("--limit-queries", type=int, help="only the first N queries (quick runs)")
    beir.add_argument("--gamma", type=float, help="formula scoring: weight of the logic score")
    beir.add_argument("--tnorm", choices=["min", "product"], help="formula scoring: the t-norm")
    beir.add_argument("--negation", choices=["complement", "subtract"], help="formula scoring: negation")
    beir.add_argument("--calibration", choices=["zscore", "minmax", "none"],
                      help="formula scoring: clause similarity to truth degree")
    add_run_options(parser)
    parser.set_defaults(handler=run_eval)


def run_eval(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``fortekit eval``: 0 on success, 1 on bad input (a coded message on stderr), 130 on ^C."""
    from fortekit.errors import Errors, EvaluationError, FortekitError

    def log(line: str) -> None:
        print(line, file=out, flush=True)

    if wants_runs(args):  # --run/--fuse: any system's TREC run (search/cli/eval_runs.py)
        return run_runs(args, out)
    try:
        _check_mode(args)
        if args.beir is not None:
            return _run_beir(args, log)
        from fortekit.search.eval.evaluate import EvalSettings, parse_sweep, run_evaluation
        from fortekit.search.eval.stage1 import parse_anchors
        from fortekit.search.rerank import DEFAULT_ALPHA
        from fortekit.search.stage1.config import RefineConfig

        for name in ("n_train", "limit_test", "limit_train", "epochs", "batch_size", "top_n"):
            value = getattr(args, name)
            if value is not None and value < 1:
                flag = "--" + name.replace("_", "-")
                raise EvaluationError(Errors.E520.format(
                    problem=f"{flag} is {value}", fix=f"Pass {flag} 1 or more.",
                ))
        settings = EvalSettings(
            test=args.test, out=args.out, train=args.train, n_train=args.n_train, item_text=args.item_text,
            limit_test=args.limit_test, limit_train=args.limit_train, backbone=args.backbone,
            device=args.device, epochs=args.epochs, batch_size=args.batch_size,
            anchors=tuple(parse_anchors(args.anchors or "feedback,none")),
            elaborator=args.elaborator,
            refine=RefineConfig.online(beam_width=args.beam_width, max_depth=args.max_depth, lam=args.lam,
                                       beta=args.beta, tau=args.tau),
            alpha=DEFAULT_ALPHA if args.alpha is None else args.alpha, top_n=args.top_n,
            directions=("t2a", "a2t") if args.direction == "both" else (args.direction,),
            sweeps=tuple(parse_sweep(spec) for spec in args.sweep), umap=not args.no_umap, seed=args.seed,
        )
        result = run_evaluation(settings, log=log)
    except FortekitError as exc:
        print(f"fortekit: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("fortekit: interrupted; Stage 1 results so far are cached in OUT/stage1, run the same "
              "command again to resume", file=sys.stderr)
        return 130
    for direction in settings.directions:
        systems = result.metrics[direction]["systems"]
        log(f"{direction}: " + ", ".join(
            f"{name} R@1 {100 * row['R@1']:.2f}" for name, row in systems.items() if "@" not in name
        ))
    log(f"wrote {args.out / 'metrics.json'}, {args.out / 'results.md'} and {len(result.files) - 2} more "
        f"files in {result.seconds:.0f} s")
    return 0


_TEST_ONLY = ("train", "n_train", "limit_test", "limit_train", "sweep")
_BEIR_ONLY = ("systems", "by", "projection", "limit_queries", "gamma", "tnorm", "negation", "calibration",
              "backbone_option", "captioner", "captioner_option")


def _check_mode(args: argparse.Namespace) -> None:
    """Exactly one of --test and --beir, and no option of the other kind (E508)."""
    from fortekit.errors import Errors, EvaluationError

    if (args.test is None) == (args.beir is None):
        given = "both --test and --beir are given" if args.test is not None else "neither --test nor --beir"
        raise EvaluationError(Errors.E508.format(
            problem=given, fix="Give --test CSV (one relevant clip per query) or --beir DIR (a BEIR folder).",
        ))
    wrong = _BEIR_ONLY if args.test is not None else _TEST_ONLY
    mode = "--test" if args.test is not None else "--beir"
    if args.out is None:
        raise EvaluationError(Errors.E508.format(problem=f"{mode} needs an output folder",
                                                 fix="Pass -o/--output DIR."))
    for name in wrong:
        if getattr(args, name) not in (None, []):
            flag = "--" + name.replace("_", "-")
            raise EvaluationError(Errors.E508.format(
                problem=f"{flag} does not apply to {mode}", fix=f"Leave out {flag}, or use the other mode.",
            ))


def _run_beir(args: argparse.Namespace, log: Callable[[str], None]) -> int:
    """``fortekit eval --beir``: build the settings, run, print the overall table's headline."""
    from fortekit.errors import Errors, EvaluationError
    from fortekit.search.eval.beir_eval import BeirSettings, run_beir_evaluation
    from fortekit.search.formula.scoring import FormulaScoringConfig
    from fortekit.search.stage1.config import RefineConfig

    for name in ("limit_queries", "top_n"):
        value = getattr(args, name)
        if value is not None and value < 1:
            flag = "--" + name.replace("_", "-")
            raise EvaluationError(Errors.E508.format(problem=f"{flag} is {value}",
                                                     fix=f"Pass {flag} 1 or more."))
    formula = {name: getattr(args, name) for name in ("gamma", "tnorm", "negation", "calibration")
               if getattr(args, name) is not None}
    settings = BeirSettings(
        beir=args.beir, out=args.out,
        systems=tuple(args.systems.split(",")) if args.systems is not None else (),
        by=tuple(f.strip() for f in args.by.split(",") if f.strip()) if args.by is not None else None,
        backbone=args.backbone, backbone_options=dict(args.backbone_option or []),
        captioner=args.captioner, captioner_options=dict(args.captioner_option or []),
        device=args.device, anchors=(args.anchors or "feedback").strip().lower(),
        elaborator=args.elaborator,
        projection=args.projection, formula=FormulaScoringConfig(**formula),
        refine=RefineConfig.online(beam_width=args.beam_width, max_depth=args.max_depth, lam=args.lam,
                                   beta=args.beta, tau=args.tau),
        alpha=0.3 if args.alpha is None else args.alpha, top_n=args.top_n, limit_queries=args.limit_queries,
        umap=not args.no_umap,
        directions=("t2a", "a2t") if args.direction == "both" else (args.direction,),
    )
    result = run_beir_evaluation(settings, log=log)
    for direction in settings.directions:
        rows = result.metrics[direction]["systems"].items()
        log(f"{direction}: " + ", ".join(f"{name} nDCG@10 {row['nDCG@10']:.3f}" for name, row in rows))
    log(f"wrote {args.out / 'metrics.json'}, {args.out / 'results.md'} and {len(result.files) - 2} more "
        f"files in {result.seconds:.0f} s")
    return 0
