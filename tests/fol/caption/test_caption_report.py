"""``fortekit parse-report``: registration, a run over small files, and bad files."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest
from caption_fixtures import AUDIOCAPS_VAL, CLOTHO_DEV, GOLD, require

from fortekit.errors import DataFileError, GoldFileError
from fortekit.fol.caption.report import read_clotho, read_gold
from fortekit.search.cli.parse_report import add_parse_report_command, run_parse_report


def _cli() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(prog="fortekit")
    add_parse_report_command(cli.add_subparsers(dest="command", required=True))
    return cli


def _small_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    clotho = tmp_path / "clotho.csv"
    clotho.write_text(
        "file_name,caption_1,caption_2,caption_3,caption_4,caption_5\n"
        "a.wav,A dog barks loudly,Birds chirping in the morning,Rain falls on a metal roof,"
        "A car passes by,???\n",
        encoding="utf-8",
    )
    audiocaps = tmp_path / "val.csv"
    audiocaps.write_text(
        'audiocap_id,youtube_id,start_time,caption\n1,x,0,"A man speaks, then a door closes"\n'
        "2,y,0,Wind blowing without rain\n",
        encoding="utf-8",
    )
    gold = tmp_path / "gold.jsonl"
    rows = [
        {"index": 0, "caption": "A dog barks loudly", "formula": "Dog(x) ∧ Bark(x) ∧ Loud(x)"},
        {"index": 1, "caption": "wind blowing without rain", "formula": "Wind(x) ∧ Blow(x) ∧ ¬Rain(y)"},
    ]
    gold.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return clotho, audiocaps, gold


def test_the_command_is_registered_with_a_handler() -> None:
    args = _cli().parse_args(["parse-report", "--clotho", "c.csv", "--gold", "g.jsonl", "-o", "o.md"])
    assert args.handler is run_parse_report
    assert (args.clotho, args.audiocaps_val, args.gold, args.out) == (
        Path("c.csv"),
        None,
        Path("g.jsonl"),
        Path("o.md"),
    )


def test_a_report_over_small_files(tmp_path: Path) -> None:
    clotho, audiocaps, gold = _small_files(tmp_path)
    out_file = tmp_path / "report.md"
    args = _cli().parse_args(
        [
            "parse-report",
            "--clotho",
            str(clotho),
            "--audiocaps-val",
            str(audiocaps),
            "--gold",
            str(gold),
            "-o",
            str(out_file),
        ]
    )
    out = io.StringIO()
    assert args.handler(args, out) == 0
    text = out.getvalue()
    for needle in (
        "## Clotho development: 5 captions",
        "## AudioCaps val: 2 captions",
        "coverage",
        "fallback rate:",
        "predicates per caption",
        "tier mix: exact",
        "OOV words",
        "captions/s",
        "bag-of-lemmas baseline",
        "| parser |",
    ):
        assert needle in text, needle
    assert "fallback rate: 20.0% (1/5)" in text  # the '???' caption
    assert "negation F1" in text and "100.0% (1 gold, 1 found)" in text  # ¬Rain, with its scope
    assert out_file.read_text(encoding="utf-8") == text


def test_missing_and_malformed_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _cli().parse_args(["parse-report", "--clotho", str(tmp_path / "missing.csv")])
    assert args.handler(args, io.StringIO()) == 2
    assert "[E310]" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"caption": "a dog", "formula": "Dog(x"}\n', encoding="utf-8")
    with pytest.raises(GoldFileError, match=r"line 1"):
        read_gold(bad)
    bad.write_text('{"caption": "a dog"}\n', encoding="utf-8")
    with pytest.raises(GoldFileError, match=r"\[E309\]"):
        read_gold(bad)
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="caption_1"):
        read_clotho(wrong)


def test_real_data_files_read() -> None:
    assert len(read_clotho(require(CLOTHO_DEV, "Clotho development captions"))) == 2893 * 5
    from fortekit.fol.caption.report import read_audiocaps

    assert len(read_audiocaps(require(AUDIOCAPS_VAL, "AudioCaps val captions"))) > 2000
    items = read_gold(require(GOLD, "the parser gold set"))
    assert len(items) == 100 and len({item.index for item in items}) == 100
