"""Label evidence: the per-item probabilities of a tagger's sound labels (a plug-in's output).

A tagger captioner (:class:`~fortekit.plugins.protocols.LabelTagger`) returns one
:class:`LabelEvidence` for the items it hears; formula scoring
(:mod:`fortekit.search.formula.evidence`) grounds a query's clauses on its labels. The type
lives with the plug-ins so that a plug-in never imports the retrieval code. Nothing here
imports torch at module level.

Example:
    >>> evidence = LabelEvidence(("a dog barking", "rain falling"), [[0.9, 0.1], [0.2, 0.8]])
    >>> len(evidence), evidence.labels[1]
    (2, 'rain falling')
    >>> [round(v, 2) for v in evidence.column(1, [1, 0]).tolist()]
    [0.8, 0.1]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, EvaluationError

if TYPE_CHECKING:
    import torch

__all__ = ["LabelEvidence"]


@dataclass(frozen=True)
class LabelEvidence:
    """Per-item probabilities of named sound labels (one row per index item, index order).

    Args:
        labels: one phrase per label, the way a caption would say it ("a dog barking").
        probabilities: (items, labels) values in [0, 1] (array-like or tensor).

    Raises:
        EvaluationError: no labels, an empty or repeated phrase, a shape that does not fit,
            or a value outside [0, 1] or not finite (E494).

    Example:
        >>> LabelEvidence(("wind blowing",), [[0.25], [1.0]]).column(0).tolist()
        [0.25, 1.0]
    """

    labels: tuple[str, ...]
    probabilities: Any
    _matrix: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        import torch

        labels = tuple(self.labels) if isinstance(self.labels, (list, tuple)) else ()
        if not labels or not all(isinstance(label, str) and label.strip() for label in labels):
            raise EvaluationError(Errors.E494.format(
                problem="'labels' must be a non-empty sequence of non-empty phrases",
            ))
        if len(set(labels)) != len(labels):
            raise EvaluationError(Errors.E494.format(problem="a label phrase is repeated"))
        try:
            matrix = torch.as_tensor(self.probabilities, dtype=torch.float32).detach().cpu()
        except (TypeError, ValueError, RuntimeError) as exc:
            raise EvaluationError(Errors.E494.format(
                problem=f"'probabilities' is not a numeric matrix ({exc})",
            )) from None
        if matrix.ndim != 2 or matrix.shape[1] != len(labels):
            raise EvaluationError(Errors.E494.format(
                problem=f"'probabilities' has shape {tuple(matrix.shape)}, expected (items, {len(labels)})",
            ))
        if matrix.numel() and (not bool(torch.isfinite(matrix).all())
                               or float(matrix.min()) < 0.0 or float(matrix.max()) > 1.0):
            raise EvaluationError(Errors.E494.format(problem="a probability is outside [0, 1] or not finite"))
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "_matrix", matrix)

    def __len__(self) -> int:
        return int(self._matrix.shape[0])

    @property
    def matrix(self) -> torch.Tensor:
        """The (items, labels) float32 probabilities, on the CPU (treat it as read-only).

        Example:
            >>> tuple(LabelEvidence(("wind blowing",), [[0.25], [1.0]]).matrix.shape)
            (2, 1)
        """
        matrix: torch.Tensor = self._matrix
        return matrix

    def column(self, label: int, rows: Sequence[int] | torch.Tensor | None = None) -> torch.Tensor:
        """The probabilities of one label for the given item rows (all items by default).

        Example:
            >>> LabelEvidence(("bell ringing",), [[0.5], [0.0]]).column(0, [1]).tolist()
            [0.0]
        """
        import torch

        values: torch.Tensor = self._matrix[:, label]
        if rows is None:
            return values
        picked: torch.Tensor = values[torch.as_tensor(rows, dtype=torch.long).cpu()]
        return picked

    def select(self, rows: Sequence[int]) -> LabelEvidence:
        """The evidence of a subset of items, in the given order.

        Example:
            >>> len(LabelEvidence(("bell ringing",), [[0.5], [0.0], [1.0]]).select([2, 0]))
            2
        """
        import torch

        return LabelEvidence(self.labels, self._matrix[torch.as_tensor(list(rows), dtype=torch.long)])
