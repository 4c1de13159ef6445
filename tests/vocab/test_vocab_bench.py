"""Grounding speed over all caption tokens of Clotho development (pytest-benchmark).

Goals (issue 3): >= 200,000 lookups/s for tiers (i)-(ii) with caching, >= 20,000/s when
tier (iii) is reached. lookups/s = tokens / mean; ``extra_info`` has the figures. Run
``pytest tests/vocab/test_vocab_bench.py --benchmark-only``; docs/vocab.md has the numbers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from vocab_fixtures import CLOTHO_DEV, analysed, require, vocab_cache

from fortekit.vocab import Grounder, Tier
from fortekit.vocab.model import pos_group

__all__ = ["vocab_cache"]  # the fixture, imported for pytest


@pytest.fixture(scope="module")
def tokens(vocab_cache: Path) -> list[tuple[str, str]]:
    docs = analysed(require(CLOTHO_DEV, "Clotho development captions"), vocab_cache)
    return [(t.text, t.pos) for doc in docs for t in doc if pos_group(t.pos) is not None]  # type: ignore[attr-defined]


def ground_all(grounder: Grounder, tokens: list[tuple[str, str]]) -> int:
    ground = grounder.ground
    found = 0
    for word, pos in tokens:
        found += ground(word, pos).entry is not None
    return found


@pytest.mark.benchmark(group="vocab-grounding")
def test_bench_tiers_one_two_cached(benchmark, tokens: list[tuple[str, str]]) -> None:  # type: ignore[no-untyped-def]
    grounder = Grounder(max_distance=0)
    ground_all(grounder, tokens)  # warm the cache: the benchmark measures cached lookups
    found = benchmark(ground_all, grounder, tokens)
    rate = len(tokens) / benchmark.stats.stats.mean
    benchmark.extra_info.update(tokens=len(tokens), found=found, lookups_per_s=round(rate))
    assert len(tokens) > 100_000 and found > 0.5 * len(tokens)


@pytest.mark.benchmark(group="vocab-grounding")
def test_bench_all_tiers_cached(benchmark, tokens: list[tuple[str, str]]) -> None:  # type: ignore[no-untyped-def]
    grounder = Grounder()
    ground_all(grounder, tokens)
    found = benchmark(ground_all, grounder, tokens)
    benchmark.extra_info.update(
        tokens=len(tokens), found=found, lookups_per_s=round(len(tokens) / benchmark.stats.stats.mean)
    )


@pytest.mark.benchmark(group="vocab-grounding")
def test_bench_all_tiers_cold_cache(benchmark, tokens: list[tuple[str, str]]) -> None:  # type: ignore[no-untyped-def]
    # One pass over all tokens starting from an empty cache: every distinct (word, POS)
    # goes through the tiers once, repeats are cache hits.
    grounder = Grounder()
    grounder.ground("warm", "NOUN")  # WordNet and the tier (iii) index are built outside the timing

    def run() -> int:
        grounder.cache_clear()
        return ground_all(grounder, tokens)

    found = benchmark.pedantic(run, rounds=3, iterations=1)
    rate = len(tokens) / benchmark.stats.stats.mean
    benchmark.extra_info.update(tokens=len(tokens), found=found, lookups_per_s=round(rate))


@pytest.mark.benchmark(group="vocab-grounding")
def test_bench_tier_three_uncached(benchmark, tokens: list[tuple[str, str]]) -> None:  # type: ignore[no-untyped-def]
    # The distinct tokens for which tier (iii) really searches (tiers i-ii failed; the
    # word is open-class, has 4+ letters and WordNet does not know it), looked up with an empty cache
    # each round: the raw cost of the edit-distance tier.
    probe = Grounder()
    assert probe.wordnet is not None
    reaching = sorted(
        {
            (w, p)
            for w, p in tokens
            if probe.ground(w, p).tier in (Tier.EDIT_DISTANCE, Tier.NONE)
            and len(w) >= 4
            and p in ("NOUN", "PROPN", "VERB", "ADJ", "ADV")
            and w.isalpha()
            and not probe.wordnet.knows(w)
        }
    )
    grounder = Grounder()
    grounder.ground("chirpping", None)  # build the tier (iii) index outside the timing
    for group in ("NOUN", "VERB", "ADJ", "ADV", "ADP"):
        grounder.ground("zzzzzzzq", group)

    def run() -> int:
        grounder.cache_clear()
        return ground_all(grounder, reaching)

    found = benchmark(run)
    rate = len(reaching) / benchmark.stats.stats.mean
    benchmark.extra_info.update(lookups=len(reaching), soft_matches=found, lookups_per_s=round(rate))
    assert len(reaching) >= 10
