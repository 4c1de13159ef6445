"""Multi-relevance metrics: trec_eval through ir-measures, violation@10, violated@10, breakdowns.

Every query may have several relevant items (graded scores from qrels), so the metrics
are those of trec_eval, computed by ``ir-measures`` with its ``pytrec_eval`` provider
(pytrec-eval-terrier, trec_eval's C code): nDCG@10, AP over the whole ranking, P@10 and
R@1, R@5, R@10 (recall: the share of a query's relevant items in its top k). A ranking
is passed as scores ``n - position``, so trec_eval sees exactly the order a system made
(trec_eval would otherwise break ties by document id).

violation@10 is this project's: for a query whose metadata names a concept ``b`` (an
exclusion "A without B"), the share of its top 10 whose item mentions ``b`` in at least
one caption (``item_concepts.jsonl``). It reads the concepts for scoring only: the dataset's
annotation, independent of the system. violated@10 (:data:`GROUNDED_VIOLATION`) is the same
share judged by meaning: the items whose captions hold a sound the query's formula excludes, by
the system's own grounded check (:mod:`fortekit.search.eval.grounded`), for every query whose
formula excludes a sound; a consistency figure, not an independent one.

Example:
    >>> qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}
    >>> values = per_query_measures(qrels, {"q1": ["d1", "d3", "d2"], "q2": ["d1", "d3"]})
    >>> round(values["q1"]["AP"], 4), values["q2"]["AP"], values["q2"]["R@1"]
    (0.8333, 0.5, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fortekit.errors import Errors, EvaluationError
from fortekit.search.eval.metrics import paired_t_test

__all__ = [
    "GROUNDED_VIOLATION",
    "MEASURES",
    "TESTED",
    "VIOLATION",
    "breakdown_fields",
    "group_summary",
    "per_query_measures",
    "query_groups",
    "violation_at",
]

MEASURES: tuple[str, ...] = ("nDCG@10", "AP", "P@10", "R@1", "R@5", "R@10")
TESTED: tuple[str, ...] = ("nDCG@10", "AP")  # paired t-tests against the baseline
VIOLATION = "violation@10"
#: The grounded violation measure (:mod:`fortekit.search.eval.grounded`): per-query files,
#: metrics.json, results.md and the evaluation page name it so.
GROUNDED_VIOLATION = "violated@10"
MAX_BREAKDOWN_VALUES = 10


def _measures() -> tuple[Any, list[Any]]:
    """The ir-measures provider (pytrec_eval) and the measure objects of :data:`MEASURES`."""
    try:
        import ir_measures
    except ImportError as exc:
        raise EvaluationError(Errors.E509.format(package="ir-measures", problem=exc)) from None
    provider = ir_measures.pytrec_eval
    if not provider.is_available():
        raise EvaluationError(Errors.E509.format(
            package="pytrec-eval-terrier", problem="ir-measures' pytrec_eval provider is not available",
        ))
    return provider, [ir_measures.parse_measure(name) for name in MEASURES]


def per_query_measures(
    qrels: Mapping[str, Mapping[str, int]], rankings: Mapping[str, Sequence[str]],
) -> dict[str, dict[str, float]]:
    """trec_eval's nDCG@10, AP, P@10, R@1, R@5 and R@10 of each query's ranking.

    Args:
        qrels: query id -> {item id: graded relevance} (1 or more: relevant).
        rankings: query id -> item ids, best first (the whole ranking, for AP).

    Returns:
        query id -> {measure: value}, for every query of ``qrels`` (0.0 where a query has
        no ranking or trec_eval reports nothing).

    Raises:
        EvaluationError: ir-measures or pytrec-eval-terrier is missing (E509).

    Example:
        >>> values = per_query_measures({"q": {"a": 1}}, {"q": ["b", "a"]})
        >>> values["q"]["P@10"], values["q"]["R@5"], round(values["q"]["nDCG@10"], 4)
        (0.1, 1.0, 0.6309)
    """
    provider, measures = _measures()
    run = {
        query: {item: float(len(ranking) - position) for position, item in enumerate(ranking)}
        for query, ranking in rankings.items() if query in qrels and ranking
    }
    judged = {query: {item: int(score) for item, score in judged.items()} for query, judged in qrels.items()}
    values: dict[str, dict[str, float]] = {query: dict.fromkeys(MEASURES, 0.0) for query in judged}
    if run:
        for metric in provider.iter_calc(measures, judged, run):
            values[metric.query_id][str(metric.measure)] = float(metric.value)
    return values


def violation_at(
    top: Sequence[str], concept: str, item_concepts: Mapping[str, Mapping[str, int]], k: int = 10,
) -> float:
    """The share of the first ``k`` items that mention ``concept`` in at least one caption.

    Args:
        top: item ids, best first.
        concept: the concept that should be absent (the query's ``metadata.b``).
        item_concepts: item id -> {concept: captions mentioning it}; an item not listed mentions nothing.
        k: the cut-off (fewer items than k: the share of those there are).

    Returns:
        A share in [0, 1] (0.0 for an empty ranking).

    Example:
        >>> violation_at(["a", "b", "c", "d"], "rain", {"a": {"rain": 2}, "c": {"rain": 0, "wind": 1}}, k=4)
        0.25
    """
    head = list(top[:k])
    if not head:
        return 0.0
    return sum(1 for item in head if item_concepts.get(item, {}).get(concept, 0) >= 1) / len(head)


def breakdown_fields(metadata: Sequence[Mapping[str, Any]], wanted: Sequence[str] | None = None) -> list[str]:
    """The metadata fields to break the results down by.

    Args:
        metadata: each query's metadata.
        wanted: the fields asked for (``--by``); None: every field whose values are scalars
            with 2 to 10 distinct values, in first-seen order.

    Returns:
        The field names.

    Raises:
        EvaluationError: a wanted field that no query has (E507).

    Example:
        >>> rows = [{"kind": "and", "a": "dog"}, {"kind": "without", "a": "cat"}, {"kind": "and", "a": "x"}]
        >>> breakdown_fields(rows), breakdown_fields(rows, ["a"])
        (['kind', 'a'], ['a'])
    """
    seen: dict[str, set[Any]] = {}
    for row in metadata:
        for name, value in row.items():
            values = seen.setdefault(name, set())
            values.add(value if isinstance(value, (str, int, float, bool)) or value is None else repr(value))
    if wanted is not None:
        for name in wanted:
            if name not in seen:
                raise EvaluationError(Errors.E507.format(field=name, fields=", ".join(seen) or "(none)"))
        return list(wanted)
    return [name for name, values in seen.items() if 2 <= len(values) <= MAX_BREAKDOWN_VALUES]


def query_groups(metadata: Sequence[Mapping[str, Any]], name: str) -> dict[str, list[int]]:
    """The positions of the queries per value of one metadata field (as a string), first-seen order.

    Example:
        >>> query_groups([{"kind": "and"}, {}, {"kind": "without"}, {"kind": "and"}], "kind")
        {'and': [0, 3], 'without': [2]}
    """
    groups: dict[str, list[int]] = {}
    for position, row in enumerate(metadata):
        if name in row:
            groups.setdefault(str(row[name]), []).append(position)
    return groups


def _mean(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return float(np.mean(present)) if present else None


def group_summary(
    rows: Sequence[Mapping[str, Any]], baseline: Sequence[Mapping[str, Any]] | None,
) -> dict[str, Any]:
    """Mean metrics of some queries and the paired t-tests against the baseline's same queries.

    Args:
        rows: per query, the measures of :data:`MEASURES`, ``violation@10`` and, where the rows
            have it, ``violated@10`` (:data:`GROUNDED_VIOLATION`) (None where one does not apply).
        baseline: the baseline's rows for the same queries in the same order (None: no tests).

    Returns:
        ``{"queries": n, measure: mean, ..., "violation@10": mean or None, ["violated@10": mean
        or None,] "p_nDCG@10": p, "t_nDCG@10": t, "p_AP": p, "t_AP": t}`` (a violation mean
        over the queries it applies to; ``violated@10`` only when some row has the field; p and
        t None with fewer than 2 queries or no baseline; an infinite t as the string "inf" or
        "-inf").

    Example:
        >>> a = [{"nDCG@10": 1.0, "AP": 1.0, "violation@10": None}, {"nDCG@10": 0.5, "AP": 0.2}]
        >>> b = [{"nDCG@10": 0.5, "AP": 0.5}, {"nDCG@10": 0.5, "AP": 0.5}]
        >>> s = group_summary(a, b)
        >>> s["queries"], s["nDCG@10"], s["violation@10"], s["p_nDCG@10"] < 1.0
        (2, 0.75, None, True)
    """
    summary: dict[str, Any] = {"queries": len(rows)}
    for name in MEASURES:
        summary[name] = _mean([row.get(name) for row in rows])
    summary[VIOLATION] = _mean([row.get(VIOLATION) for row in rows])
    if any(GROUNDED_VIOLATION in row for row in rows):
        summary[GROUNDED_VIOLATION] = _mean([row.get(GROUNDED_VIOLATION) for row in rows])
    for name in TESTED:
        t = p = None
        if baseline is not None and len(rows) >= 2:
            t, p = paired_t_test([row[name] for row in rows], [row[name] for row in baseline])
        summary[f"p_{name}"] = p
        summary[f"t_{name}"] = t if t is None or math.isfinite(t) else str(t)  # JSON has no infinity
    return summary
