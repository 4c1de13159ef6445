"""What ``--ray`` costs on one machine: each batch job once in one process, once on a local Ray.

Both jobs run as a user runs them, each command in a fresh process, on the same CPUs
(``--cpus``, the local Ray's ``--ray-cpus``), and the outputs are compared:

* ``index build``: ``--clips`` clips of the generated sound collection (5 s WAV files at 16 kHz),
  through a small CLAP and its tagger of the default sizes, randomly initialised (the work of a
  trained one: reading, resampling to the model's rate, captioning, embedding, parsing);
  ``fortekit index build --audio DIR --backbone small-clap --captioner tagger`` against the same with
  ``--ray``: the same ids, captions and predicate sets, the largest vector difference;
* ``fol-refine``: the first ``--queries`` captions of Clotho development (``caption_1``), in the
  offline regime (B, D) = (5, 4): ``fol-refine QUERIES --stage1 offline`` in one process (torch
  on every core, then on one thread, ``OMP_NUM_THREADS=1``), then with ``--ray`` (an actor of one
  CPU, one thread, per CPU) and with ``--ray --ray-actors 1 --ray-actor-cpus N`` (one actor with
  the threads of the one process); each Ray output is compared with the one process of the same
  threads.

It also times starting and stopping a local Ray alone. Run::

    python scripts/ray_overhead.py --clips 200 --queries 200 --cpus 2

Figures in docs/scale.md ("Ray for the batch work").
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLOTHO = REPO.parent / "shared" / "data" / "clotho" / "clotho_captions_development.csv"
BIN = Path(sys.executable).parent


def timed(command: list[str], label: str, env: dict[str, str] | None = None) -> float:
    """Run a command; its wall time in seconds (it must succeed)."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{label} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    print(f"  {label}: {seconds:.1f} s", file=sys.stderr)
    return seconds


def ray_start_stop(cpus: int) -> float:
    """Seconds to import Ray, start a local Ray and shut it down (in a fresh process)."""
    code = (f"import logging, ray; ray.init(num_cpus={cpus}, include_dashboard=False, log_to_driver=False, "
            "logging_level=logging.WARNING); ray.shutdown()")
    return timed([sys.executable, "-c", code], "Ray start and stop")


def make_models(folder: Path) -> None:
    """A small CLAP and a tagger of the default sizes, random weights, saved with the real code."""
    import torch

    from fortekit.plugins.backbones._small_clap_nets import SmallClap, Tagger
    from fortekit.plugins.backbones.small_clap import SmallClapConfig, save_small_clap
    from fortekit.plugins.captioners.tagger import save_tagger
    from fortekit.search.eval.bench.soundclap.data import tag_layout

    torch.manual_seed(0)
    config = SmallClapConfig()
    save_small_clap(SmallClap(config).eval(), folder)
    layout = tag_layout()
    save_tagger(Tagger(config, layout.size).eval(), layout, folder)


def bench_build(work: Path, clips: int, cpus: int) -> list[dict[str, object]]:
    import numpy as np

    from fortekit.search.eval.bench.soundgen.generate import generate
    from fortekit.search.eval.bench.soundgen.scene import GeneratorConfig
    from fortekit.search.index import AudioIndex

    generate(GeneratorConfig(seed=0, n=clips, speech=False), work / "gen")
    make_models(work / "models")
    common = [str(BIN / "fortekit"), "index", "build", "--audio", str(work / "gen" / "audio"),
              "--backbone", "small-clap", "--backbone-option", f"model={work / 'models'}",
              "--captioner", "tagger", "--captioner-option", f"model={work / 'models'}",
              "--captioner-option", "device=cpu", "--device", "cpu", "--quiet"]
    one = timed([*common, "-o", str(work / "one.index")], f"index build, {clips} clips, one process")
    ray = timed([*common, "-o", str(work / "ray.index"), "--ray", "--ray-cpus", str(cpus)],
                f"index build, {clips} clips, --ray")
    first, second = AudioIndex.load(work / "one.index"), AudioIndex.load(work / "ray.index")
    same = (first.ids == second.ids and first.captions == second.captions
            and first.predicate_sets == second.predicate_sets)
    difference = float(np.abs(np.asarray(first.embeddings) - np.asarray(second.embeddings)).max())
    note = (f"ids, captions, predicate sets {'the same' if same else 'NOT the same'}; "
            f"vectors within {difference:.1e}")
    job = "index build"
    return [{"job": job, "run": "one process", "items": clips, "seconds": round(one, 1), "same": ""},
            {"job": job, "run": f"--ray (local, {cpus} CPUs)", "items": clips, "seconds": round(ray, 1),
             "same": note}]


