"""``fortekit eval``: the benchmark of every S1/S2/S3 system on a caption collection.

Heavy modules load inside the handler, so ``fortekit --help`` stays instant.

Example:
    $ fortekit eval --test clotho_captions_development.csv --n-train 2000 --item-text mean \\
        --out runs/clotho_mean
    $ fortekit eval --test test.csv --train train.csv --sweep alpha=0,0.1,0.3,0.5 --out runs/ac
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

__all__ = ["add_eval_commands", "run_eval"]


def add_eval_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit eval`` on the ``fortekit`` sub-parsers.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_eval_commands(parser.add_subparsers(dest="command"))
        >>> args = parser.parse_args(["eval", "--test", "t.csv", "--n-train", "5", "--out", "o"])
        >>> args.item_text, args.anchors, args.direction
        ('mean', 'bank,none,proxy,oracle', 'both')
    """
    parser = commands.add_parser(
        "eval",
        help="benchmark the S1/S2/S3 systems on a Clotho or AudioCaps caption CSV",
        description="Caption-indexed benchmark: caption 1 of each test clip is the query, the item is the "
        "mean of its other captions (or caption 2). Trains Stage 2 and the anchor bank on the training "
        "collection, evaluates the 8 S1/S2/S3 combinations (and S1 per anchor setting) and writes "
        "metrics.json, results.md, ablation.png, per_query/, modality_gap.png and config.json to --out. "
        "See docs/evaluation.md.",
    )
    data = parser.add_argument_group("data")
    data.add_argument("--test", required=True, type=Path, help="the test collection (caption CSV)")
    data.add_argument("--train", type=Path, help="the training collection (default: split --test)")
    data.add_argument("--n-train", type=int, help="split --test: the first N clips train, the rest test")
    data.add_argument("--item-text", choices=["mean", "single"], default="mean",
                      help="item = mean of captions 2-5 (mean) or caption 2 (single); default mean")
    data.add_argument("--limit-test", type=int, help="only the first N test clips (quick runs)")
    data.add_argument("--limit-train", type=int, help="only the first N training clips (quick runs)")
    data.add_argument("--out", required=True, type=Path, help="output directory (re-runs reuse its caches)")
    model = parser.add_argument_group("model and stages")
    model.add_argument("--backbone", default="minilm", help="registered text encoder (default minilm)")
    model.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
    model.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    model.add_argument("--anchors", default="bank,none,proxy,oracle",
                       help="Stage 1 anchor settings, comma-separated; the first drives the S1/S2/S3 "
                       "combinations and Stage 2's training queries (default bank,none,proxy,oracle)")
    model.add_argument("--beam-width", type=int, default=3, help="Stage 1 beam width B (default 3)")
    model.add_argument("--max-depth", type=int, default=2, help="Stage 1 depth D (default 2)")
    model.add_argument("--lambda", dest="lam", type=float, default=1.0, help="Stage 1 lambda (default 1.0)")
    model.add_argument("--beta", type=float, default=0.5, help="Stage 1 beta (default 0.5)")
    model.add_argument("--tau", type=float, default=0.2, help="Stage 1 tau (default 0.2)")
    model.add_argument("--epochs", type=int, default=20, help="Stage 2 epochs (default 20)")
    model.add_argument("--batch-size", type=int, default=128, help="Stage 2 batch size (default 128)")
    model.add_argument("--alpha", type=float, default=0.3, help="Stage 3 weight of s_pred (default 0.3)")
    model.add_argument("--top-n", type=int, default=50, help="Stage 3 re-ranks the top N (default 50)")
    model.add_argument("--seed", type=int, default=0, help="Stage 2 and UMAP seed (default 0)")
    report = parser.add_argument_group("report")
    report.add_argument("--direction", choices=["t2a", "a2t", "both"], default="both",
                        help="text-to-audio, audio-to-text or both (default both)")
    report.add_argument("--sweep", action="append", default=[], metavar="NAME=V1,V2,...",
                        help="sensitivity sweep on the test part (alpha, lambda, beta, tau); repeatable")
    report.add_argument("--no-umap", action="store_true", help="skip the modality-gap UMAP plot")
    parser.set_defaults(handler=run_eval)


def run_eval(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``fortekit eval``: 0 on success, 1 on bad input (a coded message on stderr), 130 on ^C."""
    from fortekit.errors import Errors, EvaluationError, FortekitError

    def log(line: str) -> None:
        print(line, file=out, flush=True)

    try:
        from fortekit.search.config import SearchConfig
        from fortekit.search.evaluate import EvalSettings, parse_sweep, run_evaluation
        from fortekit.search.evaluate_stage1 import parse_anchors

        for name in ("n_train", "limit_test", "limit_train", "threads", "epochs", "batch_size", "top_n"):
            value = getattr(args, name)
            if value is not None and value < 1:
                flag = "--" + name.replace("_", "-")
                raise EvaluationError(Errors.E494.format(
                    problem=f"{flag} is {value}", fix=f"Pass {flag} 1 or more.",
                ))
        if args.threads is not None:
            import torch

            torch.set_num_threads(args.threads)
        settings = EvalSettings(
            test=args.test, out=args.out, train=args.train, n_train=args.n_train, item_text=args.item_text,
            limit_test=args.limit_test, limit_train=args.limit_train, backbone=args.backbone,
            device=args.device, epochs=args.epochs, batch_size=args.batch_size,
            anchors=tuple(parse_anchors(args.anchors)),
            search=SearchConfig.online(beam_width=args.beam_width, max_depth=args.max_depth, lam=args.lam,
                                       beta=args.beta, tau=args.tau),
            alpha=args.alpha, top_n=args.top_n,
            directions=("t2a", "a2t") if args.direction == "both" else (args.direction,),
            sweeps=tuple(parse_sweep(spec) for spec in args.sweep), umap=not args.no_umap, seed=args.seed,
        )
        result = run_evaluation(settings, log=log)
    except FortekitError as exc:
        print(f"fortekit: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("fortekit: interrupted; Stage 1 results so far are cached in --out/stage1, run the same "
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
