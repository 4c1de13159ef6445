"""Stage 3's cost (pytest-benchmark): the polarity check with the grounded violation check,
against the same re-rank with literal opposites only, in the same process.

The queries and items are the Clotho development part's clips 2,001-2,893 (the held-out split of
``fortekit eval --test ... --n-train 2000``): each clip's first caption is a query and its second
the item's caption, parsed once. The first-pass scores are random (only the cost is measured
here; what Stage 3 retrieves is in docs/results.md); each query's top 50 is re-scored. Figures:
docs/results.md, "Stage 1's gain is the feedback move" (the cost of the default pipeline).

Run: pytest tests/search/test_rerank_bench.py --benchmark-group-by=group -p no:cacheprovider
"""

from __future__ import annotations

import csv

import pytest
import torch
from conftest import SHARED_DATA, require

from fortekit.fol import predicates
from fortekit.fol.caption import parse_captions
from fortekit.search.rerank import Reranker

pytest.importorskip("pytest_benchmark")


@pytest.fixture(scope="module")
def held_out() -> tuple[list, list, list, torch.Tensor]:  # type: ignore[type-arg]
    path = require(SHARED_DATA / "clotho" / "clotho_captions_development.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[1:][2000:2893]
    queries = [result.formula for result in parse_captions([row[1] for row in rows])]
    items = [result.formula for result in parse_captions([row[2] for row in rows])]
    query_symbols = [predicates(f) if f is not None else frozenset() for f in queries]
    item_symbols = [predicates(f) if f is not None else frozenset() for f in items]
    scores = torch.rand(len(rows), len(rows), generator=torch.Generator().manual_seed(0))
    return queries, query_symbols, item_symbols, scores


@pytest.mark.benchmark(group="Stage 3, 893 queries, top 50")
def test_rerank_with_literal_opposites(benchmark, held_out) -> None:  # type: ignore[no-untyped-def]
    _, query_symbols, item_symbols, scores = held_out
    reranker = Reranker(top_n=50, mode="polarity")
    _, indices = benchmark(reranker.rerank, scores, query_symbols, item_symbols)
    assert indices.shape == scores.shape


@pytest.mark.benchmark(group="Stage 3, 893 queries, top 50")
def test_rerank_with_the_grounded_check(benchmark, held_out) -> None:  # type: ignore[no-untyped-def]
    formulas, query_symbols, item_symbols, scores = held_out
    reranker = Reranker(top_n=50, mode="polarity")
    _, indices = benchmark(reranker.rerank, scores, query_symbols, item_symbols, formulas=formulas)
    literal = reranker.rerank(scores, query_symbols, item_symbols)[1]
    # the grounded check counts at least the literal opposites: on queries without an excluded
    # sound the two rankings are the same
    plain = [q for q, f in enumerate(formulas) if f is None or "¬" not in str(f)]
    assert torch.equal(indices[plain], literal[plain])
