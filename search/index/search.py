"""Exact cosine top-K by matrix product, chunked over the queries, with a stable tie order.

The index matrix stays on the device; the queries are processed in chunks of rows so that
the (chunk, n) score block never exceeds a memory budget (:data:`SCORE_BUDGET_BYTES`),
whatever the number of queries. ``torch.topk`` does not promise an order among equal
scores; the results here are ordered by score, then by row (lower index first), and when
more rows tie at the k-th score than fit, the lower rows win, exactly as a stable
``argsort`` of the negated scores would choose.

The selection of each chunk's k best rows is :func:`fortekit._top_k.stable_top_k` (a stable
top-k by partition from :data:`fortekit._top_k.PARTITION_FROM` results per query on), which
formula scoring shares.

Example:
    >>> import torch
    >>> from fortekit.search.index.search import exact_top_k
    >>> matrix = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    >>> scores, rows = exact_top_k(matrix, torch.tensor([[1.0, 0.0]]), k=2)
    >>> rows.tolist(), scores.tolist()
    ([[0, 2]], [[1.0, 1.0]])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fortekit._checks import check_int
from fortekit._top_k import stable_top_k
from fortekit.errors import AudioIndexError, Errors

if TYPE_CHECKING:
    import torch

__all__ = [
    "SCORE_BUDGET_BYTES",
    "as_query_matrix",
    "check_k",
    "exact_top_k",
    "query_chunk_rows",
]

#: Bytes of float32 scores one chunk of queries may occupy (q_chunk x n x 4).
SCORE_BUDGET_BYTES = 256 * 1024 * 1024


def query_chunk_rows(n_items: int, n_queries: int, budget_bytes: int = SCORE_BUDGET_BYTES) -> int:
    """How many queries to score at once so the score block stays within `budget_bytes`.

    Example:
        >>> query_chunk_rows(1_000_000, 5000, budget_bytes=64 * 1024 * 1024)
        16
    """
    return max(1, min(max(n_queries, 1), budget_bytes // (4 * max(n_items, 1))))


def check_k(k: object) -> int:
    """`k` as a positive int, or E613.

    Example:
        >>> check_k(0)
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E613] k must be an int >= 1, not 0. (See docs/errors.md#e613.)
    """
    return check_int(k, name="k", error=AudioIndexError, message=Errors.E613)


def as_query_matrix(queries: Any, dim: int, backbone: str, *, what: str = "queries") -> torch.Tensor:
    """Queries as a float32 (q, dim) CPU-or-device tensor, checked.

    Args:
        queries: a torch tensor or numpy array, (q, dim) or (dim,) for one query.
        dim: the index dimension.
        backbone: the index's backbone (for the message).
        what: what the array is called in messages.

    Returns:
        A float32 2-D tensor on the device the input was on.

    Raises:
        AudioIndexError: not an array, the wrong rank, non-float or non-finite values (E618),
            the wrong dimension (E608).

    Example:
        >>> import numpy as np
        >>> as_query_matrix(np.ones(3), 3, "minilm").shape
        torch.Size([1, 3])
    """
    import numpy as np
    import torch

    if isinstance(queries, np.ndarray):
        if not (np.issubdtype(queries.dtype, np.floating) or np.issubdtype(queries.dtype, np.integer)):
            raise AudioIndexError(Errors.E618.format(
                what=what, dim=dim, description=f"a numpy array of dtype {queries.dtype}",
            ))
        tensor = torch.from_numpy(np.array(queries, dtype=np.float32, copy=True))
    elif isinstance(queries, torch.Tensor):
        if queries.dtype == torch.bool or queries.is_complex():
            raise AudioIndexError(Errors.E618.format(
                what=what, dim=dim, description=f"a tensor of dtype {queries.dtype}",
            ))
        tensor = queries.detach().float()
    else:
        description = f"a {type(queries).__name__}"
        raise AudioIndexError(Errors.E618.format(what=what, dim=dim, description=description))
    if tensor.ndim == 1:
        tensor = tensor.unsqueeze(0)
    if tensor.ndim != 2:
        raise AudioIndexError(Errors.E618.format(
            what=what, dim=dim, description=f"an array of shape {tuple(tensor.shape)}",
        ))
    if tensor.shape[1] != dim:
        found = tensor.shape[1]
        raise AudioIndexError(Errors.E608.format(what=what, found=found, dim=dim, backbone=backbone))
    if not bool(torch.isfinite(tensor).all()):
        raise AudioIndexError(Errors.E618.format(
            what=what, dim=dim, description="an array with NaN or infinite values",
        ))
    return tensor


def exact_top_k(
    matrix: torch.Tensor, queries: torch.Tensor, k: int, *, chunk_rows: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The k highest inner products of each query with the rows of `matrix`.

    With unit rows and unit queries the inner product is the cosine similarity.

    Args:
        matrix: (n, d) on the device to compute on.
        queries: (q, d) float32 (moved to `matrix`'s device).
        k: results per query (clipped to n).
        chunk_rows: queries per matrix product (default: :func:`query_chunk_rows`).

    Returns:
        (scores (q, k) float32, rows (q, k) int64), both on the CPU, best first, ties by row.

    Example:
        >>> import torch
        >>> exact_top_k(torch.eye(3), torch.tensor([[0.0, 0.0, 1.0]]), k=5)[1].tolist()
        [[2, 0, 1]]
    """
    import torch

    n = int(matrix.shape[0])
    k = min(check_k(k), n)
    rows_per_chunk = chunk_rows if chunk_rows is not None else query_chunk_rows(n, int(queries.shape[0]))
    rows_per_chunk = check_k(rows_per_chunk) if chunk_rows is not None else rows_per_chunk
    all_scores, all_rows = [], []
    with torch.inference_mode():
        for start in range(0, int(queries.shape[0]), rows_per_chunk):
            chunk = queries[start:start + rows_per_chunk].to(matrix.device, torch.float32)
            scores, rows = stable_top_k(chunk @ matrix.T, k)
            all_scores.append(scores.cpu())
            all_rows.append(rows.cpu())
    if not all_scores:
        return torch.empty((0, k), dtype=torch.float32), torch.empty((0, k), dtype=torch.int64)
    return torch.cat(all_scores), torch.cat(all_rows)
