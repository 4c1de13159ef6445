"""Figures of ``fortekit eval``: the ablation bar chart, sensitivity curves, the modality gap.

Every figure is drawn on a :class:`matplotlib.figure.Figure` rendered by the Agg canvas,
without pyplot, so nothing depends on a display or touches global plotting state. The
modality-gap plot needs ``umap-learn`` (``pip install 'fortekit[eval]'``).

Example:
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> rows = {"baseline": {"R@1": 0.5, "R@5": 0.7, "R@10": 0.8},
    ...         "S1": {"R@1": 0.55, "R@5": 0.7, "R@10": 0.8}}
    >>> plot_ablation(rows, out / "ablation.png").name
    'ablation.png'
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["gap_statistics", "plot_ablation", "plot_modality_gap", "plot_sweep"]

_BAR_METRICS = ("R@1", "R@5", "R@10")


def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=120)
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Figure, path: Path) -> Path:
    from fortekit.safe_write import atomic_write, write_error

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(path.parent, exc) from exc
    kind = path.suffix.lstrip(".").lower() or "png"  # the temporary name has no telling suffix
    return atomic_write(path, lambda temporary: figure.savefig(temporary, format=kind, bbox_inches="tight"))


def plot_ablation(
    systems: Mapping[str, Mapping[str, Any]], path: str | Path, *, title: str = "Ablation",
) -> Path:
    """Grouped bars of R@1, R@5 and R@10 (in %) per system, like the paper's ablation table.

    Args:
        systems: system name -> a dict with the metrics as fractions.
        path: the PNG to write.
        title: the figure title.

    Returns:
        The path written.

    Raises:
        EvaluationError: the file cannot be written (E524).
    """
    names = list(systems)
    figure = _figure(max(6.0, 0.65 * len(names) + 2.0), 4.2)
    axes = figure.add_subplot()
    width = 0.8 / len(_BAR_METRICS)
    positions = np.arange(len(names))
    for offset, metric in enumerate(_BAR_METRICS):
        values = [100 * float(systems[name].get(metric, math.nan)) for name in names]
        bars = axes.bar(positions + (offset - 1) * width, values, width, label=metric)
        if metric == "R@1":
            axes.bar_label(bars, fmt="%.1f", fontsize=6, padding=1)
    axes.set_xticks(positions, names, rotation=40, ha="right", fontsize=8)
    axes.set_ylabel("recall (%)")
    axes.set_title(title)
    axes.legend(fontsize=8, ncols=3, loc="lower right")
    axes.grid(axis="y", alpha=0.3)
    return _save(figure, Path(path))


def plot_sweep(
    name: str, values: Sequence[float], curves: Mapping[str, Sequence[float]], path: str | Path,
    *, baseline: float | None = None, metric: str = "R@1",
) -> Path:
    """R@1 (%) against a hyperparameter's value, one line per system (the sensitivity figure).

    Args:
        name: the hyperparameter ("alpha", "lambda", "beta", "tau").
        values: its values, in order.
        curves: system -> its metric (fraction) at each value.
        path: the PNG to write.
        baseline: the frozen baseline's metric, drawn as a dashed line.
        metric: the metric's name, for the axis label.

    Returns:
        The path written.

    Example:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "sweep_alpha.png"
        >>> plot_sweep("alpha", [0, 0.5], {"S3": [0.5, 0.52]}, out, baseline=0.5).exists()
        True
    """
    figure = _figure(5.5, 3.8)
    axes = figure.add_subplot()
    for system, series in curves.items():
        axes.plot(list(values), [100 * float(v) for v in series], marker="o", label=system)
    if baseline is not None:
        axes.axhline(100 * baseline, color="grey", linestyle="--", linewidth=1, label="baseline")
    axes.set_xlabel(name)
    axes.set_ylabel(f"{metric} (%)")
    axes.set_title(f"Sensitivity to {name} (test part: analysis only)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return _save(figure, Path(path))


def gap_statistics(queries: Any, items: Any) -> dict[str, float]:
    """Numbers for the modality gap of paired rows: mean paired cosine, centroid distance.

    Args:
        queries: (n, d) query vectors (numpy or torch).
        items: (n, d) their paired item vectors.

    Returns:
        ``{"paired_cosine": mean cos(q_i, e_i), "centroid_distance": ||mean q - mean e||}``
        over unit-normalised rows.

    Example:
        >>> gap_statistics(np.eye(2), np.eye(2))
        {'paired_cosine': 1.0, 'centroid_distance': 0.0}
    """
    q = _unit(queries)
    e = _unit(items)
    return {
        "paired_cosine": float(np.mean(np.sum(q * e, axis=1))),
        "centroid_distance": float(np.linalg.norm(q.mean(axis=0) - e.mean(axis=0))),
    }


def _unit(rows: Any) -> np.ndarray:
    array = rows.detach().cpu().float().numpy() if hasattr(rows, "detach") else np.asarray(rows, dtype=float)
    array = np.asarray(array, dtype=np.float64)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return np.asarray(array / np.maximum(norms, 1e-12))


def _umap_2d(points: np.ndarray, seed: int) -> np.ndarray:
    from fortekit.plugins._runtime import require

    umap = require("umap", "the modality-gap plot", note="Or pass --no-umap.")
    neighbours = max(2, min(15, len(points) - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # umap's and numba's chatter about threads and seeds
        reducer = umap.UMAP(n_neighbors=neighbours, random_state=seed, n_jobs=1, metric="cosine")
        return np.asarray(reducer.fit_transform(points))


def plot_modality_gap(
    panels: Mapping[str, tuple[Any, Any]], path: str | Path, *, max_pairs: int = 300, seed: int = 0,
    labels: tuple[str, str] = ("query", "item"),
) -> Path:
    """UMAP of paired query and item embeddings, a line between each pair, one panel per setting.

    Args:
        panels: title -> (queries (n, d), items (n, d)), e.g. {"before": (f_T(q), e_a),
            "after": (q*, h(e_a))}.
        path: the PNG to write.
        max_pairs: pairs drawn per panel (the first ones; UMAP cost grows with n).
        seed: UMAP's random state.
        labels: legend names of the two sides.

    Returns:
        The path written.

    Raises:
        MissingDependencyError: umap-learn is not installed (E205).
        EvaluationError: the file cannot be written (E524).
    """
    figure = _figure(5.0 * len(panels), 4.6)
    for position, (title, (queries, items)) in enumerate(panels.items(), start=1):
        q = _unit(queries)[:max_pairs]
        e = _unit(items)[:max_pairs]
        xy = _umap_2d(np.concatenate([q, e]), seed)
        q2, e2 = xy[: len(q)], xy[len(q):]
        axes = figure.add_subplot(1, len(panels), position)
        for (x0, y0), (x1, y1) in zip(q2, e2, strict=True):
            axes.plot([x0, x1], [y0, y1], color="grey", linewidth=0.4, alpha=0.5)
        axes.scatter(q2[:, 0], q2[:, 1], s=8, label=labels[0])
        axes.scatter(e2[:, 0], e2[:, 1], s=8, label=labels[1])
        stats = gap_statistics(q, e)
        axes.set_title(f"{title}\npaired cos {stats['paired_cosine']:.3f}, "
                       f"centroid gap {stats['centroid_distance']:.3f}", fontsize=9)
        axes.set_xticks([])
        axes.set_yticks([])
        axes.legend(fontsize=8)
    return _save(figure, Path(path))
