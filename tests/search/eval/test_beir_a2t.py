"""Audio to text in `fortekit eval --beir`: qrels read from the item's side, texts ranked by each
system's (query, item) scores, chance levels, the a2t block of metrics.json, --direction and its errors."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from beir_fixtures import CONCEPTS, make_beir

from fortekit.search.eval.beir import BeirCollection, BeirItem, BeirQuery
from fortekit.search.eval.beir_a2t import a2t_records, chance_levels, invert_qrels, score_matrix, text_order
from fortekit.search.eval.beir_metrics import MEASURES, per_query_measures
from fortekit.search.eval.beir_systems import SYSTEMS, SystemRanking, SystemSpec, register_system
from fortekit.search.eval.per_query import read_per_query

# -- the pieces, by hand -------------------------------------------------------------------------


def _collection(qrels: dict[str, dict[str, int]], concepts: dict[str, dict[str, int]] | None = None,
                ) -> BeirCollection:
    queries = [BeirQuery("q1", "a dog", {"kind": "plain"}),
               BeirQuery("q2", "a dog without rain", {"kind": "without", "a": "dog", "b": "rain"}),
               BeirQuery("q3", "rain", {"kind": "plain"})]
    items = [BeirItem(f"d{i}", f"item {i}") for i in range(1, 5)]
    return BeirCollection(Path("."), items, queries, qrels, item_concepts=concepts)


def test_the_qrels_are_inverted_with_their_grades() -> None:
    qrels = {"q1": {"d1": 2, "d2": 1}, "q2": {"d2": 1, "d3": 0}, "q3": {"d3": 1}}
    assert invert_qrels(qrels) == {"d1": {"q1": 2}, "d2": {"q1": 1, "q2": 1}, "d3": {"q2": 0, "q3": 1}}
    assert invert_qrels(qrels, ["q2"]) == {"d2": {"q2": 1}, "d3": {"q2": 0}}  # one kind's texts


def test_each_item_ranks_the_texts_by_its_column_of_scores() -> None:
    qrels = {"q1": {"d1": 2, "d2": 1}, "q2": {"d2": 1, "d3": 0}, "q3": {"d3": 1}}
    scores = np.array([[0.9, 0.2, 0.1, 0.0],    # q1
                       [0.5, 0.8, 0.7, 0.0],    # q2
                       [0.1, 0.3, 0.6, 0.0]], dtype=np.float32)  # q3
    records = a2t_records(_collection(qrels, {"d2": {"rain": 1}, "d3": {"rain": 3}}), scores)
    by_item = {record["item_id"]: record for record in records}
    assert list(by_item) == ["d1", "d2", "d3"]  # d4: no relevant text, left out
    assert by_item["d1"]["top"] == ["q1", "q2", "q3"] and by_item["d1"]["R@1"] == 1.0
    assert by_item["d2"]["top"] == ["q2", "q3", "q1"] and by_item["d2"]["R@1"] == 0.5  # 2 relevant texts
    assert by_item["d2"]["AP"] == pytest.approx((1 + 2 / 3) / 2)
    assert by_item["d3"]["top"] == ["q2", "q3", "q1"] and by_item["d3"]["relevant"] == ["q3"]  # q2 judged 0
    assert by_item["d3"]["R@1"] == 0.0 and by_item["d3"]["AP"] == 0.5
    # violation@10 from the item's side: "without rain" ranked among the texts of an item with rain
    assert by_item["d2"]["violation@10"] == pytest.approx(1 / 3) and by_item["d1"]["violation@10"] == 0.0
    only_plain = a2t_records(_collection(qrels, {"d3": {"rain": 3}}), scores, rows=[0, 2])
    assert [r["item_id"] for r in only_plain] == ["d1", "d2", "d3"]
    assert only_plain[1]["top"] == ["q3", "q1"] and only_plain[1]["violation@10"] is None  # no exclusion


def test_ties_keep_the_query_order_and_ranks_stand_in_for_missing_scores() -> None:
    assert text_order(np.zeros((3, 1))).tolist() == [[0, 1, 2]]
    ranking = SystemRanking(np.array([[2, 0, 1], [0, 1, 2]]), 0.0, {})
    assert score_matrix(ranking).tolist() == [[-1.0, -2.0, 0.0], [0.0, -1.0, -2.0]]


def test_chance_levels_are_the_mean_over_every_permutation() -> None:
    qrels = {"a": {"t1": 1, "t3": 2}, "b": {"t2": 1, "t4": 0}}
    candidates = ["t1", "t2", "t3", "t4"]
    totals = dict.fromkeys(MEASURES, 0.0)
    permutations = list(itertools.permutations(candidates))
    for order in permutations:
        values = per_query_measures(qrels, {"a": list(order), "b": list(order)})
        for name in MEASURES:
            totals[name] += (values["a"][name] + values["b"][name]) / 2
    expected = chance_levels(qrels, len(candidates))
    for name in MEASURES:
        assert expected[name] == pytest.approx(totals[name] / len(permutations)), name


# -- systems: scores that agree with their rankings ----------------------------------------------


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from fortekit.plugins import get_backbone
    from fortekit.search.eval.beir import load_beir
    from fortekit.search.eval.beir_data import BeirData
    from fortekit.search.stage1.config import RefineConfig

    folder = make_beir(tmp_path_factory.mktemp("a2t") / "tiny")
    return BeirData(load_beir(folder), get_backbone("minilm", device="cpu"), refine=RefineConfig.online(),
                    top_n=3, device="cpu")


@pytest.mark.parametrize("name", ["baseline", "S3-paper", "S3-polarity", "formula", "formula+S3", "default",
                                  "formula+S3+order"])
def test_every_system_scores_each_pair_in_its_own_order(tiny_data: Any, name: str) -> None:
    ranking = SYSTEMS[name].rank(tiny_data)
    assert ranking.scores is not None and ranking.scores.shape == ranking.order.shape
    along = np.take_along_axis(ranking.scores, ranking.order, axis=1)
    assert np.all(np.diff(along, axis=1) <= 1e-6), name  # each row non-increasing along the ranking
    # Stage 3 re-ranks a top 3: the rest keep (1 - alpha) sim + alpha s_min, below the top 3's
    baseline = SYSTEMS["baseline"].rank(tiny_data)
    if name == "S3-paper" and baseline.scores is not None:
        tail = ranking.order[:, 3:]
        assert np.allclose(np.take_along_axis(ranking.scores, tail, 1),
                           0.7 * np.take_along_axis(baseline.scores, tail, 1), atol=1e-6)


# -- the command -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def a2t_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    from fortekit.search.cli import main

    register_system(SystemSpec("copy", lambda data: SYSTEMS["baseline"].rank(data), "the baseline again",
                               by_default=False))
    try:
        root = tmp_path_factory.mktemp("a2t-run")
        out = root / "out"
        assert main(["eval", "--beir", str(make_beir(root / "tiny")), "-o", str(out), "--device", "cpu",
                     "--systems", "copy,S3-paper,formula+S3,default+order", "--by", "kind", "--no-umap"]) == 0
    finally:
        del SYSTEMS["copy"]
    return out, json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def test_both_directions_are_written_by_default(a2t_run: tuple[Path, dict[str, Any]]) -> None:
    out, metrics = a2t_run
    names = ["baseline", "copy", "S3-paper", "formula+S3", "formula+S3+order"]  # default+order: its old name
    assert metrics["directions"] == ["t2a", "a2t"] and list(metrics["a2t"]["systems"]) == names
    assert metrics["t2a"]["systems"] == metrics["systems"]  # the top level: text to audio, as before
    block = metrics["a2t"]
    assert (block["items"], block["texts"], block["dropped_items"]) == (5, 4, 3)  # d1 d2 d4 d7 d8
    for row in block["systems"].values():
        assert {"nDCG@10", "AP", "P@10", "R@1", "R@5", "R@10", "p_nDCG@10"} <= set(row) and row["items"] == 5
    assert block["chance"]["all"]["R@1"] == 0.25
    assert block["breakdown"]["kind"]["without"]["baseline"]["texts"] == 2
    assert block["breakdown"]["kind"]["without"]["baseline"]["items"] == 3  # d2 d4 d8
    records = read_per_query(out / "per_query_a2t" / "formula+S3.jsonl")
    assert [r["item_id"] for r in records] == ["d1", "d2", "d4", "d7", "d8"] and len(records[0]["top"]) == 4
    excluded = {"q1": "rain", "q3": "music"}  # the "without" queries' b
    denied = [CONCEPTS["d2"].get(excluded[q], 0) >= 1 for q in records[1]["top"] if q in excluded]
    assert records[1]["violation@10"] == pytest.approx(sum(denied) / 4)
    markdown = (out / "results.md").read_text(encoding="utf-8")
    assert markdown.index("## All queries") < markdown.index("## Audio to text: all texts (5 items, 4 texts)")
    assert "## Audio to text: kind = and (2 items, 2 texts)" in markdown and "| *chance* |" in markdown


def test_identical_scores_give_identical_audio_to_text(a2t_run: tuple[Path, dict[str, Any]]) -> None:
    block = a2t_run[1]["a2t"]
    for name in ("nDCG@10", "AP", "R@1"):
        assert block["systems"]["copy"][name] == block["systems"]["baseline"][name]
        # no query states an order: the order check moves nothing, scores and a2t included
        assert block["systems"]["formula+S3+order"][name] == block["systems"]["formula+S3"][name]


def test_one_direction_writes_only_its_own(tmp_path: Path) -> None:
    from fortekit.search.cli import main

    out = tmp_path / "out"
    assert main(["eval", "--beir", str(make_beir(tmp_path / "tiny")), "-o", str(out), "--device", "cpu",
                 "--direction", "a2t", "--no-umap"]) == 0
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["directions"] == ["a2t"] and "t2a" not in metrics and "systems" not in metrics
    assert (out / "per_query_a2t" / "full.jsonl").is_file() and not (out / "per_query").exists()


def test_bad_directions_are_coded_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.errors import EvaluationError
    from fortekit.search.cli import main
    from fortekit.search.eval.beir_eval import BeirSettings

    for directions in ((), ("t2a", "t2a"), ("audio",)):
        with pytest.raises(EvaluationError, match=r"\[E592\]"):
            BeirSettings(beir=tmp_path, out=tmp_path, directions=directions)
    folder = make_beir(tmp_path / "tiny")
    status = main(["eval", "--beir", str(folder), "-o", str(tmp_path / "o"), "--limit-queries", "1"])
    err = capsys.readouterr().err
    assert status == 1 and "[E593]" in err and "--limit-queries 1" in err and "Traceback" not in err
