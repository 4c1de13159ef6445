"""The scores of docs/annotation.md and the bag-of-lemmas baseline."""

from __future__ import annotations

import pytest

from fortekit.fol import parse_formula
from fortekit.fol.caption.scoring import PRF, Scorer, bag_of_lemmas, split_name


@pytest.fixture(scope="module")
def scorer() -> Scorer:
    return Scorer()


def test_split_name() -> None:
    assert split_name("MetalRoof") == ["metal", "roof"]
    assert split_name("InFrontOf") == ["in", "front", "of"]
    assert split_name("TV") == ["tv"] and split_name("Tv") == ["tv"]


def test_words_use_the_vocabulary_lemma_and_base_forms(scorer: Scorer) -> None:
    assert scorer.words("Chirping") == ("chirp",)  # V_audio symbol -> its lemma
    assert scorer.words("Chirp") == ("chirp",)
    assert scorer.words("Woods") == scorer.words("Wood")
    assert scorer.words("HighPitched")[0] == "high" and scorer.words("OutOf") == ("out", "of")


def test_prf_edge_cases() -> None:
    assert PRF(0, 0, 0).f1 == 1.0  # nothing to find, nothing found
    assert PRF(0, 3, 0).precision == 0.0 and PRF(0, 0, 2).recall == 0.0
    assert PRF(2, 4, 2).f1 == pytest.approx(2 / 3)


def test_perfect_and_partial_scores(scorer: Scorer) -> None:
    gold = parse_formula("Man(x) ∧ Open(x, y) ∧ Door(y) ∧ ¬Loud(x)")
    same = parse_formula("∃x ∃y [Man(x) ∧ Open(x, y) ∧ Door(y) ∧ ¬Loud(x)]")
    s = scorer.score([gold], [same])
    assert (s.unary.f1, s.relation.f1, s.negation.f1, s.exact_match) == (1.0, 1.0, 1.0, 1.0)
    worse = parse_formula("Man(x) ∧ Open(x) ∧ Door(y) ∧ Loud(x)")
    s = scorer.score([gold], [worse])
    assert s.relation.recall == 0.0 and s.negation.f1 == 0.0 and s.exact_match == 0.0
    assert s.unary.tp == 2  # Man, Door; Loud has the wrong polarity, Open is binary in gold


def test_relation_heads_must_overlap(scorer: Scorer) -> None:
    gold = parse_formula("Bird(x) ∧ In(x, y) ∧ Tree(y)")
    swapped = parse_formula("Bird(x) ∧ In(y, x) ∧ Tree(y)")
    renamed = parse_formula("Bird(z) ∧ In(z, w) ∧ Tree(w) ∧ Small(w)")
    assert scorer.score([gold], [swapped]).relation.tp == 0
    assert scorer.score([gold], [renamed]).relation.tp == 1  # variable names do not matter


def test_multisets_and_exact_match_by_set(scorer: Scorer) -> None:
    gold = parse_formula("Duck(x) ∧ Duck(y) ∧ Join(y, x)")
    one_duck = parse_formula("Duck(x) ∧ Join(x, y)")  # Join(x, x) is no relation (issue 17)
    s = scorer.score([gold], [one_duck])
    assert s.unary.tp == 1 and s.unary.gold == 2
    assert s.exact_match == 1.0  # the sets of (word, polarity) agree


def test_length_mismatch_is_an_error(scorer: Scorer) -> None:
    with pytest.raises(ValueError):
        scorer.score([parse_formula("A(x)")], [])


def test_bag_of_lemmas() -> None:
    phi = bag_of_lemmas(
        [("bird", "NOUN"), ("be", "AUX"), ("chirp", "VERB"), ("loudly", "ADV"), ("the", "DET")]
    )
    assert str(phi) == "∃x [Bird(x) ∧ Chirp(x) ∧ Loudly(x)]"
    assert bag_of_lemmas([("the", "DET")]) is None
    assert Scorer().score([parse_formula("Bird(x)")], [None]).unary.recall == 0.0
