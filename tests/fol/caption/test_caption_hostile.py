"""Pathological captions parse into a valid result, and the caps that keep them cheap.

Speed: ``tests/fol/caption/test_caption_hostile_bench.py`` (issue 15, item 11); the caps are in
:func:`fortekit.fol.caption.pipeline.prepare` and docs/parser.md.
"""

from __future__ import annotations

import pytest
from caption_fixtures import HOSTILE, HOSTILE_SIZES

from fortekit.fol import parse_formula
from fortekit.fol.caption import CaptionParser, ParseResult, parse_caption, parse_captions
from fortekit.fol.caption.pipeline import MAX_WORD_CHARS, MAX_WORDS, TOKENS_PER_WORD, prepare


def valid(result: ParseResult, text: str) -> ParseResult:
    assert isinstance(result, ParseResult) and result.text == text
    assert len(result.predicates) >= 1  # the fallback predicate is allowed
    assert parse_formula(str(result.formula)) == result.formula
    for record in result.predicates:
        assert 0 <= record.span[0] <= record.span[1] <= len(text)
    return result


@pytest.mark.parametrize("size", HOSTILE_SIZES)
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_caption_gives_a_valid_parse(kind: str, size: int) -> None:
    text = HOSTILE[kind](size)
    assert len(text) == size
    result = valid(parse_caption(text), text)
    assert result.truncated  # every one of them passes a cap


def test_hostile_captions_in_a_batch_keep_their_order() -> None:
    texts = [HOSTILE[kind](2_500) for kind in sorted(HOSTILE)] + ["a dog barks"]
    results = list(parse_captions(texts, batch_size=2))
    assert [r.text for r in results] == texts
    for result, text in zip(results, texts, strict=True):
        valid(result, text)
    assert str(results[-1].formula) == "∃x [Dog(x) ∧ Barking(x)]"


def test_words_after_an_overlong_word_are_still_parsed() -> None:
    text = "a dog " + "(" * 50_000 + " barking"
    result = valid(parse_caption(text), text)
    assert result.truncated
    assert {"Dog", "Barking"} <= {record.symbol for record in result.predicates}


def test_real_captions_are_untouched() -> None:
    text = "a man speaks while birds chirp (loudly!) and a car passes by on a wet road"
    assert prepare(text) == (text, False)
    long_real = " ".join(["rain falling on a metal roof,"] * 40)  # 240 words, 1,190 chars
    assert prepare(long_real) == (long_real, False)


def test_prepare_blanks_the_rest_of_an_overlong_word() -> None:
    text = "x " + "a" * 1_000 + " dog"
    clean, truncated = prepare(text)
    assert truncated and len(clean) == len(text)  # offsets kept
    assert clean == "x " + "a" * MAX_WORD_CHARS + " " * (1_000 - MAX_WORD_CHARS) + " dog"
    assert prepare("b" * 1_000) == ("b" * MAX_WORD_CHARS, True)


def test_prepare_caps_tokens_and_words() -> None:
    budget = TOKENS_PER_WORD * MAX_WORDS
    clean, truncated = prepare("(" * 90 + " " + "! " * 5_000)
    assert truncated and clean.count("(") + clean.count("!") == 90 + (MAX_WORDS - 1)
    clean, truncated = prepare("((((( " * 1_000)
    assert truncated and clean.count("(") <= budget
    clean, truncated = prepare("a\u00a0" * 5_000)  # words apart by other whitespace count
    assert truncated and clean.count("a") == MAX_WORDS
    clean, truncated = prepare("((((((((((", max_words=2)
    assert (clean, truncated) == ("(" * 2 * TOKENS_PER_WORD, True)


def test_a_smaller_max_words_tightens_the_token_cap() -> None:
    parser = CaptionParser(max_words=8)
    text = "(" * 5_000
    result = valid(parser.parse(text), text)
    assert result.truncated
