"""`fortekit eval --run/--qrels/--fuse`: TREC runs scored like `eval --beir`, bad lines, RRF against ranx."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from beir_fixtures import NEGATION, make_beir

from fortekit.errors import EvaluationError
from fortekit.search.cli import main
from fortekit.search.eval.beir_metrics import MEASURES, VIOLATION
from fortekit.search.eval.runs import (
    Run,
    ranking,
    read_qrels,
    read_run,
    reciprocal_rank_fusion,
    run_from_rankings,
    score_runs,
    write_run,
)

VAL = NEGATION / "audiocaps_val"
DEPTH = 100  # a typical run depth: the lexical run and the fusion inputs stop there

# -- real runs on audiocaps_val ------------------------------------------------------------------


def _lexical_run(folder: Path) -> Run:
    """A second, real system: word overlap between the query and the item's captions (tie-free)."""
    from fortekit.search.eval.beir import load_beir

    collection = load_beir(folder)

    def words(text: str) -> set[str]:
        return set(re.findall(r"[a-z]+", text.lower()))

    items = [(item.id, words(" ".join(item.captions or (item.text,)))) for item in collection.items]
    run: Run = {}
    for query in collection.queries:
        wanted = words(query.text)
        order = sorted(items, key=lambda pair: (len(wanted & pair[1]), pair[0]), reverse=True)
        run[query.id] = {doc: float(DEPTH - i) for i, (doc, _) in enumerate(order[:DEPTH])}
    return run


