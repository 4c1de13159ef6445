"""Formula scoring's settings and per-query plan (see :mod:`fortekit.search.formula.scoring`).

Example:
    >>> FormulaScoringConfig().gamma, FormulaScoringConfig().tnorm
    (0.7, 'product')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from fortekit._checks import is_int
from fortekit.errors import Errors, EvaluationError
from fortekit.search.formula.clauses import ClauseTree

if TYPE_CHECKING:
    import torch

__all__ = [
    "CALIBRATIONS", "CONJUNCTIONS", "EVIDENCE_SCOPES", "EXCLUSIONS", "NEGATIONS", "TNORMS",
    "FormulaScoringConfig", "QueryPlan", "TextEncoder",
]

TNorm = Literal["min", "product"]
Negation = Literal["complement", "subtract"]
Calibration = Literal["zscore", "minmax", "none"]
EvidenceScope = Literal["negated", "all"]
Conjunction = Literal["guard", "blend"]
Exclusion = Literal["evidence", "resemblance"]
CONJUNCTIONS: tuple[str, ...] = ("guard", "blend")
EXCLUSIONS: tuple[str, ...] = ("evidence", "resemblance")
Uninterpreted = Literal["doubt", "assert"]
UNINTERPRETED: tuple[str, ...] = ("doubt", "assert")
TNORMS: tuple[str, ...] = ("min", "product")
NEGATIONS: tuple[str, ...] = ("complement", "subtract")
CALIBRATIONS: tuple[str, ...] = ("zscore", "minmax", "none")
EVIDENCE_SCOPES: tuple[str, ...] = ("negated", "all")
TextEncoder = Callable[[Sequence[str]], "torch.Tensor"]


@dataclass(frozen=True, slots=True)
class FormulaScoringConfig:
    """How formulas are evaluated over items (defaults chosen on development data: docs/formula_scoring.md).

    Attributes:
        gamma: weight of the logic score against the whole-query similarity, in [0, 1].
        conjunction_gamma: the weight for formulas with no negated clause (conjunctions,
            disjunctions of asserted clauses); None: ``gamma``. With ``conjunction="guard"``,
            the weight of the guard's penalty.
        conjunction: how a conjunction of asserted clauses is scored: ``"guard"`` (the
            default) only demotes an item that shows less of some clause than the first
            pass's best item does, or than ``conjunction_threshold`` (z units): ``s = sim -
            conjunction_gamma * max_i relu(min(threshold, z_i(best)) - z_i)``; the first pass's
            best item is never demoted (docs/formula_scoring.md, "Conjunctions").
            ``"blend"``: the t-norm of the clauses blended with weight
            ``conjunction_gamma``, as for exclusions. The guard
            needs ``calibration="zscore"``; with another calibration conjunctions blend.
        conjunction_threshold: the guard's threshold on a clause's z-score.
        conjunction_blend: with the guard, when the first pass's best item itself shows less
            than ``conjunction_trigger`` (z) of some clause, the first pass has failed the
            conjunction: the clauses' t-norm is then also blended in with this weight.
        conjunction_trigger: the z-score below which the best item counts as lacking a clause.
        saturation: a degree of truth at or above which the formula counts as fully
            satisfied (``logic = min(1, logic / saturation)``); None: no saturation.
        tnorm: ``"min"`` (Gödel) or ``"product"``; ∨ uses the dual co-norm (max, probabilistic sum).
        negation: ``"complement"`` (¬t = 1 - t) or ``"subtract"`` (a conjunction's negated
            operands lower it by ``negation_weight`` times their co-norm).
        negation_weight: the weight of ``"subtract"``.
        calibration: ``"zscore"``, ``"minmax"`` or ``"none"`` (see the module docstring).
        slope: the sigmoid's slope on z-scores.
        shift: the sigmoid's shift on z-scores (t = 0.5 at z = shift / slope).
        negated_slope: the slope for clauses under a negation (None: ``slope``). An
            exclusion is violated by any trace of the excluded sound, so a steeper, earlier
            sigmoid suits it better than the one that grades what is asked for.
        negated_shift: the shift for clauses under a negation (None: ``shift``).
        negated_scope: calibrate a negated clause over the query's own best ``negated_scope``
            items (by whole-query similarity) instead of over the collection; None: the collection.
        calibration_sample: the most items the calibration statistics are taken over.
        max_clauses: the most clauses per formula (None: ``grammars/clauses.toml``).
        evidence_weight: with label evidence from a tagger (:mod:`fortekit.search.formula.evidence`),
            the weight of a grounded clause's label probability against its calibrated
            similarity, in [0, 1]; 0 ignores the evidence.
        evidence_match: the least cosine between a clause's text and a label phrase for the
            clause to be grounded on that label.
        evidence_scope: which clauses the evidence judges: ``"negated"`` (exclusions) or ``"all"``.
        evidence_gamma: the weight of the logic score for a formula the evidence judges (at
            least one clause grounded); None: ``gamma`` / ``conjunction_gamma`` as without evidence.
            A tagger's probability is a sharper judge than a calibrated similarity, so the
            logic may weigh more.
        exclusion: how a negated clause judges an item (:mod:`fortekit.search.formula.exclusion`):
            ``"evidence"`` (the default) by evidence that the item holds the excluded sound (its
            caption symbols, grounded; without captions a contrastive test), never by mere
            resemblance; ``"resemblance"``: by the calibrated similarity to the clause (before
            issue 42).
        source_weight: with ``"evidence"``, the degree of a caption that names the excluded
            source doing something else or something unsaid ("a dog whimpering" for "no dogs barking").
        contrast_margin: with ``"evidence"`` and no captions, the z-score (of the clause made
            orthogonal to the asked-for clauses) from which an item is evidence of the excluded sound.
        max_clause_cosine: with ``"evidence"`` and no captions, the cosine between the excluded and
            the asked-for clause from which the backbone cannot tell them apart: the clause is unsure.
        uninterpreted: ``"doubt"`` (the default): an entity that a word the parser does not
            understand is said of leaves its clause, and a later clause about it leaves the
            formula, so it is left to the whole-query similarity; the first sound and the
            exclusions always stay (:mod:`fortekit.search.formula.uninterpreted`).
            ``"assert"``: every clause is scored as parsed (before issue 42's eighth set).
        floor: with ``"evidence"``, keep every item with no evidence of an excluded sound at or above
            its first-pass place (:func:`~fortekit.search.formula.exclusion.floor_order`).
        label_threshold: with ``"evidence"`` and a tagger's label evidence, the probability from
            which an item holds an excluded sound the tagger knows, and under which it lacks an
            asked-for sound the tagger knows: either is evidence that lets the item go below its
            first-pass place (otherwise the probability still weighs in its logic).

    Raises:
        EvaluationError: a setting out of range (E480).

    Example:
        >>> FormulaScoringConfig(gamma=0.4).tnorm
        'product'
    """

    gamma: float = 0.7
    conjunction_gamma: float | None = 0.2
    conjunction: Conjunction = "guard"
    conjunction_threshold: float = 1.5
    conjunction_blend: float = 0.2
    conjunction_trigger: float = 1.0
    saturation: float | None = None
    tnorm: TNorm = "product"
    negation: Negation = "complement"
    negation_weight: float = 1.0
    calibration: Calibration = "zscore"
    slope: float = 1.0
    shift: float = 1.0
    negated_slope: float | None = 1.0
    negated_shift: float | None = 0.0
    negated_scope: int | None = None
    calibration_sample: int = 4096
    max_clauses: int | None = None
    evidence_weight: float = 1.0
    evidence_match: float = 0.6
    evidence_scope: EvidenceScope = "all"
    evidence_gamma: float | None = 0.9
    exclusion: Exclusion = "evidence"
    uninterpreted: Uninterpreted = "doubt"
    source_weight: float = 0.5
    contrast_margin: float = 0.5
    max_clause_cosine: float = 0.9
    floor: bool = True
    label_threshold: float = 0.5

    def __post_init__(self) -> None:
        checks: list[tuple[bool, str, str, object]] = [
            (_number(self.gamma) and 0.0 <= self.gamma <= 1.0, "gamma", "a number in [0, 1]", self.gamma),
            (self.conjunction_gamma is None or (_number(self.conjunction_gamma)
                                                and 0.0 <= self.conjunction_gamma <= 1.0),
             "conjunction_gamma", "None or a number in [0, 1]", self.conjunction_gamma),
            (self.conjunction in CONJUNCTIONS, "conjunction", f"one of {', '.join(CONJUNCTIONS)}",
             self.conjunction),
            (_number(self.conjunction_threshold), "conjunction_threshold", "a finite number",
             self.conjunction_threshold),
            (_number(self.conjunction_blend) and 0.0 <= self.conjunction_blend <= 1.0, "conjunction_blend",
             "a number in [0, 1]", self.conjunction_blend),
            (_number(self.conjunction_trigger), "conjunction_trigger", "a finite number",
             self.conjunction_trigger),
            (self.saturation is None or (_number(self.saturation) and 0.0 < self.saturation <= 1.0),
             "saturation", "None or a number in (0, 1]", self.saturation),
            (self.tnorm in TNORMS, "tnorm", f"one of {', '.join(TNORMS)}", self.tnorm),
            (self.negation in NEGATIONS, "negation", f"one of {', '.join(NEGATIONS)}", self.negation),
            (_number(self.negation_weight) and self.negation_weight >= 0, "negation_weight",
             "a number >= 0", self.negation_weight),
            (self.calibration in CALIBRATIONS, "calibration", f"one of {', '.join(CALIBRATIONS)}",
             self.calibration),
            (_number(self.slope) and self.slope > 0, "slope", "a number > 0", self.slope),
            (_number(self.shift), "shift", "a finite number", self.shift),
            (self.negated_slope is None or (_number(self.negated_slope) and self.negated_slope > 0),
             "negated_slope", "None or a number > 0", self.negated_slope),
            (self.negated_shift is None or _number(self.negated_shift), "negated_shift",
             "None or a finite number", self.negated_shift),
            (self.negated_scope is None or is_int(self.negated_scope, 2),
             "negated_scope", "None or an int >= 2", self.negated_scope),
            (is_int(self.calibration_sample, 2), "calibration_sample", "an int >= 2",
             self.calibration_sample),
            (self.max_clauses is None or is_int(self.max_clauses, 1),
             "max_clauses", "None or an int >= 1", self.max_clauses),
            (_number(self.evidence_weight) and 0.0 <= self.evidence_weight <= 1.0, "evidence_weight",
             "a number in [0, 1]", self.evidence_weight),
            (_number(self.evidence_match) and -1.0 <= self.evidence_match <= 1.0, "evidence_match",
             "a number in [-1, 1]", self.evidence_match),
            (self.evidence_scope in EVIDENCE_SCOPES, "evidence_scope",
             f"one of {', '.join(EVIDENCE_SCOPES)}", self.evidence_scope),
            (self.evidence_gamma is None or (_number(self.evidence_gamma)
                                             and 0.0 <= self.evidence_gamma <= 1.0),
             "evidence_gamma", "None or a number in [0, 1]", self.evidence_gamma),
            (self.exclusion in EXCLUSIONS, "exclusion", f"one of {', '.join(EXCLUSIONS)}", self.exclusion),
            (self.uninterpreted in UNINTERPRETED, "uninterpreted", f"one of {', '.join(UNINTERPRETED)}",
             self.uninterpreted),
            (_number(self.source_weight) and 0.0 <= self.source_weight <= 1.0, "source_weight",
             "a number in [0, 1]", self.source_weight),
            (_number(self.contrast_margin), "contrast_margin", "a finite number", self.contrast_margin),
            (_number(self.max_clause_cosine) and -1.0 <= self.max_clause_cosine <= 1.0, "max_clause_cosine",
             "a number in [-1, 1]", self.max_clause_cosine),
            (isinstance(self.floor, bool), "floor", "True or False", self.floor),
            (_number(self.label_threshold) and 0.0 <= self.label_threshold <= 1.0, "label_threshold",
             "a number in [0, 1]", self.label_threshold),
        ]
        for ok, name, expected, value in checks:
            if not ok:
                raise EvaluationError(Errors.E480.format(
                    what="formula scoring", name=name, expected=expected, value=value,
                ))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every setting."""
        return asdict(self)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """What formula scoring does for one query.

    Attributes:
        tree: the clause tree, or None when the query falls back to its whole-query similarity.
        texts: the verbalised clause of each leaf, in leaf order.
        negated: per leaf, whether it lies under an odd number of negations.
        reason: why the query falls back (``"plain"``, ``"no formula"``, ``"no asserted clause"``,
            ``"an uninterpreted word"``) or ``""`` when it is scored by its formula.
        sounds: per leaf, the excluded sound a negated leaf names
            (:class:`~fortekit.fol.violation.ExcludedSound`), None for the others.
        asserted: the query's asserted sound symbols (evidence they explain is none).
        unsure: per negated leaf that does nothing, why (filled as it is scored).
        doubted: the verbalised positive clauses (as they were) that lost an entity a word the
            parser does not understand is said of (:mod:`fortekit.search.formula.uninterpreted`).
        doubted_words: those words' predicate symbols.
    """

    tree: ClauseTree | None
    texts: tuple[str, ...]
    reason: str = ""
    negated: tuple[bool, ...] = ()
    sounds: tuple[Any, ...] = ()
    asserted: tuple[str, ...] = ()
    unsure: dict[int, str] = field(default_factory=dict, compare=False)
    doubted: tuple[str, ...] = ()
    doubted_words: tuple[str, ...] = ()

    @property
    def scored(self) -> bool:
        return self.tree is not None


