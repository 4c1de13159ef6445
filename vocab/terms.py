"""Term statistics of analysed captions: counting, phrase matching and lemma repair.

The builder counts (lemma, POS) pairs per source, then repairs what the small
spaCy pipeline gets wrong on telegraphic captions (``siren`` tagged ADJ,
``barking`` tagged NOUN with lemma ``barking``, ``gusting`` lemmatised ``guste``)
by asking WordNet which part of speech really has the word.

Example:
    >>> from fortekit.vocab.analyse import Token
    >>> doc = (Token("dogs", "dog", "NOUN", "NNS"), Token("barking", "bark", "VERB", "VBG"))
    >>> counts = count_terms({"clotho": [doc], "audiocaps": []}, phrases=["dogs barking"])
    >>> counts.freq[("bark", "VERB")], counts.phrases["dogs barking"], counts.gerund("bark")
    ((1, 0), (1, 0), 'barking')
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from fortekit.vocab.analyse import Token
from fortekit.vocab.model import pos_group
from fortekit.vocab.wordnet import WordNet

__all__ = ["SOURCES", "TermCounts", "count_terms", "gerund", "normalise_phrase", "resolve_terms"]

#: Caption sources, in the order of the frequency columns.
SOURCES: tuple[str, ...] = ("clotho", "audiocaps")
_MAX_PHRASE = 4
_WORDLIKE = re.compile(r"^[a-z][a-z'\-]*[a-z]$")
_VOWELS = "aeiou"


def normalise_phrase(text: str) -> str:
    """Lower-case, hyphens and underscores as spaces, single spaces.

    Example:
        >>> normalise_phrase(" High-pitched  Whine ")
        'high pitched whine'
    """
    return " ".join(text.lower().replace("-", " ").replace("_", " ").split())


def gerund(lemma: str) -> str:
    """The -ing form of a verb by English spelling rules (used when the captions never show it).

    Example:
        >>> [gerund(v) for v in ("hum", "sizzle", "tie", "see", "chirp", "whir", "open")]
        ['humming', 'sizzling', 'tying', 'seeing', 'chirping', 'whirring', 'opening']
    """
    if lemma.endswith("ie"):
        return lemma[:-2] + "ying"
    if lemma.endswith("e") and not lemma.endswith(("ee", "ye", "oe")) and len(lemma) > 2:
        return lemma[:-1] + "ing"
    vowel_groups = re.findall(r"[aeiou]+", lemma)
    if (
        len(lemma) >= 3
        and len(vowel_groups) == 1
        and lemma[-1] not in _VOWELS + "wxy"
        and lemma[-2] in _VOWELS
        and lemma[-3] not in _VOWELS
    ):
        return lemma + lemma[-1] + "ing"
    return lemma + "ing"


@dataclass(frozen=True, slots=True)
class TermCounts:
    """Counts of one corpus analysis.

    Attributes:
        freq: (lemma, POS) -> occurrences per source (:data:`SOURCES` order).
        forms: (lemma, POS) -> surface forms seen, with counts.
        gerunds: verb lemma -> -ing forms seen (tag VBG), with counts.
        phrases: normalised phrase -> occurrences per source, for the phrases asked for.
    """

    freq: dict[tuple[str, str], tuple[int, ...]]
    forms: dict[tuple[str, str], Counter[str]]
    gerunds: dict[str, Counter[str]]
    phrases: dict[str, tuple[int, ...]]

    def total(self, key: tuple[str, str]) -> int:
        """Occurrences of a (lemma, POS) pair over all sources."""
        return sum(self.freq.get(key, ()))

    def gerund(self, lemma: str) -> str:
        """The commonest -ing form seen for a verb, else :func:`gerund`."""
        seen = self.gerunds.get(lemma)
        if seen:
            return min(seen.items(), key=lambda item: (-item[1], item[0]))[0]
        return gerund(lemma)


def _add(table: dict[tuple[str, str], list[int]], key: tuple[str, str], index: int, amount: int = 1) -> None:
    row = table.setdefault(key, [0] * len(SOURCES))
    row[index] += amount


def count_terms(
    docs_by_source: Mapping[str, Sequence[Sequence[Token]]], phrases: Iterable[str] = ()
) -> TermCounts:
    """Count (lemma, POS) pairs, surface forms and the given phrases per source.

    PROPN counts as NOUN and SCONJ as ADP; punctuation, numbers and the like are
    skipped. A phrase matches a run of tokens whose texts or lemmas spell it
    (hyphen tokens ignored), each position once.

    Args:
        docs_by_source: analysed captions by source name (one of :data:`SOURCES`).
        phrases: multi-word names to count (normalised with :func:`normalise_phrase`).

    Returns:
        The counts.

    Example:
        >>> from fortekit.vocab.analyse import Token
        >>> doc = (Token("high", "high", "ADJ", "JJ"), Token("-", "-", "PUNCT", "HYPH"),
        ...        Token("pitched", "pitch", "VERB", "VBN"))
        >>> count_terms({"clotho": [], "audiocaps": [doc]}, ["high-pitched"]).phrases
        {'high pitched': (0, 1)}
    """
    wanted = {normalise_phrase(p) for p in phrases}
    wanted.discard("")
    longest = min(_MAX_PHRASE, max((p.count(" ") + 1 for p in wanted), default=1))
    freq: dict[tuple[str, str], list[int]] = {}
    forms: dict[tuple[str, str], Counter[str]] = {}
    gerunds: dict[str, Counter[str]] = {}
    phrase_counts: dict[str, list[int]] = {}
    for index, source in enumerate(SOURCES):
        for doc in docs_by_source.get(source, ()):
            for token in doc:
                group = pos_group(token.pos)
                if group is None or token.pos == "AUX" or not _WORDLIKE.match(token.lemma):
                    continue
                key = (token.lemma, group)
                _add(freq, key, index)
                forms.setdefault(key, Counter())[token.text] += 1
                if token.tag == "VBG" and token.text.endswith("ing"):
                    gerunds.setdefault(token.lemma, Counter())[token.text] += 1
            if longest < 2:
                continue
            words = [t for t in doc if t.text != "-"]
            for size in range(2, longest + 1):
                for start in range(len(words) - size + 1):
                    window = words[start : start + size]
                    for text in {" ".join(t.text for t in window), " ".join(t.lemma for t in window)}:
                        if text in wanted:
                            row = phrase_counts.setdefault(text, [0] * len(SOURCES))
                            row[index] += 1
                            break
    return TermCounts(
        freq={k: tuple(v) for k, v in freq.items()},
        forms=forms,
        gerunds=gerunds,
        phrases={k: tuple(v) for k, v in sorted(phrase_counts.items())},
    )


_REPAIR_ORDER = ("VERB", "NOUN", "ADJ", "ADV")


def _repair(lemma: str, pos: str, forms: Counter[str], wordnet: WordNet) -> tuple[str, str]:
    """The (lemma, POS) WordNet confirms for a counted pair; the pair itself if none does."""
    if pos not in _REPAIR_ORDER or wordnet.has(lemma, pos):
        return lemma, pos
    surfaces = [lemma, *(form for form, _ in forms.most_common(3) if form != lemma)]
    for form in surfaces:  # same POS, from the forms as written (spaCy's lemma may be wrong)
        bases = wordnet.morphy(form, pos)
        if bases:
            return bases[0], pos
    for other in _REPAIR_ORDER:
        if other == pos:
            continue
        for form in surfaces:
            if wordnet.has(form, other):
                return form, other
            bases = wordnet.morphy(form, other)
            if bases:
                return bases[0], other
    return lemma, pos


def resolve_terms(counts: TermCounts, wordnet: WordNet, keep: Iterable[tuple[str, str]] = ()) -> TermCounts:
    """Move each (lemma, POS) pair that WordNet does not know to the pair it does know.

    ``siren``/ADJ becomes ``siren``/NOUN, ``barking``/NOUN becomes ``bark``/VERB,
    ``louder``/ADV becomes ``loud``/ADJ; pairs in ``keep`` (the curated lexicon) and
    closed-class words (ADP) stay as they are. Counts of merged pairs add up.

    Args:
        counts: raw counts from :func:`count_terms`.
        wordnet: an opened WordNet.
        keep: pairs never to move.

    Returns:
        The repaired counts (phrases and gerunds unchanged).

    Example:
        >>> from fortekit.vocab.wordnet import load_wordnet
        >>> raw = TermCounts({("siren", "ADJ"): (2, 3)}, {("siren", "ADJ"): Counter(siren=5)}, {}, {})
        >>> resolve_terms(raw, load_wordnet()).freq
        {('siren', 'NOUN'): (2, 3)}
    """
    fixed = set(keep)
    freq: dict[tuple[str, str], list[int]] = {}
    forms: dict[tuple[str, str], Counter[str]] = {}
    for key in sorted(counts.freq):
        seen = counts.forms.get(key, Counter())
        target = key if key in fixed else _repair(key[0], key[1], seen, wordnet)
        for index, amount in enumerate(counts.freq[key]):
            _add(freq, target, index, amount)
        forms.setdefault(target, Counter()).update(seen)
    return TermCounts(
        freq={k: tuple(v) for k, v in freq.items()},
        forms=forms,
        gerunds=counts.gerunds,
        phrases=counts.phrases,
    )
