"""Issue 43: a SIGKILL during ``eval --fuse -o`` or ``search --format trec -o`` loses nothing.

Each kill leaves the old output file or the new complete one, never half of one; the hidden
temporary file a kill leaves beside it is removed by the next run (under the output's lock).
The kills land while the temporary file is being written (polled for), and at fixed moments
of a finished run's duration (the same draws every run; FORTEKIT_FUZZ_RANDOM=1 varies them).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fuzz_fixtures import BIN, assert_clean, run_in_process

from fortekit.search.cli import main
from fortekit.search.eval.runs import read_run
from fortekit.search.refine.output import ResultWriter, result_record

SEED = None if os.environ.get("FORTEKIT_FUZZ_RANDOM", "") == "1" else 43
OLD = b"old q1 Q0 d1 1 1 kept\n"


def _spawn(argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.Popen([str(BIN / "fortekit"), *argv], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)


def _temporaries(target: Path) -> list[Path]:
    return [p for p in target.parent.iterdir() if p.name.startswith(f".{target.name}.") and
            p.name.endswith(".tmp")]


def _new_temporary(target: Path, written: bool = False) -> Callable[[], bool]:
    """Whether a temporary file that was not there before appeared (with bytes in it, ``written``)."""
    before = set(_temporaries(target))

    def ready() -> bool:
        fresh = [p for p in _temporaries(target) if p not in before]
        return any(not written or (p.exists() and p.stat().st_size > 0) for p in fresh)

    return ready


def _kill_when(process: subprocess.Popen[bytes], ready: Callable[[], bool], deadline: float) -> str:
    """SIGKILL ``process`` once ``ready()`` holds or ``deadline`` seconds passed; what happened."""
    started = time.monotonic()
    while process.poll() is None:
        if ready() or time.monotonic() - started >= deadline:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=60)
            return "killed while writing" if ready() else "killed"
        time.sleep(0.001)
    return "finished first"


def _assert_old_or_new(target: Path, new: bytes, what: str) -> None:
    now = target.read_bytes()
    assert now in (OLD, new), f"{what}: {target.name} is neither the old nor the new file ({len(now)} bytes)"


def _big_runs(folder: Path, queries: int = 2_500, depth: int = 40) -> tuple[str, str]:
    rng = random.Random(7)
    for name in ("a", "b"):
        lines = [f"q{q} Q0 d{rng.randrange(10 * depth)}x{r} {r} {1.0 / r} {name}\n"
                 for q in range(queries) for r in range(1, depth + 1)]
        (folder / f"{name}.trec").write_text("".join(lines))
    return str(folder / "a.trec"), str(folder / "b.trec")


def test_a_kill_during_eval_fuse_leaves_the_old_or_the_new_run_file(tmp_path: Path) -> None:
    a, b = _big_runs(tmp_path)
    reference = tmp_path / "reference.trec"
    started = time.monotonic()
    assert_clean(run_in_process(main, ["eval", "--fuse", a, b, "-o", str(reference)]), [0], "reference")
    seconds, new = time.monotonic() - started, reference.read_bytes()
    target = tmp_path / "fused.trec"
    target.write_bytes(OLD)
    argv = ["eval", "--fuse", a, b, "-o", "fused.trec", "--overwrite"]
    outcomes = []
    moments = [None, *(random.Random(SEED).uniform(0.2, 3.0) * seconds for _ in range(3))]
    for moment in moments:  # None: as soon as the temporary file is there
        ready = _new_temporary(target)
        process = _spawn(argv, tmp_path)
        outcomes.append(_kill_when(process, ready, 120.0 if moment is None else moment))
        _assert_old_or_new(target, new, f"kill {outcomes[-1]} ({moment})")
        target.write_bytes(OLD)  # every kill starts from the old file
    assert_clean(run_in_process(main, ["eval", "--fuse", a, b, "-o", str(target), "--overwrite"]), [0],
                 "after the kills")
    assert outcomes[0] == "killed while writing", outcomes
    assert target.read_bytes() == new and not _temporaries(target), outcomes
    assert not (tmp_path / ".fused.trec.lock").exists()


def test_a_kill_during_search_trec_leaves_the_old_or_the_new_run_file(
        cafe: Path, tmp_path: Path, minilm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import fortekit.plugins as plugins

    real = plugins.get_backbone
    monkeypatch.setattr(plugins, "get_backbone",
                        lambda name, **options: minilm if name == "minilm" else real(name, **options))
    monkeypatch.chdir(tmp_path)
    queries = [f"a dog barks number {i}" for i in range(120)]
    (tmp_path / "q.txt").write_text("\n".join(queries) + "\n")
    with ResultWriter(tmp_path / "lookup.jsonl") as writer:  # answers every query: no Stage 1
        for line, query in enumerate(queries, start=1):
            stored = {"refined_text": query + ", loud", "phi_star": "∃x Dog(x)"}
            writer.write(result_record(line, query, stored))
    target = tmp_path / "run.trec"
    argv = ["search", "--index", str(cafe), "--queries", "q.txt", "--lookup", "lookup.jsonl", "--format",
            "trec", "-o", "run.trec", "--overwrite", "-k", "2", "--device", "cpu", "-q", "--no-progress",
            "--batch-size", "2"]  # small batches: rows reach the temporary file early and often

    outcomes = []
    for deadline in (300.0, random.Random(SEED).uniform(2.0, 12.0)):
        target.write_bytes(OLD)
        writing = _new_temporary(target, written=True)  # rows are going into the temporary file
        process = _spawn(argv, tmp_path)
        outcomes.append(_kill_when(process, writing, deadline))
        assert target.read_bytes() == OLD, f"kill {outcomes[-1]}: the old run file changed"
    assert outcomes[0] == "killed while writing", outcomes
    assert _temporaries(target), "the kill while writing left no temporary file to clean up"
    # the same command in this process (the module's MiniLM shared): it cleans up and finishes
    assert_clean(run_in_process(main, argv[:-2]), [0], "after the kills")
    run = read_run(target)
    assert len(run) == len(queries) and all(len(ranked) == 2 for ranked in run.values())
    assert not _temporaries(target) and not (tmp_path / ".run.trec.lock").exists()
