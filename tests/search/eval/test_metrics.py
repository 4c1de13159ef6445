"""Retrieval metrics, ranks with ties, per-query records and the paired t-test."""

from __future__ import annotations

import doctest
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ttest_rel

import fortekit.search.eval.metrics as metrics_module
import fortekit.search.eval.per_query as per_query_module
from fortekit.errors import DataFileError, EvaluationError
from fortekit.search.eval.metrics import (
    average_precision,
    hits_at,
    paired_t_test,
    ranks_from_indices,
    ranks_of_targets,
    retrieval_metrics,
)
from fortekit.search.eval.per_query import per_query_records, read_per_query, write_per_query


def test_hand_computed_metrics_for_ranks_1_3_11() -> None:
    result = retrieval_metrics(np.array([1, 3, 11]))
    assert list(result) == ["R@1", "R@5", "R@10", "R@50", "mAP@10"]
    assert result["R@1"] == pytest.approx(1 / 3)
    assert result["R@5"] == pytest.approx(2 / 3)
    assert result["R@10"] == pytest.approx(2 / 3)
    assert result["R@50"] == pytest.approx(1.0)
    assert result["mAP@10"] == pytest.approx((1 + 1 / 3 + 0) / 3)


def test_map_at_10_boundary_and_custom_ks() -> None:
    assert average_precision([10, 11]).tolist() == [0.1, 0.0]
    assert retrieval_metrics([2, 60], ks=(2, 100)) == {"R@2": 0.5, "R@100": 1.0, "mAP@10": 0.25}
    assert hits_at(torch.tensor([1, 2, 5]), 2).tolist() == [1.0, 1.0, 0.0]


def test_ranks_of_targets_simple_and_torch_input() -> None:
    scores = np.array([[0.1, 0.9, 0.5, 0.3], [0.8, 0.2, 0.4, 0.6], [0.2, 0.1, 0.3, 0.0]])
    targets = [2, 0, 3]
    assert ranks_of_targets(scores, targets).tolist() == [2, 1, 4]
    as_torch = ranks_of_targets(torch.tensor(scores, dtype=torch.float32), torch.tensor(targets))
    assert as_torch.tolist() == [2, 1, 4]
    assert ranks_of_targets(torch.tensor(scores).bfloat16(), targets).tolist() == [2, 1, 4]


def test_ties_count_items_with_a_lower_index_ahead() -> None:
    scores = np.array([[0.5, 0.5, 0.5, 0.1], [0.5, 0.5, 0.5, 0.9], [0.2, 0.7, 0.7, 0.7]])
    assert ranks_of_targets(scores, [0, 2, 2]).tolist() == [1, 4, 2]
    assert ranks_of_targets(scores, [2, 0, 1]).tolist() == [3, 2, 1]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_rank_equals_position_in_a_stable_sort(data: st.DataObject) -> None:
    n_queries = data.draw(st.integers(1, 6))
    n_items = data.draw(st.integers(1, 12))
    # few distinct values, so ties are common
    size = n_queries * n_items
    values = data.draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
    scores = np.array(values, dtype=np.float32).reshape(n_queries, n_items)
    targets = data.draw(st.lists(st.integers(0, n_items - 1), min_size=n_queries, max_size=n_queries))
    order = np.argsort(-scores, axis=1, kind="stable")
    expected = [int(np.nonzero(order[q] == targets[q])[0][0]) + 1 for q in range(n_queries)]
    assert ranks_of_targets(scores, targets).tolist() == expected
    assert ranks_from_indices(order, targets).tolist() == expected


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 200), min_size=1, max_size=50), st.lists(st.integers(1, 200), min_size=2,
       max_size=6, unique=True))
def test_recall_is_monotone_in_k(ranks: list[int], ks: list[int]) -> None:
    cutoffs = sorted(ks)
    result = retrieval_metrics(ranks, ks=cutoffs)
    recalls = [result[f"R@{k}"] for k in cutoffs]
    assert recalls == sorted(recalls)
    assert all(0.0 <= value <= 1.0 for value in result.values())
    assert result["mAP@10"] <= float(np.mean(np.array(ranks) <= 10)) + 1e-12  # AP@10 <= hit@10


def test_ranks_from_indices_missing_target() -> None:
    indices = torch.tensor([[3, 1, 2], [0, 1, 2]])
    assert ranks_from_indices(indices, [1, 7]).tolist() == [2, 4]
    assert ranks_from_indices(indices, [1, 7], missing_rank=1000).tolist() == [2, 1000]
    with pytest.raises(EvaluationError, match=r"\[E484\]"):
        ranks_from_indices(indices, [1])


