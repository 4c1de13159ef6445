"""The benchmark behind ``fortekit eval``: every S1/S2/S3 system on one test collection.

The caption-indexed setting (no audio weights needed): each test clip is an item
represented by the mean embedding of its captions 2-5 (or caption 2 alone), caption 1
is the query. The training collection gives the anchor bank (item embeddings and parsed
item captions) and Stage 2's training data: Stage 1's q* of each training query, the
training item embeddings, and f_T(G(phi-)) of the first negative elaboration. Nothing
is tuned on the test part; the sweeps that run on it are sensitivity analysis only.

Stage 1 runs once per query set, anchor setting and configuration, cached as JSONL in
``<out>/stage1`` (:mod:`fortekit.search.eval.stage1`); item captions are parsed once.

Example:
    >>> settings = EvalSettings(test=Path("clotho.csv"), n_train=2000, out=Path("runs/clotho"))
    >>> result = run_evaluation(settings, log=print)  # doctest: +SKIP
    >>> result.metrics["t2a"]["systems"]["S1"]["R@1"]  # doctest: +SKIP
    0.55
"""

from __future__ import annotations

import dataclasses
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fortekit import __version__
from fortekit.errors import Errors, EvaluationError
from fortekit.search.eval.benchmark import CaptionBenchmark
from fortekit.search.eval.data import file_sha256
from fortekit.search.eval.sweep import SWEEPABLE, parse_sweep
from fortekit.search.eval.systems import DEFAULT_ANCHORS, ablation_systems
from fortekit.search.stage1.config import RefineConfig

__all__ = ["SWEEPABLE", "EvalResult", "EvalSettings", "environment", "parse_sweep", "run_evaluation"]


@dataclass(frozen=True)
class EvalSettings:
    """Everything a run depends on (written to ``config.json``).

    Attributes:
        test: the test collection (Clotho or AudioCaps CSV).
        out: the output directory.
        train: the training collection (None: split ``test`` with ``n_train``).
        n_train: with ``train`` None or the test file, the first n_train clips train.
        item_text: "mean" (captions 2-5 averaged) or "single" (caption 2).
        limit_test: only the first N test clips.
        limit_train: only the first N training clips.
        backbone: the text encoder's registered name.
        device: "auto", "cpu", "cuda", ...
        epochs: Stage 2 training epochs.
        batch_size: Stage 2 batch size.
        anchors: Stage 1 anchor settings; the first drives the ablation and Stage 2.
        elaborator: Stage 1's elaborator: "lexical" (vocabulary templates) or "corpus" (the
            nearest item captions of the collection searched, parsed once).
        refine: Stage 1's configuration.
        alpha: Stage 3's weight of s_pred.
        top_n: how many items Stage 3 re-ranks.
        directions: "t2a", "a2t" or both.
        sweeps: (name, values) sensitivity sweeps on the test part.
        umap: draw the modality-gap plot.
        seed: Stage 2's seed and UMAP's.
        stage1_batch: queries per Stage 1 batch.
    """

    test: Path
    out: Path
    train: Path | None = None
    n_train: int | None = None
    item_text: str = "mean"
    limit_test: int | None = None
    limit_train: int | None = None
    backbone: str = "minilm"
    device: str = "auto"
    epochs: int = 20
    batch_size: int = 128
    anchors: tuple[str, ...] = ("feedback", "none")
    elaborator: str = "corpus"
    refine: RefineConfig = field(default_factory=RefineConfig.feedback)
    alpha: float = 0.03
    top_n: int = 50
    directions: tuple[str, ...] = ("t2a", "a2t")
    sweeps: tuple[tuple[str, tuple[float, ...]], ...] = ()
    umap: bool = True
    seed: int = 0
    stage1_batch: int = 64

    def __post_init__(self) -> None:
        checks = [
            (self.item_text in ("mean", "single"), f"--item-text {self.item_text!r}", "Use mean or single."),
            (0.0 <= self.alpha <= 1.0, f"--alpha {self.alpha}", "Pass a number in [0, 1]."),
            (self.top_n >= 1, f"--top-n {self.top_n}", "Pass 1 or more."),
            (self.epochs >= 1, f"--epochs {self.epochs}", "Pass 1 or more."),
            (self.batch_size >= 2, f"--batch-size {self.batch_size}", "Pass 2 or more (InfoNCE)."),
            (bool(self.anchors), "--anchors is empty",
             "Name at least one of none, proxy, bank, feedback, oracle."),
            (self.elaborator in ("lexical", "corpus"), f"--elaborator {self.elaborator!r}",
             "Use lexical or corpus."),
            (bool(self.directions), "no direction", "Use t2a, a2t or both."),
        ]
        checks += [
            (d in ("t2a", "a2t"), f"the direction {d!r}", "Use t2a, a2t or both.") for d in self.directions
        ]
        for ok, problem, fix in checks:
            if not ok:
                raise EvaluationError(Errors.E520.format(problem=f"{problem} is not valid", fix=fix))

    def to_dict(self) -> dict[str, Any]:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values["refine"] = self.refine.to_dict()
        values["sweeps"] = {name: list(v) for name, v in self.sweeps}
        return {k: str(v) if isinstance(v, Path) else v for k, v in values.items()}