@pytest.fixture(scope="module")
def val(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`eval --beir` of the baseline, the baseline's full ranking as a TREC run, a lexical run."""
    if not (VAL / "corpus.jsonl").is_file():
        pytest.skip(f"real data not available: {VAL} (the ../shared/data/negation checkout is absent)")
    from fortekit.plugins import get_backbone
    from fortekit.search.eval.beir import load_beir
    from fortekit.search.eval.beir_systems import SYSTEMS, BeirData
    from fortekit.search.stage1.config import RefineConfig

    root = tmp_path_factory.mktemp("runs")
    beir_out = root / "beir"
    assert main(["eval", "--beir", str(VAL), "--systems", "baseline", "--direction", "t2a", "--no-umap",
                 "--device", "cpu", "-o", str(beir_out)]) == 0
    collection = load_beir(VAL)
    data = BeirData(collection, get_backbone("minilm", device="cpu"), refine=RefineConfig.online())
    system = SYSTEMS["baseline"].rank(data)
    assert system.scores is not None
    ids = [item.id for item in collection.items]
    run: Run = {}
    for row, query in enumerate(collection.queries):  # the system's own cosine scores, its order
        run[query.id] = {ids[j]: float(system.scores[row, j]) for j in system.order[row]}
        # trec_eval's order is the system's, except that tied scores (items with the same caption)
        # go by id: the same scores position by position
        ordered = [run[query.id][doc] for doc in ranking(run[query.id])]
        assert ordered == [float(system.scores[row, j]) for j in system.order[row]], query.id
    baseline = write_run(root / "baseline.trec", run, tag="minilm")
    lexical = write_run(root / "lexical.trec", _lexical_run(VAL), tag="overlap")
    return {"root": root, "beir_out": beir_out, "baseline": baseline, "lexical": lexical,
            "metrics": json.loads((beir_out / "metrics.json").read_text(encoding="utf-8"))}


def test_a_written_run_reads_back_exactly(val: dict[str, Any]) -> None:
    text = val["baseline"].read_text(encoding="utf-8")
    first = text.splitlines()[0].split(" ")
    assert len(first) == 6 and first[1] == "Q0" and first[3] == "1" and first[5] == "minilm"
    run = read_run(val["baseline"])
    assert len(run) == 134 and all(len(docs) == 495 for docs in run.values())
    write_run(val["root"] / "again.trec", run, tag="minilm")
    assert (val["root"] / "again.trec").read_text(encoding="utf-8") == text


def test_scoring_the_baseline_run_gives_eval_beirs_metrics(
    val: dict[str, Any], capsys: pytest.CaptureFixture[str],
) -> None:
    out = val["root"] / "scored"
    assert main(["eval", "--run", str(val["baseline"]), "--run", str(val["lexical"]),
                 "--qrels", str(VAL / "qrels" / "test.tsv"), "--beir", str(VAL), "-o", str(out)]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split()[:3] == ["run", "nDCG@10", "AP"] and "lexical" in table
    scored = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    expected = val["metrics"]["systems"]["baseline"]
    got = scored["systems"]["baseline"]
    assert scored["queries"] == val["metrics"]["queries"] == 134
    for name in (*MEASURES, VIOLATION):
        assert got[name] == pytest.approx(expected[name], abs=1e-9), name
    assert got["p_AP"] is None and 0.0 <= scored["systems"]["lexical"]["p_AP"] <= 1.0
    for value, rows in val["metrics"]["breakdown"]["kind"].items():
        for name in ("nDCG@10", "AP", VIOLATION):
            assert scored["breakdown"]["kind"][value]["baseline"][name] == pytest.approx(
                rows["baseline"][name], abs=1e-9)
    from fortekit.search.eval.per_query import read_per_query

    mine = read_per_query(out / "per_query" / "baseline.jsonl")
    theirs = read_per_query(val["beir_out"] / "per_query" / "baseline.jsonl")
    assert [r["top"] for r in mine] == [r["top"] for r in theirs]
    assert [r["nDCG@10"] for r in mine] == pytest.approx([r["nDCG@10"] for r in theirs], abs=1e-9)
    markdown = (out / "results.md").read_text(encoding="utf-8")
    assert markdown.startswith("# fortekit eval --run:") and "| lexical |" in markdown


def test_without_beir_only_the_standard_metrics_and_json(
    val: dict[str, Any], capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["eval", "--run", str(val["baseline"]), "--qrels", str(VAL / "qrels" / "test.tsv"),
                 "--json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    row = document["systems"]["baseline"]
    assert row["nDCG@10"] == pytest.approx(val["metrics"]["systems"]["baseline"]["nDCG@10"], abs=1e-9)
    assert row[VIOLATION] is None and document["violation@10"].startswith("not computed")
    assert document["breakdown"] == {}


def test_trec_qrels_score_like_the_beir_tsv(val: dict[str, Any], tmp_path: Path) -> None:
    beir = read_qrels(VAL / "qrels" / "test.tsv")
    trec = tmp_path / "qrels.txt"
    trec.write_text("".join(f"{q}\t0\t{d}\t{s}\n" for q, docs in beir.items() for d, s in docs.items()),
                    encoding="utf-8")
    assert read_qrels(trec) == beir
    run = {"baseline": read_run(val["baseline"])}
    assert score_runs(run, read_qrels(trec))["systems"] == score_runs(run, beir)["systems"]


def test_rrf_equals_ranx_on_real_runs(val: dict[str, Any]) -> None:
    ranx = pytest.importorskip("ranx", reason="ranx is not installed (pip install 'fortekit[test]')")
    baseline = {q: {d: s for d, s in docs.items() if d in ranking(docs)[:DEPTH]}
                for q, docs in read_run(val["baseline"]).items()}
    lexical = read_run(val["lexical"])
    mine = reciprocal_rank_fusion([baseline, lexical], k=60)
    theirs = ranx.fuse(runs=[ranx.Run(baseline, name="a"), ranx.Run(lexical, name="b")], method="rrf",
                       params={"k": 60}).to_dict()
    assert set(mine) == set(theirs)
    for query, docs in mine.items():
        assert set(docs) == set(theirs[query]), query
        for doc, score in docs.items():
            assert score == pytest.approx(theirs[query][doc], rel=1e-12, abs=1e-15)


def test_a_run_fused_with_itself_ranks_like_the_run(val: dict[str, Any], tmp_path: Path) -> None:
    fused_path = tmp_path / "fused.trec"
    assert main(["eval", "--fuse", str(val["lexical"]), str(val["lexical"]), "-o", str(fused_path)]) == 0
    fused, run = read_run(fused_path), read_run(val["lexical"])
    assert [ranking(fused[q]) for q in run] == [ranking(docs) for docs in run.values()]


def test_fuse_and_score_in_one_call(
    val: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["eval", "--fuse", str(val["baseline"]), str(val["lexical"]), "--fuse-k", "10",
                 "-o", str(tmp_path / "fused.trec"), "--qrels", str(VAL / "qrels" / "test.tsv"),
                 "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document["systems"]) == ["baseline", "lexical", "fused"]
    assert read_run(tmp_path / "fused.trec") == reciprocal_rank_fusion(
        [read_run(val["baseline"]), read_run(val["lexical"])], k=10)


# -- the formats on small files --------------------------------------------------------------------


def test_rrf_by_hand() -> None:
    a = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}, "q2": {"d9": 1.0}}
    b = {"q1": {"d3": 5.0, "d4": 4.0, "d1": 3.0}}
    fused = reciprocal_rank_fusion([a, b], k=60)
    assert fused["q1"] == pytest.approx({"d1": 1 / 61 + 1 / 63, "d2": 1 / 62, "d3": 1 / 63 + 1 / 61,
                                          "d4": 1 / 62})
    assert fused["q2"] == pytest.approx({"d9": 1 / 61})
    with pytest.raises(EvaluationError, match=r"\[E513\]"):
        reciprocal_rank_fusion([a], k=-1)


def test_tabs_spaces_bom_and_crlf_are_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "r.trec"
    path.write_bytes(b"\xef\xbb\xbfq1\tQ0\td1\t1\t2.5\tx\r\n\nq1  Q0 d2   2 -1e-3 x\r\nq2 0 d1 1 7 y")
    assert read_run(path) == {"q1": {"d1": 2.5, "d2": -0.001}, "q2": {"d1": 7.0}}


def test_ties_are_broken_like_trec_eval() -> None:
    assert ranking({"a": 1.0, "c": 1.0, "b": 2.0}) == ["b", "c", "a"]
    assert run_from_rankings({"q": ["x", "y"]}) == {"q": {"x": 2.0, "y": 1.0}}


@pytest.mark.parametrize(
    ("lines", "line", "problem"),
    [(["q1 Q0 d1 1 0.5"], 1, "5 fields"),
     (["q1 Q0 d1 1 0.5 x", "q1 Q0 d2 2 0.4 x extra"], 2, "7 fields"),
     (["q1 Q0 d1 1 0.5 x", "", "q1 Q0 d2 2nd 0.4 x"], 3, "the rank '2nd' is not an integer"),
     (["q1 Q0 d1 1 nan x"], 1, "the score 'nan' is not a finite number"),
     (["q1 Q0 d1 1 high x"], 1, "the score 'high'"),
     (["q1 Q0 d1 1 0.5 x", "q1 Q0 d1 2 0.4 x"], 2, "ranked already on line 1")],
)
def test_a_malformed_run_line_is_a_coded_error_with_its_line(
    lines: list[str], line: int, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    run = tmp_path / "bad.trec"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    folder = make_beir(tmp_path / "b")
    status = main(["eval", "--run", str(run), "--qrels", str(folder / "qrels" / "test.tsv")])
    err = capsys.readouterr().err
    assert status == 2 and "[E512]" in err and f"bad.trec, line {line}: " in err and problem in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_invalid_utf8_in_a_run_is_e512(tmp_path: Path) -> None:
    run = tmp_path / "r.trec"
    run.write_bytes(b"q1 Q0 d1 1 0.5 x\nq1 Q0 caf\xe9 2 0.4 x\n")
    with pytest.raises(EvaluationError, match=r"\[E512\].*line 2: not valid UTF-8"):
        read_run(run)


@pytest.mark.parametrize(
    ("arguments", "text"),
    [(["--fuse", "{run}", "-o", "{tmp}/f.trec"], "--fuse got 1 run file"),
     (["--fuse", "{run}", "{run}"], "--fuse has no output"),
     (["--run", "{run}"], "--run has no relevance judgements"),
     (["--qrels", "{qrels}"], "--qrels needs --run"),
     (["--run", "{run}", "--qrels", "{qrels}", "--systems", "baseline"], "--systems does not apply"),
     (["--run", "{run}", "--qrels", "{qrels}", "--fuse-k", "3"], "--fuse-k applies to --fuse only"),
     (["--run", "{tmp}/missing.trec", "--qrels", "{qrels}"], "cannot read the run file"),
     (["--run", "{run}", "--qrels", "{tmp}/empty.tsv"], "judge no document relevant")],
)
def test_bad_options_give_e513_and_exit_2(
    arguments: list[str], text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    folder = make_beir(tmp_path / "b")
    run = tmp_path / "a.trec"
    run.write_text("q1 Q0 d2 1 1.0 x\n", encoding="utf-8")
    (tmp_path / "empty.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t0\n", encoding="utf-8")
    values = {"run": str(run), "qrels": str(folder / "qrels" / "test.tsv"), "tmp": str(tmp_path)}
    status = main(["eval", *(a.format(**values) for a in arguments)])
    err = capsys.readouterr().err
    assert status == 2 and "[E513]" in err and text in err and "Traceback" not in err


def test_the_output_folder_may_not_hold_an_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_beir(tmp_path / "b")
    run = tmp_path / "a.trec"
    run.write_text("q1 Q0 d2 1 1.0 x\n", encoding="utf-8")
    status = main(["eval", "--run", str(run), "--beir", str(folder), "-o", str(tmp_path)])
    assert status == 2 and "[E740]" in capsys.readouterr().err


def test_small_collection_with_beir_gives_violation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    folder = make_beir(tmp_path / "b")
    run = tmp_path / "a.trec"
    run.write_text("q1 Q0 d1 1 3 x\nq1 Q0 d2 2 2 x\nq2 Q0 d7 1 1 x\nq9 Q0 d1 1 1 x\n", encoding="utf-8")
    assert main(["eval", "--run", str(run), "--beir", str(folder), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    row = document["systems"]["a"]
    assert row["queries_ranked"] == 2 and row["queries_unjudged"] == 1 and document["queries"] == 4
    assert row[VIOLATION] == pytest.approx((1 / 2 + 0.0) / 2)  # q1: d1 mentions rain; q3: nothing ranked
    assert set(document["breakdown"]["kind"]) == {"without", "and"}


@pytest.mark.parametrize("name", ["eval.runs", "cli.eval_runs"])
def test_docstring_examples(name: str) -> None:
    import doctest
    import importlib

    module = importlib.import_module(f"fortekit.search.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
