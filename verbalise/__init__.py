"""The template verbaliser G(φ): first-order formulas back to English.

Example:
    >>> from fortekit.fol import parse_formula
    >>> from fortekit.verbalise import verbalise
    >>> verbalise(parse_formula("Rain(x) ∧ Falling(x) ∧ On(x, y) ∧ Metal(y) ∧ Roof(y)"))
    'rain falling on a metal roof'
"""

from __future__ import annotations

from fortekit.verbalise.lexicon import Lexicon, Role, Word
from fortekit.verbalise.realise import templates_used, verbalise
from fortekit.verbalise.vocab_lexicon import VocabularyLexicon, default_lexicon

__all__ = ["Lexicon", "Role", "VocabularyLexicon", "Word", "default_lexicon", "templates_used", "verbalise"]