@pytest.mark.parametrize(
    ("scores", "targets", "problem"),
    [
        (np.array([[0.1, np.nan]]), [0], "NaN or infinity"),
        (np.array([0.1, 0.2]), [0], "shape"),
        (np.array([[0.1, 0.2]]), [2], r"integers in \[0, 2\)"),
        (np.array([[0.1, 0.2]]), [0.0], "dtype float64"),
        (np.array([[0.1, 0.2]]), [0, 1], "1 score rows but targets of shape"),
        (np.array([["a", "b"]]), [0], "dtype"),
    ],
)
def test_ranks_of_targets_rejects_bad_input(scores: np.ndarray, targets: list[float], problem: str) -> None:
    with pytest.raises(EvaluationError, match=rf"\[E484\].*{problem}"):
        ranks_of_targets(scores, targets)


@pytest.mark.parametrize("ranks", [[], [0, 1], [1.5], [[1, 2]], ["1"]])
def test_retrieval_metrics_rejects_bad_ranks(ranks: list[object]) -> None:
    with pytest.raises(EvaluationError, match=r"\[E485\]"):
        retrieval_metrics(ranks)


def test_retrieval_metrics_rejects_bad_k() -> None:
    assert retrieval_metrics([1.0, 2.0], ks=(1,))["R@1"] == 0.5  # whole floats are ranks
    with pytest.raises(EvaluationError, match=r"\[E480\].*k must be an int >= 1"):
        retrieval_metrics([1], ks=(0,))


def test_paired_t_test_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    a = (rng.random(500) < 0.3).astype(float)
    b = (rng.random(500) < 0.25).astype(float)
    expected = ttest_rel(a, b)
    t, p = paired_t_test(a, b)
    assert (t, p) == pytest.approx((float(expected.statistic), float(expected.pvalue)))
    assert paired_t_test(torch.tensor(a), torch.tensor(b)) == pytest.approx((t, p))
    assert paired_t_test(b, a) == pytest.approx((-t, p))


def test_paired_t_test_degenerate_inputs_are_defined_and_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert paired_t_test([1, 0, 1], [1, 0, 1]) == (0.0, 1.0)
        assert paired_t_test(np.zeros(10), np.zeros(10)) == (0.0, 1.0)
        assert paired_t_test([1, 1, 1], [0, 0, 0]) == (float("inf"), 0.0)
        assert paired_t_test([0, 0], [1, 1]) == (float("-inf"), 0.0)


@pytest.mark.parametrize(("a", "b"), [([1, 0], [1]), ([1], [1]), ([1, np.nan], [1, 0]), ([[1, 0]], [[1, 0]])])
def test_paired_t_test_rejects_bad_input(a: list[float], b: list[float]) -> None:
    with pytest.raises(EvaluationError, match=r"\[E486\]"):
        paired_t_test(a, b)


def test_per_query_records_roundtrip(tmp_path: Path) -> None:
    ranks = ranks_of_targets(np.array([[0.9, 0.1], [0.9, 0.1]]), [0, 1])
    records = per_query_records(
        ["dog barks", "rain ☂"], ranks, targets=[0, 1], top_indices=np.array([[0, 1], [0, 1]]),
        item_ids=["a.wav", "b.wav"], ks=(1, 5), extra={"system": ["base", "base"]},
    )
    assert records[1] == {
        "query_index": 1, "query": "rain ☂", "rank": 2, "R@1": 0, "R@5": 1, "AP@10": 0.5,
        "target": 1, "target_id": "b.wav", "top": ["a.wav", "b.wav"], "system": "base",
    }
    path = write_per_query(tmp_path / "out" / "per_query.jsonl", records)
    assert read_per_query(path) == records
    assert "☂" in path.read_text(encoding="utf-8")  # kept readable, not \u-escaped
    bare = per_query_records(["q"], np.array([3]), top_indices=torch.tensor([[2, 0, 1]]))
    assert bare[0]["top"] == [2, 0, 1] and "target" not in bare[0]
    with pytest.raises(EvaluationError, match=r"\[E484\].*top_indices"):
        per_query_records(["q", "r"], [1, 2], top_indices=[[0]])
    with pytest.raises(EvaluationError, match=r"\[E484\].*query 0 names an item index beyond the 1 item_ids"):
        per_query_records(["q"], [1], targets=[3], item_ids=["a"])
    with pytest.raises(EvaluationError, match=r"\[E493\].*record 1.*set is not JSON serialisable"):
        write_per_query(tmp_path / "bad.jsonl", [{"rank": 1}, {"rank": {1, 2}}])
    assert not (tmp_path / "bad.jsonl").exists()  # written whole or not at all (the safe writer)


def test_per_query_file_errors(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match=r"\[E487\].*write_per_query"):
        read_per_query(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"rank": 1}) + "\n\n{oops\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"\[E488\].*line 3: not JSON"):
        read_per_query(bad)
    bad.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"\[E488\].*line 1: a JSON list, not an object"):
        read_per_query(bad)


@pytest.mark.parametrize("module", [metrics_module, per_query_module], ids=lambda m: m.__name__)
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
