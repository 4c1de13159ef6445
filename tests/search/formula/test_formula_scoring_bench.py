"""Formula scoring's cost over a 100,000-item index (pytest-benchmark), against the first pass alone.

Both benchmarks run in the same process on the same 32 real queries (the "without" and
"and" queries of the development set audiocaps_val) with the bundled MiniLM, over an
index of 100,000 unit vectors of MiniLM's 384 dimensions (random: only the cost is
measured here; what it retrieves is measured in tests/search/formula/test_formula_scoring.py and
docs/results.md). The first pass is: encode the queries, then the exact top 10.
With formula scoring: encode the queries, the exact top 1,000 (the candidates), then
parse the queries, verbalise and encode their clauses in one call (cold: no cache) and
re-score the candidates. Figures: docs/formula_scoring.md, "Speed".

A second group times the steps that formula scoring adds, one by one, on the same data:
the parse (in one batch, as everywhere, and one query at a time), the plan (clause texts),
the candidate pool (the exact top 1,000 against the top 10 of the first pass, the scores
already made), encoding the clause texts (cold), the queries with their clauses in one
encoder call (against the queries alone), and the re-scoring itself (clause vectors
already encoded).

A third group runs the first group's whole pipeline under each way of judging an excluded sound
(issue 42): by resemblance (before), by caption evidence (each of the 100,000 items given the
caption symbols of a real AudioCaps caption) and by the contrastive test, in the same run.

Run: pytest tests/search/formula/test_formula_scoring_bench.py --benchmark-group-by=group -s \
    -p no:cacheprovider
"""

from __future__ import annotations

import json
import os

import pytest
import torch
from conftest import SHARED_DATA, require

from fortekit.fol.caption import parse_caption, parse_captions
from fortekit.search.formula.scoring import FormulaScorer
from fortekit.search.index.search import exact_top_k

pytest.importorskip("pytest_benchmark")

ROUNDS = 1 if os.environ.get("CI") else 5
ITEMS = 100_000
CANDIDATES = 1000


@pytest.fixture(scope="module")
def queries() -> list[str]:
    path = require(SHARED_DATA / "negation" / "audiocaps_val" / "queries.jsonl")
    rows = [json.loads(line) for line in path.read_text("utf-8").split("\n") if line.strip()]
    return [row["text"] for row in rows][::4][:32]


@pytest.fixture(scope="module")
def backbone():  # type: ignore[no-untyped-def]
    from fortekit.plugins import get_backbone

    return get_backbone("minilm", device="cpu")


@pytest.fixture(scope="module")
def index() -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    return torch.nn.functional.normalize(torch.randn(ITEMS, 384, generator=generator), dim=1)


def _first_pass(backbone, queries: list[str], index: torch.Tensor, k: int):  # type: ignore[no-untyped-def]
    vectors = torch.nn.functional.normalize(backbone.encode_text(queries).float(), dim=1)
    return exact_top_k(index, vectors, k)


@pytest.mark.benchmark(group="100,000 items, 32 queries")
def test_bench_first_pass(benchmark, backbone, queries, index) -> None:  # type: ignore[no-untyped-def]
    _first_pass(backbone, queries[:2], index, 10)  # warm-up
    _, rows = benchmark.pedantic(
        _first_pass, args=(backbone, queries, index, 10), rounds=ROUNDS, iterations=1,
    )
    assert rows.shape == (len(queries), 10)


@pytest.mark.benchmark(group="100,000 items, 32 queries")
def test_bench_first_pass_with_formula_scoring(benchmark, backbone, queries, index) -> None:  # type: ignore[no-untyped-def]
    scorer = FormulaScorer(backbone)

    def run():  # type: ignore[no-untyped-def]
        top, rows = _first_pass(backbone, queries, index, CANDIDATES)
        formulas = [parse.formula for parse in parse_captions(queries)]
        return scorer.rescore(formulas, top, rows, index, k=10)

    scorer.rescore([None], torch.zeros(1, 2), torch.zeros(1, 2, dtype=torch.long), index)  # warm-up
    list(parse_captions(queries[:2]))  # loads spaCy, as the first pass's warm-up loads MiniLM
    _, rows = benchmark.pedantic(run, rounds=ROUNDS, iterations=1)
    assert rows.shape == (len(queries), 10)
    assert sum(plan.scored for plan in scorer.plan(
        [parse.formula for parse in parse_captions(queries)])) >= len(queries) // 2


