"""The beam search's bookkeeping: per-query state, search nodes, stage times, scoring helpers.

:class:`~fortekit.search.stage1.beam.Refiner` runs the search; this module holds what it keeps
per query (:class:`QueryState`: phi0, phi+, phi-, the invariant set, the pools, the
nodes) and per node (:class:`Node`), and the small pure functions that read them.

Example:
    >>> times = StageTimes(parse=0.5)
    >>> times.reset(); times.parse
    0.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, RefineError
from fortekit.fol import Formula, PredicateSymbol, predicates
from fortekit.fol.caption import ParseResult
from fortekit.search.stage1.anchors import Anchors
from fortekit.search.stage1.result import ObjectiveTerms

if TYPE_CHECKING:
    import torch

__all__ = [
    "Node", "QueryState", "StageTimes", "anchor_tensors", "formula_complexity", "objective_of", "pivot_of",
]


@dataclass(slots=True)
class StageTimes:
    """Seconds spent per part of Stage 1 (the encoder's own time is in ``encoder.stats``)."""

    elaborate: float = 0.0
    parse: float = 0.0
    expand: float = 0.0
    verbalise: float = 0.0
    encode: float = 0.0
    score: float = 0.0
    total: float = 0.0

    def reset(self) -> None:
        for name in ("elaborate", "parse", "expand", "verbalise", "encode", "score", "total"):
            setattr(self, name, 0.0)


@dataclass(slots=True)
class Node:
    """One formula of the search tree, with where it came from and how it scored.

    ``edit`` is the operator and its arguments that made it from its parent (empty for
    phi0); ``terms`` is set once the node is scored; ``kept`` once it entered a beam.
    """

    node_id: int
    parent: int | None
    depth: int
    formula: Formula
    edit: tuple[str, ...]
    complexity: float
    text: str = ""
    terms: ObjectiveTerms | None = None
    feasible: bool = False
    kept: bool = False


@dataclass(slots=True)
class QueryState:
    """The search state of one query."""

    text: str
    phi0: ParseResult
    plus: list[ParseResult]
    minus: list[ParseResult]
    invariant: frozenset[PredicateSymbol]
    pools: Any
    confidence: dict[str, float]
    nodes: list[Node] = field(default_factory=list)
    known: set[Formula] = field(default_factory=set)  # the formulas of ``nodes``
    beam: list[Node] = field(default_factory=list)
    threshold: str = ""
    pivot0: float = 0.0
    active: bool = True
    index: int = 0


def formula_complexity(phi: Formula, confidence: dict[str, float]) -> float:
    """c(phi): each predicate symbol counts its grounding confidence (1 when exact).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> formula_complexity(parse_formula("∃x (Dog(x) ∧ Barking(x) ∧ Loud(x))"), {"Loud": 0.5})
        2.5
    """
    return float(sum(confidence.get(symbol.name, 1.0) for symbol in predicates(phi)))


def pivot_of(node: Node) -> float:
    """The node's projection on the pivot v (0 before it is scored)."""
    return node.terms.pivot if node.terms is not None else 0.0


def objective_of(node: Node) -> float:
    """The node's F(phi), lower is better (infinite before it is scored)."""
    return node.terms.objective if node.terms is not None else float("inf")


def anchor_tensors(
    anchors: Sequence[Anchors], like: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Stack e+ and e- (zeros where absent) and the 0/1 masks that switch their terms off.

    Raises:
        RefineError: an anchor's width is not the embeddings' (E407).
    """
    import torch

    count, dim = len(anchors), like.shape[1]
    positive = torch.zeros((count, dim), dtype=like.dtype, device=like.device)
    negative = torch.zeros_like(positive)
    has_positive = torch.zeros(count, dtype=like.dtype, device=like.device)
    has_negative = torch.zeros_like(has_positive)
    for i, anchor in enumerate(anchors):
        pairs = ((anchor.positive, positive, has_positive), (anchor.negative, negative, has_negative))
        for vector, target, mask in pairs:
            if vector is None:
                continue
            if vector.shape[-1] != dim:
                raise RefineError(Errors.E407.format(what="An anchor", got=vector.shape[-1], expected=dim))
            target[i] = torch.nn.functional.normalize(vector.to(like.device, like.dtype), dim=-1)
            mask[i] = 1.0
    return positive, negative, has_positive, has_negative
