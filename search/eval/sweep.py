"""Sensitivity sweeps of ``fortekit eval``: R@1 against alpha (Stage 3) or lambda, beta, tau (Stage 1).

A sweep runs on the TEST part, text to audio, so it shows how sensitive the result is
to a setting; it is not a way to choose one (that would tune on the test part).

* ``alpha``: the systems with Stage 3 (S3, S1+S3, S1+S2+S3) re-ranked with each value;
* ``lambda``, ``beta``, ``tau``: Stage 1 of the test queries is searched again with each
  value (primary anchor setting, cached like every Stage 1 run), then S1, S1+S2 and
  S1+S2+S3 are ranked with the Stage 2 head trained at the default setting.

Example:
    >>> stage1_systems("bank")[0].name
    'S1'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, EvaluationError
from fortekit.search.eval.metrics import retrieval_metrics
from fortekit.search.eval.report import METRIC_NAMES, write_json
from fortekit.search.eval.systems import System

if TYPE_CHECKING:
    from fortekit.search.eval.benchmark import CaptionBenchmark

__all__ = ["SWEEPABLE", "alpha_systems", "parse_sweep", "run_sweep", "stage1_systems"]

#: --sweep name -> the setting it changes (S3's alpha, or a RefineConfig field of Stage 1).
SWEEPABLE = {"alpha": "alpha", "lambda": "lam", "beta": "beta", "tau": "tau"}


def parse_sweep(spec: str) -> tuple[str, tuple[float, ...]]:
    """``NAME=v1,v2,...`` as (name, values).

    Raises:
        EvaluationError: no ``=``, an unknown name or a value that is not a number (E521).

    Example:
        >>> parse_sweep("alpha=0,0.1, 0.3")
        ('alpha', (0.0, 0.1, 0.3))
    """
    name, sep, text = spec.partition("=")
    name = name.strip().lower()

    def fail(problem: str) -> EvaluationError:
        return EvaluationError(Errors.E521.format(spec=spec, problem=problem, names=", ".join(SWEEPABLE)))

    if not sep:
        raise fail("there is no '='")
    if name not in SWEEPABLE:
        raise fail(f"{name!r} is not a setting that can be swept")
    try:
        values = tuple(float(value) for value in text.split(",") if value.strip())
    except ValueError:
        raise fail("a value is not a number") from None
    if not values:
        raise fail("no values")
    if not all(math.isfinite(value) for value in values):
        raise fail("a value is not finite")
    if name == "alpha" and not all(0.0 <= value <= 1.0 for value in values):
        raise fail("alpha values must lie in [0, 1]")
    return name, values


def alpha_systems(anchors: str) -> list[System]:
    """The systems an alpha sweep ranks (paper s_pred)."""
    return [
        System("S3", False, False, "paper", anchors),
        System("S1+S3", True, False, "paper", anchors),
        System("S1+S2+S3", True, True, "paper", anchors),
    ]


def stage1_systems(anchors: str) -> list[System]:
    """The systems a lambda, beta or tau sweep ranks."""
    return [
        System("S1", True, False, None, anchors),
        System("S1+S2", True, True, None, anchors),
        System("S1+S2+S3", True, True, "paper", anchors),
    ]


def run_sweep(run: CaptionBenchmark, name: str, values: Sequence[float]) -> dict[str, Any]:
    """Rank the sweep's systems at each value; write ``sweep_<name>.json`` and ``.png``.

    Args:
        run: the evaluation's state (data, Stage 1 cache, Stage 2 head).
        name: "alpha", "lambda", "beta" or "tau".
        values: the values, in order.

    Returns:
        The sweep's JSON document (also in ``metrics.json``).
    """
    from fortekit.search.eval.plots import plot_sweep

    systems = alpha_systems(run.primary) if name == "alpha" else stage1_systems(run.primary)
    curves: dict[str, dict[str, list[float]]] = {
        system.name: {metric: [] for metric in METRIC_NAMES} for system in systems
    }
    refined: list[float] = []
    for value in values:
        s1 = None
        if name != "alpha":
            config = run.settings.refine.replace(**{SWEEPABLE[name]: value})
            s1 = run.stage1_for("test", run.primary, config)
            refined.append(s1.refined)
        for system in systems:
            ranked, _ = run.rank(system, "t2a", alpha=value if name == "alpha" else None, s1=s1)
            for metric, score in retrieval_metrics(ranked.ranks).items():
                curves[system.name][metric].append(score)
        run.log(f"sweep {name}={value}: " + ", ".join(
            f"{system.name} R@1 {100 * curves[system.name]['R@1'][-1]:.2f}" for system in systems
        ))
    baseline_run, _ = run.rank(System("baseline", False, False, None, run.primary), "t2a")
    baseline = retrieval_metrics(baseline_run.ranks)
    document: dict[str, Any] = {
        "name": name, "setting": SWEEPABLE[name], "values": list(values), "direction": "t2a",
        "anchors": run.primary, "baseline": baseline, "systems": curves,
        "note": "computed on the test part: sensitivity analysis only, not for choosing a value",
    }
    if refined:
        document["refined"] = refined
    run.files.append(write_json(run.out / f"sweep_{name}.json", document))
    run.files.append(plot_sweep(
        name, values, {system: series["R@1"] for system, series in curves.items()},
        run.out / f"sweep_{name}.png", baseline=baseline["R@1"],
    ))
    return document
