"""Shared helpers of the caption parser tests: data paths and the parser, loaded once."""

from __future__ import annotations

from pathlib import Path

import pytest

from fortekit.fol.caption.parser import CaptionParser, default_parser

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
CLOTHO_DEV = SHARED_DATA / "clotho" / "clotho_captions_development.csv"
AUDIOCAPS_VAL = SHARED_DATA / "audiocaps" / "val.csv"
GOLD = REPO / "tests" / "data" / "parser_gold.jsonl"


def require(path: Path, what: str) -> Path:
    """Skip the calling test, with the reason, when a data file is missing."""
    if not path.exists():
        pytest.skip(f"{what} not available: {path} is absent")
    return path


def parser() -> CaptionParser:
    """The default parser (spaCy, WordNet and V_audio are loaded once per session)."""
    return default_parser()


def scope_parts(text: str) -> tuple[set[str], set[str], list[str]]:
    """A parse's excluded symbols, its asserted ones, and the reasons of its unsure scopes."""
    result = parser().parse(text)
    excluded = {r.symbol for r in result.predicates if r.excluded}
    asserted = {r.symbol for r in result.predicates if not r.excluded and not r.negated}
    return excluded, asserted, [n.reason for n in result.unresolved]


# Pathological captions (issue 15, item 11): spaCy's tokenizer is quadratic in the
# length of a word without whitespace made of prefixes or suffixes. name -> builder of
# a text of exactly n characters (code points).
HOSTILE_SIZES = (2_500, 10_000, 40_000)
HOSTILE = {
    "parens": lambda n: "(" * n,
    "bangs": lambda n: "!" * n,
    "a-paren": lambda n: ("a (" * (n // 3 + 1))[:n],
    "emoji": lambda n: "🐶" * n,
    "one-word": lambda n: "a" * n,
}
