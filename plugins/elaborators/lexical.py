"""``lexical``: the offline default elaborator, driven by V_audio and caption statistics.

It follows the rules of the paper's two prompts without an LLM:

- positives (N_pos = 2) keep the query and add up to three acoustic descriptors
  that real captions use most with the query's sound event
  (``vocab/cooccurrence.tsv``), placed before the sound source;
- negatives (N_neg = 3) keep the same source and flip exactly one acoustic
  dimension: a descriptor of the query is swapped for its contrast (loud/quiet,
  near/far, continuous/intermittent, ...), or the contrast of a likely descriptor
  is added; they never add a new sound source, and no elaboration is longer than
  20 words.

Example:
    >>> elaboration = LexicalElaborator().elaborate("a dog barking loudly")
    >>> len(elaboration.positives), len(elaboration.negatives)
    (2, 3)
    >>> all("dog" in text for text in elaboration.negatives)
    True
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fortekit.plugins._runtime import check_count, check_query
from fortekit.plugins.protocols import Elaboration

__all__ = ["LexicalElaborator"]

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


_NEGATORS = frozenset({"no", "not", "without", "never", "non", "nor"})
_EVENT_CATEGORIES = ("sound_event", "negation_target")


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    start: int
    end: int
    symbol: str | None
    category: str | None
    pos: str | None
    negated: bool  # right after "no", "not", "without": not the source, not described

    @property
    def is_event(self) -> bool:
        return self.category in _EVENT_CATEGORIES and not self.negated


def _adverb(adjective: str) -> str:
    if adjective.endswith("ic"):
        return adjective + "ally"
    if adjective.endswith("le"):
        return adjective[:-1] + "y"
    if adjective.endswith("y"):
        return adjective[:-1] + "ily"
    return adjective + "ly"


class LexicalElaborator:
    """Positives from caption co-occurrence statistics, negatives from contrast sets.

    Args:
        n_positives: N_pos (default 2).
        n_negatives: N_neg (default 3).
        descriptors_per_positive: how many descriptors a positive adds (default 3).
        max_words: the longest elaboration, in words (default 20, as the prompts say).
    """

    name = "lexical"

    def __init__(
        self,
        n_positives: int = 2,
        n_negatives: int = 3,
        descriptors_per_positive: int = 3,
        max_words: int = 20,
    ) -> None:
        self.n_positives = check_count("n_positives", n_positives)
        self.n_negatives = check_count("n_negatives", n_negatives)
        self.per_positive = check_count("descriptors_per_positive", descriptors_per_positive)
        self.max_words = check_count("max_words", max_words)
        from fortekit.vocab import get_grounder, load_vocabulary
        from fortekit.vocab.cooccurrence import load_cooccurrence

        self._grounder = get_grounder()
        self._vocabulary = load_vocabulary()
        self._table = load_cooccurrence()

    def elaborate(self, query: str) -> Elaboration:
        """Elaborate one query (see the module docstring for the rules)."""
        check_query(query)
        tokens = self._tokens(query)
        present = [t.symbol for t in tokens if self._is_descriptor(t) and t.symbol and not t.negated]
        candidates = self._likely_descriptors(tokens, present)
        return Elaboration(
            query=query,
            positives=self._positives(query, tokens, candidates),
            negatives=self._negatives(query, tokens, present, candidates),
        )

    def elaborate_many(self, queries: Sequence[str]) -> list[Elaboration]:
        """Elaborate several queries (no batching to gain: it is a table look-up)."""
        return [self.elaborate(query) for query in queries]

    # -- reading the query ------------------------------------------------------

    def _tokens(self, query: str) -> list[_Token]:
        tokens: list[_Token] = []
        for match in _WORD.finditer(query):
            result = self._grounder.ground(match.group().lower())
            entry = result.entry if not result.soft else None
            negated = bool(tokens) and (tokens[-1].text.lower() in _NEGATORS or tokens[-1].negated)
            tokens.append(
                _Token(
                    match.group(), match.start(), match.end(),
                    entry.symbol if entry else None,
                    entry.category.value if entry else None,
                    entry.pos if entry else None,
                    negated and (entry is None or entry.pos != "VERB"),
                )
            )
        return tokens

    @staticmethod
    def _is_descriptor(token: _Token) -> bool:
        return token.pos == "ADJ" and token.category in ("acoustic_property", "intensity", "temporal")

    @staticmethod
    def _source(tokens: list[_Token]) -> _Token | None:
        """The sound source: the first sound-event noun, else the first sound-event verb."""
        for pos in ("NOUN", "VERB"):
            for token in tokens:
                if token.is_event and token.pos == pos:
                    return token
        return None

    def _contrasts(self, symbol: str) -> list[Any]:
        """Adjective opposites, one-word and frequent ones first ("quiet" before "barely audible")."""
        opposites = [entry for entry in self._vocabulary.contrasts(symbol) if entry.pos == "ADJ"]
        return sorted(opposites, key=lambda e: (" " in e.surface, -e.freq, e.symbol))

    def _likely_descriptors(self, tokens: list[_Token], present: list[str]) -> list[str]:
        """Descriptors captions use with the query's events, most frequent first, none
        already said or contradicting what is said."""
        scores: Counter[str] = Counter()
        for token in tokens:
            if token.is_event and token.symbol:
                for rank, symbol in enumerate(self._table.descriptors(token.symbol, limit=12)):
                    scores[symbol] += 12 - rank
        excluded = set(present)
        for symbol in present:
            excluded.update(entry.symbol for entry in self._contrasts(symbol))
        ranked = sorted(scores, key=lambda symbol: (-scores[symbol], symbol))
        chosen: list[str] = []
        for symbol in ranked:
            if symbol in excluded or symbol not in self._vocabulary:
                continue
            chosen.append(symbol)
            # two opposites never go into the same list of positives
            excluded.update(entry.symbol for entry in self._contrasts(symbol))
        return chosen

    # -- writing elaborations ---------------------------------------------------

    def _insert_before_source(self, query: str, tokens: list[_Token], words: list[str]) -> str:
        if not words:
            return query
        source = self._source(tokens)
        if source is None:
            return f"{query.rstrip(' .')}, {' and '.join(words)}"
        # "a dog barking" -> "a loud dog barking": the words go right before the source
        phrase = " ".join(words)
        head = query[: source.start]
        if re.search(r"\ba $", head) and phrase[:1].lower() in "aeiou":
            head = head[:-2] + "an "
        elif re.search(r"\ban $", head) and phrase[:1].lower() not in "aeiou":
            head = head[:-3] + "a "
        return f"{head}{phrase} {query[source.start:]}"

    def _room(self, query: str) -> int:
        return max(0, self.max_words - len(query.split()))

    def _positives(self, query: str, tokens: list[_Token], candidates: list[str]) -> tuple[str, ...]:
        room = min(self.per_positive, self._room(query))
        surfaces = [self._vocabulary[symbol].surface for symbol in candidates]
        positives: list[str] = []
        for index in range(self.n_positives):
            group = surfaces[index * room : (index + 1) * room] if room else []
            if not group and surfaces and room:  # few candidates: vary the first ones
                group = surfaces[index % len(surfaces) : index % len(surfaces) + 1]
            text = self._insert_before_source(query, tokens, group)
            if text in positives:
                text = self._insert_before_source(query, tokens, group[:1]) if group else query
            positives.append(text)
        return tuple(positives)

    def _negatives(
        self, query: str, tokens: list[_Token], present: list[str], candidates: list[str]
    ) -> tuple[str, ...]:
        negatives: list[str] = []
        used_axes: set[str] = set()
        by_symbol = {t.symbol: t for t in tokens if t.symbol}
        # 1. swap a descriptor the query has for its contrast: one dimension each
        for symbol in present:
            contrasts = self._contrasts(symbol)
            if contrasts and symbol not in used_axes:
                token = by_symbol[symbol]
                word = contrasts[0].surface
                if token.text.lower().endswith("ly") and not word.endswith("ly"):  # loudly -> quietly
                    word = _adverb(word)
                swapped = f"{query[:token.start]}{word}{query[token.end:]}"
                negatives.append(swapped)
                used_axes.update({symbol, contrasts[0].symbol})
        # 2. add the contrast of a likely descriptor
        for symbol in candidates:
            if len(negatives) >= self.n_negatives:
                break
            contrasts = [c for c in self._contrasts(symbol) if c.symbol not in used_axes]
            if not contrasts or symbol in used_axes or not self._room(query):
                continue
            negatives.append(self._insert_before_source(query, tokens, [contrasts[0].surface]))
            used_axes.update({symbol, contrasts[0].symbol})
        while len(negatives) < self.n_negatives:  # nothing left to flip: repeat the strongest flip
            negatives.append(negatives[len(negatives) % len(negatives)] if negatives else query)
        return tuple(negatives[: self.n_negatives])
