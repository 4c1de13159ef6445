"""Three-tier grounding against the shipped V_audio with the real WordNet."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fortekit.errors import WordTypeError
from fortekit.vocab import Category, Grounder, Tier, get_grounder, ground, load_vocabulary, soft_confidence

GROUNDER = get_grounder()


@pytest.mark.parametrize(
    ("word", "pos", "symbol"),
    [
        ("Chirping", "NOUN", "Chirping"),  # a gerund noun grounds to the verb predicate
        ("chirp", "VERB", "Chirping"),
        ("LOUD", "ADJ", "Loud"),
        ("loudly", "ADV", "Loud"),  # adverb folded into its adjective
        ("in", "ADP", "In"),
        ("while", "SCONJ", "While"),
        ("high-pitched", "ADJ", "HighPitched"),
        ("high pitched", "ADJ", "HighPitched"),
        ("lawnmower", "NOUN", "LawnMower"),  # multi-word entry written solid
        ("in the distance", None, "InTheDistance"),
        ("followed", "VERB", "FollowedBy"),
    ],
)
def test_tier_one_exact(word: str, pos: str | None, symbol: str) -> None:
    result = GROUNDER.ground(word, pos)
    assert (result.symbol, result.tier, result.confidence, result.soft) == (symbol, Tier.EXACT, 1.0, False)


@pytest.mark.parametrize(
    ("word", "pos", "symbol"),
    [
        ("dogs", "NOUN", "Dog"),
        ("geese", "NOUN", "Goose"),
        ("barked", "VERB", "Barking"),
        ("chirps", "VERB", "Chirping"),
        ("louder", "ADV", "Loud"),  # a mis-tagged comparative reaches the adjective
        ("quieter", "NOUN", "Quiet"),
        ("birds", None, "Bird"),
    ],
)
def test_tier_two_wordnet(word: str, pos: str | None, symbol: str) -> None:
    result = GROUNDER.ground(word, pos)
    assert (result.symbol, result.tier, result.confidence) == (symbol, Tier.WORDNET, 1.0)


@pytest.mark.parametrize(
    ("word", "pos", "symbol", "distance"),
    [
        ("chirpping", "VERB", "Chirping", 1),
        ("helicoptor", "NOUN", "Helicopter", 1),
        ("squeeking", "VERB", "Squeaking", 1),
        ("enginee", "NOUN", "Engine", 1),
        ("motorcyle", "NOUN", "Motorcycle", 1),
    ],
)
def test_tier_three_soft_matches(word: str, pos: str, symbol: str, distance: int) -> None:
    result = GROUNDER.ground(word, pos)
    assert result.tier is Tier.EDIT_DISTANCE and result.soft
    assert (result.symbol, result.distance) == (symbol, distance)
    assert 0.5 <= result.confidence < 1.0


def test_tier_three_stays_within_the_pos() -> None:
    assert GROUNDER.ground("helicoptor", "NOUN").symbol == "Helicopter"
    assert not GROUNDER.ground("helicoptor", "VERB").found
    assert GROUNDER.ground("helicoptor", None).symbol == "Helicopter"


def test_confidence_falls_with_distance() -> None:
    one, two = (
        soft_confidence("helicopterr", "helicopter", 1),
        soft_confidence("helicopterrr", "helicopter", 2),
    )
    assert 0.5 <= two < one < 1.0
    assert soft_confidence("abcd", "wxyz", 4) == 0.5


def test_short_and_known_words_are_not_bent() -> None:
    assert not GROUNDER.ground("cst", "NOUN").found  # 3 letters: no tier (iii)
    assert GROUNDER.ground("bxrd", "NOUN").symbol == "Bird"  # 4 letters: distance 1 ...
    assert not GROUNDER.ground("bxrx", "NOUN").found  # ... but not 2
    # "pork" is a word WordNet knows; it must not become Park or Fork ...
    assert not GROUNDER.ground("pork", "NOUN").found
    # ... unless asked for: then the most frequent key at the least distance wins.
    lenient = Grounder(fuzzy_known_words=True).ground("pork", "NOUN")
    assert (lenient.symbol, lenient.distance) == ("Park", 1)


@pytest.mark.parametrize(
    "word", ["", "   ", "qwxzy", "x" * 10_000, "\x00\ud800", "🐦🐦", "<script>", "の鳥", "1234"]
)
def test_no_match_is_a_result_not_an_error(word: str) -> None:
    result = GROUNDER.ground(word, "NOUN")
    assert (result.found, result.tier, result.entry, result.confidence, result.symbol) == (
        False,
        Tier.NONE,
        None,
        0.0,
        None,
    )


@settings(max_examples=300, deadline=None)
@given(
    word=st.text(max_size=40), pos=st.sampled_from([None, "NOUN", "VERB", "ADJ", "ADV", "ADP", "X", "junk"])
)
def test_any_string_grounds_without_raising(word: str, pos: str | None) -> None:
    result = GROUNDER.ground(word, pos)
    assert result.tier is Tier.NONE or result.entry is not None
    assert (result.tier is Tier.EDIT_DISTANCE) == (0.5 <= result.confidence < 1.0)


def test_a_non_string_is_a_typed_error() -> None:
    with pytest.raises(WordTypeError, match=r"\[E105\] ground\(\) takes a word as str, not bytes"):
        GROUNDER.ground(b"dog")  # type: ignore[arg-type]


def test_results_are_cached() -> None:
    grounder = Grounder()
    first = grounder.ground("rustled", "VERB")
    assert grounder.ground("rustled", "VERB") is first
    assert grounder.cache_info().hits == 1
    grounder.cache_clear()
    assert grounder.cache_info().currsize == 0


def test_without_wordnet_tiers_one_and_three_remain() -> None:
    grounder = Grounder(wordnet=None)
    assert grounder.ground("loud", "ADJ").tier is Tier.EXACT
    assert grounder.ground("chirpping", "VERB").tier is Tier.EDIT_DISTANCE
    assert not grounder.ground("geese", "NOUN").found


def test_module_level_ground_uses_the_shipped_vocabulary() -> None:
    result = ground("distant", "ADJ")
    assert result.category is Category.SPATIAL
    assert result.entry is load_vocabulary()["Distant"]


def test_tier_three_can_be_switched_off() -> None:
    assert not Grounder(max_distance=0).ground("chirpping", "VERB").found
