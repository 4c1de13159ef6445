"""The modality-gap figure of ``fortekit eval --beir`` on audio items: queries against their clips.

Each query is paired with its first most relevant item (qrels order), the pairs the plot of
:func:`fortekit.search.eval.plots.plot_modality_gap` draws: ``before`` is f_T(q) against the
audio embedding e_a; ``after`` is Stage 1's q* against h(e_a) (Stage 2's head), for what the
run computed (q* when a Stage 1 system ran, h(e_a) when ``--projection`` was given).

Example:
    >>> pairs = relevant_pairs(["q1", "q2"], ["d1", "d2"], {"q1": {"d2": 1, "d1": 2}, "q2": {"d1": 0}})
    >>> pairs
    [(0, 0)]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fortekit.search.eval.beir_data import BeirData

__all__ = ["modality_gap", "relevant_pairs"]


def relevant_pairs(query_ids: Sequence[str], item_ids: Sequence[str],
                   qrels: Mapping[str, Mapping[str, int]]) -> list[tuple[int, int]]:
    """(query row, item row) of each query's first most relevant item; queries with none are left out.

    Example:
        >>> relevant_pairs(["q"], ["a", "b"], {"q": {"b": 1}})
        [(0, 1)]
    """
    rows = {item: row for row, item in enumerate(item_ids)}
    pairs: list[tuple[int, int]] = []
    for position, query in enumerate(query_ids):
        judged = [(score, item) for item, score in qrels.get(query, {}).items() if score > 0 and item in rows]
        if judged:
            best = max(score for score, _ in judged)
            pairs.append((position, rows[next(item for score, item in judged if score == best)]))
    return pairs


def modality_gap(data: BeirData, out: Path, *, seed: int = 0, draw: bool = True,
                 log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The gap statistics per panel and, with ``draw``, ``out/modality_gap.png``.

    Args:
        data: the run's data (its queries and items already encoded).
        out: the output folder.
        seed: UMAP's random state.
        draw: draw the UMAP figure (needs umap-learn); the statistics are computed either way.
        log: where a skipped plot is said.

    Returns:
        ``{panel title: {"paired_cosine", "centroid_distance"}, "pairs": n, "plot": file or why not}``.

    Example:
        >>> modality_gap(data, Path("runs/audio"))  # doctest: +SKIP
        {'before: f_T(q) and e_a': {'paired_cosine': 0.31, ...}, ...}
    """
    import torch

    from fortekit.errors import MissingDependencyError
    from fortekit.search.eval.plots import gap_statistics, plot_modality_gap

    pairs = relevant_pairs(data.query_ids, data.item_ids, data.collection.qrels)
    q_rows = torch.tensor([q for q, _ in pairs], dtype=torch.long)
    i_rows = torch.tensor([i for _, i in pairs], dtype=torch.long)
    panels: dict[str, tuple[Any, Any]] = {
        "before: f_T(q) and e_a": (data.queries[q_rows], data.items[i_rows]),
    }
    if "stage1" in data.__dict__ or data.projection is not None:
        query = data.stage1[0].q_star[q_rows] if "stage1" in data.__dict__ else data.queries[q_rows]
        items = data.items[i_rows]
        if data.projection is not None:
            items = data.retriever(formula=False, rerank=None, projected=True).items.cpu()[i_rows]
        title = ("after: " + ("q*" if "stage1" in data.__dict__ else "f_T(q)") + " and "
                 + ("h(e_a)" if data.projection is not None else "e_a"))
        panels[title] = (torch.as_tensor(query).float(), items.float())
    result: dict[str, Any] = {title: gap_statistics(*pair) for title, pair in panels.items()}
    result["pairs"] = len(pairs)
    if draw and pairs:
        try:
            result["plot"] = str(plot_modality_gap(panels, out / "modality_gap.png", seed=seed))
        except MissingDependencyError as exc:
            result["plot"] = f"not drawn: {exc}"
            if log is not None:
                log(f"modality gap plot skipped: {exc}")
    return result
