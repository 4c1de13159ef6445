"""fortekit: FOL-guided text-to-audio retrieval (the FORTE method).

The logic core (:mod:`fortekit.fol`, :mod:`fortekit.vocab`,
:mod:`fortekit.verbalise`, :mod:`fortekit.grammars`) never imports torch, so
``import fortekit`` and ``import fortekit.fol`` stay fast.

Example:
    >>> import fortekit
    >>> str(fortekit.parse_formula("exists x.(Bird(x) & -Loud(x))"))
    '∃x [Bird(x) ∧ ¬Loud(x)]'
    >>> fortekit.verbalise_formula(fortekit.parse_formula("Dog(x) ∧ Barking(x)"))
    'a dog barking'
"""

from __future__ import annotations

from fortekit._lazy import lazy_exports

# The single source of the version: pyproject reads it from here.
__version__ = "0.1.0"

# Re-exported lazily, so that `import fortekit` costs nothing until they are used.
# No name here may be a subpackage's name: importing fortekit.verbalise sets the
# attribute `verbalise` to the module, hence the function is `verbalise_formula`.
_LAZY = {
    "parse_caption": "fortekit.fol.caption",
    "parse_captions": "fortekit.fol.caption",
    "verbalise_formula": "fortekit.verbalise:verbalise",
    "parse_formula": "fortekit.fol",
    "format_formula": "fortekit.fol",
    "predicates": "fortekit.fol",
    "Retriever": "fortekit.search.retriever",
    "PipelineSpec": "fortekit.search.pipeline",
    "Collection": "fortekit.search.index.collection",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, names=globals())

__all__ = ["__version__", *_LAZY]
