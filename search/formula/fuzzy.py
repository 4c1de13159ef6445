"""Formula scoring's pure tensor functions: calibration of clause similarities, fuzzy connectives.

:class:`~fortekit.search.formula.scoring.FormulaScorer` encodes the clauses and blends the
result with the whole-query similarity; this module holds the arithmetic in between. A
clause's similarities to the items are calibrated into degrees of truth in [0, 1]
(:func:`clause_statistics`, :func:`scoped_statistics`, :func:`calibrate`), and the degrees
of a clause tree are combined with fuzzy connectives (:func:`evaluate_tree`): ∧ by a t-norm
(:func:`tnorm`), ∨ by its dual co-norm (:func:`conorm`), ¬ by the complement ``1 - t``.
torch is imported lazily, inside the functions.

Example:
    >>> import torch
    >>> tnorm([torch.tensor([0.5, 1.0]), torch.tensor([0.5, 0.2])], "product").tolist()
    [0.25, 0.20000000298023224]
    >>> conorm([torch.tensor([0.5, 1.0]), torch.tensor([0.5, 0.2])], "min").tolist()
    [0.5, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fortekit.search.formula.clauses import Clause, ClauseAnd, ClauseNot, ClauseOr, ClauseTree
from fortekit.search.formula.config import FormulaScoringConfig

if TYPE_CHECKING:
    import torch

__all__ = [
    "calibrate",
    "calibration_sample",
    "clause_statistics",
    "conjunction_guard",
    "conorm",
    "evaluate_tree",
    "scoped_statistics",
    "tnorm",
]


def clause_statistics(
    clauses: torch.Tensor, items: torch.Tensor, config: FormulaScoringConfig,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per clause, the location and spread of its similarities over a sample of the items.

    The sample is at most ``config.calibration_sample`` evenly spaced items; the statistics
    are (mean, standard deviation), or (minimum, range) for ``calibration="minmax"``.

    Args:
        clauses: (clauses, d) unit clause vectors.
        items: (items, d) unit item vectors.
        config: the settings (``calibration``, ``calibration_sample``).

    Returns:
        ``(location, spread)``, each (clauses,); the spread is at least 1e-6.

    Example:
        >>> import torch
        >>> config = FormulaScoringConfig(calibration="minmax")
        >>> low, spread = clause_statistics(torch.tensor([[1.0, 0.0]]), torch.eye(2), config)
        >>> low.tolist(), spread.tolist()
        ([0.0], [1.0])
    """
    sims = clauses @ calibration_sample(items, config.calibration_sample).T
    if config.calibration == "minmax":
        low = sims.min(dim=1).values
        return low, (sims.max(dim=1).values - low).clamp_min(1e-6)
    return sims.mean(dim=1), sims.std(dim=1).nan_to_num(0.0).clamp_min(1e-6)


def conjunction_guard(z: torch.Tensor, similarities: torch.Tensor, threshold: float) -> torch.Tensor:
    """The guard's penalty of each item for a conjunction of asserted clauses (before its weight).

    An item is penalised by how far its weakest clause falls short of the evidence the first
    pass's best item (highest ``similarities``) shows of that clause, capped at ``threshold``:
    ``max_i relu(min(threshold, z_i(best)) - z_i)``. The best item's penalty is 0, so it is
    never demoted, and neither is any item with at least its evidence on every clause.

    Args:
        z: (clauses, items) z-scores of the clauses' similarities to the items.
        similarities: (items,) the whole-query similarities of the same items.
        threshold: the cap on the reference evidence, in z units.

    Returns:
        (items,) penalties >= 0.

    Example:
        >>> import torch
        >>> z = torch.tensor([[2.0, 2.5, 0.0], [1.0, 3.0, 3.0]])  # item 2 lacks clause 0
        >>> conjunction_guard(z, torch.tensor([0.9, 0.5, 0.6]), 1.5).tolist()
        [0.0, 0.0, 1.5]
    """
    import torch

    best = int(torch.argmax(similarities))
    reference = z[:, best].clamp(max=threshold)
    return torch.relu(reference[:, None] - z).max(dim=0).values


