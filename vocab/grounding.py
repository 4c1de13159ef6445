"""Pass 2 of the caption parser: ground a word against V_audio in three tiers.

(i) exact, case-insensitive, against every entry's lemma, surface form and aliases;
(ii) WordNet lemmatisation (NLTK's morphy with the POS, then with related POS, so a
mis-tagged ``louder``/ADV still reaches ``loud``; adverbs also through their adjective)
and then exact; (iii) edit distance (rapidfuzz Levenshtein) against the
keys of entries of the same POS (a symmetric-delete index finds the candidates),
returned as a *soft* match with confidence
sigma = 0.5 + 0.5 (1 - d / max(len)), which lies in [0.5, 1) and falls with the
distance d.

Where the paper is loose, fortekit is stricter, and says so:

* tier (iii) allows distance <= 2 only from 8 letters on (<= 1 for 4-7 letters, none
  below 4), since at distance 2 short words reach half the dictionary (``bark`` ->
  ``park``, ``dark``, ``bank``; ``others`` -> ``mother``);
* tier (iii) is for open-class words (NOUN, VERB, ADJ, ADV, or no POS given):
  prepositions, auxiliaries and other closed-class words are matched exactly or not
  at all (``with`` is not a misspelt ``within``);
* tier (iii) is for misspellings: a word WordNet knows as a different word
  (``pork``, ``parked``) is not bent onto a vocabulary entry (``fuzzy_known_words``);
* tiers (i)-(ii) take an entry of the asked POS, else of a related POS (a gerund
  noun ``chirping`` grounds to the verb predicate ``Chirping``; nouns and verbs cross
  only into sound events, so *parked* does not become ``Park``).

Results are cached per (word, POS); :func:`ground` never raises for a string.

Example:
    >>> from fortekit.vocab import ground
    >>> ground("Dogs", "NOUN").symbol, ground("Dogs", "NOUN").tier.value
    ('Dog', 'wordnet')
    >>> r = ground("chirpping", "VERB")
    >>> r.symbol, r.tier.value, r.soft, 0.5 <= r.confidence < 1
    ('Chirping', 'edit_distance', True, True)
    >>> ground("qwxzy", "NOUN").found
    False
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein

from fortekit.errors import Errors, VocabularyError, WordTypeError
from fortekit.vocab.model import Category, VocabEntry, pos_group
from fortekit.vocab.vocabulary import Vocabulary, load_vocabulary
from fortekit.vocab.wordnet import WordNet, load_wordnet

__all__ = ["Grounder", "GroundingResult", "Tier", "get_grounder", "ground", "soft_confidence"]

#: Words longer than this are never looked up beyond tier (i).
MAX_WORD_LENGTH = 64
_FUZZY_CHARS = re.compile(r"^[a-z][a-z '\-]*$")
_WN_GROUPS = ("NOUN", "VERB", "ADJ", "ADV")
# Related POS, tried after the asked one (a gerund noun is a verb's event, ...).
_RELATED = {
    "NOUN": ("VERB", "ADJ"),
    "VERB": ("NOUN", "ADJ"),
    "ADJ": ("ADV", "VERB", "NOUN"),
    "ADV": ("ADJ", "ADP"),
    "ADP": ("ADV",),
}


class Tier(StrEnum):
    """Which grounding tier matched."""

    EXACT = "exact"
    WORDNET = "wordnet"
    EDIT_DISTANCE = "edit_distance"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class GroundingResult:
    """The outcome of grounding one word.

    Attributes:
        word: the word as given.
        pos: the POS as given (None if none was).
        tier: the tier that matched, or :attr:`Tier.NONE`.
        entry: the vocabulary entry, or None for no match.
        confidence: 1.0 for tiers (i)-(ii), sigma in [0.5, 1) for tier (iii), 0.0 for none.
        distance: the edit distance of a tier (iii) match, else 0.
        key: the vocabulary key that matched (lemma, surface form or alias).
    """

    word: str
    pos: str | None
    tier: Tier
    entry: VocabEntry | None = None
    confidence: float = 0.0
    distance: int = 0
    key: str = ""

    @property
    def found(self) -> bool:
        """True if some entry matched."""
        return self.entry is not None

    @property
    def soft(self) -> bool:
        """True for a tier (iii) match, which the beam search weights by its confidence."""
        return self.tier is Tier.EDIT_DISTANCE

    @property
    def symbol(self) -> str | None:
        """The predicate symbol, or None."""
        return self.entry.symbol if self.entry is not None else None

    @property
    def category(self) -> Category | None:
        """The predicate's category, or None."""
        return self.entry.category if self.entry is not None else None


