"""fol-refine end to end: the real MiniLM backbone, the lexical elaborator, AudioCaps/Clotho queries.

Most runs use a small search (-B 2 -D 1) to keep the file fast; the search itself is
tested in the Stage 1 tests.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED_DATA, require, run_fol_refine

from fortekit.search.cli import refine as refine_cli

AUDIOCAPS_VAL = SHARED_DATA / "audiocaps" / "val.csv"
CLOTHO = SHARED_DATA / "clotho" / "clotho_captions_development.csv"
SMALL = ["-B", "2", "-D", "1", "--device", "cpu"]
Base = tuple[Path, Path, int, str]  # queries, output, exit status, stderr of the base run


run = run_fol_refine


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def captions() -> list[str]:
    """Distinct AudioCaps val captions, real queries."""
    with require(AUDIOCAPS_VAL).open(encoding="utf-8") as handle:
        return list(dict.fromkeys(row["caption"].strip() for row in csv.DictReader(handle)))[:20]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("refine")


@pytest.fixture(scope="module")
def base(workdir: Path, captions: list[str]) -> Base:
    """A run over 8 captions with three bad lines: (queries, output, status, stderr)."""
    lines = [c.encode() for c in captions[:8]]
    raw = b"\n".join([
        b"# AudioCaps val captions", *lines[:3], b"", *lines[3:6], b"\xff\xfe not UTF-8", *lines[6:],
        ("word " * 300).encode(),
    ]) + b"\n"
    queries = workdir / "queries.txt"
    queries.write_bytes(raw)
    output = workdir / "base.jsonl"
    status, _, err = run(str(queries), "-o", str(output), *SMALL, "--batch-size", "4")
    return queries, output, status, err


def test_good_lines_written_bad_lines_reported(base: Base, captions: list[str]) -> None:
    queries, output, status, err = base
    assert status == 1  # some lines were bad
    for line, code in ((5, "E655"), (9, "E656"), (12, "E657")):
        assert f"{queries}:{line}: skipped: [{code}]" in err
    written = records(output)
    assert [r["query"] for r in written] == captions[:8]
    assert [r["line"] for r in written] == [2, 3, 4, 6, 7, 8, 10, 11]
    first = written[0]
    assert first["source"] == "refine" and first["refined_text"] and first["phi_star"]
    assert set(first["objective"]) >= {"F", "complexity", "utility", "pivot"}
    assert "8 refined, 0 already done, 3 bad lines (lines 5, 9, 12), 0 failed" in err
    assert "texts encoded" in err
    settings = json.loads((output.parent / "base.jsonl.settings.json").read_text())
    assert settings["config.beam_width"] == 2 and settings["backbone"] == "minilm"


def test_resume_after_a_crash_redoes_nothing_and_loses_nothing(
    base: Base, workdir: Path,
) -> None:
    queries, output, _, _ = base
    complete = output.read_bytes()
    crashed = workdir / "crashed.jsonl"
    shutil.copy(output.parent / "base.jsonl.settings.json", workdir / "crashed.jsonl.settings.json")
    ends = [i + 1 for i, byte in enumerate(complete) if byte == ord("\n")]
    crashed.write_bytes(complete[: ends[4] + 40])  # five records and a torn sixth
    status, _, err = run(str(queries), "-o", str(crashed), *SMALL)
    assert status == 1  # the bad lines are bad again
    assert "removed a torn last line (40 bytes)" in err
    assert "3 refined, 5 already done" in err
    again = records(crashed)
    assert again[:5] == records(output)[:5]  # kept, not redone
    assert [r["line"] for r in again] == [r["line"] for r in records(output)]  # nothing lost, nothing twice
    # a finished output: nothing to do, and no model is loaded for it
    status, _, err = run(str(queries), "-o", str(crashed), *SMALL)
    assert "0 refined, 8 already done" in err and "no model loaded" in err
    assert len(records(crashed)) == 8


def test_interrupted_run_keeps_finished_batches(
    workdir: Path, captions: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.result import RefinementResult

    queries = workdir / "interrupt.txt"
    queries.write_text("\n".join(captions[8:13]) + "\n", encoding="utf-8")
    output = workdir / "interrupt.jsonl"
    real = Refiner.refine_many
    calls = {"n": 0}

    def interrupted(self: Refiner, texts: list[str], **options: Any) -> list[RefinementResult]:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(self, texts, **options)

    monkeypatch.setattr(Refiner, "refine_many", interrupted)
    status, _, err = run(str(queries), "-o", str(output), *SMALL, "--batch-size", "2")
    assert status == 130 and "[E669]" in err and "run the same command again" in err
    assert [r["line"] for r in records(output)] == [1, 2]
    monkeypatch.setattr(Refiner, "refine_many", real)
    status, _, err = run(str(queries), "-o", str(output), *SMALL, "--batch-size", "2")
    assert status == 0 and "3 refined, 2 already done" in err
    assert [r["query"] for r in records(output)] == captions[8:13]


def test_csv_and_jsonl_inputs_tsv_and_stdout_outputs(workdir: Path, captions: list[str]) -> None:
    table = workdir / "queries.csv"
    with table.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["audiocap_id", "caption"])
        writer.writerows([["1", captions[13]], ["2", ""], ["3", captions[14]]])
    output = workdir / "csv.tsv"
    status, _, err = run(str(table), "--text-column", "caption", "-o", str(output), *SMALL, "-q")
    assert status == 1 and f"{table}:3: skipped: [E655]" in err and "refined" not in err  # --quiet
    header, *rows = output.read_text(encoding="utf-8").splitlines()
    assert header.split("\t")[:4] == ["line", "query", "refined_text", "phi_star"]
    assert [row.split("\t")[:2] for row in rows] == [["2", captions[13]], ["4", captions[14]]]
    jsonl = workdir / "queries.jsonl"
    jsonl.write_text(json.dumps({"text": captions[13]}) + "\n", encoding="utf-8")
    status, out, _ = run(str(jsonl), "--text-column", "text", "-o", "-", *SMALL, "--progress")
    assert status == 0
    assert json.loads(out)["query"] == captions[13]
    assert json.loads(out)["refined_text"] == rows[0].split("\t")[2]  # same settings, same refinement


def test_lookup_table_answers_known_queries(base: Base, workdir: Path) -> None:
    _, output, _, _ = base
    known = records(output)[:3]
    queries = workdir / "lookup.txt"
    asked = [str(r["query"]).upper() for r in known] + ["a cat meowing loudly"]
    queries.write_text("\n".join(asked) + "\n", encoding="utf-8")
    result = workdir / "lookup.jsonl"
    status, _, err = run(
        str(queries), "--lookup", str(output), "-o", str(result), *SMALL
    )
    assert status == 0 and "1 refined, 3 from the lookup table" in err
    written = records(result)
    assert [r["source"] for r in written] == ["lookup"] * 3 + ["refine"]
    assert [r["refined_text"] for r in written[:3]] == [r["refined_text"] for r in known]
    assert [r["query"] for r in written] == asked
    # every query known: no search, no model
    queries.write_text("\n".join(asked[:3]) + "\n", encoding="utf-8")
    status, _, err = run(str(queries), "--lookup", str(output), "-o", str(workdir / "all.jsonl"))
    assert status == 0 and "0 refined, 3 from the lookup table" in err and "no model loaded" in err


def test_changed_settings_are_refused_unless_overwrite(base: Base, workdir: Path) -> None:
    queries = workdir / "two.txt"
    queries.write_text("a dog barking\nrain on a roof\n", encoding="utf-8")
    output = workdir / "two.jsonl"
    assert run(str(queries), "-o", str(output), *SMALL)[0] == 0
    bigger = ["-B", "3", "-D", "1", "--device", "cpu"]
    status, _, err = run(str(queries), "-o", str(output), *bigger)
    assert status == 2 and "[E663]" in err and "config.beam_width: 2 then, 3 now" in err
    status, _, err = run(str(queries), "-o", str(output), *bigger, "--overwrite")
    assert status == 0 and "2 refined, 0 already done" in err
    assert len(records(output)) == 2


def test_explain_prints_the_tree_and_the_chosen_formula(base: Base) -> None:
    _, output, _, _ = base
    first = records(output)[0]
    status, out, _ = run("--query", str(first["query"]), "--explain", *SMALL)
    assert status == 0
    assert "φ*" in out and "★" in out
    assert f"G(φ*)  {first['refined_text']}" in out
    assert str(first["phi_star"]) in out
    status, out, _ = run("--query", str(first["query"]), *SMALL)  # no --explain: the result as JSON
    assert status == 0 and json.loads(out)["refined_text"] == first["refined_text"]


ClothoIndex = tuple[Path, list[dict[str, str]]]  # the index directory, the Clotho rows in it


@pytest.fixture(scope="module")
def clotho_index(workdir: Path) -> Iterator[ClothoIndex]:
    """An index of 40 Clotho clips (caption_1 embedded by MiniLM), saved to disk."""
    index_module = pytest.importorskip("fortekit.search.index")
    from fortekit.plugins import get_backbone

    with require(CLOTHO).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))[:40]
    backbone = get_backbone("minilm", device="cpu")
    index = index_module.AudioIndex.from_captions(
        [row["file_name"] for row in rows], [row["caption_1"] for row in rows], backbone,
    )
    directory = workdir / "clotho.index"
    index.save(directory)
    yield directory, rows


def test_index_ranking_with_proxy_anchors(clotho_index: ClothoIndex, workdir: Path) -> None:
    from fortekit.fol import parse_formula
    from fortekit.plugins import get_backbone
    from fortekit.search.index import AudioIndex
    from fortekit.verbalise import verbalise

    directory, rows = clotho_index
    queries = workdir / "clotho.csv"
    with queries.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file_name", "caption_2"])
        writer.writerows([[row["file_name"], row["caption_2"]] for row in rows[:3]])
    output = workdir / "ranked.jsonl"
    status, _, err = run(
        str(queries), "--text-column", "caption_2", "--index", str(directory), "-k", "5",
        "--anchors", "proxy",
        "--query-vector", "verbalised", "--formula-scoring", "off", "--stage3", "off", "--projection", "none",
        "-o", str(output), *SMALL,
    )
    assert status == 0, err
    index = AudioIndex.load(directory)
    backbone = get_backbone("minilm", device="cpu")
    for record in records(output):
        ranking = record["ranking"]
        assert isinstance(ranking, list) and len(ranking) == 5 and record["anchors"] == "proxy"
        scores = [item["score"] for item in ranking]
        assert scores == sorted(scores, reverse=True)
        # the ranking is the index searched with q* = f_T(G(phi*)), the paper's query vector (G(phi0)
        # when nothing was refined, where the refined text is the query itself)
        verbalised = verbalise(parse_formula(str(record["phi_star"])))
        unrefined = record["phi_star"] == record["phi0"]
        assert record["refined_text"] == (record["query"] if unrefined else verbalised)
        _, top = index.search(backbone.encode_text([verbalised]), k=5, device="cpu")
        assert [item["id"] for item in ranking] == [index.ids[i] for i in top[0].tolist()]
        assert ranking[0]["caption"] == index.captions[top[0, 0]]


def test_oracle_anchors_and_a_failing_query_is_retried_alone(
    clotho_index: ClothoIndex, workdir: Path,
) -> None:
    directory, rows = clotho_index
    queries = workdir / "oracle.jsonl"
    lines = [{"query": row["caption_3"], "clip": row["file_name"]} for row in rows[3:5]]
    lines.insert(1, {"query": "a clip the index does not hold", "clip": "missing.wav"})
    queries.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    output = workdir / "oracle.out.jsonl"
    status, _, err = run(
        str(queries), "--index", str(directory), "--anchors", "oracle", "--target-column", "clip",
        "-o", str(output), *SMALL,
    )
    assert status == 1
    assert f"{queries}:2: failed: [E660]" in err and "[E409]" in err
    written = records(output)
    assert [r["line"] for r in written] == [1, 3] and {r["anchors"] for r in written} == {"oracle"}
    assert "1 failed (lines 2)" in err


def test_anchor_bank_from_a_training_index(clotho_index: ClothoIndex, workdir: Path) -> None:
    directory, rows = clotho_index
    queries = workdir / "bank.txt"
    queries.write_text(rows[5]["caption_4"] + "\n", encoding="utf-8")
    output = workdir / "bank.jsonl"
    bank = ["--anchors", "bank", "--anchor-bank", str(directory)]  # a training index serves as a bank
    status, _, err = run(str(queries), *bank, "-o", str(output), *SMALL)
    assert status == 0, err
    (record,) = records(output)
    assert record["anchors"] == "bank" and record["objective"]["sim_pos"] != 0.0


def test_an_index_of_another_backbone_is_refused(workdir: Path) -> None:
    import numpy as np

    from fortekit.search.index import AudioIndex

    index = AudioIndex.from_captions(
        ["a", "b"], ["rain", "wind"], "other-encoder", embeddings=np.eye(2, 384), parse_captions=False,
    )
    directory = workdir / "other.index"
    index.save(directory)
    queries = workdir / "one.txt"
    queries.write_text("rain on a roof\n", encoding="utf-8")
    output = workdir / "x.jsonl"
    status, _, err = run(str(queries), "--index", str(directory), "-o", str(output), "--device", "cpu")
    assert status == 2 and "[E609]" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "give a query file"),
        (["q.txt", "--stage1", "bogus"], "invalid choice"),
        (["q.txt", "--offline"], "[E762] unrecognized argument --offline"),  # --stage1 offline since 0.2.0
        (["q.txt", "--anchors", "proxy"], "[E667] --anchors proxy needs --index DIR"),
        (["q.txt", "--anchors", "oracle", "--index", "i"], "[E667] --anchors oracle needs --target-column"),
        (["q.txt", "--backbone-option", "novalue"], "[E668] --backbone-option takes KEY=VALUE"),
        (["q.txt", "--max-chars", "100001"], "[E668] --max-chars takes at most"),
        (["q.txt", "-B", "0"], "[E668]"),
        (["q.txt", "--device", "gpu"], "[E668] --device takes"),
        (["q.txt", "--elaborator", "nope"], "unknown elaborator 'nope'"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], expected: str) -> None:
    status, _, err = run(*argv)
    assert status == 2 and expected in err


def test_unusable_inputs_exit_2_without_a_traceback(tmp_path: Path) -> None:
    status, _, err = run(str(tmp_path / "missing.txt"))
    assert status == 2 and "[E650]" in err and "no such file" in err
    queries = tmp_path / "q.txt"
    queries.write_text("rain\n", encoding="utf-8")
    status, _, err = run(str(queries), "-o", str(queries))
    assert status == 2 and "[E664]" in err
    status, _, err = run(str(queries), "--lookup", str(tmp_path / "none.jsonl"))
    assert status == 2 and "[E665]" in err
    status, _, err = run(str(queries), "--tau", "nan")
    assert status == 2 and "[E400]" in err
    status, _, err = run(str(queries), "--anchors", "bank", "--anchor-bank", str(tmp_path / "no-bank"))
    assert status == 2 and "[E408]" in err


def test_parser_presets_and_list_plugins() -> None:
    parser = refine_cli.build_refine_parser()
    args = parser.parse_args(["q.txt", "--stage1", "offline", "-D", "3", "--lambda", "0.5",
                              "--backbone-option", "x=2"])
    config = refine_cli._config(args)
    assert (config.beam_width, config.max_depth, config.lam) == (5, 3, 0.5)
    assert args.backbone_option == [("x", 2)]
    status, out, _ = run("--list-plugins")
    assert status == 0 and "minilm" in out
