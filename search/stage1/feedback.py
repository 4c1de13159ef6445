"""Feedback anchors: e+ and e- from the first pass over the collection, chosen by the formula.

The paper's anchors need either the ground truth (oracle), a training collection
(bank), or trust in the first pass's rank (proxy: top-1 as e+, which is circular when
the first pass is wrong). Feedback anchors read the first pass's top ``k`` items and
split them by their captions' parses, not by rank: an item whose caption asserts an
idf-weighted share of at least ``coverage`` of phi0's asserted predicates, and nothing
phi0 denies, is positive; the others are negative. e+ is the mean of the positives,
e- of the negatives (Rocchio's relevant and non-relevant sets, with the formula as the
judge). A query whose top ``k`` holds no positive gets no e+, so the pivot steers alone.

``weight`` is how far q* itself moves along e+ - e- (Rocchio's beta = gamma); it is
carried on each :class:`~fortekit.search.stage1.anchors.Anchors` (0 for the other sources).
A query whose formula denies something ("a dog barking without people talking") gets
weight 0: its anchors steer the search but do not move q*. One caption that does not
mention a sound is weak evidence that the clip lacks it (captions leave background
sounds out), so the judged positives are least reliable exactly there, and formula
scoring already demotes the items that violate the exclusion (docs/refine.md).

Example:
    >>> import torch
    >>> from fortekit.fol import predicates
    >>> from fortekit.fol.caption import parse_caption
    >>> from fortekit.search.stage1.anchors import AnchorRequest
    >>> texts = ["a dog barks", "a cat meows", "a dog barks loudly"]
    >>> corpus = CaptionCorpus(torch.eye(3), texts, [parse_caption(t) for t in texts])
    >>> query = torch.tensor([0.2, 0.9, 0.3])
    >>> request = AnchorRequest("a dog barking", query, predicates(parse_caption("a dog barking").formula))
    >>> anchors = FeedbackAnchors(corpus, k=3).anchor_batch([request])[0]
    >>> [round(v, 3) for v in anchors.positive.tolist()], anchors.negative.tolist()
    ([0.707, 0.0, 0.707], [0.0, 1.0, 0.0])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from fortekit._checks import check_int
from fortekit.errors import Errors, RefineError
from fortekit.search.stage1.anchors import AnchorRequest, Anchors
from fortekit.search.stage1.corpus import CaptionCorpus

if TYPE_CHECKING:
    import torch

    from fortekit.fol.predicates import PredicateSymbol

__all__ = ["DEFAULT_FEEDBACK", "FeedbackAnchors", "symbol_coverage", "wanted_names"]

#: k, coverage and weight, chosen on development data (Clotho development clips 1-2,000
#: and AudioCaps val): docs/refine.md, "Feedback anchors".
DEFAULT_FEEDBACK = {"k": 10, "coverage": 0.7, "weight": 0.2}


def wanted_names(query: Iterable[PredicateSymbol]) -> set[str]:
    """The names of the query's asserted unary predicates: those whose idf a coverage reads.

    Example:
        >>> from fortekit.fol.predicates import PredicateSymbol, Polarity
        >>> sorted(wanted_names({PredicateSymbol("Dog", 1), PredicateSymbol("On", 2),
        ...                      PredicateSymbol("Talking", 1, Polarity.NEGATIVE)}))
        ['Dog']
    """
    return {s.name for s in query if not s.negated and s.arity == 1}


def symbol_coverage(
    query: frozenset[PredicateSymbol], item: frozenset[str], idf: Mapping[str, float], unseen: float
) -> float:
    """The idf-weighted share of the query's asserted unary predicates the item asserts.

    0 when the item asserts a predicate the query denies.

    Example:
        >>> from fortekit.fol.predicates import PredicateSymbol, Polarity
        >>> query = frozenset({PredicateSymbol("Dog", 1), PredicateSymbol("Barking", 1)})
        >>> symbol_coverage(query, frozenset({"Dog"}), {"Dog": 1.0, "Barking": 3.0}, 1.0)
        0.25
        >>> denied = query | {PredicateSymbol("Talking", 1, Polarity.NEGATIVE)}
        >>> symbol_coverage(denied, frozenset({"Dog", "Barking", "Talking"}), {}, 1.0)
        0.0
    """
    wanted = wanted_names(query)
    if not wanted or any(s.name in item for s in query if s.negated):
        return 0.0
    total = sum(idf.get(name, unseen) for name in wanted)
    return sum(idf.get(name, unseen) for name in wanted & item) / total


class FeedbackAnchors:
    """e+ / e-: the first pass's top ``k`` items that do / do not satisfy phi0 (see the module).

    Args:
        corpus: the collection's rows and item captions (:meth:`CaptionCorpus.from_index`).
        k: how many first-pass items are judged.
        coverage: the share of phi0's predicates a positive item's caption asserts.
        weight: how far q* moves along e+ - e- (0: the anchors only steer the search).

    Raises:
        RefineError: a bad setting (E400) or a corpus that is not one (E410).
    """

    name = "feedback"

    def __init__(
        self,
        corpus: CaptionCorpus,
        *,
        k: int = DEFAULT_FEEDBACK["k"],  # type: ignore[assignment]
        coverage: float = DEFAULT_FEEDBACK["coverage"],
        weight: float = DEFAULT_FEEDBACK["weight"],
    ) -> None:
        if not isinstance(corpus, CaptionCorpus):
            raise RefineError(Errors.E410.format(
                what="corpus", expected="fortekit.search.CaptionCorpus", type_name=type(corpus).__name__
            ))
        check_int(k, name="feedback k", error=RefineError, message=Errors.E400)
        for name, value, low in (("coverage", coverage, 0.0), ("weight", weight, -1.0)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= 1.0:
                raise RefineError(Errors.E400.format(name=f"feedback {name}", value=value,
                                                     expected=f"a number in [{low:g}, 1]"))
        self.corpus = corpus
        self.k = k
        self.coverage = float(coverage)
        self.weight = float(weight)

    def __repr__(self) -> str:
        return f"FeedbackAnchors(k={self.k}, coverage={self.coverage}, weight={self.weight})"

    @property
    def settings(self) -> dict[str, object]:
        """What the anchors depend on besides the corpus (for result files and caches)."""
        return {"k": self.k, "coverage": self.coverage, "weight": self.weight, "exclusions": "steer only"}

    def anchor_batch(self, requests: Sequence[AnchorRequest]) -> list[Anchors]:
        import torch

        if not requests:
            return []
        queries = torch.stack([request.query_embedding for request in requests])
        _, top = self.corpus.neighbours(queries, self.k)
        rows = top.tolist()
        # The batch's top items and what its queries' idf needs, parsed in one spaCy call (an
        # index's corpus parses on demand; the corpus elaborator has usually parsed them already).
        names = {name for request in requests for name in wanted_names(request.predicates)}
        read = [] if self.corpus.stores_assertions else [r for row in rows for r in row]
        self.corpus.prefetch(read, names=names)  # an index's stored sets need no parse of its items
        items = self.corpus.rows(str(queries.device))
        found: list[Anchors] = []
        for request, row in zip(requests, rows, strict=True):
            idf, unseen = self.corpus.idf, self.corpus.unseen_idf
            shares = [symbol_coverage(request.predicates, self.corpus.asserted(r), idf, unseen) for r in row]
            positive = [r for r, share in zip(row, shares, strict=True) if share >= self.coverage]
            negative = [r for r, share in zip(row, shares, strict=True) if share < self.coverage]
            denies = any(symbol.negated for symbol in request.predicates)
            found.append(Anchors(
                positive=_centre(items, positive), negative=_centre(items, negative),
                weight=0.0 if denies else self.weight,
            ))
        return found


def _centre(items: torch.Tensor, rows: list[int]) -> torch.Tensor | None:
    import torch

    if not rows:
        return None
    return torch.nn.functional.normalize(items[rows].mean(dim=0), dim=0)