@pytest.mark.benchmark(group="100,000 items, 32 queries")
def test_bench_first_pass_with_formula_scoring_warm_clauses(  # type: ignore[no-untyped-def]
    benchmark, backbone, queries, index,
) -> None:
    """A query log repeats its clauses ("a person talking"): the text cache already holds them.

    The queries themselves are still encoded cold, as in the first pass alone.
    """
    from fortekit.search.stage1.encoder import CachedTextEncoder

    encoder = CachedTextEncoder(backbone)
    scorer = FormulaScorer(encoder)
    formulas = [parse.formula for parse in parse_captions(queries)]
    scorer.encode_clauses(scorer.plan(formulas))  # the clauses of earlier queries

    def run():  # type: ignore[no-untyped-def]
        top, rows = _first_pass(backbone, queries, index, CANDIDATES)
        return scorer.rescore([parse.formula for parse in parse_captions(queries)], top, rows, index, k=10)

    calls = encoder.stats.calls
    _, rows = benchmark.pedantic(run, rounds=ROUNDS, iterations=1)
    assert rows.shape == (len(queries), 10) and encoder.stats.calls == calls  # nothing re-encoded


@pytest.mark.benchmark(group="100,000 items, 32 queries")
def test_bench_first_pass_with_formula_scoring_one_call(  # type: ignore[no-untyped-def]
    benchmark, backbone, queries, index,
) -> None:
    """The Retriever's path (issue 45, item 2): parse, then the queries and their asserted clause texts
    in ONE encoder call (cold: a new text cache each round), the top 1,000, re-scoring from the cache."""
    from fortekit.search.stage1.encoder import CachedTextEncoder

    assert len(set(queries)) == len(queries)
    holder = {"encoder": CachedTextEncoder(backbone)}
    scorer = FormulaScorer(lambda texts: holder["encoder"].encode(texts))
    scorer.rescore([None], torch.zeros(1, 2), torch.zeros(1, 2, dtype=torch.long), index)  # warm-up
    list(parse_captions(queries[:2]))

    def run():  # type: ignore[no-untyped-def]
        encoder = holder["encoder"] = CachedTextEncoder(backbone)
        formulas = [parse.formula for parse in parse_captions(queries)]
        order = list(dict.fromkeys([*queries, *(t for phi in formulas for t in scorer.companion_texts(phi))]))
        vectors = torch.nn.functional.normalize(encoder.encode(order)[: len(queries)].float(), dim=1)
        top, rows = exact_top_k(index, vectors, CANDIDATES)
        return scorer.rescore(formulas, top, rows, index, k=10), encoder.stats.calls

    (_, rows), calls = benchmark.pedantic(run, rounds=ROUNDS, iterations=1)
    assert rows.shape == (len(queries), 10) and calls == 1


STEPS = "formula scoring step by step: 100,000 items, 32 queries"


@pytest.fixture(scope="module")
def prepared(backbone, queries, index):  # type: ignore[no-untyped-def]
    """What each step starts from: the query vectors, formulas, plans, first-pass candidates."""
    from fortekit.search.stage1.encoder import CachedTextEncoder

    vectors = torch.nn.functional.normalize(backbone.encode_text(queries).float(), dim=1)
    formulas = [parse.formula for parse in parse_captions(queries)]
    encoder = CachedTextEncoder(backbone)
    scorer = FormulaScorer(encoder)
    plans = scorer.plan(formulas)
    scorer.encode_clauses(plans)  # re-scoring is timed without the encoder
    top, rows = exact_top_k(index, vectors, CANDIDATES)
    texts = list(dict.fromkeys(text for plan in plans for text in plan.texts))
    return {"vectors": vectors, "formulas": formulas, "scorer": scorer, "plans": plans, "top": top,
            "rows": rows, "texts": texts, "scores": vectors @ index.T}


