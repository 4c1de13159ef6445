"""Retrieval metrics with one relevant item per query, and the paired t-test.

The benchmarks here have exactly one relevant item per query, so everything follows
from the 1-based rank of that item: R@k is the fraction of queries whose rank is at
most k, and mAP@10 is the mean of AP@10 = 1/rank if rank <= 10 else 0 (how the DCASE
language-based audio retrieval task scores it). Significance between two systems is a
two-sided paired t-test over per-query R@1 (hit or miss at rank 1), as in the paper.

Score matrices may be numpy arrays or torch tensors (any device); torch is not imported.
Per-query records and their JSONL files are in :mod:`fortekit.search.eval.per_query`.

Example:
    >>> import numpy as np
    >>> scores = np.array([[0.9, 0.1, 0.5], [0.2, 0.3, 0.8]])
    >>> ranks = ranks_of_targets(scores, [2, 1])
    >>> ranks.tolist()
    [2, 2]
    >>> retrieval_metrics(ranks, ks=(1, 5))
    {'R@1': 0.0, 'R@5': 1.0, 'mAP@10': 0.5}
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from fortekit._checks import check_int
from fortekit.errors import Errors, EvaluationError

__all__ = [
    "DEFAULT_KS",
    "MAP_CUTOFF",
    "as_numpy",
    "average_precision",
    "checked_ranks",
    "hits_at",
    "paired_t_test",
    "ranks_from_indices",
    "ranks_of_targets",
    "retrieval_metrics",
]

DEFAULT_KS = (1, 5, 10, 50)
MAP_CUTOFF = 10
_ROW_CHUNK = 1024  # rows compared at once, so (chunk, items) boolean masks stay small


def as_numpy(values: Any) -> np.ndarray:
    """A numpy view of a numpy array, a torch tensor (any device or dtype) or a sequence.

    Example:
        >>> as_numpy([1, 2]).tolist()
        [1, 2]
    """
    if hasattr(values, "detach") and hasattr(values, "cpu"):  # torch.Tensor, without importing torch
        tensor = values.detach().cpu()
        if str(tensor.dtype) == "torch.bfloat16":  # numpy has no bfloat16
            tensor = tensor.float()
        return np.asarray(tensor.numpy())
    return np.asarray(values)


def ranks_of_targets(scores: Any, targets: Sequence[int] | Any) -> npt.NDArray[np.int64]:
    """The 1-based rank of each query's one relevant item under a score matrix.

    Ties are broken by item index, as a stable sort would: the rank of the target is
    1 + (items with a strictly higher score) + (items with an equal score and a lower
    index). This is deterministic and neither optimistic nor pessimistic in general;
    it equals the position of the target in ``argsort(-scores, stable=True)``.

    Args:
        scores: (queries, items) similarities, higher = better (numpy or torch).
        targets: one item index per query, each in [0, items).

    Returns:
        An int64 array (queries,) of ranks in [1, items].

    Raises:
        EvaluationError: scores not 2-D or not finite, or targets of the wrong length,
            type or range (E484).

    Example:
        >>> ranks_of_targets([[0.5, 0.5, 0.5]], [1]).tolist()  # one item ties ahead of it
        [2]
    """
    matrix = as_numpy(scores)
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise EvaluationError(Errors.E484.format(problem=f"scores have shape {matrix.shape}"))
    if not np.issubdtype(matrix.dtype, np.number) or np.issubdtype(matrix.dtype, np.complexfloating):
        raise EvaluationError(Errors.E484.format(problem=f"scores have dtype {matrix.dtype}"))
    if np.issubdtype(matrix.dtype, np.floating) and not np.isfinite(matrix).all():
        bad = int((~np.isfinite(matrix)).any(axis=1).sum())
        raise EvaluationError(Errors.E484.format(problem=f"{bad} rows of the scores hold NaN or infinity"))
    wanted = as_numpy(targets)
    n_queries, n_items = matrix.shape
    if wanted.ndim != 1 or len(wanted) != n_queries:
        raise EvaluationError(Errors.E484.format(
            problem=f"{n_queries} score rows but targets of shape {wanted.shape}",
        ))
    integral = np.issubdtype(wanted.dtype, np.integer)
    if n_queries and (not integral or wanted.min() < 0 or wanted.max() >= n_items):
        raise EvaluationError(Errors.E484.format(
            problem=f"targets must be integers in [0, {n_items}), got dtype {wanted.dtype} "
            f"and range [{wanted.min()}, {wanted.max()}]",
        ))
    wanted = wanted.astype(np.int64)
    ranks = np.empty(n_queries, dtype=np.int64)
    columns = np.arange(n_items)
    for start in range(0, n_queries, _ROW_CHUNK):
        block = matrix[start:start + _ROW_CHUNK]
        block_targets = wanted[start:start + _ROW_CHUNK]
        own = block[np.arange(len(block)), block_targets][:, None]
        higher = (block > own).sum(axis=1)
        tied_before = ((block == own) & (columns[None, :] < block_targets[:, None])).sum(axis=1)
        ranks[start:start + len(block)] = higher + tied_before + 1
    return ranks


def ranks_from_indices(
    indices: Any, targets: Sequence[int] | Any, *, missing_rank: int | None = None
) -> npt.NDArray[np.int64]:
    """The 1-based rank of each target from ranked item indices (e.g. the re-ranker's output).

    Args:
        indices: (queries, k) item indices, best first.
        targets: one relevant item index per query.
        missing_rank: the rank given to a target that is not among a row's ``k`` indices;
            default ``k + 1`` (correct for every R@k' and AP@k' with k' <= k).

    Returns:
        An int64 array (queries,) of ranks.

    Raises:
        EvaluationError: shapes that do not fit (E484).

    Example:
        >>> ranks_from_indices([[4, 2, 0], [1, 3, 2]], [0, 5]).tolist()
        [3, 4]
    """
    order = as_numpy(indices)
    wanted = as_numpy(targets)
    if order.ndim != 2 or wanted.ndim != 1 or len(wanted) != order.shape[0]:
        raise EvaluationError(Errors.E484.format(
            problem=f"indices of shape {order.shape} and targets of shape {wanted.shape}",
        ))
    fallback = order.shape[1] + 1 if missing_rank is None else missing_rank
    found = order == wanted[:, None]
    ranks = np.where(found.any(axis=1), found.argmax(axis=1) + 1, fallback)
    return ranks.astype(np.int64)


def checked_ranks(ranks: Any) -> npt.NDArray[np.int64]:
    """``ranks`` as an int64 array, after checking they are 1-D, non-empty whole numbers >= 1.

    Raises:
        EvaluationError: empty, not 1-D, not whole or below 1 (E485).

    Example:
        >>> checked_ranks([1.0, 3.0]).tolist()
        [1, 3]
    """
    values = as_numpy(ranks)
    if values.ndim != 1 or values.size == 0:
        raise EvaluationError(Errors.E485.format(problem=f"shape {values.shape}"))
    whole_floats = (
        np.issubdtype(values.dtype, np.floating)
        and bool(np.all(np.isfinite(values)))
        and bool(np.all(values == np.round(values)))
    )
    if not np.issubdtype(values.dtype, np.integer) and not whole_floats:
        raise EvaluationError(Errors.E485.format(problem=f"non-integer values of dtype {values.dtype}"))
    if values.min() < 1:
        raise EvaluationError(Errors.E485.format(problem=f"a rank of {values.min()}"))
    return values.astype(np.int64)


def hits_at(ranks: Any, k: int) -> npt.NDArray[np.float64]:
    """Per-query R@k: 1.0 where the relevant item is in the top k, else 0.0.

    Example:
        >>> hits_at([1, 3, 11], 1).tolist()
        [1.0, 0.0, 0.0]
    """
    return (checked_ranks(ranks) <= k).astype(np.float64)


def average_precision(ranks: Any, cutoff: int = MAP_CUTOFF) -> npt.NDArray[np.float64]:
    """Per-query AP@cutoff with one relevant item: 1/rank if rank <= cutoff, else 0.

    Example:
        >>> average_precision([1, 4, 11]).tolist()
        [1.0, 0.25, 0.0]
    """
    values = checked_ranks(ranks)
    return np.where(values <= cutoff, 1.0 / values, 0.0)


def retrieval_metrics(ranks: Any, ks: Iterable[int] = DEFAULT_KS) -> dict[str, float]:
    """R@k for each k and mAP@10, as fractions in [0, 1].

    Args:
        ranks: 1-based ranks of the relevant item, one per query.
        ks: the cut-offs for R@k (positive ints).

    Returns:
        ``{"R@1": ..., "R@5": ..., "R@10": ..., "R@50": ..., "mAP@10": ...}`` (one ``R@k``
        per k, in the order given, then ``mAP@10``).

    Raises:
        EvaluationError: empty or invalid ranks (E485) or a k < 1 (E480).

    Example:
        >>> retrieval_metrics([1, 3, 11])
        {'R@1': 0.3333333333333333, 'R@5': 0.6666666666666666, 'R@10': 0.6666666666666666, 'R@50': 1.0, 'mAP@10': 0.4444444444444444}
    """  # noqa: E501
    values = checked_ranks(ranks)
    result: dict[str, float] = {}
    for k in ks:
        check_int(k, name="k", numpy=True, error=EvaluationError, message=Errors.E480, what="metrics")
        result[f"R@{k}"] = float(np.mean(values <= k))
    result[f"mAP@{MAP_CUTOFF}"] = float(np.mean(average_precision(values)))
    return result


def paired_t_test(r1_a: Any, r1_b: Any) -> tuple[float, float]:
    """Two-sided paired t-test between two systems' per-query values (R@1 hits in the paper).

    Uses :func:`scipy.stats.ttest_rel`. Where scipy would return NaN or warn, the result
    is defined instead: identical inputs (every difference 0) give ``(0.0, 1.0)``; a
    constant non-zero difference gives ``(±inf, 0.0)``.

    Args:
        r1_a: per-query values of system A (e.g. :func:`hits_at` ``(ranks_a, 1)``).
        r1_b: those of system B, same queries in the same order.

    Returns:
        ``(t statistic, two-sided p-value)``; t > 0 when A scores higher.

    Raises:
        EvaluationError: arrays of different lengths, fewer than 2 queries, or non-finite
            values (E486).

    Example:
        >>> paired_t_test([1, 0, 1, 1], [0, 0, 0, 1])  # doctest: +ELLIPSIS
        (1.7320508075688774, 0.1816901138162...)
        >>> paired_t_test([1, 0], [1, 0])
        (0.0, 1.0)
    """
    from scipy.stats import ttest_rel

    a = as_numpy(r1_a)
    b = as_numpy(r1_b)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape or len(a) < 2:
        raise EvaluationError(Errors.E486.format(problem=f"shapes {a.shape} and {b.shape}"))
    try:
        a = a.astype(np.float64)
        b = b.astype(np.float64)
    except (TypeError, ValueError):
        raise EvaluationError(Errors.E486.format(problem=f"dtypes {a.dtype} and {b.dtype}")) from None
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise EvaluationError(Errors.E486.format(problem="NaN or infinite values"))
    differences = a - b
    if np.all(differences == differences[0]):
        if differences[0] == 0:
            return 0.0, 1.0
        return math.copysign(math.inf, float(differences[0])), 0.0
    result = ttest_rel(a, b)
    return float(result.statistic), float(result.pvalue)
