"""The evaluation page's reader of a `fortekit eval --beir` run folder (fortekit.search.serve.eval_run).

Most tests read a real run (the `negation_run` fixture: baseline and formula on the first 40
queries of the AudioCaps test exclusion set) and check each answer against the run's files and
the collection read independently; a small hand-made run over the BEIR test folder covers the
exclusion queries (violations) and the resolution of relative collection paths.
"""

from __future__ import annotations

import doctest
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from beir_fixtures import CONCEPTS, CORPUS, QRELS, QUERIES, make_beir

from fortekit.errors import ServeError
from fortekit.search.eval.beir_metrics import violation_at
from fortekit.search.serve import eval_run
from fortekit.search.serve.eval_run import MEASURES, EvalRun

# -- helpers ------------------------------------------------------------------------------------


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _per_query(run: Path, system: str) -> dict[str, dict[str, Any]]:
    return {row["query_id"]: row for row in _jsonl(run / "per_query" / f"{system}.jsonl")}


def _collection(run: Path) -> Path:
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    return Path(config["data"]["corpus"]["path"]).parent


def _qrels(folder: Path) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            query, item, score = line.split("\t")
            judged.setdefault(query, {})[item] = int(score)
    return judged


def _copy_run(run: Path, to: Path, *, config: dict[str, Any] | None = None) -> Path:
    """The run's config.json, metrics.json and per_query/ in `to` (config.json replaced if given)."""
    to.mkdir(parents=True)
    shutil.copy(run / "metrics.json", to / "metrics.json")
    shutil.copytree(run / "per_query", to / "per_query")
    if config is None:
        shutil.copy(run / "config.json", to / "config.json")
    else:
        (to / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return to


def _config_without_collection(run: Path) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((run / "config.json").read_text(encoding="utf-8"))
    config["data"]["corpus"]["path"] = "/nonexistent/collection/corpus.jsonl"
    config["settings"]["beir"] = "/nonexistent/collection"
    return config


RANKINGS = {  # system -> query -> top items, over beir_fixtures' collection
    "baseline": {"q1": ["d1", "d2", "d3"], "q2": ["d7", "d3"], "q3": ["d5", "d4"], "q4": ["d1", "d3"]},
    "formula": {"q1": ["d2", "d8", "d1"], "q2": ["d3", "d7"], "q3": ["d4", "d6"], "q4": ["d1", "d2"]},
}
NDCG = {"baseline": {"q1": 0.5, "q2": 1.0, "q3": 0.6, "q4": 1.0},
        "formula": {"q1": 1.0, "q2": 0.6, "q3": 1.0, "q4": 1.0}}


def _tiny_run(root: Path, *, beir: str | None = None, out: str | None = None,
              run_dir: Path | None = None) -> Path:
    """A hand-made run over beir_fixtures' collection in root/coll, its violation@10 by violation_at."""
    collection = make_beir(root / "coll")
    run = run_dir if run_dir is not None else root / "run"
    (run / "per_query").mkdir(parents=True)
    metadata = {query["_id"]: query["metadata"] for query in QUERIES}
    for system, rankings in RANKINGS.items():
        rows = []
        for query in QUERIES:
            top, meta = rankings[query["_id"]], metadata[query["_id"]]
            violation = violation_at(top, meta["b"], CONCEPTS) if meta["kind"] == "without" else None
            rows.append({"query_id": query["_id"], "query": query["text"], "kind": meta["kind"],
                         "metadata": meta, "nDCG@10": NDCG[system][query["_id"]], "violation@10": violation,
                         "top": top})
        (run / "per_query" / f"{system}.jsonl").write_text(
            "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    means = {system: {"nDCG@10": sum(NDCG[system].values()) / 4, "AP": 0.5, "description": system}
             for system in RANKINGS}
    (run / "metrics.json").write_text(json.dumps({"queries": 4, "items": len(CORPUS), "systems": means}))
    settings = {"beir": beir if beir is not None else str(collection), "out": out or str(run)}
    (run / "config.json").write_text(json.dumps({"settings": settings}), encoding="utf-8")
    return run


# -- the real run ------------------------------------------------------------------------------


def test_summary_has_both_systems_with_the_values_of_metrics_json(negation_run: Path) -> None:
    run = EvalRun.load(negation_run)
    metrics = json.loads((negation_run / "metrics.json").read_text(encoding="utf-8"))
    summary = run.summary()
    assert run.systems == ("baseline", "formula") and run.name == negation_run.name
    assert summary["run"] == negation_run.name and summary["baseline"] == "baseline"
    assert summary["queries"] == 40 and summary["items"] == metrics["items"]
    assert summary["measures"] == ["nDCG@10", "AP", "P@10", "R@1", "R@5", "R@10", "violation@10",
                                   "violated@10"]
    assert summary["collection"] == _collection(negation_run).resolve().name  # a name, never a path
    assert run.collection_path == _collection(negation_run).resolve()
    assert [row["name"] for row in summary["systems"]] == ["baseline", "formula"]
    for row in summary["systems"]:
        expected = metrics["systems"][row["name"]]
        assert row["description"] == expected["description"]
        for measure in MEASURES:
            assert row[measure] == expected[measure]
    json.dumps(summary, allow_nan=False)  # JSON-ready


def test_queries_rows_hold_the_per_query_gains_sorted(negation_run: Path) -> None:
    rows = EvalRun.load(negation_run).queries("formula")
    baseline, formula = _per_query(negation_run, "baseline"), _per_query(negation_run, "formula")
    assert len(rows) == 40 and {row["query_id"] for row in rows} == set(formula)
    gains = [row["gain"] for row in rows]
    assert gains == sorted(gains, reverse=True)
    for row in rows:
        ours, theirs = formula[row["query_id"]], baseline[row["query_id"]]
        assert row["gain"] == pytest.approx(ours["nDCG@10"] - theirs["nDCG@10"])
        for side, stored in (("system", ours), ("baseline", theirs)):
            assert row[side] == {name: stored[name] for name in ("nDCG@10", "violation@10", "violated@10")}
        assert row["query"] == ours["query"] and row["kind"] == ours["kind"]
        if ours["kind"] != "without":  # only exclusions exclude a concept
            assert row["excluded"] is None
    json.dumps(rows, allow_nan=False)


def test_query_shows_captions_relevance_and_violations_from_the_collection(negation_run: Path) -> None:
    run = EvalRun.load(negation_run)
    folder = _collection(negation_run)
    captions = {row["_id"]: row["text"] for row in _jsonl(folder / "corpus.jsonl")}
    qrels = _qrels(folder)
    stored = {system: _per_query(negation_run, system) for system in run.systems}
    relevant_hits = violating = 0
    for row in run.queries("formula"):
        query_id = row["query_id"]
        view = run.query(query_id, "formula")
        assert view["query_id"] == query_id and view["gain"] == row["gain"]
        assert view["excluded"] == row["excluded"]
        assert view["relevant"] == sum(1 for score in qrels[query_id].values() if score >= 1)
        for side, system in (("baseline", "baseline"), ("system", "formula")):
            shown = view[side]
            assert shown["name"] == system and shown["nDCG@10"] == stored[system][query_id]["nDCG@10"]
            assert [hit["id"] for hit in shown["top"]] == stored[system][query_id]["top"]
            assert [hit["rank"] for hit in shown["top"]] == list(range(1, 11))
            marks = stored[system][query_id]["top_violated"]  # the run's grounded judgement
            for position, hit in enumerate(shown["top"]):
                assert hit["caption"] == captions[hit["id"]]
                assert hit["relevance"] == qrels[query_id].get(hit["id"], 0)
                relevant_hits += hit["relevance"] >= 1
                assert hit["violated"] == ((marks[position] or []) if marks is not None else [])
                assert hit["violates"] == bool(hit["violated"])  # every item has a caption the parser read
                assert hit["judged_by"] == ("captions" if marks is not None else None)
            if shown["violated@10"] is not None:  # the badges are what violated@10 counts
                share = sum(hit["violates"] for hit in shown["top"]) / len(shown["top"])
                assert shown["violated@10"] == pytest.approx(share)
                violating += share > 0
    assert relevant_hits > 0  # some hits are relevant, and agree with qrels read here
    assert violating > 0  # some top 10s hold an excluded sound
    json.dumps(view, allow_nan=False)


def test_a_query_is_answered_from_memory_after_preload(negation_run: Path) -> None:
    run = EvalRun.load(negation_run).preload()
    ids = [row["query_id"] for row in run.queries("formula")]
    started = time.perf_counter()
    for query_id in ids:
        run.query(query_id, "formula")
    assert (time.perf_counter() - started) / len(ids) < 0.010


def test_k_cuts_the_top_and_is_checked(negation_run: Path) -> None:
    run = EvalRun.load(negation_run)
    query_id = run.queries("formula")[0]["query_id"]
    view = run.query(query_id, "formula", k=3)
    assert [hit["rank"] for hit in view["system"]["top"]] == [1, 2, 3] and len(view["baseline"]["top"]) == 3
    for k in (0, 11, True):
        with pytest.raises(ServeError, match=r"\[E792\]") as caught:
            run.query(query_id, "formula", k=k)
        assert caught.value.status == 422


def test_baseline_may_be_any_system(negation_run: Path) -> None:
    run = EvalRun.load(negation_run)
    rows = run.queries("baseline", baseline="formula")
    assert all(row["gain"] == -other["gain"] for row, other in
               zip(sorted(rows, key=lambda r: r["query_id"]),
                   sorted(run.queries("formula"), key=lambda r: r["query_id"]), strict=True))
    view = run.query(rows[0]["query_id"], "formula", baseline="formula")
    assert view["gain"] == 0.0 and view["baseline"]["top"] == view["system"]["top"]


def test_an_unknown_system_is_a_404(negation_run: Path) -> None:
    run = EvalRun.load(negation_run)
    query_id = run.queries("formula")[0]["query_id"]
    calls = [lambda: run.queries("nope"), lambda: run.queries("formula", baseline="nope"),
             lambda: run.query(query_id, "nope"), lambda: run.query(query_id, "formula", baseline="nope")]
    for call in calls:
        with pytest.raises(ServeError, match=r"\[E802\].*'nope'.*baseline, formula") as caught:
            call()
        assert caught.value.status == 404


def test_an_unknown_query_is_a_404(negation_run: Path) -> None:
    with pytest.raises(ServeError, match=r"\[E808\] .*'q9999' \(40 queries\)") as caught:
        EvalRun.load(negation_run).query("q9999", "formula")
    assert caught.value.status == 404


def test_the_collection_argument_overrides_config_json(negation_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "collection"
    source = _collection(negation_run)
    (copy / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl", "item_concepts.jsonl", "qrels/test.tsv"):
        shutil.copy(source / name, copy / name)
    moved = _copy_run(negation_run, tmp_path / "run", config=_config_without_collection(negation_run))
    with pytest.raises(ServeError, match=r"\[E801\]") as caught:
        EvalRun.load(moved)
    assert caught.value.status == 400
    run = EvalRun.load(moved, collection=copy)
    assert run.collection_path == copy.resolve() and run.summary()["collection"] == copy.name
    query_id = run.queries("formula")[0]["query_id"]
    assert run.query(query_id, "formula") == EvalRun.load(negation_run).query(query_id, "formula")


def test_a_collection_that_is_missing_or_unreadable_is_e801(negation_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ServeError, match=r"\[E801\] .*no such folder.*--eval-collection"):
        EvalRun.load(negation_run, collection=tmp_path / "nowhere")
    broken = tmp_path / "broken"
    (broken / "qrels").mkdir(parents=True)
    (broken / "corpus.jsonl").write_text("{not json\n", encoding="utf-8")
    (broken / "queries.jsonl").write_text("", encoding="utf-8")
    (broken / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n", encoding="utf-8")
    run = EvalRun.load(negation_run, collection=broken)  # read on first use
    assert len(run.queries("formula")) == 40
    with pytest.raises(ServeError, match=r"\[E801\] .*\[E501\]") as caught:
        run.query(run.queries("formula")[0]["query_id"], "formula")
    assert caught.value.status == 400
    other = make_beir(tmp_path / "other")  # a readable collection, but not the one evaluated
    with pytest.raises(ServeError, match=r"\[E801\] .*another collection"):
        EvalRun.load(negation_run, collection=other).query("q0000", "formula")


def test_folders_that_are_not_runs_are_e800(negation_run: Path, tmp_path: Path) -> None:
    def refused(folder: Path, pattern: str) -> None:
        with pytest.raises(ServeError, match=r"\[E800\] .*" + pattern) as caught:
            EvalRun.load(folder).preload()
        assert caught.value.status == 400

    refused(tmp_path / "nowhere", "no such folder")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    refused(tmp_path / "file", "a file, not a folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    refused(empty, "no config.json")
    no_metrics = _copy_run(negation_run, tmp_path / "no_metrics")
    (no_metrics / "metrics.json").unlink()
    refused(no_metrics, "no metrics.json")
    bad_json = _copy_run(negation_run, tmp_path / "bad_json")
    (bad_json / "metrics.json").write_text('{"systems": ', encoding="utf-8")
    refused(bad_json, "metrics.json is not JSON")
    a_list = _copy_run(negation_run, tmp_path / "a_list")
    (a_list / "config.json").write_text("[]", encoding="utf-8")
    refused(a_list, "config.json holds a JSON list")
    no_systems = _copy_run(negation_run, tmp_path / "no_systems")
    (no_systems / "metrics.json").write_text(json.dumps({"directions": ["a2t"], "a2t": {}}), encoding="utf-8")
    refused(no_systems, "no text-to-audio systems .*audio to text only")
    no_folder = _copy_run(negation_run, tmp_path / "no_folder")
    shutil.rmtree(no_folder / "per_query")
    refused(no_folder, "no per_query/ folder")
    no_file = _copy_run(negation_run, tmp_path / "no_file")
    (no_file / "per_query" / "formula.jsonl").unlink()
    refused(no_file, "per_query/formula.jsonl is missing")
    bad_line = _copy_run(negation_run, tmp_path / "bad_line")
    with (bad_line / "per_query" / "formula.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("[1, 2]\n")
    refused(bad_line, r"per_query/formula.jsonl, line 41, is a JSON list, not an object")
    bad_field = _copy_run(negation_run, tmp_path / "bad_field")
    lines = (bad_field / "per_query" / "baseline.jsonl").read_text(encoding="utf-8").splitlines()
    lines[2] = json.dumps(dict(json.loads(lines[2]), top="d1"))
    (bad_field / "per_query" / "baseline.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    refused(bad_field, r'line 3, "top" is \'d1\', not a list of item ids')
    fewer = _copy_run(negation_run, tmp_path / "fewer")
    lines = (fewer / "per_query" / "formula.jsonl").read_text(encoding="utf-8").splitlines()
    (fewer / "per_query" / "formula.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    refused(fewer, "hold different queries")


# -- a hand-made run: exclusions, relative collection paths ---------------------------------------------


def test_violations_of_exclusion_queries(tmp_path: Path) -> None:
    """A run of an earlier version (no violated@10 stored): the page parses and asks the check."""
    run = EvalRun.load(_tiny_run(tmp_path))
    rows = {row["query_id"]: row for row in run.queries("formula")}
    assert rows["q1"]["excluded"] == "rain" and rows["q3"]["excluded"] == "music"
    assert rows["q2"]["excluded"] is None and rows["q4"]["excluded"] is None  # "and" queries exclude nothing
    view = run.query("q1", "formula")
    assert [(hit["id"], hit["relevance"], hit["violates"]) for hit in view["system"]["top"]] == [
        ("d2", 1, False), ("d8", 1, False), ("d1", 0, True)]
    assert [hit["violates"] for hit in view["baseline"]["top"]] == [True, False, True]
    assert view["baseline"]["top"][0]["violated"] == ["¬∃y Rain(y)"]
    assert {hit["judged_by"] for hit in view["baseline"]["top"]} == {"captions"}
    assert view["baseline"]["violated@10"] is None  # not stored by an earlier version
    assert view["baseline"]["violation@10"] == pytest.approx(2 / 3)
    assert view["system"]["violation@10"] == pytest.approx(1 / 3)
    assert view["relevant"] == sum(1 for q, _, score in QRELS if q == "q1" and score >= 1)
    assert view["system"]["top"][0]["caption"] == CORPUS[1]["text"]
    assert not any(hit["violates"] for hit in run.query("q4", "formula")["system"]["top"])
    assert run.query("q4", "baseline")["system"]["top"][1]["relevance"] == 0  # judged 0: listed, not relevant


def test_relative_collection_paths_resolve_against_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # neither path is relative to the current directory
    beside = _tiny_run(tmp_path / "a", beir="coll")  # a/run next to a/coll: the run folder's parent
    assert EvalRun.load(beside).collection_path == (tmp_path / "a" / "coll").resolve()
    nested = _tiny_run(tmp_path / "b", beir="coll", out="runs/x", run_dir=tmp_path / "b" / "runs" / "x")
    assert EvalRun.load(nested).collection_path == (tmp_path / "b" / "coll").resolve()  # -o was relative
    monkeypatch.chdir(tmp_path / "b")
    lost = _tiny_run(tmp_path / "c", beir="coll_gone", run_dir=tmp_path / "c" / "deep" / "run")
    with pytest.raises(ServeError, match=r"\[E801\] .*coll_gone.*no corpus.jsonl was found"):
        EvalRun.load(lost)


def test_the_module_imports_neither_torch_nor_fastapi() -> None:
    code = ("import sys, fortekit.search.serve.eval_run; "
            "print(sorted({'torch', 'fastapi', 'starlette'} & set(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_docstring_examples() -> None:
    result = doctest.testmod(eval_run, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 5