def _step(name: str, backbone, queries: list[str], index: torch.Tensor, prepared):  # type: ignore[no-untyped-def]
    from fortekit._top_k import stable_top_k

    scorer, plans, texts = prepared["scorer"], prepared["plans"], prepared["texts"]
    return {
        "parse the queries": lambda: [parse.formula for parse in parse_captions(queries)],
        "parse the queries one by one": lambda: [parse_caption(query).formula for query in queries],
        "plan: clause texts": lambda: scorer.plan(prepared["formulas"]),
        "select the top 10 (first pass)": lambda: stable_top_k(prepared["scores"], 10),
        "select the top 1,000 (candidates)": lambda: stable_top_k(prepared["scores"], CANDIDATES),
        "encode the queries": lambda: backbone.encode_text(queries),
        "encode the clause texts (cold)": lambda: backbone.encode_text(texts),
        "encode the queries and clause texts in one call": lambda: backbone.encode_text(queries + texts),
        "re-score 1,000 candidates (clauses encoded)": lambda: scorer.rescore(
            prepared["formulas"], prepared["top"], prepared["rows"], index, k=10, plans=plans),
    }[name]


@pytest.mark.benchmark(group=STEPS)
@pytest.mark.parametrize("name", [
    "parse the queries",
    "parse the queries one by one",
    "plan: clause texts",
    "select the top 10 (first pass)",
    "select the top 1,000 (candidates)",
    "encode the queries",
    "encode the clause texts (cold)",
    "encode the queries and clause texts in one call",
    "re-score 1,000 candidates (clauses encoded)",
])
def test_bench_step(benchmark, backbone, queries, index, prepared, name: str) -> None:  # type: ignore[no-untyped-def]
    step = _step(name, backbone, queries, index, prepared)
    step()  # warm-up
    result = benchmark.pedantic(step, rounds=ROUNDS, iterations=1)
    assert result is not None


EXCLUSION = "exclusion: evidence against resemblance, 100,000 items, 32 queries"


@pytest.fixture(scope="module")
def caption_names() -> list[frozenset[str]]:
    """Each of the 100,000 items given the caption symbols of a real AudioCaps caption (cycling
    through the first 500 of the bundled sample): what the caption path reads per candidate."""
    import csv
    from pathlib import Path

    from fortekit.fol import predicates
    from fortekit.fol.violation import positive_names

    sample = Path(__file__).resolve().parents[3] / "examples" / "audiocaps_train_sample.csv"
    with sample.open(encoding="utf-8", newline="") as handle:
        texts = [row["caption"] for _, row in zip(range(500), csv.DictReader(handle), strict=False)]
    names = [positive_names(predicates(parse.formula)) for parse in parse_captions(texts)]
    return [names[i % len(names)] for i in range(ITEMS)]


@pytest.mark.benchmark(group=EXCLUSION)
@pytest.mark.parametrize("mode", ["resemblance (before)", "evidence: captions", "evidence: contrastive"])
def test_bench_exclusion(benchmark, backbone, queries, index, caption_names, mode: str) -> None:  # type: ignore[no-untyped-def]
    """The whole pipeline of the first group (cold clause encoding) under each way of judging ¬B."""
    from fortekit.search.formula.config import FormulaScoringConfig

    exclusion = "resemblance" if mode.startswith("resemblance") else "evidence"
    scorer = FormulaScorer(backbone, FormulaScoringConfig(exclusion=exclusion))  # type: ignore[arg-type]
    captions = caption_names if mode == "evidence: captions" else None

    def run():  # type: ignore[no-untyped-def]
        top, rows = _first_pass(backbone, queries, index, CANDIDATES)
        formulas = [parse.formula for parse in parse_captions(queries)]
        return scorer.rescore(formulas, top, rows, index, k=10, captions=captions)

    run()  # warm-up: spaCy, the entailment table, the calibration sample
    _, rows = benchmark.pedantic(run, rounds=ROUNDS, iterations=1)
    assert rows.shape == (len(queries), 10)
