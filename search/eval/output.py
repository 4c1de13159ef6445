"""The files at the end of ``fortekit eval``: metrics.json, results.md, figures and config.json.

Example:
    >>> print(results_markdown({"t2a": {"queries": 2, "items": 2, "systems": {}}}, {}, 1.0).splitlines()[0])
    # fortekit eval results
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import MissingDependencyError
from fortekit.search.eval.report import markdown_table, write_json, write_text

if TYPE_CHECKING:
    from fortekit.search.eval.benchmark import CaptionBenchmark

__all__ = ["results_markdown", "write_outputs"]

_DIRECTIONS = {"t2a": "Text to audio", "a2t": "Audio to text"}


def write_outputs(run: CaptionBenchmark, metrics: dict[str, Any], started: float) -> list[Path]:
    """Write the modality-gap plot, the ablation charts, metrics.json, results.md and config.json.

    Args:
        run: the finished evaluation.
        metrics: the metrics document (the modality-gap numbers are added to it).
        started: the run's start, a ``time.perf_counter()`` value.

    Returns:
        Every file the run wrote (per-query files and sweeps included).

    Raises:
        EvaluationError: a file cannot be written (E524).
    """
    from fortekit.search.eval.evaluate import environment
    from fortekit.search.eval.plots import gap_statistics, plot_ablation, plot_modality_gap

    out = run.out
    primary = run.stage1[f"test-{run.primary}"]
    panels = {
        "before: f_T(q) and e_a": (run.test.queries, run.test.items),
        f"after: q* ({run.primary}) and h(e_a)": (primary.q_star, run.projected),
    }
    metrics["modality_gap"] = {title: gap_statistics(*pair) for title, pair in panels.items()}
    if run.settings.umap:
        try:
            run.files.append(plot_modality_gap(panels, out / "modality_gap.png", seed=run.settings.seed))
        except MissingDependencyError as exc:
            metrics["modality_gap"]["plot"] = f"not drawn: {exc}"
            run.log(f"modality gap plot skipped: {exc}")
    for direction in run.settings.directions:
        name = "ablation.png" if direction == "t2a" else "ablation_a2t.png"
        title = f"{_DIRECTIONS[direction]}: {len(run.test)} queries, anchors {run.primary}"
        run.files.append(plot_ablation(metrics[direction]["systems"], out / name, title=title))
    seconds = time.perf_counter() - started
    metrics["wall_seconds"] = seconds
    run.files.append(write_json(out / "metrics.json", metrics))
    markdown = results_markdown(metrics, run.settings.to_dict(), seconds)
    run.files.append(write_text(out / "results.md", markdown))
    config = {
        "settings": run.settings.to_dict(), "environment": environment(), "data": run.summary["data"],
        "counts": {
            "test_queries": len(run.test), "train_items": len(run.train),
            "test_dropped_clips": run.test.task.dropped, "train_dropped_clips": run.train.task.dropped,
        },
        "stage1_key": run.key, "projection": run.summary.get("stage2"),
    }
    run.files.append(write_json(out / "config.json", config))
    return list(run.files)


def results_markdown(metrics: Mapping[str, Any], settings: Mapping[str, Any], seconds: float) -> str:
    """The human-readable report: one ablation table per direction, then Stage 1/2 and sweep notes."""
    lines = ["# fortekit eval results", ""]
    if settings:
        lines += [
            f"Test `{settings.get('test')}`, training `{settings.get('train') or settings.get('test')}` "
            f"(n_train {settings.get('n_train')}), item text `{settings.get('item_text')}`, backbone "
            f"`{settings.get('backbone')}`, anchors {', '.join(settings.get('anchors', ()))} (the first "
            f"drives S1 in the combinations), alpha {settings.get('alpha')}, top {settings.get('top_n')}, "
            f"Stage 2 epochs {settings.get('epochs')}. Wall time {seconds:.0f} s.",
            "",
        ]
    for direction, title in _DIRECTIONS.items():
        if direction not in metrics:
            continue
        block = metrics[direction]
        lines += [f"## {title} ({block['queries']} queries, {block['items']} items)", "",
                  markdown_table(block["systems"]), ""]
    lines += [
        "Metrics in %. p: two-sided paired t-test on per-query R@1 against the baseline. "
        "ms / query: the query side (encoding, Stage 1, Stage 3 predicates) plus ranking and "
        "re-ranking; s / 1,000 items: the item side (encoding, Stage 2 projection, parsing the "
        "item caption for Stage 3). S1 rows after the first anchor setting reuse a warm text cache.",
        "`default` is what `fortekit search` runs on a caption-indexed collection (docs/defaults.md: "
        "Stage 1 with the corpus elaborator and feedback anchors, the Stage 2 head shipped for the "
        "backbone, formula scoring, Stage 3 with alpha 0.03); `default-X` leaves the stage X out.",
        "",
    ]
    shipped = metrics.get("shipped_head") or {}
    if shipped.get("warning"):
        lines += [f"**Warning.** {shipped['warning']}", ""]
    stage1 = metrics.get("stage1", {})
    if stage1:
        lines += ["## Stage 1", "", "| run | queries | refined | ms / query |", "|---|---|---|---|"]
        lines += [f"| {name} | {row['queries']} | {100 * row['refined']:.1f}% | {row['ms_per_query']:.0f} |"
                  for name, row in stage1.items()]
        lines.append("")
    for name, sweep in metrics.get("sweeps", {}).items():
        lines += [f"## Sweep of {name} (test part: sensitivity analysis only)", "",
                  "| system | " + " | ".join(f"{name}={v:g}" for v in sweep["values"]) + " |",
                  "|---|" + "---|" * len(sweep["values"])]
        for system, series in sweep["systems"].items():
            lines.append(f"| {system} R@1 | " + " | ".join(f"{100 * v:.2f}" for v in series["R@1"]) + " |")
        lines.append("")
    gap = metrics.get("modality_gap")
    if gap:
        lines += ["## Modality gap (test pairs)", ""]
        lines += [f"- {title}: paired cosine {row['paired_cosine']:.4f}, centroid distance "
                  f"{row['centroid_distance']:.4f}" for title, row in gap.items() if isinstance(row, dict)]
        lines.append("")
    return "\n".join(lines)