def _differing(first: Path, second: Path) -> int:
    """How many records of two fol-refine outputs differ (line by line)."""
    lines = [path.read_text(encoding="utf-8").splitlines() for path in (first, second)]
    pairs = zip(*lines, strict=True)
    return sum(json.loads(a) != json.loads(b) for a, b in pairs)


def bench_refine(work: Path, queries: int, cpus: int) -> list[dict[str, object]]:
    with CLOTHO.open(encoding="utf-8") as handle:
        rows = csv.DictReader(handle)
        captions = [next(rows)["caption_1"].strip() for _ in range(queries)]
    path = work / "queries.txt"
    path.write_text("\n".join(captions) + "\n", encoding="utf-8")
    common = [str(BIN / "fol-refine"), str(path), "--stage1", "offline", "--device", "cpu", "--quiet"]
    ray = ["--ray", "--ray-cpus", str(cpus)]
    # (label, options, environment, the run whose output it must equal): torch's threads decide the
    # last float bits, so each Ray run is compared with the one process of as many threads an actor.
    runs = [
        ("one process", [], {}, None),
        ("one process, OMP_NUM_THREADS=1", [], {"OMP_NUM_THREADS": "1"}, None),
        (f"--ray: {cpus} actors of 1 CPU (the default)", ray, {}, 1),
        (f"--ray --ray-actors 1 --ray-actor-cpus {cpus}",
         [*ray, "--ray-actors", "1", "--ray-actor-cpus", str(cpus)], {}, 0),
    ]
    out: list[dict[str, object]] = []
    outputs: list[Path] = []
    for number, (label, extra, env, reference) in enumerate(runs):
        output = work / f"refined{number}.jsonl"
        seconds = timed([*common, "-o", str(output), *extra], f"fol-refine, {queries} queries, {label}",
                        env={**os.environ, **env})
        outputs.append(output)
        same = ""
        if reference is not None:
            against = outputs[reference]
            same = "byte for byte" if output.read_bytes() == against.read_bytes() else (
                f"{_differing(against, output)} of {queries} records differ")
            same += f" (against: {runs[reference][0]})"
        out.append({"job": "fol-refine offline", "run": label, "items": queries, "seconds": round(seconds, 1),
                    "same": same})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=200, help="generated clips to index (default: 200)")
    parser.add_argument("--queries", type=int, default=200, help="Clotho captions to refine (default: 200)")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1,
                        help="the local Ray's CPUs (default: this machine's)")
    parser.add_argument("--skip-build", action="store_true", help="leave out the index build")
    parser.add_argument("--skip-refine", action="store_true", help="leave out fol-refine")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ray_overhead_"))
    try:
        results: list[dict[str, object]] = []
        start = ray_start_stop(args.cpus)
        if not args.skip_build:
            results += bench_build(work, args.clips, args.cpus)
        if not args.skip_refine:
            results += bench_refine(work, args.queries, args.cpus)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{os.cpu_count()} CPUs here; load average {os.getloadavg()[0]:.2f} at the end")
    print(f"Ray start and stop alone: {start:.1f} s")
    print("| job | run | items | wall s | / one process | output against one process |")
    print("|---|---|---|---|---|---|")
    base: dict[object, float] = {}
    for row in results:
        seconds = float(row["seconds"])  # type: ignore[arg-type]
        base.setdefault(row["job"], seconds)
        print(f"| {row['job']} | {row['run']} | {row['items']} | {seconds:.1f} | "
              f"{seconds / base[row['job']]:.2f} | {row['same']} |")
    if args.json:
        figures = {"ray_start_s": round(start, 1), "cpus": args.cpus, "jobs": results}
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
