"""Approximators and approximate negators name no property (grammars/arc_rules.toml, rule
"approximator"). Read through their adjective they named another one: "barely" became Bare, on
15 development captions (docs/parser.md)."""

from __future__ import annotations

import pytest
from caption_fixtures import parser


@pytest.mark.parametrize(
    ("text", "kept", "wrong"),
    [
        ("music barely audible behind the traffic", "Audible", "Bare"),
        ("water is hardly running", "Running", "Hard"),
        ("birds can scarcely be heard", "Bird", "Scarce"),
        ("a car nearly crashing into a wall", "Crashing", "Near"),
    ],
)
def test_an_approximator_names_no_property(text: str, kept: str, wrong: str) -> None:
    symbols = {r.symbol for r in parser().parse(text).predicates}
    assert kept in symbols and wrong not in symbols
