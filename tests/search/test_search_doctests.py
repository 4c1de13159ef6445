"""The examples in the docstrings of the retrieval side and the plug-ins run and print what they say.

Examples that need a model or a collection are marked ``+SKIP``; the rest run here.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import fortekit.plugins
import fortekit.search

MODULES = sorted(
    info.name
    for package in (fortekit.search, fortekit.plugins)
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
