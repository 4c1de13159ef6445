"""The default lexicon: V_audio's canonical surface forms, parts of speech and categories.

Example:
    >>> from fortekit.verbalise.vocab_lexicon import default_lexicon
    >>> lexicon = default_lexicon()
    >>> lexicon.word("NoSuchSymbolAnywhere", 1) is None
    True
"""

from __future__ import annotations

from functools import cache
from typing import Any

from fortekit.verbalise.lexicon import Role, Word, adverb, participle, split_symbol, templates_data

_MISSING = object()
#: The most (symbol, arity) answers a :class:`VocabularyLexicon` keeps; a full table is emptied and
#: filled again. A query of unknown words adds one per word (its predicate, verbalised or clause-
#: checked), about 0.25 kB with its key: at most about 16 MB.
WORD_CACHE_ENTRIES = 1 << 16
# V_audio part of speech -> role; categories refine it (see VocabularyLexicon.word).
_ROLE_BY_POS = {"NOUN": Role.NOUN, "VERB": Role.VERB, "ADJ": Role.ADJ, "ADV": Role.ADV, "ADP": Role.PREP}


class VocabularyLexicon:
    """Words from a V_audio vocabulary (``fortekit.vocab``); unknown symbols give None."""

    def __init__(self, vocabulary: Any, wordnet: Any = None) -> None:
        self._vocabulary = vocabulary
        self._wordnet = wordnet
        self._cache: dict[tuple[str, int], Word | None] = {}

    def word(self, symbol: str, arity: int) -> Word | None:
        key = (symbol, arity)
        cached = self._cache.get(key, _MISSING)
        if cached is not _MISSING:
            return cached  # type: ignore[return-value]
        phrase = templates_data()["phrases"].get(symbol.lower()) if arity == 1 else None
        if phrase:
            found: Word | None = Word(phrase, Role.ADV)
        else:
            found = self._lookup(symbol, arity) or self._guess(symbol, arity)
        if len(self._cache) >= WORD_CACHE_ENTRIES:  # a stream of unknown symbols: start again
            self._cache.clear()
        self._cache[key] = found
        return found

    def _guess(self, symbol: str, arity: int) -> Word | None:
        """A symbol V_audio lacks: ask WordNet whether its word is only an adjective or a verb."""
        words = split_symbol(symbol)
        if arity != 1 or len(words) != 1 or self._wordnet is None:
            return None
        word = words[0]
        noun, verb, adjective = (self._wordnet.has(word, pos) for pos in ("NOUN", "VERB", "ADJ"))
        if adjective and not noun:
            return Word(word, Role.ADJ)
        if verb and not noun:
            return Word(participle(word), Role.VERB)
        return None

    def _lookup(self, symbol: str, arity: int) -> Word | None:
        if self._vocabulary is None:
            return None
        entry = self._vocabulary.get(symbol)
        if entry is None:  # a lemma-named symbol (Chirp for Chirping): find it by its words
            candidates = self._vocabulary.lookup(" ".join(split_symbol(symbol)))
            preferred = [e for e in candidates if (e.pos == "ADP") == (arity >= 2)]
            entry = (preferred or list(candidates) or [None])[0]
        if entry is None:
            return None
        category = getattr(entry.category, "value", str(entry.category))
        role = _ROLE_BY_POS.get(entry.pos, Role.NOUN)
        surface = entry.surface
        if arity >= 2 and role is not Role.PREP:
            return Word(surface if surface.endswith("ing") else participle(entry.lemma), Role.VERB)
        if role is Role.VERB and not surface.endswith("ing"):
            surface = participle(entry.lemma)
        if category == "temporal" and role is Role.NOUN:
            role = Role.TIME
        # An acoustic property becomes a manner adverb after an event ("speaking
        # quietly") when the captions use that adverb, so no "youngly" is invented.
        acoustic = (
            role is Role.ADJ
            and category in ("acoustic_property", "intensity")
            and bool(self._vocabulary.lookup(adverb(surface)))
        )
        return Word(surface, role, acoustic=acoustic)


@cache
def default_lexicon() -> VocabularyLexicon:
    """V_audio's lexicon, loaded once (an empty one when no vocabulary is installed)."""
    from fortekit.errors import FortekitError
    from fortekit.vocab import load_vocabulary, load_wordnet

    try:
        wordnet = load_wordnet()
    except FortekitError:  # no WordNet: unknown symbols are spelt from their name alone
        wordnet = None
    return VocabularyLexicon(load_vocabulary(), wordnet)
