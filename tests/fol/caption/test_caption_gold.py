"""The parser on real data: the hand-annotated gold set and Clotho development captions.

Targets of issue 4: predicate alignment >= 90%, relation F1 >= 65%, exact match >= 40%,
fallback rate <= 3%. The gold set also served to develop the rules (docs/parser.md).
"""

from __future__ import annotations

import json

import pytest
from caption_fixtures import CLOTHO_DEV, GOLD, parser, require

from fortekit.fol import parse_formula
from fortekit.fol.caption.report import corpus_stats, gold_scores, read_clotho, read_gold


@pytest.fixture(scope="module")
def scores() -> dict:  # type: ignore[type-arg]
    return gold_scores(parser(), read_gold(require(GOLD, "the parser gold set")))


def test_gold_file_is_well_formed() -> None:
    rows = [
        json.loads(line)
        for line in require(GOLD, "the parser gold set").read_text(encoding="utf-8").splitlines()
    ]
    assert len(rows) == 100
    for row in rows:
        assert {"index", "file_name", "caption", "formula"} <= set(row)
        parse_formula(row["formula"])


def test_parser_meets_the_targets(scores: dict) -> None:  # type: ignore[type-arg]
    s = scores["parser"]
    assert s.unary.f1 >= 0.90
    assert s.relation.f1 >= 0.65
    assert s.exact_match >= 0.40
    assert s.negation.predicted == s.negation.tp  # no negation where the gold has none


def test_parser_beats_the_bag_of_lemmas_baseline(scores: dict) -> None:  # type: ignore[type-arg]
    parser_scores, baseline = scores["parser"], scores["bag-of-lemmas baseline"]
    assert 0.75 <= baseline.unary.f1 < parser_scores.unary.f1
    assert baseline.relation.f1 == 0.0  # it has no binary predicate at all
    assert baseline.exact_match < parser_scores.exact_match


def test_fallback_rate_and_coverage_on_clotho() -> None:
    captions = read_clotho(require(CLOTHO_DEV, "Clotho development captions"))[:1500]
    stats = corpus_stats(parser(), "Clotho development", captions)
    assert stats.captions == 1500
    assert stats.fallback_rate <= 0.03
    assert stats.coverage >= 0.97
