"""The examples in the docstrings of fortekit.vocab run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "fortekit.vocab",
    "fortekit.vocab.analyse",
    "fortekit.vocab.builder",
    "fortekit.vocab.contrast",
    "fortekit.vocab.corpus",
    "fortekit.vocab.grounding",
    "fortekit.vocab.model",
    "fortekit.vocab.stats",
    "fortekit.vocab.tables",
    "fortekit.vocab.terms",
    "fortekit.vocab.vocabulary",
    "fortekit.vocab.wordnet",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
