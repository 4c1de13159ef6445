"""fortekit: FOL-guided text-to-audio retrieval (the FORTE method).

The logic core (:mod:`fortekit.fol`, :mod:`fortekit.vocab`,
:mod:`fortekit.verbalise`, :mod:`fortekit.grammars`) never imports torch, so
``import fortekit`` and ``import fortekit.fol`` stay fast.

Example:
    >>> import fortekit
    >>> str(fortekit.parse_formula("exists x.(Bird(x) & -Loud(x))"))
    '∃x [Bird(x) ∧ ¬Loud(x)]'
"""

from __future__ import annotations

from typing import Any

# The single source of the version: pyproject reads it from here.
__version__ = "0.1.0"

# Re-exported lazily, so that `import fortekit` costs nothing until they are used.
_LAZY = {
    "parse_caption": "fortekit.fol.caption",
    "parse_captions": "fortekit.fol.caption",
    "verbalise": "fortekit.verbalise",
    "parse_formula": "fortekit.fol",
    "format_formula": "fortekit.fol",
    "predicates": "fortekit.fol",
    "Retriever": "fortekit.search.retriever",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fortekit' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = ["__version__", *_LAZY]
