"""The corpus elaborator: phi+, phi- and the candidate pools from human captions of similar sounds.

For a query q with parse phi0 and embedding f_T(q), the ``neighbours`` nearest captions
of a :class:`~fortekit.search.stage1.corpus.CaptionCorpus` are split by the formula, not
by rank alone:

- a neighbour **matches** when it asserts an idf-weighted share of at least ``coverage``
  of phi0's asserted predicates and asserts nothing phi0 denies;
- every other neighbour is a **near miss**: a caption of a similar sound that leaves out
  what the query asks for or contains what it excludes.

phi+ are the nearest matching captions, phi- the nearest near misses (each parsed once:
when the corpus was built, or, for an index's own corpus, the first time a query reads it,
a batch's neighbours in one spaCy call). The pools
hold only what the matching captions say about sounds like the query's (their
descriptors and their (relation, place) pairs, most used first) and what near misses
have that the query lacks (negation candidates), so every edit the search proposes is
one that human captions of similar sounds use. No adjective is stacked from a
vocabulary table.

Example:
    >>> import torch
    >>> from fortekit.fol.caption import parse_caption
    >>> texts = ["a dog barks loudly", "a dog barks in the distance", "a man talks"]
    >>> corpus = CaptionCorpus(torch.eye(3), texts, [parse_caption(t) for t in texts])
    >>> elaborator = CorpusElaborator(corpus, neighbours=3)
    >>> found = elaborator.elaborate_parsed([parse_caption("a dog barking")],
    ...     torch.tensor([[0.6, 0.5, 0.4]]), n_positives=2, n_negatives=1)[0]
    >>> [p.text for p in found.positives], [p.text for p in found.negatives]
    (['a dog barks loudly', 'a dog barks in the distance'], ['a man talks'])
    >>> found.pools.attributes
    ('Loud', 'Distance')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fortekit._checks import check_int
from fortekit.errors import Errors, RefineError
from fortekit.fol import CandidatePools
from fortekit.fol.caption.result import ParseResult, PredicateRecord
from fortekit.plugins.protocols import Elaboration
from fortekit.search.stage1.corpus import CaptionCorpus
from fortekit.search.stage1.feedback import DEFAULT_FEEDBACK, symbol_coverage, wanted_names
from fortekit.search.stage1.pools import PoolSources, relation_pairs

if TYPE_CHECKING:
    import torch

    from fortekit.plugins.protocols import Backbone

__all__ = ["CorpusElaborator", "Neighbourhood", "coverage_of", "descriptors_of", "neighbour_pools"]

#: Categories whose predicates describe a sound rather than name one: what o_attr may add
#: (a spatial one like Distance(x) from "in the distance" included).
_DESCRIPTOR_CATEGORIES = frozenset({"acoustic_property", "intensity", "temporal", "spatial"})
_EVENT_CATEGORIES = frozenset({"sound_event", "negation_target"})


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """What the corpus says about one query.

    Attributes:
        positives: phi+, the nearest matching captions' parses (best first).
        negatives: phi-, the nearest near misses' parses.
        pools: the candidates of o_attr, o_rel and o_neg.
        matching: how many of the neighbours match the query's formula.
    """

    positives: tuple[ParseResult, ...]
    negatives: tuple[ParseResult, ...]
    pools: CandidatePools
    matching: int


def _asserted(parse: ParseResult) -> list[PredicateRecord]:
    return [r for r in parse.predicates if not r.negated and not r.excluded]


def descriptors_of(parse: ParseResult) -> list[str]:
    """The descriptors a caption gives its sound sources (not its places or its nouns).

    Example:
        >>> from fortekit.fol.caption import parse_caption as p
        >>> descriptors_of(p("a loud dog barks in the distance on a busy street"))
        ['Loud', 'Distance']
    """
    asserted = _asserted(parse)
    # participants, not args: 'Pumping(e1, x)' is a sound event of x, not a relation
    sources = {
        r.participants[0] for r in asserted if len(r.participants) == 1 and r.category in _EVENT_CATEGORIES
    }
    return [
        r.symbol for r in asserted
        if len(r.participants) == 1 and r.participants[0] in sources and r.category in _DESCRIPTOR_CATEGORIES
    ]


def coverage_of(query: ParseResult, caption: ParseResult, idf: Mapping[str, float], unseen: float) -> float:
    """The idf-weighted share of the query's asserted unary predicates the caption asserts.

    0 when the caption asserts something the query denies (a dog barking *without* a man
    talking is not covered by "a dog barks as a man talks").

    Example:
        >>> from fortekit.fol.caption import parse_caption as p
        >>> coverage_of(p("a dog barking"), p("a dog barks loudly"), {}, 1.0)
        1.0
        >>> coverage_of(p("a dog barking without people talking"), p("a dog barks as people talk"), {}, 1.0)
        0.0
    """
    from fortekit.fol import predicates

    said = frozenset(r.symbol for r in _asserted(caption))
    return symbol_coverage(predicates(query.formula), said, idf, unseen)


def neighbour_pools(
    phi0: ParseResult,
    matching: Sequence[ParseResult],
    near_misses: Sequence[ParseResult],
    *,
    max_attributes: int = 8,
    max_relations: int = 6,
    max_negations: int = 6,
    sources: PoolSources | None = None,
) -> CandidatePools:
    """The pools from neighbours: what matching captions add, what near misses have that q lacks.

    Attributes are the descriptors (acoustic property, intensity, temporal; not nouns)
    that matching captions use, most used first; relations their (relation, place)
    pairs; negations the sound events near misses have that neither the query nor any
    matching caption has, then the contrasts of the query's own descriptors ("loud" ->
    "quiet").

    Example:
        >>> from fortekit.fol.caption import parse_caption as p
        >>> pools = neighbour_pools(p("rain falling"), [p("heavy rain falls on a roof")],
        ...                         [p("rain falls as thunder rumbles")])
        >>> pools.attributes, pools.relations, pools.negations
        (('Heavy',), (('On', 'Roof'),), ('Thunder', 'Rumbling'))
    """
    sources = sources or PoolSources.default()
    own = {r.symbol for r in phi0.predicates}
    descriptors = Counter(name for parse in matching for name in descriptors_of(parse) if name not in own)
    order = [name for parse in matching for name in descriptors_of(parse)]
    attributes = sorted(descriptors, key=lambda name: (-descriptors[name], order.index(name)))
    own_pairs = set(relation_pairs(phi0))
    pairs = Counter(pair for parse in matching for pair in relation_pairs(parse) if pair not in own_pairs)
    relations = sorted((pair for pair in pairs if pair[1] not in own), key=lambda pair: (-pairs[pair], pair))
    matched = {r.symbol for parse in matching for r in _asserted(parse)}
    missing = Counter(
        r.symbol for parse in near_misses for r in _asserted(parse)
        if len(r.participants) == 1 and r.category in _EVENT_CATEGORIES and r.symbol not in own | matched
    )
    miss_order = [r.symbol for parse in near_misses for r in _asserted(parse)]
    negations = sorted(missing, key=lambda name: (-missing[name], miss_order.index(name)))
    for name in descriptors_of(phi0):  # "loud" -> "not quiet"; an event's contrasts are not near misses
        for contrast in sources.contrasts.get(name, ()):
            if contrast not in own and contrast not in matched and contrast not in negations:
                negations.append(contrast)
    return CandidatePools(
        attributes=tuple(attributes[:max_attributes]),
        relations=tuple(relations[:max_relations]),
        negations=tuple(negations[:max_negations]),
    )


class CorpusElaborator:
    """Elaborations from the nearest human captions of a corpus (see the module docstring).

    Args:
        corpus: the captions, with their rows and parses.
        neighbours: how many nearest captions each query looks at.
        coverage: the idf-weighted share of the query's predicates a matching caption asserts
            (0.7, the feedback anchors' default: chosen on development data, docs/refine.md).
        backbone: f_T for :meth:`elaborate` on its own (the Refiner passes f_T(q) itself).

    Raises:
        RefineError: a bad count or share (E400), or a corpus that is not one (E410).
    """

    name = "corpus"

    def __init__(
        self,
        corpus: CaptionCorpus,
        *,
        neighbours: int = 20,
        coverage: float = DEFAULT_FEEDBACK["coverage"],
        backbone: Backbone | None = None,
    ) -> None:
        if not isinstance(corpus, CaptionCorpus):
            raise RefineError(Errors.E410.format(
                what="corpus", expected="fortekit.search.CaptionCorpus", type_name=type(corpus).__name__
            ))
        check_int(neighbours, name="neighbours", error=RefineError, message=Errors.E400)
        if isinstance(coverage, bool) or not isinstance(coverage, (int, float)) or not 0.0 < coverage <= 1.0:
            raise RefineError(Errors.E400.format(
                name="coverage", value=coverage, expected="a number in (0, 1]"
            ))
        self.corpus = corpus
        self.neighbours = neighbours
        self.coverage = float(coverage)
        self.backbone = backbone

    def __repr__(self) -> str:
        return f"CorpusElaborator({self.corpus!r}, neighbours={self.neighbours}, coverage={self.coverage})"

    @property
    def settings(self) -> dict[str, object]:
        """What the elaborations depend on besides the corpus (for result files and caches)."""
        return {"name": self.name, "neighbours": self.neighbours, "coverage": self.coverage}

    def elaborate_parsed(
        self,
        parses: Sequence[ParseResult],
        query_embeddings: torch.Tensor,
        *,
        n_positives: int = 2,
        n_negatives: int = 3,
        max_attributes: int = 8,
        max_relations: int = 6,
        max_negations: int = 6,
    ) -> list[Neighbourhood]:
        """One :class:`Neighbourhood` per query (parse and f_T(q) row, in order)."""
        from fortekit.fol import predicates

        _, top = self.corpus.neighbours(query_embeddings, self.neighbours)
        rows = top.tolist()
        # The batch's neighbours and what its queries' idf needs, parsed in one spaCy call
        # (an index's corpus parses its captions on demand; a caption corpus has them all).
        names = {name for phi0 in parses for name in wanted_names(predicates(phi0.formula))}
        self.corpus.prefetch([r for row in rows for r in row], names=names)
        sources = PoolSources.default()
        found: list[Neighbourhood] = []
        for phi0, row in zip(parses, rows, strict=True):
            matching: list[ParseResult] = []
            near_misses: list[ParseResult] = []
            for position in row:
                parse = self.corpus.parses[position]
                if parse is None or not parse.predicates:
                    continue
                share = coverage_of(phi0, parse, self.corpus.idf, self.corpus.unseen_idf)
                (matching if share >= self.coverage else near_misses).append(parse)
            pools = neighbour_pools(
                phi0, matching, near_misses, max_attributes=max_attributes,
                max_relations=max_relations, max_negations=max_negations, sources=sources,
            )
            found.append(Neighbourhood(
                tuple(matching[:n_positives]), tuple(near_misses[:n_negatives]), pools, len(matching)
            ))
        return found

    def elaborate(self, query: str) -> Elaboration:
        """The texts of phi+ and phi- for one query (the Elaborator protocol).

        Raises:
            RefineError: no backbone was given to embed the query (E413).
        """
        from fortekit.fol.caption import default_parser

        if self.backbone is None:
            raise RefineError(Errors.E413)
        embedding = self.backbone.encode_text([query])
        found = self.elaborate_parsed([default_parser().parse(query)], embedding)[0]
        positives = tuple(p.text for p in found.positives)
        return Elaboration(query, positives, tuple(p.text for p in found.negatives))
