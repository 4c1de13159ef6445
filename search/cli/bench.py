"""``fortekit bench``: build the generated audio benchmark (``generate``, ``train-clap``).

* ``fortekit bench generate --n 20000 -o DIR --seed 0``: 5-second captioned clips mixed from
  15 synthesised sound classes, with a BEIR folder and a Clotho-style caption CSV per split
  (docs/soundgen.md).
* ``fortekit bench train-clap --data DIR -o DIR``: the small CLAP and its tagger captioner
  trained on such a collection (docs/soundclap.md; handler in ``bench_clap``).
* ``fortekit bench stage2-data --data DIR --backbone-option model=CLAP -o FILE``: Stage 2
  training pairs of the training clips (handler in ``bench_stage2``).

Handlers follow the CLI convention ``handler(args, out) -> exit code``: an error prints its
coded message to stderr and returns 1, an interruption 130, never a traceback. Heavy modules
are imported inside the handlers, so ``fortekit --help`` stays instant.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="fortekit")
    >>> add_bench_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["bench", "generate", "--n", "20", "-o", "gen"])
    >>> args.n, args.seed, args.workers, args.speech
    (20, 0, 1, True)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from fortekit.search.cli.bench_clap import add_train_clap_action
from fortekit.search.cli.bench_stage2 import add_stage2_data_action
from fortekit.search.cli.common import add_output_option, add_quiet_option

__all__ = ["add_bench_commands", "run_generate"]


def add_bench_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit bench ACTION`` on the ``fortekit`` sub-parsers.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_bench_commands(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["bench", "generate", "-o", "o", "--no-speech"]).speech
        False
    """
    bench = commands.add_parser(
        "bench", help="the generated audio benchmark: generate captioned clips, train a small CLAP",
        description="Build the generated audio benchmark (docs/soundgen.md).",
    )
    actions = bench.add_subparsers(dest="bench_command", metavar="ACTION", required=True)
    generate = actions.add_parser(
        "generate", help="generate captioned 5-second clips, a BEIR folder and a caption CSV per split",
        description="Mix 5-second mono 16 kHz clips from 15 synthesised sound classes (speech through "
        "espeak-ng) with attributes, order, overlap and absences; write WAV files, clips.jsonl (each "
        "clip's truth and gold formula), captions_{train,test}.csv (Clotho layout) and the BEIR folders "
        "train/ and test/ (queries by kind: plain, attribute, and, without, order). Deterministic from "
        "--seed; an interrupted run resumes when run again. See docs/soundgen.md.",
    )
    generate.add_argument("--n", type=int, default=20_000, help="number of clips (default 20000)")
    add_output_option(generate, dest="out", required=True, type=Path, metavar="DIR",
                      kind="folder", help="the output folder")
    generate.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    generate.add_argument("--test-every", type=int, default=5,
                          help="every N-th clip is a test clip (default 5: 20%% test)")
    generate.add_argument("--max-queries", type=int, default=60,
                          help="the most 'and', 'without' and 'order' queries per split (default 60)")
    generate.add_argument("--workers", type=int, default=1,
                          help="processes rendering clips (default 1; the output does not depend on it)")
    generate.add_argument("--no-speech", dest="speech", action="store_false",
                          help="leave out the speech class (no espeak-ng needed)")
    generate.add_argument("--overwrite", action="store_true",
                          help="replace a collection the generator made in -o (other folders: E744)")
    add_quiet_option(generate, help="no progress bar", bars=True)
    generate.set_defaults(handler=run_generate)
    add_train_clap_action(actions)
    add_stage2_data_action(actions)


def _done(out: Path) -> int:
    try:
        return sum(1 for _ in (out / ".progress.jsonl").open(encoding="utf-8"))
    except OSError:
        return 0


def run_generate(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``bench generate``: exit code 0, 1 on bad input, 130 when interrupted."""
    from fortekit.errors import Errors, FortekitError
    from fortekit.search.eval.bench.soundgen.generate import generate
    from fortekit.search.eval.bench.soundgen.scene import GeneratorConfig

    config = GeneratorConfig(seed=args.seed, n=args.n, test_every=args.test_every, speech=args.speech,
                             max_queries_per_kind=args.max_queries)
    bars: list[Any] = []

    def tick(done: int, todo: int) -> None:
        if args.quiet:
            return
        if not bars:  # made on the first clip, so that errors in the settings come without a bar
            from tqdm import tqdm

            bars.append(tqdm(total=args.n, initial=args.n - todo, unit="clip", desc="rendering",
                             file=sys.stderr, dynamic_ncols=True))
        bars[0].update(1)

    def close() -> None:
        for bar in bars:
            bar.close()
        bars.clear()

    try:
        report = generate(config, args.out, overwrite=args.overwrite, workers=args.workers, on_clip=tick)
    except FortekitError as exc:
        close()
        print(f"fortekit bench generate: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        close()
        from fortekit.search.eval.bench.soundgen.generate import GenerationReplaced

        if isinstance(exc, GenerationReplaced):  # --overwrite: the old collection stays whole
            print(f"fortekit bench generate: {Errors.E557.format(reason='interrupted', path=args.out)}",
                  file=sys.stderr)
            return 130
        stopped = Errors.E556.format(done=_done(args.out), total=args.n, reason="interrupted", path=args.out)
        print(f"fortekit bench generate: {stopped}", file=sys.stderr)
        return 130
    close()
    resumed = report.clips - report.rendered
    if report.rendered == 0 and resumed:
        print(f"{report.out} already holds these {report.clips} clips, complete: nothing to do", file=out)
    else:
        print(f"generated {report.clips} clips in {report.out} ({report.seconds:.1f} s, "
              f"{report.rendered / max(report.seconds, 1e-9):.1f} clips/s"
              f"{f'; {resumed} were already there' if resumed else ''})", file=out)
    for split in ("train", "test"):
        queries = report.counts.get(f"{split}_queries", {})
        kinds = ", ".join(f"{kind} {count}" for kind, count in queries.items())
        print(f"  {split}: {report.counts.get(f'{split}_clips', 0)} clips, {sum(queries.values())} queries "
              f"({kinds})", file=out)
    return 0
