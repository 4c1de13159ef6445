"""Scores of docs/annotation.md: predicate alignment, relation and negation F1, exact match.

Predicate names are compared as lower-case lemma words: a V_audio symbol by its
entry's lemma (``Chirping`` -> chirp), any other name split at its capitals
(``MetalRoof`` -> metal, roof); every word is then reduced to its WordNet base form
(verb reading first, then noun, adjective), on both sides alike, so ``Muffled`` and
``Muffle`` or ``Woods`` and ``Wood`` compare equal.

* predicate alignment: micro F1 over (word, polarity) of the unary predicates, as
  multisets per caption;
* relation F1: micro F1 over binary atoms as (relation words, head of argument 1,
  head of argument 2), a head being the words of the positive unary predicates on
  that variable; a predicted and a gold triple match when the relation words are
  equal and both heads overlap (matched one to one, greedily);
* negation F1: micro F1 over the words of negated predicates (multisets);
* exact match: the set of (word, polarity) of all predicates, unary and binary,
  equals the gold set.

Event terms (:mod:`fortekit.fol.events`) are scored as what they are said of: an
event predicate ``Pumping(e1, x)`` as the unary ``Pumping(x)``, and an order between
events ``Before(e1, e2)`` as the order between their entities (``Before(x, x)``), so
a gold formula may be written either way. A relation of a term to itself other than
such an order (``With(x, x)``, the guideline's reciprocal before issue 17: "talk with
each other") is no relation under the guideline now and is left out on both sides.

Example:
    >>> from fortekit.fol import parse_formula
    >>> gold = parse_formula("Wind(x) ∧ Blow(x) ∧ ¬Rain(y)")
    >>> pred = parse_formula("∃x ∃y [Wind(x) ∧ Blowing(x) ∧ ¬Rain(y)]")
    >>> s = Scorer(vocabulary=None).score([gold], [pred])
    >>> s.unary.f1, s.negation.f1, s.exact_match
    (1.0, 1.0, 1.0)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fortekit.fol.ast import Formula, Var
from fortekit.fol.caption.lemmas import WordNetLemmas
from fortekit.fol.events import event_participants, is_event_predicate
from fortekit.fol.predicates import Polarity, atom_occurrences

__all__ = ["PRF", "CaptionScore", "Scorer", "Scores", "View", "bag_of_lemmas", "split_name"]

#: What :meth:`Scorer.view` returns: unary (word, positive) multiset, relation triples,
#: negated words, and the (word, positive) set of all predicates.
View = tuple[
    Counter[tuple[str, bool]],
    list[tuple[tuple[str, ...], frozenset[str], frozenset[str]]],
    Counter[str],
    frozenset[tuple[str, bool]],
]
# Orders between events, which a gold formula may write on their entity (Before(x, x)).
_ORDER_WORDS = frozenset({"before", "while", "after"})
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z][^\WA-Z_]*|[^\WA-Z_]+")


def split_name(name: str) -> list[str]:
    """Lower-case words of a CamelCase name.

    Example:
        >>> split_name("MetalRoof"), split_name("Tv"), split_name("OutOf"), split_name("TV")
        (['metal', 'roof'], ['tv'], ['out', 'of'], ['tv'])
    """
    return [part.lower() for part in _CAMEL.findall(name)] or [name.lower()]


@dataclass(frozen=True, slots=True)
class PRF:
    """Micro precision, recall and F1 from counts."""

    tp: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float:
        return self.tp / self.predicted if self.predicted else (1.0 if not self.gold else 0.0)

    @property
    def recall(self) -> float:
        return self.tp / self.gold if self.gold else (1.0 if not self.predicted else 0.0)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(frozen=True, slots=True)
class CaptionScore:
    """Counts for one caption: true positives, predicted and gold, per measure, and exact match."""

    unary: tuple[int, int, int]
    relation: tuple[int, int, int]
    negation: tuple[int, int, int]
    exact: bool


@dataclass(frozen=True, slots=True)
class Scores:
    """Scores over a set of captions."""

    unary: PRF
    relation: PRF
    negation: PRF
    exact_match: float
    per_caption: tuple[CaptionScore, ...]


def _sum(parts: Sequence[tuple[int, int, int]]) -> PRF:
    return PRF(sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))


class Scorer:
    """Turns formulas into lemma words and scores them against gold formulas.

    Args:
        vocabulary: V_audio, to read a symbol's lemma (default: the shipped one; None: names only).
        wordnet: a WordNet for base forms (``"auto"``: find it; None: words as they are).
    """

    def __init__(self, vocabulary: Any | None = "auto", wordnet: Any | None = "auto") -> None:
        if vocabulary == "auto":
            from fortekit.vocab import load_vocabulary

            vocabulary = load_vocabulary()
        if wordnet == "auto":
            from fortekit.vocab import load_wordnet

            wordnet = load_wordnet()
        self.vocabulary = vocabulary
        self.lex = WordNetLemmas(wordnet)
        self.words = lru_cache(maxsize=1 << 14)(self._words)

    def _base(self, word: str) -> str:
        for pos in ("VERB", "NOUN", "ADJ", "ADV"):
            bases = [b for b in self.lex.morphy(word, pos) if " " not in b and "_" not in b]
            if bases:
                return min(bases, key=len)
        return word

    def _words(self, name: str) -> tuple[str, ...]:
        entry = self.vocabulary.get(name) if self.vocabulary is not None else None
        raw = entry.lemma.split() if entry is not None else split_name(name)
        return tuple(self._base(word.lower()) for word in raw)

    def view(self, phi: Formula | None) -> View:
        """The unary multiset, relation triples, negated words and exact-match set of a formula.

        None stands for a formula with no predicate (a baseline that found no content word).
        """
        unary: Counter[tuple[str, bool]] = Counter()
        negated: Counter[str] = Counter()
        everything: set[tuple[str, bool]] = set()
        heads: dict[str, set[str]] = {}
        binary: list[tuple[tuple[str, ...], tuple[str, ...], bool]] = []
        # Event terms are scored as what they are said of (docs/annotation.md): an event
        # predicate Pumping(e1, x) as Pumping(x), an order Before(e1, e2) between their entities.
        # Two events of one entity named alike ("dropped and then dropped again") are one
        # literal once their events are replaced, as in a formula without event terms.
        events = event_participants(phi) if phi is not None else {}
        seen: set[tuple[str, tuple[str, ...], bool]] = set()
        for atom, polarity in atom_occurrences(phi) if phi is not None else ():
            args = atom.args
            if events:
                if is_event_predicate(atom):
                    args = args[1:]
                args = tuple(events.get(a.name, a) if isinstance(a, Var) else a for a in args)
                key = (atom.predicate, tuple(map(str, args)), polarity is Polarity.POSITIVE)
                if key in seen:
                    continue
                seen.add(key)
            words = self.words(atom.predicate)
            if len(args) == 2 and args[0] == args[1] and not _ORDER_WORDS.intersection(words):
                # A reciprocal or reflexive the guideline wrote R(x, x) before issue 17 ("talk
                # with each other" -> With(x, x)) is no relation now: either way scores the same.
                continue
            positive = polarity is Polarity.POSITIVE
            everything.update((w, positive) for w in words)
            if not positive:
                negated.update(words)
            if len(args) == 1:
                unary.update((w, positive) for w in words)
                arg = args[0]
                if positive and isinstance(arg, Var):
                    heads.setdefault(arg.name, set()).update(words)
            elif len(args) == 2:
                names = tuple(a.name if isinstance(a, Var) else str(a) for a in args)
                binary.append((words, names, positive))
        triples = [
            (words, frozenset(heads.get(names[0], ())), frozenset(heads.get(names[1], ())))
            for words, names, _positive in binary
        ]
        return unary, triples, negated, frozenset(everything)

    def score_one(self, gold: Formula, predicted: Formula | None) -> CaptionScore:
        """Counts for one caption."""
        g_unary, g_rel, g_neg, g_all = self.view(gold)
        p_unary, p_rel, p_neg, p_all = self.view(predicted)
        matched = 0
        free = list(g_rel)
        for rel, first, second in p_rel:
            for k, (g_words, g_first, g_second) in enumerate(free):
                if rel == g_words and first & g_first and second & g_second:
                    matched += 1
                    del free[k]
                    break
        return CaptionScore(
            unary=(sum((g_unary & p_unary).values()), sum(p_unary.values()), sum(g_unary.values())),
            relation=(matched, len(p_rel), len(g_rel)),
            negation=(sum((g_neg & p_neg).values()), sum(p_neg.values()), sum(g_neg.values())),
            exact=g_all == p_all,
        )

    def score(self, gold: Sequence[Formula], predicted: Sequence[Formula | None]) -> Scores:
        """Micro scores of ``predicted`` against ``gold`` (same length, same order).

        Raises:
            ValueError: if the two lists differ in length.
        """
        if len(gold) != len(predicted):
            raise ValueError(f"{len(gold)} gold formulas but {len(predicted)} predicted")
        parts = tuple(self.score_one(g, p) for g, p in zip(gold, predicted, strict=True))
        exact = sum(1 for p in parts if p.exact) / len(parts) if parts else 0.0
        return Scores(
            unary=_sum([p.unary for p in parts]),
            relation=_sum([p.relation for p in parts]),
            negation=_sum([p.negation for p in parts]),
            exact_match=exact,
            per_caption=parts,
        )


#: Universal POS tags of the content words the baseline keeps.
BASELINE_POS: frozenset[str] = frozenset({"NOUN", "VERB", "ADJ", "ADV"})


def bag_of_lemmas(lemmas_and_pos: Sequence[tuple[str, str]]) -> Formula | None:
    """The trivial baseline: every content word's spaCy lemma as a unary predicate.

    Args:
        lemmas_and_pos: (lemma, Universal POS) of each token.

    Returns:
        The conjunction ``L1(x) ∧ L2(x) ∧ ...`` of the NOUN/VERB/ADJ/ADV lemmas, or
        None when there is none.

    Example:
        >>> str(bag_of_lemmas([("bird", "NOUN"), ("be", "AUX"), ("chirp", "VERB")]))
        '∃x [Bird(x) ∧ Chirp(x)]'
    """
    from fortekit.fol.ast import Atom, Quant, Quantifier, conjoin
    from fortekit.fol.caption.lemmas import camel

    x = Var("x")
    atoms = [
        Atom(camel(lemma), (x,)) for lemma, pos in lemmas_and_pos if pos in BASELINE_POS and camel(lemma)
    ]
    if not atoms:
        return None
    return Quant(Quantifier.EXISTS, x, conjoin(*atoms))