def calibration_sample(items: torch.Tensor, size: int) -> torch.Tensor:
    """The items that calibration statistics are taken over: at most ``size``, evenly spaced.

    Args:
        items: (items, d) item vectors.
        size: the most rows to keep.

    Returns:
        ``items`` itself when it has at most ``size`` rows, else the chosen rows (a copy).

    Example:
        >>> import torch
        >>> calibration_sample(torch.arange(10.0)[:, None], 4)[:, 0].tolist()
        [0.0, 3.0, 6.0, 9.0]
    """
    import torch

    n = items.shape[0]
    size = min(n, size)
    return items if size == n else items[torch.linspace(0, n - 1, size).long().to(items.device)]


def scoped_statistics(
    sims: torch.Tensor, query: torch.Tensor, location: torch.Tensor, spread: torch.Tensor,
    negated: Sequence[bool], config: FormulaScoringConfig,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Negated clauses calibrated over the query's own best items, not over the collection.

    Whether an item has the excluded sound is judged against the items that already
    sound like the query: a crying baby resembles "a person talking" more than rain
    does, so the collection's statistics would call every crying baby a talker. The
    scope is the query's best ``config.negated_scope`` items; asserted clauses keep
    ``location`` and ``spread``.

    Args:
        sims: (clauses, items) similarities of one query's clauses.
        query: (items,) the whole query's similarities to the same items.
        location: (clauses,) the collection's locations (:func:`clause_statistics`).
        spread: (clauses,) the collection's spreads.
        negated: per clause, whether it is negated.
        config: the settings (``negated_scope``, ``calibration``).

    Returns:
        ``(location, spread)`` with the negated clauses' entries replaced.

    Example:
        >>> import torch
        >>> sims = torch.tensor([[0.2, 0.4, 0.9], [0.1, 0.3, 0.5]])
        >>> config = FormulaScoringConfig(negated_scope=2, calibration="minmax")
        >>> where, _ = scoped_statistics(sims, torch.tensor([0.9, 0.8, 0.1]), torch.zeros(2),
        ...                              torch.ones(2), [False, True], config)
        >>> [round(v, 2) for v in where.tolist()]
        [0.0, 0.1]
    """
    import torch

    size = min(int(config.negated_scope or 0), sims.shape[1])
    if size < 2:
        return location, spread
    top = torch.topk(query, size).indices
    scoped = sims[:, top]
    flags = torch.tensor(list(negated), dtype=torch.bool, device=sims.device)
    if config.calibration == "minmax":
        low = scoped.min(dim=1).values
        high = (scoped.max(dim=1).values - low).clamp_min(1e-6)
    else:
        low, high = scoped.mean(dim=1), scoped.std(dim=1).nan_to_num(0.0).clamp_min(1e-6)
    return torch.where(flags, low, location), torch.where(flags, high, spread)


def calibrate(
    sims: torch.Tensor, location: torch.Tensor, spread: torch.Tensor, negated: Sequence[bool],
    config: FormulaScoringConfig,
) -> torch.Tensor:
    """Degrees of truth in [0, 1] from clause similarities (one row per clause).

    ``"zscore"``: ``sigmoid(slope * z - shift)`` with z standardised by ``location`` and
    ``spread`` (negated clauses may have their own slope and shift); ``"minmax"``: the
    scaled value clipped to [0, 1]; ``"none"``: the cosine clipped to [0, 1].

    Example:
        >>> import torch
        >>> calibrate(torch.tensor([[-0.5, 0.5, 1.5]]), torch.zeros(1), torch.ones(1), [False],
        ...           FormulaScoringConfig(calibration="none")).tolist()
        [[0.0, 0.5, 1.0]]
    """
    import torch

    if config.calibration == "none":
        return sims.clamp(0.0, 1.0)
    scaled = (sims - location[:, None]) / spread[:, None]
    if config.calibration == "minmax":
        return scaled.clamp(0.0, 1.0)
    slope = torch.tensor(
        [config.negated_slope if flag and config.negated_slope is not None else config.slope
         for flag in negated], dtype=scaled.dtype, device=scaled.device,
    )
    shift = torch.tensor(
        [config.negated_shift if flag and config.negated_shift is not None else config.shift
         for flag in negated], dtype=scaled.dtype, device=scaled.device,
    )
    return torch.sigmoid(slope[:, None] * scaled - shift[:, None])


def evaluate_tree(
    node: ClauseTree, truth: list[torch.Tensor], config: FormulaScoringConfig,
    cursor: list[int] | None = None,
) -> torch.Tensor:
    """The degree of truth of ``node`` per item, from its leaves' degrees in leaf order.

    Args:
        node: the clause tree.
        truth: one degree tensor per leaf, in the order of :func:`fortekit.search.formula.clauses.leaves`.
        config: the settings (``tnorm``, ``negation``, ``negation_weight``).
        cursor: the next leaf's position (walks the leaves; default from the first).

    Example:
        >>> import torch
        >>> from fortekit.fol import parse_formula
        >>> a, b = (Clause(parse_formula(text)) for text in ("∃x Dog(x)", "∃y Music(y)"))
        >>> tree = ClauseAnd((a, ClauseNot(b)))
        >>> truth = [torch.tensor([0.8, 0.8]), torch.tensor([0.5, 0.0])]
        >>> evaluate_tree(tree, truth, FormulaScoringConfig(tnorm="min")).tolist()
        [0.5, 0.800000011920929]
    """
    import torch

    cursor = [0] if cursor is None else cursor
    if isinstance(node, Clause):
        value = truth[cursor[0]]
        cursor[0] += 1
        return value
    if isinstance(node, ClauseNot):
        return 1.0 - evaluate_tree(node.body, truth, config, cursor)
    if isinstance(node, ClauseOr):
        values = [evaluate_tree(operand, truth, config, cursor) for operand in node.operands]
        return conorm(values, config.tnorm)
    assert isinstance(node, ClauseAnd)
    if config.negation == "subtract":
        asserted: list[torch.Tensor] = []
        denied: list[torch.Tensor] = []
        for operand in node.operands:
            if isinstance(operand, ClauseNot):
                denied.append(evaluate_tree(operand.body, truth, config, cursor))
            else:
                asserted.append(evaluate_tree(operand, truth, config, cursor))
        base = tnorm(asserted, config.tnorm) if asserted else torch.ones_like(denied[0])
        if denied:
            base = base - config.negation_weight * conorm(denied, config.tnorm)
        return base
    return tnorm([evaluate_tree(operand, truth, config, cursor) for operand in node.operands], config.tnorm)


def tnorm(values: list[torch.Tensor], kind: str) -> torch.Tensor:
    """The t-norm of degrees (fuzzy ∧): ``"min"`` (Gödel) or ``"product"``.

    Example:
        >>> import torch
        >>> tnorm([torch.tensor([0.5]), torch.tensor([0.4])], "min").tolist()
        [0.4000000059604645]
    """
    result = values[0]
    for value in values[1:]:
        result = result.minimum(value) if kind == "min" else result * value
    return result


def conorm(values: list[torch.Tensor], kind: str) -> torch.Tensor:
    """The co-norm dual to the t-norm ``kind`` (fuzzy ∨): max, or the probabilistic sum.

    Example:
        >>> import torch
        >>> conorm([torch.tensor([0.5]), torch.tensor([0.5])], "product").tolist()
        [0.75]
    """
    result = values[0]
    for value in values[1:]:
        result = result.maximum(value) if kind == "min" else result + value - result * value
    return result
