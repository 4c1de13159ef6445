"""The command-line tools: `fortekit parse` and the `fol-refine` entry point."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fortekit.search.cli import fol_refine_main, main

BIN = Path(sys.executable).parent


def test_parse_prints_every_notation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "all x.(Bird(x) -> -Loud(x))"]) == 0
    out = capsys.readouterr().out
    assert "unicode  ∀x [Bird(x) → ¬Loud(x)]" in out
    assert "nltk     all x.(Bird(x) -> -Loud(x))" in out
    assert r"latex    \forall x\," in out
    assert "Pred     {¬Bird/1, ¬Loud/1}" in out


def test_parse_reports_bad_lines_and_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "formulas.txt"
    source.write_bytes(
        "# a comment\nBird(x) ∧\n\n".encode() + b"\xff\xfeBird(\xc3x)\n" + b"Loud(x)\n"
    )
    assert main(["parse", "--file", str(source), "--style", "ascii"]) == 1
    captured = capsys.readouterr()
    assert f"{source}:2: Bird(x) ∧\n  error: [E001]" in captured.err  # errors on stderr
    assert f"{source}:4:" in captured.err  # the undecodable line is reported, not fatal
    assert f"{source}:5: Loud(x)\n  ascii    Loud(x)" in captured.out


def test_parse_needs_input(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["parse"])
    assert info.value.code == 2


def test_missing_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "--file", str(tmp_path / "nope.txt")]) == 2  # unreadable input
    assert "No such file" in capsys.readouterr().err


def test_fol_refine_help_and_console_scripts() -> None:
    with pytest.raises(SystemExit) as info:
        fol_refine_main(["--help"])
    assert info.value.code == 0
    result = subprocess.run(
        [str(BIN / "fol-refine"), "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and "usage: fol-refine" in result.stdout
    result = subprocess.run(
        [str(BIN / "fortekit"), "parse", "∃x [Bird(x) ∧ ¬Loud(x)]", "--style", "nltk"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0 and "exists x.(Bird(x) & -Loud(x))" in result.stdout
