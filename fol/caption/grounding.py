"""Pass 2: ground each candidate predicate in V_audio through fortekit.vocab.

The three tiers (exact, WordNet lemma, edit distance <= 2 within the POS) are the
vocabulary package's (:func:`fortekit.vocab.ground`); this module only adapts them
to the parser: it caches per (lemma, POS), keeps out-of-vocabulary predicates under
their own CamelCase name (the paper keeps them too), and does not bend prepositions
by edit distance (a closed class: ``with`` is not a misspelling of anything).

Example:
    >>> g = Pass2()
    >>> g.ground("chirp", "VERB").symbol, g.ground("chirp", "VERB").tier
    ('Chirping', 'exact')
    >>> g.ground("someone", "NOUN").symbol, g.ground("someone", "NOUN").tier
    ('Someone', 'none')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fortekit.fol.caption.lemmas import camel

__all__ = ["GROUNDED_CACHE_ENTRIES", "Grounded", "Pass2"]

_CLOSED_CLASS = frozenset({"ADP", "SCONJ", "CCONJ"})
#: The most (lemma, POS) groundings and multi-word answers :class:`Pass2` keeps (each table); a
#: full table is emptied and filled again. Every unseen word of a query adds one (an unknown word:
#: tier iii's edit-distance search, the answer worth keeping), about 0.3 kB with its key: at most
#: about 20 MB a table, against a caption vocabulary of a few thousand lemmas that never reaches it.
GROUNDED_CACHE_ENTRIES = 1 << 16


@dataclass(frozen=True, slots=True)
class Grounded:
    """How one predicate was grounded.

    Attributes:
        symbol: the V_audio symbol, or the CamelCase lemma when out of vocabulary.
        tier: ``exact``, ``wordnet``, ``edit_distance`` or ``none``.
        confidence: 1.0 for tiers (i)-(ii), sigma in [0.5, 1) for tier (iii), 0.0 for none.
        category: the V_audio category (``sound_event``, ...), None when out of vocabulary.
    """

    symbol: str
    tier: str
    confidence: float
    category: str | None

    @property
    def grounded(self) -> bool:
        """Whether the predicate is in V_audio."""
        return self.tier != "none"


class Pass2:
    """Grounding of candidate predicates, cached per (lemma, POS).

    Args:
        grounder: a :class:`fortekit.vocab.Grounder`; by default the process-wide one
            (the shipped vocabulary and the WordNet found on this machine). Pass
            ``False`` to ground nothing (every predicate keeps its lemma's name).
        soft: accept tier (iii) (edit distance) matches, marked soft.

    Raises:
        WordNetMissingError: if the default grounder needs WordNet and it is missing.
    """

    __slots__ = ("_multi", "cache", "grounder", "soft")

    def __init__(self, grounder: Any | None = None, *, soft: bool = True) -> None:
        if grounder is None:
            from fortekit.vocab import get_grounder

            grounder = get_grounder()
        self.grounder = grounder or None
        self.soft = soft
        #: (lemma, POS) -> its grounding, for every pair grounded so far (read it, never
        #: write it: a caller in a loop reads it without the call of :meth:`ground`)
        self.cache: dict[tuple[str, str], Grounded] = {}
        self._multi: dict[str, bool] = {}

    def ground(self, lemma: str, pos: str) -> Grounded:
        """Ground one lemma.

        Args:
            lemma: lower-case lemma words.
            pos: the candidate's POS (``NOUN``, ``VERB``, ``ADJ``, ``ADV``, ``ADP``).

        Returns:
            The grounding; out-of-vocabulary lemmas get tier ``none`` and their CamelCase name.
        """
        key = (lemma, pos)
        found = self.cache.get(key)
        if found is None:
            found = self._ground(lemma, pos)
            if len(self.cache) >= GROUNDED_CACHE_ENTRIES:  # a stream of new words: start again
                self.cache.clear()
            self.cache[key] = found
        return found

    def _ground(self, lemma: str, pos: str) -> Grounded:
        none = Grounded(camel(lemma), "none", 0.0, None)
        if self.grounder is None:
            return none
        result = self.grounder.ground(lemma, pos)
        if result.entry is None:
            return none
        tier = str(result.tier.value)
        if tier == "edit_distance" and (not self.soft or pos in _CLOSED_CLASS):
            return none
        entry = result.entry
        if pos == "ADJ" and entry.pos == "VERB" and entry.surface != lemma and self._is_adjective(lemma):
            # 'empty' is not 'Emptying': a real adjective keeps its meaning rather than a
            # verb's event ('whistle' tagged ADJ by mistake still grounds to Whistling).
            return none
        return Grounded(entry.symbol, tier, float(result.confidence), str(entry.category.value))

    def _is_adjective(self, lemma: str) -> bool:
        wordnet = getattr(self.grounder, "wordnet", None)
        return wordnet is None or bool(wordnet.has(lemma, "ADJ"))

    def is_multiword(self, phrase: str) -> bool:
        """Whether a multi-word lemma (``ice cream truck``) is itself one V_audio entry (tier i)."""
        if " " not in phrase or self.grounder is None:  # answered without a lookup: nothing to keep
            return False
        found = self._multi.get(phrase)
        if found is None:
            entries = self.grounder.vocabulary.lookup(phrase)
            found = any(" " in entry.lemma for entry in entries)
            if len(self._multi) >= GROUNDED_CACHE_ENTRIES:
                self._multi.clear()
            self._multi[phrase] = found
        return found
