"""Formula scoring: a query's formula judged clause by clause over the items' scores.

- :mod:`~fortekit.search.formula.scoring`: :class:`FormulaScorer`, which encodes the
  clauses and re-scores each query's candidates;
- :mod:`~fortekit.search.formula.config`: its settings and per-query plan;
- :mod:`~fortekit.search.formula.clauses`: the formula split into clauses;
- :mod:`~fortekit.search.formula.fuzzy`: calibration and the fuzzy connectives (pure tensor
  functions);
- :mod:`~fortekit.search.formula.evidence`: a tagger's label probabilities as evidence;
- :mod:`~fortekit.search.formula.order_check`: the order of events ("then").

Example:
    >>> from fortekit.search.formula import FormulaScoringConfig
    >>> FormulaScoringConfig().gamma
    0.7
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fortekit._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from fortekit.search.formula.clauses import split_clauses
    from fortekit.search.formula.config import FormulaScoringConfig
    from fortekit.search.formula.scoring import FormulaScorer

_LAZY = {
    "FormulaScorer": "fortekit.search.formula.scoring",
    "FormulaScoringConfig": "fortekit.search.formula.config",
    "split_clauses": "fortekit.search.formula.clauses",
}

__all__ = ["FormulaScorer", "FormulaScoringConfig", "split_clauses"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, names=globals())
