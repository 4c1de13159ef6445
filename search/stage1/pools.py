"""What each operator may add to a query: the candidate pools of Stage 1.

- o_attr: descriptors the positive elaborations phi+ add, then the descriptors real
  captions use most with the query's sound events (``vocab/cooccurrence.tsv``);
- o_rel: relations phi+ add, then the (relation, entity) pairs captions use most
  with those events (``vocab/relations.tsv``);
- o_neg: what the negative elaborations phi- change (the contrast of a descriptor),
  the contrast sets of the query's own descriptors, then the most frequent
  negation targets of V_audio (music, speech, traffic, ...).

Nothing the query already says is offered again, nothing the negatives ask for is
offered as an attribute, and nothing the positives ask for is negated.

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> pools = candidate_pools(parse_caption("a dog barking"),
    ...     [parse_caption("a loud dog barking")], [parse_caption("a quiet dog barking")])
    >>> pools.attributes[0], pools.negations[0]
    ('Loud', 'Quiet')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from fortekit.fol import CandidatePools
from fortekit.fol.caption.result import ParseResult, PredicateRecord
from fortekit.search.stage1.relations import RelationTable, load_relations

__all__ = ["PoolSources", "candidate_pools", "confidences", "relation_pairs"]

_EVENT_CATEGORIES = frozenset({"sound_event", "negation_target"})
_NOUNS = frozenset({"NOUN", "PROPN"})
_RELATION_CATEGORIES = frozenset({"spatial", "temporal"})


@dataclass(frozen=True, slots=True)
class PoolSources:
    """The vocabulary-side statistics the pools draw on (loaded once)."""

    descriptors_by_event: dict[str, tuple[str, ...]]
    relations: RelationTable
    contrasts: dict[str, tuple[str, ...]]
    negation_targets: tuple[str, ...]

    @classmethod
    @cache
    def default(cls) -> PoolSources:
        """The shipped tables: co-occurrence, relations, V_audio's contrasts and negation targets."""
        from fortekit.vocab import Category, load_vocabulary
        from fortekit.vocab.cooccurrence import load_cooccurrence

        vocabulary = load_vocabulary()
        table = load_cooccurrence()
        descriptors = {event: table.descriptors(event, limit=12) for event in table.events}
        contrasts = {entry.symbol: tuple(entry.contrasts) for entry in vocabulary.entries if entry.contrasts}
        targets = sorted(
            vocabulary.by_category(Category.NEGATION_TARGET),
            key=lambda entry: (-(entry.freq_clotho + entry.freq_audiocaps), entry.symbol),
        )
        return cls(descriptors, load_relations(), contrasts, tuple(entry.symbol for entry in targets))


def _asserted(parse: ParseResult) -> list[PredicateRecord]:
    return [record for record in parse.predicates if not record.negated]


def _unary(parse: ParseResult) -> list[PredicateRecord]:
    """The asserted properties, an event predicate's ('Pumping(e1, x)') among them."""
    return [record for record in _asserted(parse) if len(record.participants) == 1]


def relation_pairs(parse: ParseResult) -> list[tuple[str, str]]:
    """(relation, entity) pairs of a parse: a spatial or temporal R(x, y) where y is a place
    (a spatial noun), not another sound source."""
    nouns: dict[str, list[str]] = {}
    sources: set[str] = set()
    for record in _unary(parse):
        if record.category in _EVENT_CATEGORIES:
            sources.add(record.participants[0])
        elif record.pos in _NOUNS and record.category == "spatial":
            nouns.setdefault(record.participants[0], []).append(record.symbol)
    pairs: list[tuple[str, str]] = []
    for record in _asserted(parse):
        place = record.participants[1] if len(record.participants) == 2 else None
        if place is not None and record.category in _RELATION_CATEGORIES and place not in sources:
            pairs.extend((record.symbol, noun) for noun in nouns.get(place, ()))
    return pairs


def _ranked(counts: Counter[str], order: Sequence[str]) -> list[str]:
    first = {name: index for index, name in reversed(list(enumerate(order)))}
    return sorted(counts, key=lambda name: (-counts[name], first.get(name, len(order)), name))


def _top_up(pool: list[str], extra: Iterable[str], banned: set[str], limit: int) -> list[str]:
    for name in extra:
        if len(pool) >= limit:
            break
        if name not in banned and name not in pool:
            pool.append(name)
    return pool[:limit]


def candidate_pools(
    phi0: ParseResult,
    positives: Sequence[ParseResult],
    negatives: Sequence[ParseResult],
    *,
    max_attributes: int = 8,
    max_relations: int = 6,
    max_negations: int = 6,
    sources: PoolSources | None = None,
) -> CandidatePools:
    """The candidates of o_attr, o_rel and o_neg for one query.

    Args:
        phi0: the parse of the query.
        positives: the parses of q+.
        negatives: the parses of q-.
        max_attributes: the most attribute candidates.
        max_relations: the most (relation, entity) candidates.
        max_negations: the most negation candidates.
        sources: the vocabulary statistics (default: the shipped ones).

    Returns:
        A :class:`fortekit.fol.CandidatePools`, each pool best first.
    """
    sources = sources or PoolSources.default()
    own = {record.symbol for record in phi0.predicates}
    events = [record.symbol for record in _unary(phi0) if record.category in _EVENT_CATEGORIES]

    positive_counts = Counter(r.symbol for p in positives for r in _unary(p) if r.symbol not in own)
    negative_counts = Counter(r.symbol for p in negatives for r in _unary(p) if r.symbol not in own)
    positive_order = [r.symbol for p in positives for r in _unary(p)]
    negative_order = [r.symbol for p in negatives for r in _unary(p)]

    wanted_positive = set(positive_counts)
    wanted_negative = set(negative_counts)
    attributes = [name for name in _ranked(positive_counts, positive_order) if name not in wanted_negative]
    cooccurring = Counter[str]()
    for event in events:
        for rank, name in enumerate(sources.descriptors_by_event.get(event, ())):
            cooccurring[name] += 12 - rank
    attributes = _top_up(
        attributes, _ranked(cooccurring, []), own | wanted_negative, max_attributes
    )

    own_pairs = set(relation_pairs(phi0))
    relation_counts = Counter(pair for p in positives for pair in relation_pairs(p) if pair not in own_pairs)
    relations = sorted(relation_counts, key=lambda pair: (-relation_counts[pair], pair))
    for pair in sources.relations.pairs_for(events, limit=max_relations + len(own_pairs)):
        if len(relations) >= max_relations:
            break
        if pair not in own_pairs and pair not in relations and pair[1] not in own:
            relations.append(pair)

    negations = [name for name in _ranked(negative_counts, negative_order) if name not in wanted_positive]
    own_contrasts = [c for record in _unary(phi0) for c in sources.contrasts.get(record.symbol, ())]
    negations = _top_up(negations, own_contrasts, own | wanted_positive, max_negations)
    negations = _top_up(negations, sources.negation_targets, own | wanted_positive, max_negations)
    return CandidatePools(
        attributes=tuple(attributes[:max_attributes]),
        relations=tuple(relations[:max_relations]),
        negations=tuple(negations[:max_negations]),
    )


def confidences(parses: Iterable[ParseResult]) -> dict[str, float]:
    """Grounding confidence per predicate symbol (the lowest seen), for the soft count c(phi).

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> confidences([parse_caption("a dog barking")])
        {'Dog': 1.0, 'Barking': 1.0}
    """
    found: dict[str, float] = {}
    for parse in parses:
        for record in parse.predicates:
            found[record.symbol] = min(found.get(record.symbol, 1.0), float(record.confidence))
    return found
