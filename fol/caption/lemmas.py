"""Lemmas as the annotation guideline writes them, with WordNet through fortekit.vocab.

docs/annotation.md names every predicate by its lemma: nouns in the singular,
verbs (also gerunds and prenominal participles: ``broken`` -> ``break``) in the base
form, adverbs in their adjective form (``quietly`` -> ``quiet``). spaCy's small
pipeline gets some of these wrong (``riding`` -> ``rid``, ``clothes`` -> ``clothe``);
WordNet settles them. Every WordNet answer is cached, since captions repeat words.

Example:
    >>> from fortekit.vocab import load_wordnet
    >>> lex = WordNetLemmas(load_wordnet())
    >>> lex.adjective_of_adverb("rhythmically"), lex.adjective_of_adverb("heavily")
    ('rhythmic', 'heavy')
    >>> lex.verb_base("broken"), lex.is_transitive("hold"), lex.is_transitive("talk")
    ('break', True, False)
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["EVENT_LEXNAMES", "WordNetLemmas", "camel"]

#: WordNet noun files whose -ing nouns are events (singing, ringing), not things (building).
EVENT_LEXNAMES: frozenset[str] = frozenset(
    {"noun.act", "noun.event", "noun.communication", "noun.phenomenon", "noun.process"}
)
# WordNet verb frames with an object ("Somebody ----s something", ...).
_TRANSITIVE_FRAMES = frozenset({5, 8, 9, 10, 11, 14, 15, 16, 17, 18, 19, 20, 21, 24, 25, 30, 31})
_ADVERB_SUFFIXES = (("ically", "ic"), ("ically", "ical"), ("ily", "y"), ("ly", ""), ("ly", "le"), ("ly", "e"))
_WORD = re.compile(r"[^\W_]+")
_NOT_WORD = re.compile(r"\W")


@lru_cache(maxsize=1 << 16)
def camel(lemma: str) -> str:
    """The CamelCase predicate name of a lemma; Unicode letters kept (non-English input).

    Example:
        >>> camel("high pitched"), camel("tv"), camel("in front of"), camel("straße")
        ('HighPitched', 'Tv', 'InFrontOf', 'Straße')
    """
    name = "".join(part[:1].upper() + part[1:] for part in _WORD.findall(lemma.lower()))
    # Upper-casing may add a combining mark ('ǰ' -> 'J̌'), which no name may hold.
    return name if name.isalnum() else _NOT_WORD.sub("", name)


class WordNetLemmas:
    """Cached WordNet questions the parser asks; every answer is False/None without WordNet.

    Args:
        wordnet: a :class:`fortekit.vocab.WordNet`, or None to skip every WordNet repair.
        cache_size: entries per cached question.
    """

    __slots__ = ("_adj", "_base", "_has", "_lexname", "_morphy", "_senses", "_transitive", "memo", "wordnet")

    def __init__(self, wordnet: Any | None, cache_size: int = 1 << 16) -> None:
        self.wordnet = wordnet
        self._morphy = lru_cache(maxsize=cache_size)(self._morphy_uncached)
        self._has = lru_cache(maxsize=cache_size)(self._has_uncached)
        self._lexname = lru_cache(maxsize=cache_size)(self._lexname_uncached)
        self._transitive = lru_cache(maxsize=cache_size)(self._transitive_uncached)
        self._adj = lru_cache(maxsize=cache_size)(self._adjective_uncached)
        self._senses = lru_cache(maxsize=cache_size)(self._senses_uncached)
        # asked of every -ing word by the repairs, the scope pass and Pass 1
        self._base = lru_cache(maxsize=cache_size)(self._verb_base_uncached)
        #: A scratch cache for callers' answers derived from WordNet (kept with it, so it
        #: lives exactly as long as the parser that owns this object).
        self.memo: dict[tuple[object, ...], object] = {}

    # -- raw questions, cached ------------------------------------------------------
    def _morphy_uncached(self, form: str, pos: str) -> tuple[str, ...]:
        if self.wordnet is None or not form.isascii():
            return ()
        return tuple(self.wordnet.morphy(form, pos))

    def _has_uncached(self, lemma: str, pos: str) -> bool:
        return lemma in self._morphy(lemma, pos)

    def _lexname_uncached(self, lemma: str, pos: str) -> str | None:
        if self.wordnet is None or not lemma.isascii():
            return None
        names = self.wordnet.lexnames(lemma, pos, 1)
        return str(names[0]) if names else None

    def morphy(self, form: str, pos: str) -> tuple[str, ...]:
        """WordNet base forms of ``form`` in one POS (``NOUN``, ``VERB``, ``ADJ``, ``ADV``)."""
        return self._morphy(form.lower(), pos)

    def has(self, lemma: str, pos: str) -> bool:
        """Whether ``lemma`` itself is a WordNet lemma of that POS."""
        return self._has(lemma.lower(), pos)

    def first_lexname(self, lemma: str, pos: str) -> str | None:
        """The lexicographer file of the most frequent sense (``noun.artifact``), or None."""
        return self._lexname(lemma.lower(), pos)

    # -- derived answers ------------------------------------------------------------
    def verb_base(self, form: str) -> str | None:
        """The verb a form inflects, if it differs from the form (``broken`` -> ``break``).

        Among several bases the one with the most WordNet verb senses wins
        (``riding`` -> ``ride`` rather than ``rid``, ``singing`` -> ``sing`` rather than ``singe``).
        """
        return self._base(form.lower())

    def _verb_base_uncached(self, low: str) -> str | None:
        bases = tuple(b for b in self.morphy(low, "VERB") if b != low)
        if len(bases) < 2:
            return bases[0] if bases else None
        return max(bases, key=lambda base: (self._senses(base), -bases.index(base)))

    def is_event_noun(self, form: str) -> bool:
        """Whether an -ing noun names an event (``singing``) rather than a thing (``building``)."""
        low = form.lower()
        if not self.has(low, "NOUN"):
            return True
        return self.first_lexname(low, "NOUN") in EVENT_LEXNAMES

    def _senses_uncached(self, verb: str) -> int:
        if self.wordnet is None:
            return 0
        return int(self.wordnet.sense_count(verb, "v"))  # from the files: no NLTK reader needed

    def _transitive_uncached(self, verb: str) -> bool:
        if self.wordnet is None:
            return False
        return bool(set(self.wordnet.first_sense_frames(verb)) & _TRANSITIVE_FRAMES)  # from the files

    def is_transitive(self, verb: str) -> bool:
        """Whether WordNet's most frequent sense of ``verb`` takes an object."""
        return self._transitive(verb.lower())

    def _adjective_uncached(self, adverb: str) -> str | None:
        if self.wordnet is None:
            return None
        # Prefer a form the suffix rules give (rhythmically -> rhythmic, not rhythmical).
        for suffix, replacement in _ADVERB_SUFFIXES:
            if adverb.endswith(suffix) and len(adverb) > len(suffix) + 2:
                candidate = adverb[: -len(suffix)] + replacement
                if self.has(candidate, "ADJ"):
                    return candidate
        bases = self.wordnet.pertainym_bases(adverb)
        return str(bases[0]) if bases else None

    def adjective_of_adverb(self, adverb: str) -> str | None:
        """The adjective an adverb of manner derives from (``quietly`` -> ``quiet``), or None."""
        return self._adj(adverb.lower())
