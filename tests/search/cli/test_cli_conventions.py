"""The command-line conventions of issue 46: ``-k 0`` names its fix and page (E764); one output
format per ``--format``, whether one query or a ``--queries`` file is searched, with the
matched/missed/violated lists always filled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fortekit.search.cli.main import fol_refine_main, main

QUERIES = ["a dog barking without people talking", "rain falls on a tin roof"]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("k", ["0", "-1", "none"])
def test_k_below_one_names_the_fix_and_the_page_before_the_index_loads(
        k: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no.index"  # never read: the option is refused first
    code, _, err = _run(["search", "--index", str(missing), "-k", k, "a dog"], capsys)
    assert code == 2 and "[E764]" in err and "docs/retriever.md" in err and "-k 10" in err
    assert "evaluation.md" not in err and "[E601]" not in err and "usage: fortekit search" in err
    try:
        code = fol_refine_main(["--query", "a dog", "--index", str(missing), "-k", k])
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2 and "[E764]" in err and "docs/refine.md" in err and "-k 10" in err


@pytest.mark.parametrize("file_format", [None, "table", "jsonl", "tsv", "trec"])
def test_one_format_for_one_query_and_for_a_query_file(
        file_format: str | None, cafe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "q.txt"
    queries.write_text("".join(f"{query}\n" for query in QUERIES), encoding="utf-8")
    common = ["--index", str(cafe), "-k", "3", "--stage1", "off", "--device", "cpu"]
    chosen = [] if file_format is None else ["--format", file_format]
    code, given, _ = _run(["search", *common, *chosen, *QUERIES], capsys)
    assert code == 0
    code, from_file, _ = _run(["search", *common, *chosen, "--queries", str(queries), "-q"], capsys)
    assert code == 0
    assert given == from_file  # the same text, line for line
    if file_format in (None, "table"):
        assert given.startswith(f"query: {QUERIES[0]}\n") and "  1.!" not in given.splitlines()[1]
        assert "!" in given  # the hit that names people talking is marked
    if file_format == "jsonl":
        records = [json.loads(line) for line in given.splitlines()]
        assert [record["query"] for record in records] == QUERIES


def test_a_file_output_is_json_lines_with_the_predicates_filled(
        cafe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "q.txt"
    queries.write_text(QUERIES[0] + "\n", encoding="utf-8")
    out = tmp_path / "ranked.jsonl"
    common = ["--index", str(cafe), "-k", "8", "--stage1", "off", "--device", "cpu"]
    assert _run(["search", *common, "--queries", str(queries), "-o", str(out), "-q"], capsys)[0] == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    hits = record["hits"]
    assert any(hit["matched"] for hit in hits) and any(hit["missed"] for hit in hits)
    assert any(hit["violated"] for hit in hits)  # without --explain
    code, printed, _ = _run(["search", *common, "--json", QUERIES[0]], capsys)
    assert code == 0 and json.loads(printed)["hits"] == hits
    # --format table into a file is written whole, like tsv and trec
    table = tmp_path / "ranked.txt"
    code, _, _ = _run(["search", *common, "--queries", str(queries), "--format", "table", "-o", str(table),
                       "-q"], capsys)
    assert code == 0 and table.read_text(encoding="utf-8").startswith(f"query: {QUERIES[0]}\n")
    code, _, err = _run(["search", *common, "--queries", str(queries), "--format", "table", "-o", str(table),
                         "-q"], capsys)
    assert code == 2 and "[E749]" in err and "--format table writes a whole table file" in err
