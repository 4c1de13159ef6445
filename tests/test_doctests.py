"""The examples in the docstrings of the logic core run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import fortekit.fol

MODULES = sorted(
    {"fortekit", "fortekit.errors", "fortekit.safe_write", "fortekit._top_k", "fortekit._threads"}
    | {
        f"fortekit.fol.{info.name}"
        for info in pkgutil.iter_modules(fortekit.fol.__path__)
        if not info.ispkg
    }
    | {"fortekit.fol", "fortekit.verbalise.report"}
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