def soft_confidence(word: str, key: str, distance: int) -> float:
    """Tier (iii) confidence: 0.5 + 0.5 (1 - d / max(len)), in [0.5, 1) for 1 <= d <= len/2.

    Example:
        >>> soft_confidence("chirpping", "chirping", 1)
        0.9444
        >>> soft_confidence("brids", "birds", 2)
        0.8
    """
    longest = max(len(word), len(key), 1)
    sigma = 0.5 + 0.5 * (1.0 - distance / longest)
    return round(min(max(sigma, 0.5), 0.9999), 4)


def _variants(text: str, deletions: int) -> set[str]:
    """``text`` and every string made from it by deleting up to ``deletions`` (0-2) characters."""
    found = {text}
    if deletions <= 0:
        return found
    size = len(text)
    for i in range(size):
        shorter = text[:i] + text[i + 1 :]
        found.add(shorter)
        if deletions >= 2:
            # delete a second character at or after position i: each pair once
            found.update(shorter[:j] + shorter[j + 1 :] for j in range(i, size - 1))
    return found


def _allowed_distance(length: int, max_distance: int) -> int:
    if length < 4:
        return 0
    return min(max_distance, 1 if length < 8 else 2)


class Grounder:
    """Three-tier grounding against one vocabulary, cached.

    Args:
        vocabulary: V_audio (default: the shipped one).
        wordnet: an opened WordNet; ``"auto"`` (the default) finds it and raises
            :class:`~fortekit.errors.WordNetMissingError` if it is missing; None
            grounds without tier (ii).
        max_distance: the tier (iii) edit distance bound, 0-2 (0 turns tier (iii) off).
        fuzzy_known_words: let tier (iii) bend words WordNet knows (off by default).
        cache_size: how many (word, POS) results to keep.

    Example:
        >>> g = Grounder()
        >>> g.ground("loudly", "ADV").symbol, g.ground("in", "ADP").category.value
        ('Loud', 'spatial')
    """

    def __init__(
        self,
        vocabulary: Vocabulary | None = None,
        *,
        wordnet: WordNet | str | None = "auto",
        max_distance: int = 2,
        fuzzy_known_words: bool = False,
        cache_size: int = 1 << 17,
    ) -> None:
        self.vocabulary = vocabulary if vocabulary is not None else load_vocabulary()
        if wordnet == "auto":
            wordnet = load_wordnet()
        elif isinstance(wordnet, str):
            raise VocabularyError(
                Errors.E103.format(problem=f"wordnet must be 'auto', None or a WordNet, not {wordnet!r}")
            )
        self.wordnet: WordNet | None = wordnet
        self.max_distance = min(2, max(0, int(max_distance)))
        self.fuzzy_known_words = fuzzy_known_words
        self._index = self.vocabulary.key_index
        # Tier (iii) candidates: per POS group, per key length, keys ordered by frequency.
        by_pos: dict[str | None, dict[str, int]] = {}
        for key, entries in self._index.items():
            for entry in entries:
                for group in (entry.pos if entry.pos != "SCONJ" else "ADP", None):
                    best = by_pos.setdefault(group, {})
                    best[key] = max(best.get(key, 0), entry.freq)
        self._fuzzy: dict[str | None, dict[int, list[str]]] = {}
        self._rank: dict[str | None, dict[str, int]] = {}
        for group, keys in by_pos.items():
            buckets: dict[int, list[str]] = {}
            ordered = sorted(keys, key=lambda k: (-keys[k], k))
            self._rank[group] = {key: rank for rank, key in enumerate(ordered)}
            for key in ordered:
                buckets.setdefault(len(key), []).append(key)
            self._fuzzy[group] = buckets
        self._delete_index: dict[str | None, dict[str, tuple[str, ...]]] = {}
        self._cached: Callable[[str, str | None], GroundingResult] = lru_cache(maxsize=cache_size)(
            self._ground
        )

    def ground(self, word: str, pos: str | None = None) -> GroundingResult:
        """Ground one word (cached). Never raises for a ``str``.

        Args:
            word: a word or multi-word phrase, any case.
            pos: its Universal POS tag (``NOUN``, ``VERB``, ``ADJ``, ``ADV``, ``ADP``,
                ``PROPN``, ``SCONJ``, ...); None to accept any.

        Returns:
            The result, with the tier that matched; :attr:`Tier.NONE` if none did.

        Raises:
            WordTypeError: (a ``TypeError``) if ``word`` is not a str (E105).

        Example:
            >>> Grounder().ground("", "NOUN").tier.value
            'none'
        """
        if not isinstance(word, str):
            raise WordTypeError(Errors.E105.format(function="ground", type_name=type(word).__name__))
        return self._cached(word, pos if isinstance(pos, str) else None)

    __call__ = ground

    def cache_clear(self) -> None:
        """Forget cached results (for benchmarks)."""
        self._cached.cache_clear()  # type: ignore[attr-defined]

    def cache_info(self) -> Any:
        """``functools.lru_cache`` statistics of the result cache."""
        return self._cached.cache_info()  # type: ignore[attr-defined]

    # -- the tiers -------------------------------------------------------------------

    def _deletions(self, group: str | None) -> dict[str, tuple[str, ...]]:
        """Symmetric-delete index of one POS (built on first use): every string reachable
        from a key by up to ``max_distance`` deletions -> those keys, most frequent first.
        Two words within Levenshtein distance k share such a string, so looking up the
        query's own deletions finds every candidate; each is then checked exactly.
        """
        index = self._delete_index.get(group)
        if index is None:
            found: dict[str, list[str]] = {}
            for key in sorted(self._rank.get(group, {}), key=self._rank.get(group, {}).__getitem__):
                for variant in _variants(key, self.max_distance):
                    found.setdefault(variant, []).append(key)
            index = {variant: tuple(keys) for variant, keys in found.items()}
            self._delete_index[group] = index
        return index

    def _pick(self, key: str, group: str | None) -> VocabEntry | None:
        """The entry a key grounds to for a POS: same POS, else a related one, else none.

        Nouns and verbs cross only into sound events (*chirping*/NOUN -> ``Chirping``,
        not *parked* -> ``Park``); an explicit alias matches whatever its POS.
        """
        entries = self._index.get(key)
        if not entries:
            return None
        if group is None:
            return entries[0]
        for wanted in (group, *_RELATED.get(group, ())):
            for entry in entries:
                entry_pos = entry.pos if entry.pos != "SCONJ" else "ADP"
                if entry_pos != wanted:
                    continue
                crosses = wanted != group and {wanted, group} == {"NOUN", "VERB"}
                if not crosses or entry.category.is_event:
                    return entry
        for entry in entries:
            if key in entry.aliases:
                return entry
        return None

    def _ground(self, word: str, pos: str | None) -> GroundingResult:
        text = " ".join(word.lower().replace("_", " ").split())
        group = pos_group(pos)
        if not text:
            return GroundingResult(word, pos, Tier.NONE)
        for form in (text, text.replace("-", " ")):
            entry = self._pick(form, group)
            if entry is not None:
                return GroundingResult(word, pos, Tier.EXACT, entry, 1.0, 0, form)
        if len(text) > MAX_WORD_LENGTH:
            return GroundingResult(word, pos, Tier.NONE)
        known: bool | None = None  # None: not asked yet
        if self.wordnet is not None:
            found, known = self._tier_two(text, group)
            if found is not None:
                entry, key = found
                return GroundingResult(word, pos, Tier.WORDNET, entry, 1.0, 0, key)
        return self._tier_three(word, pos, text, group, known)

    def _tier_two(self, text: str, group: str | None) -> tuple[tuple[VocabEntry, str] | None, bool]:
        """The WordNet match, and whether WordNet knows the word in any POS."""
        assert self.wordnet is not None
        order = (group, *_RELATED.get(group, ())) if group else ("NOUN", "VERB", "ADJ", "ADV")
        tried = [g for g in order if g != "ADP"]
        known = False
        for wn_group in tried:
            for base in self.wordnet.morphy(text, wn_group):
                known = True
                base = base.replace("_", " ")
                entry = self._pick(base, wn_group)
                if entry is not None:
                    return (entry, base), True
        if group in (None, "ADV"):
            for base in self.wordnet.pertainym_bases(text):
                entry = self._pick(base, "ADJ")
                if entry is not None:
                    return (entry, base), True
        if not known:
            known = any(self.wordnet.morphy(text, other) for other in _WN_GROUPS if other not in tried)
        return None, known

    def _tier_three(
        self, word: str, pos: str | None, text: str, group: str | None, known: bool | None
    ) -> GroundingResult:
        limit = _allowed_distance(len(text), self.max_distance)
        none = GroundingResult(word, pos, Tier.NONE)
        closed = pos is not None and (group in (None, "ADP") or pos.upper() == "AUX")
        if limit == 0 or closed or not _FUZZY_CHARS.match(text):
            return none
        if not self.fuzzy_known_words and known:  # a real word, not a misspelling
            return none
        index = self._deletions(group)
        rank = self._rank.get(group, {})
        best: tuple[int, int, str] | None = None  # (distance, rank, key)
        seen: set[str] = set()
        # Distance 1 first (the common typo): its candidates share a string with the
        # query after at most one deletion of the query, so the cheap pass is complete.
        for deletions in range(1, limit + 1):
            for variant in _variants(text, deletions):
                for key in index.get(variant, ()):
                    if key in seen or abs(len(key) - len(text)) > limit:
                        continue
                    seen.add(key)
                    distance = Levenshtein.distance(text, key, score_cutoff=limit)
                    if 1 <= distance <= limit and (best is None or (distance, rank[key]) < best[:2]):
                        best = (distance, rank[key], key)
            if best is not None and best[0] <= deletions:
                break
        if best is None:
            return none
        distance, _rank, key = best
        entry = self._pick(key, group)
        if entry is None:  # pragma: no cover - keys come from the index
            return none
        return GroundingResult(
            word, pos, Tier.EDIT_DISTANCE, entry, soft_confidence(text, key, distance), distance, key
        )


_DEFAULT: Grounder | None = None


def get_grounder() -> Grounder:
    """The process-wide :class:`Grounder` over the shipped vocabulary and the found WordNet.

    Raises:
        WordNetMissingError: if WordNet is not installed (E100 says how to install it).

    Example:
        >>> get_grounder() is get_grounder()
        True
    """
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Grounder()
    return _DEFAULT


def ground(word: str, pos: str | None = None) -> GroundingResult:
    """Ground a word against the shipped V_audio with the default :class:`Grounder`.

    Args:
        word: a word or phrase.
        pos: its Universal POS tag, or None.

    Returns:
        The :class:`GroundingResult`; ``tier`` is :attr:`Tier.NONE` for no match.

    Example:
        >>> ground("distant", "ADJ").category.value, ground("Birds", None).symbol
        ('spatial', 'Bird')
    """
    return get_grounder().ground(word, pos)
