"""The audio-to-text direction of ``fortekit eval --beir``: each item ranks the collection's query texts.

Nothing is ranked anew: every system already gave each (query, item) pair a score
(:attr:`~fortekit.search.eval.beir_systems.SystemRanking.scores`), and for each item the query
texts are sorted by the scores of that item's column (ties: file order). A text is relevant to
an item when the qrels pair them, with the same graded score (:func:`invert_qrels`); items with
no relevant text are left out and counted. The measures are those of text to audio, by trec_eval
(:func:`~fortekit.search.eval.beir_metrics.per_query_measures` with the items as queries), and
the paired t-tests are per item against the baseline.

violation@10 reads, from the item's side: the share of an item's top 10 texts that are
exclusions (``kind`` in ``violation_kinds`` or no kind, with a concept ``b``) of a concept the
item mentions (``item_concepts.jsonl``): texts that deny what the clip holds. None when the
candidate texts hold no exclusion or the folder has no ``item_concepts.jsonl``.

A breakdown by a query field (``--by kind``) restricts the candidate texts to that value: each
item ranks only the texts of that kind, and is evaluated when one of them is relevant to it.
Chance levels (:func:`chance_levels`) are given for every table: the expected measures of a
random ranking of the same candidates.

Example:
    >>> invert_qrels({"q1": {"d1": 1, "d2": 2}, "q2": {"d1": 0}})
    {'d1': {'q1': 1, 'q2': 0}, 'd2': {'q1': 2}}
    >>> matrix = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])  # 3 queries, 2 items
    >>> text_order(matrix).tolist()  # per item, query rows best first
    [[0, 2, 1], [1, 2, 0]]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fortekit.search.eval.beir_metrics import (
    MEASURES,
    VIOLATION,
    group_summary,
    per_query_measures,
    query_groups,
)

if TYPE_CHECKING:
    from fortekit.search.eval.beir import BeirCollection
    from fortekit.search.eval.beir_systems import SystemRanking

__all__ = ["a2t_block", "a2t_records", "chance_levels", "invert_qrels", "score_matrix", "text_order"]

TOP_STORED = 10


def invert_qrels(qrels: Mapping[str, Mapping[str, int]],
                 queries: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
    """The judgements read from the item's side: item id -> {query id: the same score}.

    Args:
        qrels: query id -> {item id: graded relevance}.
        queries: only these queries (None: all), e.g. the candidate texts of one kind.

    Returns:
        item id -> {query id: score}, items in first-judged order (scores 0 kept: judged not relevant).

    Example:
        >>> invert_qrels({"q1": {"d1": 2}, "q2": {"d1": 1, "d3": 1}}, queries=["q2"])
        {'d1': {'q2': 1}, 'd3': {'q2': 1}}
    """
    wanted = None if queries is None else set(queries)
    inverted: dict[str, dict[str, int]] = {}
    for query, judged in qrels.items():
        if wanted is not None and query not in wanted:
            continue
        for item, score in judged.items():
            inverted.setdefault(item, {})[query] = int(score)
    return inverted


def score_matrix(ranking: SystemRanking) -> npt.NDArray[np.float64]:
    """The (queries, items) scores a system gave each pair; from its ranks when it gave none.

    A system without scores (``scores`` None) is read as ``-position``: an item's texts are then
    sorted by where the item stands in each text's ranking.

    Example:
        >>> from fortekit.search.eval.beir_systems import SystemRanking
        >>> score_matrix(SystemRanking(np.array([[1, 0], [0, 1]]), 0.0, {})).tolist()
        [[-1.0, 0.0], [0.0, -1.0]]
    """
    if ranking.scores is not None:
        return np.asarray(ranking.scores, dtype=np.float64)
    order = np.asarray(ranking.order)
    matrix = np.empty(order.shape, dtype=np.float64)
    positions = np.broadcast_to(0.0 - np.arange(order.shape[1], dtype=np.float64), order.shape)
    np.put_along_axis(matrix, order, positions, axis=1)
    return matrix


def text_order(matrix: npt.NDArray[Any], rows: Sequence[int] | None = None) -> npt.NDArray[np.int64]:
    """Per item, the query rows (of ``rows``, default all) best first by the item's column (ties: row order).

    Example:
        >>> text_order(np.array([[0.1, 0.3], [0.7, 0.3], [0.7, 0.0]]), rows=[0, 2]).tolist()
        [[2, 0], [0, 2]]
    """
    chosen = np.arange(matrix.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
    if chosen.size == 0:
        return np.zeros((matrix.shape[1], 0), dtype=np.int64)
    local = np.argsort(-np.asarray(matrix, dtype=np.float64)[chosen].T, axis=1, kind="stable")
    return chosen[local]


def chance_levels(qrels: Mapping[str, Mapping[str, int]], candidates: int) -> dict[str, float]:
    """The expected measures of a random ranking of ``candidates`` for each judged unit, averaged.

    R@k = min(k, C) / C; P@10 = relevant x min(10, C) / C / 10; nDCG@10 with trec_eval's linear
    gains: (sum of gains / C) x sum over ranks r <= min(10, C) of 1/log2(r + 1), over the ideal
    DCG@10; AP = H_C / C + (R - 1)/(C - 1) x (1 - H_C / C) (H_C the harmonic number; the expected
    precision at a relevant unit's rank, averaged). Units without a relevant candidate are left out.

    Example:
        >>> levels = chance_levels({"d1": {"q1": 1}, "d2": {"q1": 1, "q2": 1}}, candidates=4)
        >>> levels["R@1"], levels["R@5"], round(levels["P@10"], 4), round(levels["AP"], 4)
        (0.25, 1.0, 0.15, 0.6007)
    """
    rows: list[dict[str, float]] = []
    c = max(int(candidates), 1)
    harmonic = sum(1.0 / r for r in range(1, c + 1))
    discount = [1.0 / math.log2(r + 1) for r in range(1, min(10, c) + 1)]
    for judged in qrels.values():
        gains = sorted((g for g in judged.values() if g >= 1), reverse=True)
        if not gains:
            continue
        relevant = len(gains)
        ideal = sum(g / math.log2(r + 2) for r, g in enumerate(gains[:10]))
        ap = harmonic / c + ((relevant - 1) / (c - 1) * (1 - harmonic / c) if c > 1 else 0.0)
        row = {"nDCG@10": sum(gains) / c * sum(discount) / ideal, "AP": ap,
               "P@10": relevant * min(10, c) / c / 10}
        row.update({f"R@{k}": min(k, c) / c for k in (1, 5, 10)})
        rows.append(row)
    return {name: float(np.mean([row[name] for row in rows])) if rows else 0.0 for name in MEASURES}


def _violation(top: Sequence[str], item: str, queries: Mapping[str, Mapping[str, Any]],
               concepts: Mapping[str, Mapping[str, int]] | None, kinds: Sequence[str]) -> float | None:
    if concepts is None or not top:
        return None
    mentioned = concepts.get(item, {})
    denied = [queries[query]["b"] for query in top if _is_exclusion(queries[query], kinds)]
    return sum(mentioned.get(b, 0) >= 1 for b in denied) / len(top)


def _is_exclusion(metadata: Mapping[str, Any], kinds: Sequence[str]) -> bool:
    kind = metadata.get("kind")
    return isinstance(metadata.get("b"), str) and (kind is None or kind in kinds)


def a2t_records(collection: BeirCollection, matrix: npt.NDArray[Any], rows: Sequence[int] | None = None,
                violation_kinds: Sequence[str] = ("without",)) -> list[dict[str, Any]]:
    """Per item with a relevant candidate text: its id, relevant texts, the measures, violation@10, top 10.

    Args:
        collection: the BEIR collection (its queries are the texts, in file order).
        matrix: (queries, items) the system's scores (:func:`score_matrix`).
        rows: the candidate texts, as query rows (None: every query).
        violation_kinds: the query kinds that are exclusions (with a concept ``b``).

    Returns:
        Records in corpus order, ``{"item_id", "relevant", measures..., "violation@10", "top"}``.

    Example:
        >>> a2t_records(collection, score_matrix(ranking))[0]["R@1"]  # doctest: +SKIP
        1.0
    """
    query_ids = [query.id for query in collection.queries]
    chosen = list(range(len(query_ids))) if rows is None else list(rows)
    judged = invert_qrels(collection.qrels, [query_ids[row] for row in chosen])
    order = text_order(matrix, chosen)
    metadata = {query.id: query.metadata for query in collection.queries}
    exclusions = any(_is_exclusion(metadata[query_ids[row]], violation_kinds) for row in chosen)
    rankings: dict[str, list[str]] = {}
    kept: list[str] = []
    for column, item in enumerate(collection.items):
        if any(score >= 1 for score in judged.get(item.id, {}).values()):
            kept.append(item.id)
            rankings[item.id] = [query_ids[row] for row in order[column]]
    values = per_query_measures({item: judged[item] for item in kept}, rankings)
    concepts = collection.item_concepts if exclusions else None
    return [{"item_id": item, "relevant": [q for q, s in judged[item].items() if s >= 1], **values[item],
             VIOLATION: _violation(rankings[item][:TOP_STORED], item, metadata, concepts, violation_kinds),
             "top": rankings[item][:TOP_STORED]} for item in kept]


def _summary(rows: Sequence[dict[str, Any]], baseline: Sequence[dict[str, Any]] | None,
             texts: int) -> dict[str, Any]:
    summary = group_summary(rows, baseline)
    summary["items"] = summary.pop("queries")
    summary["texts"] = texts
    return summary


def a2t_block(
    collection: BeirCollection, matrices: Mapping[str, npt.NDArray[Any]], by: Sequence[str],
    violation_kinds: Sequence[str] = ("without",),
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """Every system's audio-to-text records (all texts) and the ``a2t`` block of ``metrics.json``.

    Args:
        collection: the BEIR collection.
        matrices: system -> its (queries, items) scores; ``baseline`` first (the t-tests' reference).
        by: the query fields to break down by (each value restricts the candidate texts).
        violation_kinds: as :attr:`~fortekit.search.eval.beir_eval.BeirSettings.violation_kinds`.

    Returns:
        ``(records, block)``: system -> per-item records over every text; and ``{"items", "texts",
        "dropped_items", "systems", "breakdown", "chance"}`` (``systems`` rows as text to audio's,
        ``items`` and ``texts`` counted per row; ``chance``: ``all`` and field -> value -> levels).

    Example:
        >>> records, block = a2t_block(collection, {"baseline": matrix}, ["kind"])  # doctest: +SKIP
        >>> block["systems"]["baseline"]["nDCG@10"]  # doctest: +SKIP
        0.41
    """
    def evaluate(rows: Sequence[int] | None) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any], int]:
        records = {name: a2t_records(collection, matrix, rows, violation_kinds)
                   for name, matrix in matrices.items()}
        texts = len(collection.queries) if rows is None else len(rows)
        reference = records.get("baseline")
        table = {name: _summary(rows_, None if name == "baseline" else reference, texts)
                 for name, rows_ in records.items()}
        return records, table, texts

    records, systems, texts = evaluate(None)
    evaluated = len(next(iter(records.values()), []))
    query_ids = [query.id for query in collection.queries]
    chance: dict[str, Any] = {"all": chance_levels(invert_qrels(collection.qrels), texts)}
    breakdown: dict[str, Any] = {}
    for name in by:
        groups = query_groups([query.metadata for query in collection.queries], name)
        breakdown[name] = {}
        chance[name] = {}
        for value, members in groups.items():
            _, table, count = evaluate(members)
            breakdown[name][value] = table
            chance[name][value] = chance_levels(
                invert_qrels(collection.qrels, [query_ids[row] for row in members]), count)
    block = {"items": evaluated, "texts": texts, "dropped_items": len(collection.items) - evaluated,
             "systems": systems, "breakdown": breakdown, "chance": chance}
    return records, block
