"""Label evidence (search/formula/evidence.py): a tagger's probabilities judge the clauses they ground.

Unit behaviour on hand-made vectors, then the real path on the 200-clip generated collection:
the tagger trained by ``fortekit bench train-clap`` (tests/soundclap_fixtures.py) gives the
evidence, and ``fortekit eval --beir`` runs ``formula+evidence``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from fortekit.errors import EvaluationError, PipelineError  # noqa: E402
from fortekit.fol import parse_formula  # noqa: E402
from fortekit.search.formula.evidence import LabelEvidence, ground_clauses  # noqa: E402
from fortekit.search.formula.scoring import FormulaScorer, FormulaScoringConfig  # noqa: E402
from fortekit.search.pipeline import PipelineSpec  # noqa: E402

Trained = tuple[Path, Path, dict[str, Any], str]

# A three-dimensional text space: the clause texts G writes and the tagger's label phrases.
VECTORS = {
    "a dog barking": [1.0, 0.0, 0.0], "rain": [0.0, 1.0, 0.0], "rain falling": [0.0, 0.98, 0.2],
    "a bell ringing": [0.0, 0.0, 1.0], "music": [0.5, 0.5, 0.7],
}


def encode(texts: list[str]) -> torch.Tensor:
    return torch.tensor([VECTORS[text] for text in texts])


# Two items that sound alike to the similarity (both near "dog", a little "rain"); the tagger
# hears rain in the first only.
ITEMS = torch.nn.functional.normalize(torch.tensor([[0.9, 0.3, 0.1], [0.9, 0.32, 0.1]]), dim=1)
PHI = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y Rain(y)]")


@pytest.mark.parametrize("labels, probabilities, problem", [
    ((), [[0.5]], "non-empty"),
    (("rain falling", "rain falling"), [[0.5, 0.5]], "repeated"),
    (("rain falling",), [[0.5, 0.5]], "shape"),
    (("rain falling",), [[1.5]], "outside [0, 1]"),
    (("rain falling",), [[float("nan")]], "not finite"),
    (("rain falling",), "not numbers", "numeric matrix"),
])
def test_bad_evidence_is_a_coded_error(labels: Any, probabilities: Any, problem: str) -> None:
    with pytest.raises(EvaluationError, match=r"\[E494\]") as caught:
        LabelEvidence(labels, probabilities)
    assert problem in str(caught.value)


def test_a_clause_is_grounded_on_its_nearest_label_above_the_threshold() -> None:
    clauses = torch.nn.functional.normalize(encode(["rain", "music", "a dog barking"]), dim=1)
    labels = torch.nn.functional.normalize(encode(["rain falling", "a dog barking"]), dim=1)
    assert ground_clauses(clauses, labels, 0.9) == [0, None, 1]
    assert ground_clauses(clauses, labels, 0.0) == [0, 0, 1]


def test_the_evidence_decides_an_exclusion_the_similarity_cannot() -> None:
    evidence = LabelEvidence(("rain falling", "a bell ringing"), [[0.95, 0.0], [0.02, 0.0]])
    # against resemblance (two items calibrate no contrastive test): the similarity cannot decide
    scorer = FormulaScorer(encode, FormulaScoringConfig(calibration="none", evidence_match=0.9,
                                                        exclusion="resemblance"))
    query = ITEMS @ torch.nn.functional.normalize(torch.tensor([[1.0, 0.0, 0.0]]), dim=1).T
    without = scorer.score([PHI], query.T, ITEMS)[0]
    with_evidence = scorer.score([PHI], query.T, ITEMS, evidence=evidence)[0]
    assert abs(float(without[0] - without[1])) < 0.02  # the similarity barely tells them apart
    assert float(with_evidence[1] - with_evidence[0]) > 0.3  # the tagger heard rain in item 0
    # On candidates, the evidence rows follow the candidate indices.
    candidates = torch.tensor([[1, 0]])
    picked = scorer.score([PHI], query.T[:, [1, 0]], ITEMS, candidates=candidates, evidence=evidence)[0]
    assert picked.tolist() == pytest.approx(with_evidence[[1, 0]].tolist())


def test_evidence_is_ignored_at_weight_zero_and_for_asserted_clauses_in_scope_negated() -> None:
    evidence = LabelEvidence(("rain falling", "a dog barking"), [[0.95, 0.0], [0.02, 1.0]])
    query = (ITEMS @ torch.tensor([1.0, 0.0, 0.0])).unsqueeze(0)
    plain = FormulaScorer(encode, FormulaScoringConfig(calibration="none"))
    off = FormulaScorer(encode, FormulaScoringConfig(calibration="none", evidence_weight=0.0))
    assert torch.equal(off.score([PHI], query, ITEMS, evidence=evidence), plain.score([PHI], query, ITEMS))
    # "a dog barking" is asserted: with scope "negated" only the rain clause reads the tagger.
    negated = FormulaScorer(encode, FormulaScoringConfig(calibration="none", evidence_match=0.9,
                                                         evidence_scope="negated"))
    everything = FormulaScorer(encode, FormulaScoringConfig(calibration="none", evidence_match=0.9))
    first = negated.score([PHI], query, ITEMS, evidence=evidence)[0]
    second = everything.score([PHI], query, ITEMS, evidence=evidence)[0]
    assert float(second[0]) < float(first[0])  # the tagger hears no dog in item 0


def test_a_formula_the_evidence_judges_weighs_its_logic_by_evidence_gamma() -> None:
    evidence = LabelEvidence(("rain falling", "a bell ringing"), [[0.95, 0.0], [0.02, 0.0]])
    query = (ITEMS @ torch.tensor([1.0, 0.0, 0.0])).unsqueeze(0)
    config = FormulaScoringConfig(calibration="none", evidence_match=0.9, evidence_scope="negated")
    logic_only = FormulaScorer(encode, FormulaScoringConfig(
        calibration="none", evidence_match=0.9, evidence_scope="negated", evidence_gamma=1.0))
    blended = FormulaScorer(encode, config).score([PHI], query, ITEMS, evidence=evidence)[0]
    pure = logic_only.score([PHI], query, ITEMS, evidence=evidence)[0]
    assert blended.tolist() == pytest.approx((0.1 * query[0] + 0.9 * pure).tolist(), abs=1e-6)


def test_evidence_for_another_number_of_items_is_a_coded_error() -> None:
    scorer = FormulaScorer(encode)
    with pytest.raises(EvaluationError, match=r"\[E494\]"):
        scorer.score([PHI], torch.zeros(1, 2), ITEMS, evidence=LabelEvidence(("rain",), [[0.1]]))


@pytest.mark.parametrize("name, value", [("evidence_weight", 1.5), ("evidence_match", 2.0),
                                         ("evidence_scope", "some")])
def test_bad_evidence_settings_are_coded_errors(name: str, value: object) -> None:
    with pytest.raises(EvaluationError, match=r"\[E480\]"):
        FormulaScoringConfig(**{name: value})


def test_the_tagger_gives_one_probability_per_clip_and_class(trained_clap: Trained) -> None:
    from fortekit.plugins import LabelTagger, get_captioner

    collection, model, _, _ = trained_clap
    tagger = get_captioner("tagger", model=str(model), device="cpu")
    assert isinstance(tagger, LabelTagger)
    clips = sorted((collection / "audio").glob("*.wav"))[:8]
    evidence = tagger.label_evidence([str(path) for path in clips])
    assert len(evidence) == len(clips) and "a dog barking" in evidence.labels
    assert len(evidence.labels) == len(tagger.layout.classes)
    # The caption names the class the evidence finds most likely (both read the same logits).
    from fortekit.plugins.captioners.tagger import PHRASES

    captions = tagger.caption([str(path) for path in clips])
    matrix = torch.stack([evidence.column(j) for j in range(len(evidence.labels))], dim=1)
    for row, caption in enumerate(captions):
        best = tagger.layout.classes[int(torch.argmax(matrix[row]))]
        assert PHRASES[best][1] in caption, (caption, best)


def test_formula_with_evidence_runs_in_the_benchmark(trained_clap: Trained, tmp_path: Path) -> None:
    from fortekit.search.cli import main

    collection, model, _, _ = trained_clap
    out = tmp_path / "eval"
    assert main(["eval", "--beir", str(collection / "test"), "--backbone", "small-clap",
                 "--backbone-option", f"model={model}", "--captioner", "tagger",
                 "--captioner-option", f"model={model}", "--captioner-option", "device=cpu",
                 "--systems", "formula,formula+evidence,default+evidence", "--by", "kind",
                 "--device", "cpu", "--no-umap", "-o", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    kinds = metrics["breakdown"]["kind"]
    assert metrics["preparation_seconds"]["tag_items"] > 0
    for kind in set(kinds) & {"plain", "attribute"}:  # one clause: nothing for the evidence to judge
        assert kinds[kind]["formula+evidence"]["nDCG@10"] == kinds[kind]["formula"]["nDCG@10"], kind
    without = kinds["without"]
    # The floor keeps an item the tagger does not hear (p < 0.5) at its first-pass place, so the
    # tagger may leave a trace more than the contrastive test (one slot in 600 here) but ranks better.
    assert without["formula+evidence"]["violation@10"] <= without["formula"]["violation@10"] + 0.01, without
    assert without["formula+evidence"]["nDCG@10"] >= without["formula"]["nDCG@10"], without
    assert without["formula+evidence"]["nDCG@10"] >= without["baseline"]["nDCG@10"] + 0.05, without


def test_evidence_systems_without_a_tagger_are_a_coded_error(tmp_path: Path) -> None:
    from fortekit.search.cli import main

    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text('{"_id": "a", "text": "a dog barking"}\n', encoding="utf-8")
    (beir / "queries.jsonl").write_text('{"_id": "q", "text": "a dog without rain"}\n', encoding="utf-8")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\ta\t1\n", encoding="utf-8")
    assert main(["eval", "--beir", str(beir), "--systems", "formula+evidence", "--no-umap",
                 "-o", str(tmp_path / "out")]) != 0


@pytest.mark.parametrize("evidence", [[[0.5]], LabelEvidence(("rain falling",), [[0.5]] * 3)])
def test_a_retriever_refuses_evidence_that_is_not_one_row_per_item(evidence: object, minilm) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.index import AudioIndex
    from fortekit.search.retriever import Retriever

    index = AudioIndex.from_captions(["a", "b"], ["a dog barks", "rain falls"], minilm)
    with pytest.raises(PipelineError, match=r"\[E423\].*evidence"):
        Retriever(index, PipelineSpec(evidence=evidence), backbone=minilm, device="cpu")  # type: ignore[arg-type]
    with pytest.raises(PipelineError, match=r"\[E423\].*evidence"):
        Retriever(index, backbone=minilm, device="cpu").replace(evidence=evidence)
