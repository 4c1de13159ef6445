"""The examples in the docstrings of the retrieval side and the plug-ins run and print what they say.

Examples that need a model or a collection are marked ``+SKIP``; the rest run here.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import fortekit.plugins
import fortekit.search


def _moved(name: str) -> bool:
    """An old path that only aliases the module's new home (W800): its examples run there."""
    spec = importlib.util.find_spec(name)
    origin = spec.origin if spec is not None else None
    return origin is not None and "alias_module(__name__" in open(origin, encoding="utf-8").read()


MODULES = sorted(
    info.name
    for package in (fortekit.search, fortekit.plugins)
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
    if not _moved(info.name)
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
