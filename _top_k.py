"""The k best columns of each row as a stable sort would give them: the index's and formula scoring's.

``torch.topk`` does not promise an order among equal scores; :func:`stable_top_k` orders
by score, then by column (lower first), and when more columns tie at the k-th score than
fit, the lower columns win, exactly as a stable descending sort of the row would choose.
The exact search of the index (:func:`fortekit.search.index.search.exact_top_k`) and
formula scoring's re-ranking both select with it; it is a shared leaf, so that neither
imports the other.

From :data:`PARTITION_FROM` results per row on (formula scoring's 1,000 candidates), a
CPU top-k selects by partition (numpy's introselect, linear in the items) instead of
``torch.topk``, whose CPU kernel keeps a heap of k and costs n log k: 10 instead of 30 ms
for 1,000 of 100,000 items per 32 queries (docs/formula_scoring.md, "Speed"). Both give
the same rows in the same order. torch and numpy are imported inside the functions.

Example:
    >>> import torch
    >>> stable_top_k(torch.tensor([[0.25, 0.5, 0.5]]), k=2)[1].tolist()
    [[1, 2]]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["PARTITION_FROM", "stable_top_k"]

#: From this k on, a CPU float32 top-k partitions instead of calling ``torch.topk`` (the two
#: cost the same near k = 64 of 100,000 items; below it the heap is cheaper).
PARTITION_FROM = 64


def stable_top_k(similarities: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The k best columns of each row, by score and then by column, as a stable descending sort.

    The result equals ``similarities.sort(dim=1, descending=True, stable=True)`` cut at k
    columns, without sorting every column.

    Args:
        similarities: (rows, n) scores.
        k: columns per row, 1 <= k <= n.

    Returns:
        ``(values, columns)``, each (rows, k), on the device of ``similarities``.

    Example:
        >>> import torch
        >>> values, columns = stable_top_k(torch.tensor([[0.5, 0.75, 0.5, 0.25]]), k=3)
        >>> columns.tolist(), values.tolist()
        ([[1, 0, 2]], [[0.75, 0.5, 0.5]])
    """
    import torch

    if k >= PARTITION_FROM and similarities.device.type == "cpu" and similarities.dtype == torch.float32:
        found = _partition_top_k(similarities, k)
        if found is not None:
            return found
    # topk, then ties ordered by row; rows where ties straddle the k-th place get a full
    # stable sort. Ties straddle the k-th place exactly when the (k+1)-th best score equals
    # the k-th, so one extra column of topk detects them without another pass over the scores.
    extra = 1 if k < similarities.shape[1] else 0
    values, rows = torch.topk(similarities, k + extra, dim=1, largest=True, sorted=True)
    if extra:
        straddling = values[:, k] == values[:, k - 1]
    else:  # every row is returned: nothing is left out, whatever the ties
        straddling = torch.zeros(len(values), dtype=torch.bool, device=values.device)
    values, rows = values[:, :k], rows[:, :k]
    rows, by_row = rows.sort(dim=1)
    values = values.gather(1, by_row)
    values, by_value = values.sort(dim=1, descending=True, stable=True)
    rows = rows.gather(1, by_value)
    if bool(straddling.any()):
        which = straddling.nonzero().squeeze(1)
        full_values, full_rows = similarities[which].sort(dim=1, descending=True, stable=True)
        values[which] = full_values[:, :k]
        rows[which] = full_rows[:, :k]
    return values, rows


def _partition_top_k(similarities: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """:func:`stable_top_k` by partition; None where a score is NaN (left to ``torch.topk``).

    Every column at least as good as the k-th best score is kept, in column order, and a
    stable sort of those few orders them: ties at the k-th place go to the lower columns,
    as in a stable sort of the whole row.
    """
    import numpy as np
    import torch

    scores = similarities.detach().numpy()
    rows, n = scores.shape
    if k >= n or rows == 0:
        return None
    # A NaN makes the sum NaN (an overflow makes it inf, which merely takes the slow path):
    # torch.topk ranks NaN first, the partition would not.
    if not np.isfinite(scores.sum()):
        return None
    kth = np.partition(scores, n - k, axis=1)[:, n - k]
    columns = np.empty((rows, k), dtype=np.int64)
    for row in range(rows):
        line = scores[row]
        kept = np.flatnonzero(line >= kth[row])
        columns[row] = kept[np.argsort(-line[kept], kind="stable")[:k]]
    found = torch.from_numpy(columns)
    return similarities.gather(1, found), found
