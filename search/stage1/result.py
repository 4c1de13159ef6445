"""What Stage 1 returns: the refined query, the objective's terms and the explored tree.

Example:
    >>> terms = ObjectiveTerms(objective=-0.1, complexity=2.0, utility=0.14,
    ...                        sim_pos=0.0, sim_neg=0.0, pivot=0.28)
    >>> terms.to_dict()["F"]
    -0.1
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fortekit.fol import Formula, PredicateSymbol

if TYPE_CHECKING:
    import torch

__all__ = ["ObjectiveTerms", "RefinementResult", "SearchNode"]


@dataclass(frozen=True, slots=True)
class ObjectiveTerms:
    """F(phi) = w c(phi) - u(phi) and its parts.

    Attributes:
        objective: F, lower is better.
        complexity: c(phi), predicates counted by their grounding confidence.
        utility: u(phi) = sim_pos - lambda sim_neg + beta pivot (terms without an anchor are 0).
        sim_pos: cosine to the positive anchor e+ (0 without one).
        sim_neg: cosine to the negative anchor e- (0 without one).
        pivot: the projection <f_T(G(phi)), v> that feasibility tests.
    """

    objective: float
    complexity: float
    utility: float
    sim_pos: float
    sim_neg: float
    pivot: float

    def to_dict(self) -> dict[str, float]:
        return {
            "F": round(self.objective, 6),
            "complexity": round(self.complexity, 6),
            "utility": round(self.utility, 6),
            "sim_pos": round(self.sim_pos, 6),
            "sim_neg": round(self.sim_neg, 6),
            "pivot": round(self.pivot, 6),
        }


@dataclass(frozen=True, slots=True)
class SearchNode:
    """One formula the search scored.

    Attributes:
        node_id: its number in the tree (0 is phi0).
        parent: the parent's number (None for phi0).
        depth: 0 for phi0.
        formula: the formula.
        text: G(formula), what was encoded.
        edit: the operator and its arguments that made it, e.g. ("attr", "Quiet").
        terms: its objective.
        feasible: whether it passed the threshold.
        kept: whether it stayed in the beam.
    """

    node_id: int
    parent: int | None
    depth: int
    formula: Formula
    text: str
    edit: tuple[str, ...]
    terms: ObjectiveTerms
    feasible: bool
    kept: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.node_id,
            "parent": self.parent,
            "depth": self.depth,
            "formula": str(self.formula),
            "text": self.text,
            "edit": list(self.edit),
            "feasible": self.feasible,
            "kept": self.kept,
            **self.terms.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class RefinementResult:
    """Stage 1's answer for one query.

    Attributes:
        query: the query as given.
        phi0: Pi(q).
        phi_plus: Pi(q+) for each positive elaboration.
        phi_minus: Pi(q-) for each negative elaboration.
        positives: the positive elaborations q+.
        negatives: the negative elaborations q-.
        invariant: C, the predicates every refinement keeps.
        phi_star: the chosen refinement (phi0 when nothing feasible beats it).
        refined_text: the refined query: G(phi*) when phi* differs from phi0, else the query itself
            (nothing was refined; the feedback regime, depth 0, refines no formula).
        q_star: the refined query vector, a CPU float32 vector of unit norm: f_T(G(phi*))
            (output "verbalised"), or f_T(q) moved by f_T(G(phi*)) - f_T(G(phi0)) ("residual").
        terms: F(phi*) and its parts.
        depth: phi*'s depth.
        feasible: whether phi* passed the threshold (False only when nothing did).
        threshold: the threshold mode used for this query ("absolute" or "relative"; "none"
            at depth 0, where no candidate is tested).
        anchor_source: where e+ and e- came from ("none", "proxy", "bank", "oracle").
        tree: every node scored, in order (for explanations).
    """

    query: str
    phi0: Formula
    phi_plus: tuple[Formula, ...]
    phi_minus: tuple[Formula, ...]
    positives: tuple[str, ...]
    negatives: tuple[str, ...]
    invariant: frozenset[PredicateSymbol]
    phi_star: Formula
    refined_text: str
    q_star: torch.Tensor
    terms: ObjectiveTerms
    depth: int
    feasible: bool
    threshold: str
    anchor_source: str
    tree: tuple[SearchNode, ...] = field(default=())

    @property
    def edits(self) -> list[tuple[str, ...]]:
        """The operator edits from phi0 to phi*, in order."""
        by_id = {node.node_id: node for node in self.tree}
        chosen = next((n for n in self.tree if n.formula == self.phi_star and n.kept), None)
        chain: list[tuple[str, ...]] = []
        while chosen is not None and chosen.parent is not None:
            chain.append(chosen.edit)
            chosen = by_id.get(chosen.parent)
        return chain[::-1]

    def to_dict(self, *, include_tree: bool = False, include_embedding: bool = False) -> dict[str, Any]:
        """The result as JSON-able values (what ``fol-refine`` writes per query).

        Example:
            >>> from fortekit.search import Refiner  # doctest: +SKIP
            >>> Refiner().refine("rain on a roof").to_dict()["refined_text"]  # doctest: +SKIP
            'rain on a roof, steady'
        """
        data: dict[str, Any] = {
            "query": self.query,
            "phi0": str(self.phi0),
            "phi_plus": [str(phi) for phi in self.phi_plus],
            "phi_minus": [str(phi) for phi in self.phi_minus],
            "positives": list(self.positives),
            "negatives": list(self.negatives),
            "invariant": sorted(str(symbol) for symbol in self.invariant),
            "phi_star": str(self.phi_star),
            "refined_text": self.refined_text,
            "objective": self.terms.to_dict(),
            "depth": self.depth,
            "feasible": self.feasible,
            "threshold": self.threshold,
            "anchors": self.anchor_source,
            "edits": [list(edit) for edit in self.edits],
        }
        if include_tree:
            data["tree"] = [node.to_dict() for node in self.tree]
        if include_embedding:
            data["q_star"] = [round(float(x), 7) for x in self.q_star.tolist()]
        return data

    def explain(self, *, width: int = 100) -> str:
        """The search tree as text for a terminal (see :func:`fortekit.search.stage1.explain.render_tree`)."""
        from fortekit.search.stage1.explain import render_tree

        return render_tree(self, width=width)
