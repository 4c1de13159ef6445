"""The beam search's per-depth decisions: scoring nodes, the feasibility test, the beam, the result.

:class:`~fortekit.search.stage1.beam.Refiner` expands and encodes; the functions here take what
it encoded and decide. :func:`score_nodes` computes each node's objective terms with tensor
operations, :func:`passes` and :func:`decide` apply the pivot threshold ("absolute" tau or
"relative" to phi0), :func:`select_beam` keeps the B feasible children of lowest F(phi), and
:func:`build_result` turns a query's finished search into a
:class:`~fortekit.search.stage1.result.RefinementResult`.

Example:
    >>> from fortekit.search.stage1.config import RefineConfig
    >>> state = QueryState("rain", None, [], [], frozenset(), None, {}, pivot0=0.1)
    >>> passes(RefineConfig.online(), state, 0.1, "relative")
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fortekit.search.stage1.anchors import Anchors
from fortekit.search.stage1.beam_state import Node, QueryState, objective_of, pivot_of
from fortekit.search.stage1.config import RefineConfig
from fortekit.search.stage1.result import ObjectiveTerms, RefinementResult, SearchNode

if TYPE_CHECKING:
    import torch

__all__ = ["build_result", "decide", "passes", "score_nodes", "select_beam"]


def score_nodes(
    config: RefineConfig,
    nodes: list[Node],
    rows: torch.Tensor,
    scoring: tuple[torch.Tensor, ...],
    owners: list[QueryState],
) -> None:
    """Set each node's :class:`ObjectiveTerms` from its embedding row.

    Args:
        config: the search settings (lam, beta, complexity_weight).
        nodes: the nodes, one per row of ``rows``.
        rows: (nodes, d) unit embeddings of the nodes' texts.
        scoring: per query (by ``QueryState.index``): pivots, e+, e-, and the 0/1 masks of e+ and e-.
        owners: the query of each node.

    Example:
        >>> import torch
        >>> from fortekit.fol import parse_formula
        >>> state = QueryState("rain", None, [], [], frozenset(), None, {})
        >>> node = Node(0, None, 0, parse_formula("∃x Rain(x)"), (), 1.0)
        >>> pivots, anchors, masks = torch.tensor([[1.0, 0.0]]), torch.zeros(1, 2), torch.zeros(1)
        >>> score_nodes(RefineConfig.online(), [node], torch.tensor([[0.6, 0.8]]),
        ...             (pivots, anchors, anchors, masks, masks), [state])
        >>> round(node.terms.pivot, 2)
        0.6
    """
    import torch

    pivots, positive, negative, has_positive, has_negative = scoring
    index = torch.tensor([state.index for state in owners], device=rows.device)
    pivot = (rows * pivots[index]).sum(dim=-1)
    sim_pos = (rows * positive[index]).sum(dim=-1) * has_positive[index]
    sim_neg = (rows * negative[index]).sum(dim=-1) * has_negative[index]
    utility = sim_pos - config.lam * sim_neg + config.beta * pivot
    complexity = torch.tensor([node.complexity for node in nodes], dtype=rows.dtype, device=rows.device)
    objective = config.complexity_weight * complexity - utility
    values = torch.stack([objective, complexity, utility, sim_pos, sim_neg, pivot]).cpu().tolist()
    for position, node in enumerate(nodes):
        node.terms = ObjectiveTerms(*(float(column[position]) for column in values))


def passes(config: RefineConfig, state: QueryState, pivot: float, mode: str) -> bool:
    """Whether a pivot projection passes the threshold ``mode`` ("relative" or "absolute").

    Example:
        >>> state = QueryState("rain", None, [], [], frozenset(), None, {})
        >>> passes(RefineConfig.online(), state, -1.0, "absolute")
        False
    """
    if mode == "relative":
        return pivot >= state.pivot0 + config.relative_margin
    return pivot >= config.tau


def decide(config: RefineConfig, state: QueryState, mode: str) -> None:
    """Fix the query's threshold mode; phi0's feasibility follows from it.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> state = QueryState("rain", None, [], [], frozenset(), None, {})
        >>> state.nodes.append(Node(0, None, 0, parse_formula("∃x Rain(x)"), (), 1.0))
        >>> decide(RefineConfig.online(), state, "relative")
        >>> state.threshold, state.nodes[0].feasible
        ('relative', True)
    """
    state.threshold = mode
    root = state.nodes[0]
    root.feasible = passes(config, state, root.terms.pivot if root.terms else 0.0, mode)


def select_beam(
    config: RefineConfig, states: list[QueryState], frontier: list[tuple[QueryState, Node]],
) -> None:
    """Mark the scored children feasible or not and keep each query's best B as its new beam.

    A query whose children all fail the threshold stops (with ``early_exit``); otherwise its
    beam is its B feasible children of lowest F(phi) (all children when none is feasible).

    Example:
        >>> select_beam(RefineConfig.online(), [], [])  # no query has children: nothing changes
    """
    by_state: dict[int, list[Node]] = {}
    for state, child in frontier:
        by_state.setdefault(state.index, []).append(child)
    for state in states:
        children = by_state.get(state.index)
        if not children:
            continue
        if not state.threshold:
            # "auto": the absolute tau, unless it prunes all or none of the query's
            # first candidates; then it says nothing and the relative test decides.
            passing = sum(passes(config, state, pivot_of(child), "absolute") for child in children)
            decide(config, state, "absolute" if 0 < passing < len(children) else "relative")
        for child in children:
            child.feasible = passes(config, state, pivot_of(child), state.threshold)
        feasible = [child for child in children if child.feasible]
        if not feasible and config.early_exit:
            state.active = False
            continue
        ranked = sorted(feasible or children, key=lambda node: (objective_of(node), node.node_id))
        state.beam = ranked[: config.beam_width]
        for child in state.beam:
            child.kept = True


def build_result(
    config: RefineConfig,
    state: QueryState,
    anchors: Anchors,
    anchor_source: str,
    embedding: Callable[[str], torch.Tensor],
) -> RefinementResult:
    """A query's :class:`RefinementResult`: phi* is its best feasible node (phi0 when none is).

    Args:
        config: the search settings (``output``: q* as phi*'s embedding, or "residual").
        state: the query's finished search.
        anchors: the query's anchors (to say when a source gave none).
        anchor_source: the anchor source's name.
        embedding: a text's embedding, on the CPU.

    Example:
        >>> result = build_result(config, state, anchors, "none", embedding)  # doctest: +SKIP
        >>> result.phi_star == state.nodes[0].formula  # doctest: +SKIP
        True
    """
    import torch

    feasible_nodes = [node for node in state.nodes if node.feasible and node.terms is not None]
    best = min(
        feasible_nodes, key=lambda node: (objective_of(node), node.node_id), default=state.nodes[0]
    )
    feasible = best.feasible
    if config.output == "residual" and best.node_id == 0:
        q_star = embedding(state.text)  # phi0 stands: the query's own embedding, G(phi0) unread
    else:
        q_star = embedding(best.text)
    if config.output == "residual" and best.node_id != 0:
        own = embedding(state.text) - embedding(state.nodes[0].text)
        q_star = torch.nn.functional.normalize(q_star + own, dim=0)
    if anchors.weight and (anchors.positive is not None or anchors.negative is not None):
        # Rocchio with the formula as the judge: toward the items that satisfy phi0,
        # away from the ones the first pass ranked high that do not.
        shift = torch.zeros_like(q_star)
        if anchors.positive is not None:
            shift = shift + anchors.positive.detach().float().cpu()
        if anchors.negative is not None:
            shift = shift - anchors.negative.detach().float().cpu()
        q_star = torch.nn.functional.normalize(q_star + anchors.weight * shift, dim=0)
    source = anchor_source
    if anchors.positive is None and anchors.negative is None:
        source = "none" if source == "none" else f"{source} (empty)"
    tree = tuple(
        SearchNode(
            node.node_id, node.parent, node.depth, node.formula, node.text, node.edit,
            node.terms or ObjectiveTerms(0.0, node.complexity, 0.0, 0.0, 0.0, 0.0),
            node.feasible, node.kept,
        )
        for node in state.nodes
        if node.terms is not None
    )
    terms = best.terms or ObjectiveTerms(0.0, best.complexity, 0.0, 0.0, 0.0, 0.0)
    return RefinementResult(
        query=state.text,
        phi0=state.phi0.formula,
        phi_plus=tuple(p.formula for p in state.plus),
        phi_minus=tuple(p.formula for p in state.minus),
        positives=tuple(p.text for p in state.plus),
        negatives=tuple(p.text for p in state.minus),
        invariant=state.invariant,
        phi_star=best.formula,
        # nothing refined (phi* = phi0, the feedback regime's depth 0 included): the query as it is,
        # not G(phi0), the verbalised formula
        refined_text=state.text if best.node_id == 0 else best.text,
        q_star=q_star,
        terms=terms,
        depth=best.depth,
        feasible=feasible,
        threshold=state.threshold or "absolute",
        anchor_source=source,
        tree=tree,
    )
