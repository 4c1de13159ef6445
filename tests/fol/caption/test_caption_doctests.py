"""The examples in the docstrings of the caption parser run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import fortekit.fol.caption

MODULES = sorted(
    {"fortekit.fol.caption"}
    | {f"fortekit.fol.caption.{info.name}" for info in pkgutil.iter_modules(fortekit.fol.caption.__path__)}
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
