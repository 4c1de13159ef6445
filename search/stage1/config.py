"""The hyperparameters of Stage 1, with the paper's defaults and the two regimes.

Example:
    >>> config = RefineConfig.online()
    >>> (config.beam_width, config.max_depth, config.tau, config.lam, config.beta)
    (3, 2, 0.2, 1.0, 0.5)
    >>> RefineConfig.offline().replace(tau=0.1).tau
    0.1
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fortekit._checks import check_int
from fortekit.errors import Errors, RefineError
from fortekit.fol.operators import DEPTH_SCHEDULE, OPERATORS

__all__ = [
    "LIMITS", "MAX_SCORED_PER_QUERY", "QUERY_OUTPUTS", "THRESHOLD_MODES", "QueryOutput", "RefineConfig",
    "ThresholdMode",
]

ThresholdMode = Literal["auto", "absolute", "relative"]
THRESHOLD_MODES: tuple[ThresholdMode, ...] = ("auto", "absolute", "relative")
QueryOutput = Literal["residual", "verbalised"]
QUERY_OUTPUTS: tuple[QueryOutput, ...] = ("residual", "verbalised")

#: Chosen on the training part of Clotho development (clips 1-2,000) with the
#: embedded default backbone; see docs/refine.md, "The complexity weight".
DEFAULT_COMPLEXITY_WEIGHT = 0.2

#: The largest value of each setting that multiplies Stage 1's work, and why it is capped
#: (docs/refine.md, "Limits"). Without caps ``fol-refine -D 1000000`` ran for minutes before
#: its first line. The defaults are far below: (B, D) = (3, 2) online, (5, 4) offline.
LIMITS: dict[str, tuple[int, str]] = {
    "beam_width": (64, "every depth expands and scores the children of all B nodes"),
    "max_depth": (16, "every depth is one more round of expansion, encoding and scoring"),
    "n_positives": (32, "every positive elaboration is parsed and encoded for each query"),
    "n_negatives": (32, "every negative elaboration is parsed and encoded for each query"),
    "max_attributes": (256, "every o_attr candidate makes a child of each beam node"),
    "max_relations": (256, "every o_rel candidate makes a child of each beam node"),
    "max_negations": (256, "every o_neg candidate makes a child of each beam node"),
}
#: The most formulas one query may make the search score: B x D x (candidates per node).
MAX_SCORED_PER_QUERY = 4096


@dataclass(frozen=True, slots=True)
class RefineConfig:
    """Everything Stage 1 can be told; the defaults are the paper's online regime.

    Attributes:
        beam_width: B, nodes kept per depth.
        max_depth: D, the deepest refinement. 0 runs no refinement search: q* is the
            query's embedding moved by the anchors only (feedback only; docs/refine.md).
        tau: the feasibility threshold on the projection ``<f_T(G(phi)), v>``.
        threshold: "absolute" (the paper: projection >= tau), "relative" (projection
            >= phi0's own projection + relative_margin), or "auto": absolute, unless it
            prunes all or none of a query's first candidates, then relative.
        relative_margin: the margin of the relative threshold.
        lam: lambda, the weight of the similarity to the negative anchor.
        beta: the weight of the pivot projection in u.
        complexity_weight: the weight of c(phi) in F = w c - u. The paper's F (w = 1)
            lets c dominate, so phi0 always wins; see docs/refine.md.
        n_positives: N_pos, positive elaborations used (the elaborator may give more).
        n_negatives: N_neg, negative elaborations used.
        max_attributes: the most o_attr candidates per node.
        max_relations: the most o_rel candidates per node.
        max_negations: the most o_neg candidates per node.
        schedule: which operators run at which depth (the paper: attr, rel, neg, neg).
        invariant_require_all: intersect within the positives and within the negatives
            (stricter C) instead of taking their union.
        early_exit: stop when no child of a depth is feasible.
        output: how q* is formed. "verbalised" is the paper's f_T(G(phi*)); "residual"
            (the default) adds the refinement's direction to the query's own embedding,
            normalise(f_T(q) + f_T(G(phi*)) - f_T(G(phi0))), so that what the parse and
            the templates drop from the query is not lost (docs/refine.md).

    Raises:
        RefineError: a value out of range or an unknown operator or threshold mode (E400,
            E401); a value above its cap in :data:`LIMITS`, or a beam width, depth and
            candidates per node whose product exceeds :data:`MAX_SCORED_PER_QUERY` (E400).

    Example:
        >>> RefineConfig(max_depth=1_000_000)
        Traceback (most recent call last):
        ...
        fortekit.errors.RefineError: [E400] Search option max_depth must be at most 16, the cap ...
        >>> RefineConfig(beam_width=64, max_depth=16)
        Traceback (most recent call last):
        ...
        fortekit.errors.RefineError: [E400] Search option beam_width x max_depth x candidates per node ...
    """

    beam_width: int = 3
    max_depth: int = 2
    tau: float = 0.2
    threshold: ThresholdMode = "auto"
    relative_margin: float = 0.0
    lam: float = 1.0
    beta: float = 0.5
    complexity_weight: float = DEFAULT_COMPLEXITY_WEIGHT
    n_positives: int = 2
    n_negatives: int = 3
    max_attributes: int = 8
    max_relations: int = 6
    max_negations: int = 6
    schedule: Mapping[int, tuple[str, ...]] = field(default_factory=lambda: dict(DEPTH_SCHEDULE))
    invariant_require_all: bool = False
    early_exit: bool = True
    output: QueryOutput = "residual"

    def __post_init__(self) -> None:
        for name in ("beam_width", "n_positives", "n_negatives"):
            _check_int(name, getattr(self, name), minimum=1)
        _check_int("max_depth", self.max_depth, minimum=0)  # 0: the anchors' move only
        for name in ("max_attributes", "max_relations", "max_negations"):
            _check_int(name, getattr(self, name), minimum=0)
        for name, (cap, why) in LIMITS.items():
            if getattr(self, name) > cap:
                raise RefineError(Errors.E400.format(
                    name=name, value=getattr(self, name),
                    expected=f"at most {cap}, the cap ({why}; docs/refine.md, 'Limits')",
                ))
        candidates = max(1, self.max_attributes + self.max_relations + self.max_negations)
        product = self.beam_width * self.max_depth * candidates
        if product > MAX_SCORED_PER_QUERY:
            raise RefineError(Errors.E400.format(
                name=f"beam_width x max_depth x candidates per node ({self.beam_width} x {self.max_depth} "
                f"x {candidates})", value=product,
                expected=f"at most {MAX_SCORED_PER_QUERY}, the most formulas one query may make the search "
                "score (lower -B/--beam-width, -D/--depth or the candidates per node; docs/refine.md, "
                "'Limits')",
            ))
        for name in ("tau", "relative_margin", "lam", "beta", "complexity_weight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise RefineError(Errors.E400.format(name=name, value=value, expected="a finite number"))
        if self.threshold not in THRESHOLD_MODES:
            raise RefineError(Errors.E400.format(
                name="threshold", value=self.threshold, expected=" or ".join(map(repr, THRESHOLD_MODES))
            ))
        if self.output not in QUERY_OUTPUTS:
            raise RefineError(Errors.E400.format(
                name="output", value=self.output, expected=" or ".join(map(repr, QUERY_OUTPUTS))
            ))
        schedule = {int(depth): tuple(ops) for depth, ops in dict(self.schedule).items()}
        for ops in schedule.values():
            unknown = [op for op in ops if op not in OPERATORS]
            if unknown:
                raise RefineError(Errors.E401.format(name=unknown[0], options=", ".join(OPERATORS)))
        object.__setattr__(self, "schedule", schedule)

    @classmethod
    def feedback(cls, **overrides: Any) -> RefineConfig:
        """The default regime, D = 0: no refinement search, q* moved by the anchors only.

        On development data the search changes phi for under 1% of queries and the gain is
        the anchors' move (docs/refine.md, "What Stage 1's parts earn"), at a sixth of the cost.

        Example:
            >>> RefineConfig.feedback().max_depth
            0
        """
        return cls(**{"max_depth": 0, **overrides})

    @classmethod
    def online(cls, **overrides: Any) -> RefineConfig:
        """The online regime, (B, D) = (3, 2): one query at a time, low latency."""
        return cls(**{"beam_width": 3, "max_depth": 2, **overrides})

    @classmethod
    def offline(cls, **overrides: Any) -> RefineConfig:
        """The offline regime, (B, D) = (5, 4): refine a query log once, look it up later."""
        return cls(**{"beam_width": 5, "max_depth": 4, **overrides})

    def replace(self, **overrides: Any) -> RefineConfig:
        """A copy with some values changed (validated again).

        Raises:
            RefineError: an unknown name or a bad value.
        """
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise RefineError(Errors.E402.format(name=unknown[0], options=", ".join(sorted(names))))
        return dataclasses.replace(self, **overrides)

    def to_dict(self) -> dict[str, Any]:
        """The configuration as JSON-able values (for result files and reports)."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values["schedule"] = {str(depth): list(ops) for depth, ops in self.schedule.items()}
        return values


def _check_int(name: str, value: object, *, minimum: int) -> None:
    check_int(value, name=name, low=minimum, error=RefineError, message=Errors.E400)