@dataclass
class EvalResult:
    """What :func:`run_evaluation` wrote: the metrics document and the output files."""

    metrics: dict[str, Any]
    files: list[Path]
    seconds: float


def run_evaluation(settings: EvalSettings, log: Callable[[str], None] | None = None) -> EvalResult:
    """Run the benchmark and write its outputs to ``settings.out``.

    Writes ``metrics.json``, ``results.md``, ``ablation.png`` (and ``ablation_a2t.png``),
    ``per_query/<system>.jsonl`` (``per_query_a2t/`` for audio-to-text),
    ``sweep_<name>.png`` and ``.json`` per sweep, ``modality_gap.png`` and ``config.json``.

    Args:
        settings: what to run.
        log: called with progress lines (default: silent).

    Returns:
        The :class:`EvalResult`.

    Raises:
        DataFileError: a collection file is missing (E487).
        EvaluationError: bad data or options (E480-E525).
        OutputError: ``out`` a link (E741), busy with another run (E742), a failed write (E743).
        FortekitError: from the backbone, Stage 1 or Stage 2, with their codes.
    """
    from fortekit.search.eval.report import open_output_folder

    started = time.perf_counter()
    run = CaptionBenchmark(settings, log or (lambda line: None))
    lock = open_output_folder(settings.out)  # marked when new, locked for the run (E742)
    try:
        return _run(run, settings, started)
    finally:
        lock.release()


def _run(run: CaptionBenchmark, settings: EvalSettings, started: float) -> EvalResult:
    """The body of :func:`run_evaluation`, with ``settings.out`` created and locked."""
    from fortekit.search.eval.output import write_outputs
    from fortekit.search.eval.sweep import run_sweep

    run.summary["data"] = _data_summary(settings)
    run.prepare()
    for anchors in settings.anchors:  # the primary setting first: its timing sees a cold text cache
        run.stage1_for("test", anchors)
    run.train_stage2()
    head = _shipped_head(run, settings)
    systems = ablation_systems(run.primary, settings.anchors, shipped_head=head)
    if any(system.anchors == DEFAULT_ANCHORS and system.s1 for system in systems):
        run.stage1_for("test", DEFAULT_ANCHORS)
    metrics: dict[str, Any] = {"fortekit_version": __version__}
    for direction in settings.directions:
        metrics[direction] = run.evaluate_direction(direction, systems)  # type: ignore[arg-type]
        run.log(f"{direction}: {len(systems)} systems ranked")
    metrics["stage1"] = {
        name: {"queries": len(output.seconds), "refined": output.refined,
               "ms_per_query": 1000 * output.seconds_per_query, "from_cache": output.from_cache}
        for name, output in run.stage1.items()
    }
    metrics["stage2"] = run.summary["stage2"]
    metrics["shipped_head"] = run.summary.get("shipped_head")
    metrics["sweeps"] = {name: run_sweep(run, name, values) for name, values in settings.sweeps}
    files = write_outputs(run, metrics, started)
    return EvalResult(metrics, files, time.perf_counter() - started)


def _shipped_head(run: CaptionBenchmark, settings: EvalSettings) -> bool:
    """Whether a Stage 2 head ships for the backbone; say so (W850, in the log and the metrics)
    when it saw test captions: the default row is then no held-out figure."""
    from fortekit.errors import Errors
    from fortekit.search.projection.shipped import shipped_head, training_overlap

    if shipped_head(settings.backbone, int(run.refiner.backbone.dim)) is None:
        run.summary["shipped_head"] = None
        return False
    # A clip counts as seen when both captions the benchmark reads of it (the query and the item's
    # caption) were training captions: short generic captions ("a door opens and closes") recur
    # word for word across unrelated clips, and one shared caption does not make a clip seen.
    pairs = list(zip(run.test.task.queries, run.test.index.captions, strict=True))
    seen = sum(training_overlap(settings.backbone, [query, caption or ""]) == 2 for query, caption in pairs)
    summary: dict[str, Any] = {"backbone": settings.backbone, "test_clips_seen_in_training": seen}
    if seen:
        summary["warning"] = Errors.W850.format(backbone=settings.backbone, count=seen, total=len(pairs),
                                                row="default")
        run.log(f"warning: {summary['warning']}")
    run.summary["shipped_head"] = summary
    return True


def _data_summary(settings: EvalSettings) -> dict[str, Any]:
    """The data files and their SHA-256 (a missing file is reported by the loader, E487)."""

    def describe(path: Path | None) -> dict[str, str] | None:
        if path is None or not Path(path).is_file():
            return None
        return {"path": str(Path(path).resolve()), "sha256": file_sha256(path)}

    return {"test": describe(settings.test) or {"path": str(settings.test), "sha256": ""},
            "train": describe(settings.train)}


def environment() -> dict[str, str]:
    """Versions that a result depends on (for ``config.json``)."""
    import numpy
    import torch

    return {"fortekit": __version__, "python": platform.python_version(), "torch": torch.__version__,
            "numpy": numpy.__version__, "platform": platform.platform()}

