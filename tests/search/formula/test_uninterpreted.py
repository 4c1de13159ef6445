"""A word the parser does not understand leaves the later sounds to the whole-query similarity
(fortekit.search.formula.uninterpreted, FormulaScoringConfig.uninterpreted).

The queries are built for these tests from the rule (a later clause with a word V_audio does not
hold; a closed-class word; an exclusion beside the doubt), with their own sounds and words. None is
the wording of a benchmark.
"""

from __future__ import annotations

import pytest
import torch

from fortekit.errors import EvaluationError
from fortekit.fol import parse_formula
from fortekit.fol.caption import parse_caption
from fortekit.search.formula.clauses import split_clauses
from fortekit.search.formula.config import FormulaScoringConfig
from fortekit.search.formula.scoring import FormulaScorer
from fortekit.search.formula.uninterpreted import doubt_later_clauses, uninterpreted_symbols


def _plan(text: str, **config: object):  # type: ignore[no-untyped-def]
    scorer = FormulaScorer(lambda texts: None, FormulaScoringConfig(**config))  # type: ignore[arg-type]
    return scorer.plan([parse_caption(text).formula])[0]


def test_a_later_clause_with_an_uninterpreted_word_is_left_to_the_similarity() -> None:
    plan = _plan("a kettle whistling, the gulls quixotic")
    assert not plan.scored and plan.reason == "an uninterpreted word"
    assert plan.doubted_words == ("Quixotic",)
    assert len(plan.doubted) == 1 and "gull" in plan.doubted[0]


def test_every_clause_is_scored_as_parsed_with_assert() -> None:
    plan = _plan("a kettle whistling, the gulls quixotic", uninterpreted="assert")
    assert plan.scored and plan.doubted == ()
    assert any("gull" in text for text in plan.texts)


def test_exclusions_stay_scored_beside_a_doubt() -> None:
    plan = _plan("a kettle whistling with no sirens while gulls are quixotic")
    assert plan.scored
    assert [text for text, negated in zip(plan.texts, plan.negated, strict=True) if negated] == ["a siren"]
    assert not any("gull" in text for text in plan.texts)


@pytest.mark.parametrize(
    "text",
    [
        "a kettle whistling while gulls squawk",  # every word understood
        "a kettle whistling while someone laughs",  # an indefinite pronoun is a closed class
        "the gulls quixotic as a kettle whistles",  # the word is the first sound's own
    ],
)
def test_nothing_is_doubted_where_the_later_clauses_are_understood(text: str) -> None:
    assert _plan(text).doubted == ()


def test_a_closed_class_word_is_understood() -> None:
    assert uninterpreted_symbols(["Someone", "Group", "Morning", "Gull", "Quixotic"]) == ["Quixotic"]


def test_a_tree_that_is_no_conjunction_is_left_alone() -> None:
    tree = split_clauses(parse_formula("∃x Quixotic(x)"))
    assert doubt_later_clauses(tree) == (tree, ())
    assert doubt_later_clauses(None) == (None, ())


def test_a_doubted_query_scores_as_its_similarity() -> None:
    vectors = {"a kettle whistling": [1.0, 0.0], "a quixotic gull": [0.0, 1.0]}
    scorer = FormulaScorer(lambda texts: torch.tensor([vectors[t] for t in texts]),
                           FormulaScoringConfig(gamma=1.0, calibration="none"))
    items = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    similarity = torch.tensor([[0.3, 0.6]])
    formula = parse_caption("a kettle whistling, the gulls quixotic").formula
    scores = scorer.score([formula], similarity, items)
    assert torch.equal(scores, similarity)


def test_an_unknown_setting_is_a_typed_error() -> None:
    with pytest.raises(EvaluationError, match="E480"):
        FormulaScoringConfig(uninterpreted="maybe")  # type: ignore[arg-type]


def test_explain_says_which_sounds_were_left_to_the_similarity(cafe, minilm) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.pipeline import PipelineSpec
    from fortekit.search.retriever import Retriever

    retriever = Retriever(cafe, PipelineSpec(stage1=None, projection=None), backbone=minilm)
    result = retriever.search("a dog barking and people laughing by a quixotic pier", k=3, explain=True)
    assert result.clauses == (("a dog barking", False), ("a person laughing", False))
    assert any("Quixotic" in line and "whole-query similarity" in line for line in result.unsure)


def test_a_word_said_of_a_thing_of_its_own_keeps_the_sound_beside_it() -> None:
    plan = _plan("a kettle whistling and gulls squawking by a quixotic pier")
    assert plan.scored
    assert plan.texts == ("a kettle whistling", "a gull squawking")
    assert plan.doubted_words == ("Quixotic", "Pier")
