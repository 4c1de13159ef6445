"""Label evidence: what a tagger hears in each item, as degrees of truth for formula scoring.

Formula scoring (:mod:`fortekit.search.formula.scoring`) judges a clause ("rain falling")
by the similarity of its text to the item's vector. A tagger (an audio classifier over a
fixed set of sound labels) gives a second, sharper judgement for the clauses it has a label
for: the probability that the labelled sound is in the clip. :class:`LabelEvidence` holds
those probabilities, one row per item of the index, and the label phrases ("a dog barking",
"rain falling"). A clause is grounded on the label whose phrase its text is closest to, in
the retriever's own text space, when that cosine reaches ``FormulaScoringConfig.evidence_match``;
its degree of truth is then

    t = (1 - evidence_weight) * t_similarity + evidence_weight * p_label(item)

for the clauses ``FormulaScoringConfig.evidence_scope`` names (all by default: the clip must
hold the asked sound as well as lack the excluded one, and a classifier sees both better than
a similarity does), and a formula it judges weighs its logic by ``evidence_gamma``. A clause
no label matches keeps its similarity. Nothing here imports torch at module level.

Example:
    >>> evidence = LabelEvidence(("a dog barking", "rain falling"), [[0.9, 0.1], [0.2, 0.8]])
    >>> len(evidence), evidence.labels[1]
    (2, 'rain falling')
    >>> [round(v, 2) for v in evidence.column(1, [1, 0]).tolist()]
    [0.8, 0.1]
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from fortekit.errors import Errors, EvaluationError
from fortekit.plugins.evidence import LabelEvidence  # re-exported: it is a plug-in's output

if TYPE_CHECKING:
    import torch

__all__ = ["LabelEvidence", "ground_clauses"]


def ground_clauses(
    clause_vectors: torch.Tensor, label_vectors: torch.Tensor, threshold: float,
) -> list[int | None]:
    """Per clause, the label whose phrase is closest to it, or None below ``threshold``.

    Args:
        clause_vectors: (clauses, d) unit vectors of the clause texts.
        label_vectors: (labels, d) unit vectors of the label phrases (same encoder).
        threshold: the least cosine for a clause to be grounded on a label.

    Returns:
        One label index (or None) per clause.

    Example:
        >>> import torch
        >>> ground_clauses(torch.tensor([[1.0, 0.0], [0.6, 0.8]]), torch.eye(2), 0.9)
        [0, None]
    """
    if not math.isfinite(threshold):
        raise EvaluationError(Errors.E494.format(problem=f"the match threshold {threshold!r} is not finite"))
    if clause_vectors.shape[0] == 0:
        return []
    sims = clause_vectors @ label_vectors.T
    best = sims.max(dim=1)
    return [int(i) if float(v) >= threshold else None
            for v, i in zip(best.values.tolist(), best.indices.tolist(), strict=True)]
