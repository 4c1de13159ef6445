"""The 200-clip generated collection and the small CLAP trained on it, once per test session.

Shared by tests/search/eval/bench/test_small_clap.py (training) and
tests/search/eval/bench/test_audio_bench.py (FORTE on the waveforms through ``fortekit eval --beir``),
so the model is trained once (about 30 s of CPU).
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest

Trained = tuple[Path, Path, dict[str, Any], str]


@pytest.fixture(scope="session")
def trained_clap(tmp_path_factory: pytest.TempPathFactory) -> Trained:
    """(collection folder, model folder, result.json, what train-clap printed)."""
    pytest.importorskip("torch")
    from fortekit.search.cli.bench_clap import add_train_clap_action
    from fortekit.search.eval.bench.soundgen.generate import generate
    from fortekit.search.eval.bench.soundgen.scene import GeneratorConfig

    root = tmp_path_factory.mktemp("soundclap")
    generate(GeneratorConfig(seed=0, n=200, speech=False), root / "gen")
    parser = argparse.ArgumentParser(prog="fortekit bench")
    add_train_clap_action(parser.add_subparsers(dest="action"))
    args = parser.parse_args(["train-clap", "--data", str(root / "gen"), "-o", str(root / "clap"),
                              "--epochs", "10", "--batch-size", "32", "--device", "cpu", "--threads", "2"])
    out = io.StringIO()
    assert args.handler(args, out) == 0, out.getvalue()
    result = json.loads((root / "clap" / "result.json").read_text(encoding="utf-8"))
    return root / "gen", root / "clap", result, out.getvalue()
