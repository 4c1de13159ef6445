"""Lazy re-exports for package ``__init__`` modules (PEP 562), written once.

A package lists the names it re-exports and the module each lives in; the name's
module is imported on first use, so ``import fortekit`` stays light (no torch, no
spaCy). This module imports nothing heavy.

Example:
    >>> from fortekit._lazy import lazy_exports
    >>> __getattr__, __dir__ = lazy_exports("demo", {"dumps": "json"}, names=["x"])
    >>> __getattr__("dumps")([1])
    '[1]'
    >>> __dir__()
    ['dumps', 'x']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    module_name: str, mapping: Mapping[str, str], *, names: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module's ``__getattr__`` and ``__dir__`` that import re-exported names on first use.

    Args:
        module_name: the package's ``__name__``, for the AttributeError message.
        mapping: each re-exported name and the module (absolute dotted path) that defines it,
            or ``"module:attribute"`` where the module calls it by another name.
            A name must not be the name of a submodule of the package: once that submodule
            is imported, Python sets it as the package's attribute and it hides the export.
        names: the names the package defines itself (pass ``globals()``), listed by ``__dir__``.

    Returns:
        ``(__getattr__, __dir__)``, to assign at the package's top level.

    Example:
        >>> getattr_, dir_ = lazy_exports("pkg", {"sqrt": "math", "root": "math:sqrt"})
        >>> getattr_("sqrt")(9.0), getattr_("root")(4.0)
        (3.0, 2.0)
        >>> getattr_("nope")
        Traceback (most recent call last):
        ...
        AttributeError: module 'pkg' has no attribute 'nope'
    """
    table = dict(mapping)
    own = names

    def module_getattr(name: str) -> Any:
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        module, _, attribute = target.partition(":")
        return getattr(importlib.import_module(module), attribute or name)

    def module_dir() -> list[str]:
        return sorted({*own, *table})

    return module_getattr, module_dir
