"""The command-line tools: `fortekit parse` and the `fol-refine` entry point."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from fortekit.search.cli import build_parser, fol_refine_main, main
from fortekit.search.cli.common import CLI_FULL_COLLECTIONS, run_cli
from fortekit.search.cli.main import COMMANDS, chosen_command

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


def _helps(parser: argparse.ArgumentParser) -> dict[tuple[str, ...], str]:
    from fortekit.search.cli.output_options import walk_parsers

    return {path: sub.format_help() for path, sub in walk_parsers(parser)}


def test_each_command_builds_alone_as_in_the_whole_parser() -> None:
    whole = build_parser()
    commands = next(a for a in whole._actions if isinstance(a, argparse._SubParsersAction))
    assert list(commands.choices) == [name for name, _, _ in COMMANDS]  # --help's order
    helps = _helps(whole)
    for name, _, _ in COMMANDS:
        alone = build_parser(name)
        only = next(a for a in alone._actions if isinstance(a, argparse._SubParsersAction))
        assert list(only.choices) == [name]
        for path, text in _helps(alone).items():
            if path:  # the top level lists one command here; each command's own parsers are the same
                assert text == helps[path], path
    assert chosen_command(["search", "--index", "x", "q"]) == "search"
    assert chosen_command(["serch"]) is chosen_command(["--help", "search"]) is chosen_command([]) is None
    assert _helps(build_parser("serch")) == helps  # no command of that name: every one


def test_the_top_level_lists_every_command_and_a_typo_gets_the_nearest(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    listed = capsys.readouterr().out
    for name, _, _ in COMMANDS:
        assert f"\n    {name} " in listed or f"\n    {name}\n" in listed, name
    with pytest.raises(SystemExit) as info:
        main(["serch", "--index", "x", "rain"])
    assert info.value.code == 2
    assert "[E763] invalid choice 'serch': did you mean 'search'?" in capsys.readouterr().err


#: What a search does not need: the other commands' modules, what only they import, and Lark
#: (the formula parser's, imported on the first formula parsed; a search parses none).
NOT_FOR_A_SEARCH = sorted({module for name, module, _ in COMMANDS if name not in ("search", "parse")} | {
    "fortekit.search.cli.bench_clap", "fortekit.search.cli.bench_stage2", "fortekit.search.cli.eval_runs",
    "fortekit.search.cli.index_grow", "fortekit.search.cli.ray_options", "fortekit.fol.caption.report",
    "fortekit.search.serve", "fortekit.search.refine.job", "lark",
})


def test_a_search_process_builds_and_imports_only_its_own_command(cafe: Path) -> None:
    # cli.parse is imported: it holds echo_text, which the search's table prints with
    code = (
        "import sys\n"
        "from fortekit.search.cli import main\n"
        f"status = main(['search', '--index', {str(cafe)!r}, 'rain', '-k', '1', '--device', 'cpu'])\n"
        f"print(status, sorted(name for name in {NOT_FOR_A_SEARCH!r} if name in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "0 []", result.stdout


def test_a_command_collects_garbage_fully_less_often_and_puts_the_thresholds_back() -> None:
    import gc

    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []

    def command() -> int:
        seen.append(gc.get_threshold())
        return 0

    assert run_cli(command, "demo") == 0
    assert seen[0][2] >= CLI_FULL_COLLECTIONS and seen[0][:2] == before[:2]
    assert gc.get_threshold() == before
