"""Formula scoring: clause trees from real parses, fuzzy evaluation, fallbacks, audio items, real data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import SHARED_DATA, require

from fortekit.errors import EvaluationError
from fortekit.fol import parse_formula
from fortekit.fol.caption import parse_caption, parse_captions
from fortekit.search.formula.clauses import (
    Clause,
    ClauseAnd,
    ClauseNot,
    leaf_polarities,
    leaves,
    split_clauses,
)
from fortekit.search.formula.scoring import FormulaScorer, FormulaScoringConfig

NEGATION = SHARED_DATA / "negation"


@pytest.fixture(scope="module")
def minilm():  # type: ignore[no-untyped-def]
    from fortekit.plugins import get_backbone

    return get_backbone("minilm", device="cpu")


# -- clause trees of the parser's formulas ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "texts", "negated"),
    [
        ("a dog barking without people talking", ["a dog barking", "a person talking"], [False, True]),
        ("birds chirping, excluding traffic", ["a bird chirping", "traffic"], [False, True]),
        ("a crowd cheering with no sound of music", ["a crowd cheering", "music"], [False, True]),
        ("music playing together with wind blowing", ["music playing", "wind blowing"], [False, False]),
        ("rain falling as well as thunder", ["rain falling", "thunder"], [False, False]),
        ("water flowing, not dripping", ["water flowing", "water dripping"], [False, True]),
    ],
)
def test_clauses_of_exclusions_and_conjunctions(query: str, texts: list[str], negated: list[bool]) -> None:
    from fortekit.verbalise import verbalise

    tree = split_clauses(parse_caption(query).formula)
    assert [verbalise(leaf.formula) for leaf in leaves(tree)] == texts
    assert leaf_polarities(tree) == negated


@pytest.mark.parametrize(
    "query", ["rain falling on a metal roof", "birds chirping in the morning", "a dog barks loudly"],
)
def test_a_plain_query_is_one_clause(query: str) -> None:
    assert isinstance(split_clauses(parse_caption(query).formula), Clause)


def test_tree_shape_of_a_negated_clause() -> None:
    tree = split_clauses(parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]"))
    assert isinstance(tree, ClauseAnd) and isinstance(tree.operands[1], ClauseNot)


@pytest.mark.parametrize(
    ("formula", "reason"),
    [
        ("∃y ¬Music(y)", "no asserted clause"),
        ("∃y ¬∃z [Person(z) ∧ Talking(z)]", "no asserted clause"),
        ("Loud(dog) ∧ Barks(rex)", "no formula"),
        ("∀x (Dog(x) → Barks(x))", "no formula"),
        ("∃x [Rain(x) ∧ Falling(x)]", "plain"),
    ],
)
def test_nothing_to_score_falls_back(formula: str, reason: str) -> None:
    scorer = FormulaScorer(lambda texts: pytest.fail("nothing may be encoded"))
    plan = scorer.plan([parse_formula(formula)])[0]
    assert plan.reason == reason and not plan.scored
    scores = torch.tensor([[0.3, 0.1, 0.7]])
    assert torch.equal(scorer.score([parse_formula(formula)], scores, torch.eye(3)), scores)


def test_clause_count_is_capped() -> None:
    text = " and ".join(f"a {noun} sounding" for noun in ["dog", "cat", "bell", "horn", "bird"] * 40)
    tree = split_clauses(parse_caption(text).formula)
    assert 1 < len(leaves(tree)) <= 8
    assert len(leaves(split_clauses(parse_caption(text).formula, max_clauses=3))) == 3


def test_enormous_text_is_scored_with_capped_clauses(minilm) -> None:  # type: ignore[no-untyped-def]
    text = "a dog barking without people talking, " * 2600  # about 99 kB, under the 100,000 limit
    parse = parse_caption(text)  # the parser reads the first words only (truncated)
    scorer = FormulaScorer(minilm)
    plan = scorer.plan([parse.formula])[0]
    assert len(plan.texts) <= 8
    items = torch.nn.functional.normalize(torch.randn(5, 384), dim=1)
    assert torch.isfinite(scorer.score([parse.formula], torch.zeros(1, 5), items)).all()


# -- scoring ---------------------------------------------------------------------------------------------
def test_plain_queries_score_exactly_as_the_query(minilm) -> None:  # type: ignore[no-untyped-def]
    queries = ["rain falling on a metal roof", "a man speaks while birds chirp in the background"]
    items = torch.nn.functional.normalize(minilm.encode_text(["rain", "a man talking", "birds"]), dim=1)
    vectors = torch.nn.functional.normalize(minilm.encode_text(queries), dim=1)
    formulas = [parse_caption(queries[0]).formula, None]
    scores = vectors @ items.T
    assert torch.equal(FormulaScorer(minilm).score(formulas, scores, items), scores)


def test_all_clauses_of_a_batch_in_one_encoder_call(minilm) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.stage1.encoder import CachedTextEncoder

    encoder = CachedTextEncoder(minilm)
    queries = ["a dog barking without people talking", "a baby crying without people talking",
               "rain falling and thunder rumbling"]
    formulas = [parse.formula for parse in parse_captions(queries)]
    items = torch.nn.functional.normalize(torch.randn(20, 384), dim=1)
    scorer = FormulaScorer(encoder)
    texts = [text for plan in scorer.plan(formulas) for text in plan.texts]
    scorer.score(formulas, torch.zeros(3, 20), items)
    # 'a person talking' is in two queries: encoded once, with every other clause, in one call
    assert texts.count("a person talking") == 2
    assert encoder.stats.calls == 1 and encoder.stats.texts_encoded == len(set(texts)) == len(texts) - 1


def test_exclusion_ranks_the_item_without_the_excluded_sound_first(minilm) -> None:  # type: ignore[no-untyped-def]
    captions = ["a dog barks while people are talking", "a dog barks loudly in a quiet yard",
                "people talking in a cafe", "rain falls on a tin roof", "a car engine idles",
                "birds chirp in the morning", "a bell rings twice", "waves crash on the shore"]
    items = torch.nn.functional.normalize(minilm.encode_text(captions), dim=1)
    query = "a dog barking without people talking"
    vector = torch.nn.functional.normalize(minilm.encode_text([query]), dim=1)
    scores = vector @ items.T
    assert int(scores[0].argmax()) == 0  # the first pass prefers the clip it should exclude
    blended = FormulaScorer(minilm).score([parse_caption(query).formula], scores, items)
    assert int(blended[0].argmax()) == 1


def test_connectives_by_hand() -> None:
    vectors = {"a dog barking": [1.0, 0.0], "a person talking": [0.0, 1.0]}
    encode = lambda texts: torch.tensor([vectors[t] for t in texts])  # noqa: E731
    items = torch.tensor([[0.8, 0.6], [1.0, 0.0]])
    phi = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]")
    none = {"gamma": 1.0, "conjunction_gamma": None, "calibration": "none"}
    complement = FormulaScorer(encode, FormulaScoringConfig(**none)).score([phi], torch.zeros(1, 2), items)
    assert complement[0].tolist() == pytest.approx([0.8 * 0.4, 1.0])
    minimum = FormulaScorer(encode, FormulaScoringConfig(tnorm="min", **none)).score(
        [phi], torch.zeros(1, 2), items)
    assert minimum[0].tolist() == pytest.approx([0.4, 1.0])
    subtract = FormulaScorer(encode, FormulaScoringConfig(negation="subtract", negation_weight=0.5, **none))
    assert subtract.score([phi], torch.zeros(1, 2), items)[0].tolist() == pytest.approx([0.5, 1.0])
    half = FormulaScorer(encode, FormulaScoringConfig(gamma=0.5, calibration="none"))
    assert half.score([phi], torch.tensor([[0.2, 0.4]]), items)[0].tolist() == pytest.approx([0.26, 0.7])
    # a formula with no negation is weighed by conjunction_gamma
    both = parse_formula("∃x ∃y [Dog(x) ∧ Barking(x) ∧ Person(y) ∧ Talking(y)]")
    light = FormulaScorer(encode, FormulaScoringConfig(gamma=1.0, conjunction_gamma=0.2, calibration="none"))
    assert light.score([both], torch.tensor([[0.5, 0.5]]), items)[0].tolist() == pytest.approx(
        [0.8 * 0.5 + 0.2 * 0.48, 0.8 * 0.5 + 0.2 * 0.0])
    either = parse_formula("∃x Dog(x) ∨ ∃y Person(y)")
    vectors.update({"a dog": [1.0, 0.0], "a person": [0.0, 1.0]})
    disjunction = FormulaScorer(encode, FormulaScoringConfig(**none)).score(
        [either], torch.zeros(1, 2), items)
    assert disjunction[0].tolist() == pytest.approx([0.8 + 0.6 - 0.48, 1.0])


def test_the_conjunction_guard_demotes_an_item_that_lacks_a_sound() -> None:
    vectors = {"a dog barking": [1.0, 0.0, 0.0], "a person talking": [0.0, 1.0, 0.0]}
    encode = lambda texts: torch.tensor([vectors[t] for t in texts])  # noqa: E731
    # items 0-4 are filler; 5 has both sounds, 6 only the dog, 7 only the person
    items = torch.nn.functional.normalize(torch.tensor(
        [[0.1, 0.1, 1.0]] * 5 + [[0.7, 0.7, 0.1], [1.0, 0.05, 0.1], [0.05, 1.0, 0.1]]), dim=1)
    both = parse_formula("∃x ∃y [Dog(x) ∧ Barking(x) ∧ Person(y) ∧ Talking(y)]")
    first_pass = torch.tensor([[0.1] * 5 + [0.70, 0.72, 0.30]])  # the dog alone ranks first
    guard = FormulaScorer(encode, FormulaScoringConfig(conjunction_threshold=0.5, conjunction_blend=0.0))
    scores = guard.score([both], first_pass, items)[0]
    assert scores[6] == first_pass[0, 6]  # the first pass's best item is never demoted ...
    assert scores[7] < first_pass[0, 7]  # ... an item without the dog is
    assert bool((scores <= first_pass[0] + 1e-7).all())  # the guard only demotes
    blend = FormulaScorer(encode, FormulaScoringConfig(conjunction="blend", conjunction_gamma=1.0))
    assert int(torch.argmax(blend.score([both], first_pass, items)[0])) == 5  # the t-norm reorders the top
    # the default: the first hit (the dog alone) lacks the person, so the t-norm also reorders
    relieved = FormulaScorer(encode, FormulaScoringConfig(conjunction_threshold=0.5)).score(
        [both], first_pass, items)[0]
    assert relieved[5] - relieved[6] > scores[5] - scores[6]


def test_the_conjunction_guard_keeps_every_first_hit(minilm) -> None:  # type: ignore[no-untyped-def]
    # plain captions that describe two sounds: whatever the items, each query's first hit stays first
    texts = ["a man speaks and a dog barks", "rain falls while thunder rumbles, then a car passes",
             "birds chirp, a bell rings", "people talking and a baby crying"]
    formulas = [parse.formula for parse in parse_captions(texts)]
    generator = torch.Generator().manual_seed(3)
    items = torch.nn.functional.normalize(torch.randn(300, 384, generator=generator), dim=1)
    queries = torch.nn.functional.normalize(minilm.encode_text(texts).float(), dim=1)
    first = queries @ items.T
    guard = FormulaScorer(minilm, FormulaScoringConfig(conjunction_blend=0.0))
    scores = guard.score(formulas, first, items)
    assert torch.equal(scores.argmax(dim=1), first.argmax(dim=1))
    assert bool((scores <= first + 1e-6).all())


def test_saturation_and_negated_scope() -> None:
    vectors = {"a dog barking": [1.0, 0.0], "a person talking": [0.0, 1.0]}
    encode = lambda texts: torch.tensor([vectors[t] for t in texts])  # noqa: E731
    items = torch.tensor([[0.8, 0.6], [1.0, 0.0]])
    phi = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]")
    saturated = FormulaScorer(encode, FormulaScoringConfig(gamma=1.0, calibration="none", saturation=0.25))
    assert saturated.score([phi], torch.zeros(1, 2), items)[0].tolist() == pytest.approx([1.0, 1.0])
    scoped = FormulaScorer(encode, FormulaScoringConfig(negated_scope=2))
    assert torch.isfinite(scoped.score([phi], torch.tensor([[0.9, 0.8]]), items)).all()


def test_rescore_of_candidates_matches_the_full_matrix(minilm) -> None:  # type: ignore[no-untyped-def]
    captions = ["a dog barks while people are talking", "a dog barks loudly", "people talking",
                "rain on a roof", "a dog growls and a man speaks"]
    items = torch.nn.functional.normalize(minilm.encode_text(captions), dim=1)
    formula = parse_caption("a dog barking without people talking").formula
    query = "a dog barking without people talking"
    vector = torch.nn.functional.normalize(minilm.encode_text([query]), dim=1)
    scorer = FormulaScorer(minilm)
    full = scorer.score([formula], vector @ items.T, items)
    top, rows = torch.topk(vector @ items.T, k=5)
    scores, order = scorer.rescore([formula], top, rows, items, k=3)
    assert order[0].tolist() == torch.argsort(full[0], descending=True)[:3].tolist()
    assert scores[0].tolist() == pytest.approx(torch.sort(full[0], descending=True).values[:3].tolist())


def _fixed_encoder(dim: int = 16):  # type: ignore[no-untyped-def]
    """A text encoder of fixed random unit vectors (one per text), so that no model is needed."""
    known: dict[str, torch.Tensor] = {}
    generator = torch.Generator().manual_seed(7)

    def encode(texts: list[str]) -> torch.Tensor:
        for text in texts:
            if text not in known:
                known[text] = torch.nn.functional.normalize(torch.randn(dim, generator=generator), dim=0)
        return torch.stack([known[text] for text in texts])

    return encode


def test_candidates_score_as_the_same_items_of_the_full_matrix() -> None:
    # Candidate vectors are gathered into one reused buffer; each query must still see its own.
    queries = ["a dog barking without people talking", "rain falling and thunder rumbling",
               "a baby crying without music", "rain on a roof"]
    formulas = [parse.formula for parse in parse_captions(queries)]
    generator = torch.Generator().manual_seed(3)
    items = torch.nn.functional.normalize(torch.randn(300, 16, generator=generator), dim=1)
    first = torch.nn.functional.normalize(torch.randn(4, 16, generator=generator), dim=1) @ items.T
    scorer = FormulaScorer(_fixed_encoder())
    full = scorer.score(formulas, first, items)
    top, rows = torch.topk(first, k=120, dim=1)
    picked = scorer.score(formulas, top, items, candidates=rows)
    torch.testing.assert_close(picked, torch.gather(full, 1, rows), rtol=0, atol=1e-6)
    assert torch.equal(picked[3], top[3])  # the plain query keeps its first-pass scores


@pytest.mark.parametrize("options", [{}, {"negated_scope": 10, "saturation": 0.5}, {"tnorm": "min"}])
def test_queries_scored_in_blocks_score_as_in_one(monkeypatch, options: dict[str, object]) -> None:  # type: ignore[no-untyped-def]
    # A large batch is scored in blocks of queries (bounded memory): the same scores as in one.
    import fortekit.search.formula.scoring as formula_scoring

    queries = ["a dog barking without people talking", "rain falling and thunder rumbling", "rain on a roof",
               "a baby crying without music", "birds chirping, excluding traffic"]
    formulas = [parse.formula for parse in parse_captions(queries)]
    generator = torch.Generator().manual_seed(4)
    items = torch.nn.functional.normalize(torch.randn(200, 16, generator=generator), dim=1)
    first = torch.nn.functional.normalize(torch.randn(5, 16, generator=generator), dim=1) @ items.T
    top, rows = torch.topk(first, k=60, dim=1)
    scorer = FormulaScorer(_fixed_encoder(), FormulaScoringConfig(**options))  # type: ignore[arg-type]
    whole = scorer.score(formulas, top, items, candidates=rows)
    monkeypatch.setattr(formula_scoring, "_BLOCK_VALUES", 150)  # one query per block
    assert formula_scoring._query_blocks([0, 2, 3], [2, 1, 2, 3], 60) == [[0], [2], [3]]
    torch.testing.assert_close(scorer.score(formulas, top, items, candidates=rows), whole, rtol=0, atol=1e-6)


def test_calibration_sample_follows_the_items() -> None:
    # The scorer keeps the calibration rows of the items it last saw; other or changed items
    # (in place), and inference tensors (which have no version), must get their own.
    formulas = [parse_caption("a dog barking without people talking").formula]
    generator = torch.Generator().manual_seed(9)
    items = torch.nn.functional.normalize(torch.randn(50, 16, generator=generator), dim=1)
    top = torch.rand(1, 50, generator=generator)
    config = FormulaScoringConfig(calibration_sample=8)
    scorer = FormulaScorer(_fixed_encoder(), config)

    def fresh(matrix: torch.Tensor) -> torch.Tensor:
        return FormulaScorer(_fixed_encoder(), config).score(formulas, top, matrix)

    assert torch.equal(scorer.score(formulas, top, items), fresh(items))
    items[::7] = items.flip(0)[::7]
    assert torch.equal(scorer.score(formulas, top, items), fresh(items))
    other = torch.nn.functional.normalize(torch.randn(50, 16, generator=generator), dim=1)
    assert torch.equal(scorer.score(formulas, top, other), fresh(other))
    with torch.inference_mode():
        frozen = other.flip(0).clone()
    assert torch.equal(scorer.score(formulas, top, frozen), fresh(frozen))


@pytest.mark.parametrize("k", [1, 10, 64, 100, 299, 300])
def test_rescore_keeps_the_order_of_a_stable_sort(k: int) -> None:
    # Many exact ties: the best k are selected, not sorted, and must still keep the first-pass order.
    formulas = [parse.formula for parse in parse_captions(["a dog barking without people talking", "rain"])]
    generator = torch.Generator().manual_seed(5)
    items = torch.nn.functional.normalize(torch.randn(300, 16, generator=generator), dim=1)
    top = torch.randint(0, 4, (2, 300), generator=generator).float() / 4
    rows = torch.randperm(300, generator=generator).repeat(2, 1)
    # resemblance: no floor, so the order is the sort of the blended scores (the floor: test_exclusion.py)
    config = FormulaScoringConfig(calibration="none", exclusion="resemblance")
    scorer = FormulaScorer(_fixed_encoder(), config)
    blended = scorer.score(formulas, top, items, candidates=rows)
    order = torch.sort(blended, dim=1, descending=True, stable=True).indices[:, :k]
    scores, found = scorer.rescore(formulas, top, rows, items, k=k)
    assert torch.equal(found, torch.gather(rows, 1, order))
    assert torch.equal(scores, torch.gather(blended, 1, order))


@pytest.mark.parametrize("k", [1, 63, 64, 500, 999, 1000])
def test_partition_top_k_equals_a_stable_sort(k: int) -> None:
    # formula scoring's candidate pool (k >= PARTITION_FROM) is selected by partition on the CPU
    from fortekit._top_k import PARTITION_FROM, stable_top_k

    assert PARTITION_FROM <= 1000
    generator = torch.Generator().manual_seed(11)
    scores = torch.cat([torch.randn(3, 1000, generator=generator),  # distinct scores
                        torch.randint(0, 3, (3, 1000), generator=generator).float(),  # ties everywhere
                        torch.zeros(1, 1000)])
    expected = torch.sort(scores, dim=1, descending=True, stable=True)
    values, columns = stable_top_k(scores, k)
    assert torch.equal(columns, expected.indices[:, :k]) and torch.equal(values, expected.values[:, :k])


def test_partition_top_k_leaves_nan_to_torch() -> None:
    from fortekit._top_k import stable_top_k

    scores = torch.randn(2, 500, generator=torch.Generator().manual_seed(2))
    scores[1, 7] = float("nan")
    values, columns = stable_top_k(scores, 100)
    assert int(columns[1, 0]) == 7 and torch.isnan(values[1, 0])  # torch.topk ranks NaN first
    assert torch.equal(columns[0], torch.sort(scores[0], descending=True, stable=True).indices[:100])


@pytest.mark.parametrize(
    ("option", "value"),
    [("gamma", 1.5), ("tnorm", "lukasiewicz"), ("negation", "ignore"), ("calibration", "rank"),
     ("slope", 0), ("negated_slope", -1.0), ("calibration_sample", 1), ("max_clauses", 0), ("gamma", True),
     ("conjunction_gamma", 2.0), ("saturation", 0.0), ("negated_scope", 1), ("conjunction", "hinge"),
     ("conjunction_threshold", float("nan"))],
)
def test_bad_settings_are_coded_errors(option: str, value: object) -> None:
    with pytest.raises(EvaluationError, match=r"\[E480\].*formula scoring"):
        FormulaScoringConfig(**{option: value})  # type: ignore[arg-type]


def test_shapes_that_do_not_fit_are_coded_errors() -> None:
    scorer = FormulaScorer(lambda texts: torch.zeros(len(texts), 2))
    with pytest.raises(EvaluationError, match=r"\[E481\]"):
        scorer.score([None, None], torch.zeros(1, 3), torch.eye(3))
    with pytest.raises(EvaluationError, match=r"\[E481\]"):
        scorer.score([None], torch.zeros(1, 4), torch.eye(3))


# -- audio items: the same clause texts against audio embeddings ------------------------------------------
def test_formula_scoring_over_an_audio_index(tmp_path: Path) -> None:
    from plugin_fixtures import save_tiny_clap, write_wav

    from fortekit.plugins import AudioItem, get_backbone
    from fortekit.search.index import AudioIndex

    backbone = get_backbone("hf-clap", model=str(save_tiny_clap(tmp_path / "clap")), device="cpu")
    paths = [write_wav(tmp_path / f"clip{i}.wav", 1.0, 48_000, freq=220.0 * (i + 1)) for i in range(6)]
    index = AudioIndex.build([AudioItem(path=str(p), item_id=p.name) for p in paths], backbone)
    formula = parse_caption("a dog barking without people talking").formula
    query = backbone.encode_text(["a dog barking without people talking"])
    top, rows = index.search(query, k=6, device="cpu")
    scorer = FormulaScorer(backbone)
    scores, order = scorer.rescore([formula], top, rows, index.embedding_tensor("cpu"), k=6)
    assert sorted(order[0].tolist()) == list(range(6)) and torch.isfinite(scores).all()
    assert scores[0].tolist() == sorted(scores[0].tolist(), reverse=True)


# -- real data: the development exclusion set --------------------------------------------------------------
def _beir_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").split("\n") if line.strip()]


def test_exclusions_on_audiocaps_val(minilm) -> None:  # type: ignore[no-untyped-def]
    """On the development set, formula scoring pushes excluded sounds out of the top 10."""
    from fortekit.search.eval.data import item_embeddings

    folder = require(NEGATION / "audiocaps_val")
    corpus = _beir_lines(folder / "corpus.jsonl")
    queries = [q for q in _beir_lines(folder / "queries.jsonl") if q["metadata"]["kind"] == "without"]
    concepts = {row["_id"]: row["concepts"] for row in _beir_lines(folder / "item_concepts.jsonl")}
    items = item_embeddings(minilm, [tuple(row["captions"]) for row in corpus])
    vectors = torch.nn.functional.normalize(minilm.encode_text([q["text"] for q in queries]), dim=1)
    formulas = [parse.formula for parse in parse_captions([q["text"] for q in queries])]
    scores = vectors @ items.T
    blended = FormulaScorer(minilm).score(formulas, scores, items)

    def violation(matrix: torch.Tensor) -> float:
        top = torch.topk(matrix, k=10).indices.tolist()
        return float(np.mean([
            np.mean([concepts[corpus[i]["_id"]].get(q["metadata"]["b"], 0) >= 1 for i in row])
            for q, row in zip(queries, top, strict=True)
        ]))

    before, after = violation(scores), violation(blended)
    assert before > 0.5 and after < before / 3, (before, after)


# -- every retrieval path: fortekit search ----------------------------------------------------------------
CAFE = ["a dog barks while people are talking", "a dog barks loudly in a quiet yard",
        "people talking in a cafe", "rain falls on a tin roof", "a car engine idles",
        "birds chirp in the morning", "a bell rings twice", "waves crash on the shore"]


def test_search_ranks_by_the_formula(minilm, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.cli import main
    from fortekit.search.index import AudioIndex

    index = AudioIndex.from_captions([f"clip{i}" for i in range(len(CAFE))], CAFE, minilm)
    index.save(tmp_path / "idx")
    query = "a dog barking without people talking"
    _, plain = index.search_text([query], minilm, k=3, device="cpu")
    assert plain[0, 0].item() == 0

    def ranked(*options: str) -> list[list[str]]:
        assert main(["search", "--index", str(tmp_path / "idx"), query, "rain", "--json", "--device", "cpu",
                     *options]) == 0
        lines = capsys.readouterr().out.splitlines()
        return [[hit["id"] for hit in json.loads(line)["hits"]] for line in lines]

    # The first pass and formula scoring alone; a plain query ("rain") keeps its first-pass ranking.
    scored = ranked("-k", "3", "--stage1", "off", "--projection", "none", "--stage3", "off",
                    "--order-check", "off")
    rain = index.search_text(["rain"], minilm, k=3, device="cpu")[1][0].tolist()
    assert scored[0][0] == "clip1" and scored[1] == [f"clip{row}" for row in rain]
    # The default pipeline, with formula scoring and without.
    assert ranked("-k", "2")[0][0] == "clip1"
    assert ranked("-k", "2", "--formula-scoring", "off")[0][0] == "clip0"
