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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit import __version__
from fortekit.errors import Errors, EvaluationError
from fortekit.search.eval.data import EmbeddedCollection, ItemText, file_sha256, load_split
from fortekit.search.eval.report import system_row, write_per_query_file
from fortekit.search.eval.stage1 import Stage1Cache, Stage1Output, anchor_source, cache_key
from fortekit.search.eval.sweep import SWEEPABLE, parse_sweep
from fortekit.search.eval.systems import Direction, RankedRun, System, ablation_systems, rank_collection
from fortekit.search.stage1.config import SearchConfig

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.search.formula_scoring import FormulaScorer
    from fortekit.search.stage1.anchors import AnchorBank
    from fortekit.search.stage1.beam import Refiner

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
        search: Stage 1's configuration.
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
    anchors: tuple[str, ...] = ("bank", "none", "proxy", "oracle")
    search: SearchConfig = field(default_factory=SearchConfig.online)
    alpha: float = 0.3
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
            (bool(self.anchors), "--anchors is empty", "Name at least one of none, proxy, bank, oracle."),
            (bool(self.directions), "no direction", "Use t2a, a2t or both."),
        ]
        checks += [
            (d in ("t2a", "a2t"), f"the direction {d!r}", "Use t2a, a2t or both.") for d in self.directions
        ]
        for ok, problem, fix in checks:
            if not ok:
                raise EvaluationError(Errors.E494.format(problem=f"{problem} is not valid", fix=fix))

    def to_dict(self) -> dict[str, Any]:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values["search"] = self.search.to_dict()
        values["sweeps"] = {name: list(v) for name, v in self.sweeps}
        return {k: str(v) if isinstance(v, Path) else v for k, v in values.items()}


@dataclass
class EvalResult:
    """What :func:`run_evaluation` wrote: the metrics document and the output files."""

    metrics: dict[str, Any]
    files: list[Path]
    seconds: float


class _Run:
    """The state of one evaluation: data, Stage 1 outputs, the Stage 2 head."""

    def __init__(self, settings: EvalSettings, log: Callable[[str], None]) -> None:
        self.settings = settings
        self.log = log
        self.out = settings.out
        self.files: list[Path] = []
        self.stage1: dict[str, Stage1Output] = {}
        self.summary: dict[str, Any] = {}
        self.test: EmbeddedCollection
        self.train: EmbeddedCollection
        self.bank: AnchorBank | None = None
        self.refiner: Refiner
        self.cache: Stage1Cache
        self.key: dict[str, Any] = {}
        self.projected: torch.Tensor
        self.project_seconds = 0.0
        self._formula_scorer: FormulaScorer | None = None

    @property
    def primary(self) -> str:
        return self.settings.anchors[0]

    # -- preparation ---------------------------------------------------------------------------
    def prepare(self) -> None:
        from fortekit.plugins import get_backbone
        from fortekit.search.eval.data import embed_collection
        from fortekit.search.stage1.anchors import AnchorBank
        from fortekit.search.stage1.beam import Refiner

        s = self.settings
        split = load_split(s.test, s.train, n_train=s.n_train, limit_test=s.limit_test,
                           limit_train=s.limit_train)
        self.log(f"test clips {len(split.test)}, training clips {len(split.train)}; loading {s.backbone}")
        backbone = get_backbone(s.backbone, device=s.device)
        item_text: ItemText = "single" if s.item_text == "single" else "mean"  # checked in EvalSettings
        self.test = embed_collection(split.test, backbone, item_text=item_text, what="test")
        self.train = embed_collection(split.train, backbone, item_text=item_text, what="training")
        self.log(f"embedded {len(self.test)} test and {len(self.train)} training items "
                 f"({sum(self.test.seconds.values()) + sum(self.train.seconds.values()):.0f} s)")
        if "bank" in s.anchors:
            self.bank = AnchorBank.from_index(self.train.index)
        self.refiner = Refiner(backbone, "lexical", config=s.search, device=s.device)
        self.cache = Stage1Cache(self.refiner, self.out / "stage1", batch_size=s.stage1_batch, log=self.log)
        self.key = {
            "version": __version__, "backbone": s.backbone,
            "data": cache_key({
                "test": self.summary["data"]["test"]["sha256"],
                "train": (self.summary["data"]["train"] or {}).get("sha256"), "n_train": s.n_train,
                "limit_test": s.limit_test, "limit_train": s.limit_train, "item_text": s.item_text,
            }),
        }

    def stage1_for(self, part: str, anchors: str, config: SearchConfig | None = None) -> Stage1Output:
        """Stage 1 of the test or training queries with one anchor setting (cached)."""
        collection = self.test if part == "test" else self.train
        config = config or self.settings.search
        source = anchor_source(anchors, collection, self.bank)
        output = self.cache.run(f"{part}-{anchors}", collection.task.queries, source, config, self.key)
        if config == self.settings.search:
            self.stage1[f"{part}-{anchors}"] = output
            self.log(f"stage 1 [{part}-{anchors}]: {len(output.seconds)} queries, "
                     f"{output.from_cache} from the cache, {output.refined:.0%} refined, "
                     f"{1000 * output.seconds_per_query:.0f} ms/query")
        return output

    def train_stage2(self) -> None:
        from fortekit.search.projection.head import (
            ProjectionConfig,
            ProjectionData,
            load_projection,
            project_embeddings,
        )
        from fortekit.search.projection.training import train_projection

        s = self.settings
        s1 = self.stage1_for("train", self.primary)
        negatives = self.refiner.encode_texts(s1.negative_texts).detach().to("cpu").float()
        data = ProjectionData(query=s1.q_star, audio=self.train.items, negative=negatives)
        config = ProjectionConfig(dim=data.dim, epochs=s.epochs, batch_size=min(s.batch_size, data.size),
                                  seed=s.seed)
        tick = time.perf_counter()
        report = train_projection(data, config=config, out_dir=self.out / "projection", device=s.device,
                                  resume=False, progress=False)
        head = load_projection(report.weights_path)
        train_seconds = time.perf_counter() - tick
        tick = time.perf_counter()
        import torch

        self.projected = torch.from_numpy(project_embeddings(head, self.test.items))
        self.project_seconds = time.perf_counter() - tick
        last = report.history[-1]
        self.summary["stage2"] = {
            "train_items": data.size, "epochs": s.epochs, "batch_size": config.batch_size,
            "final_loss": last.loss, "final_align": last.align, "final_logic": last.logic,
            "temperature": last.temperature, "train_seconds": train_seconds,
            "weights": str(report.weights_path),
        }
        self.log(f"stage 2: trained on {data.size} items, {s.epochs} epochs, loss {last.loss:.4f} "
                 f"({train_seconds:.0f} s)")

    # -- systems ---------------------------------------------------------------------------------
    def text_side(self, system: System, s1: Stage1Output | None = None) -> tuple[Any, Any, float]:
        """(text vectors, their predicate sets, seconds per text) of a system."""
        test = self.test
        n = len(test)
        if system.s1:
            output = s1 or self.stage1[f"test-{system.anchors}"]
            return output.q_star, output.phi_star_predicates, output.seconds_per_query
        seconds = test.seconds["encode_queries"] / n
        if system.s3:
            seconds += test.seconds["parse_queries"] / n
        return test.queries, test.query_predicates, seconds

    def item_side(self, system: System) -> tuple[Any, float]:
        """(item vectors, seconds per item) of a system."""
        test = self.test
        n = len(test)
        seconds = test.seconds["encode_items"] / n
        if system.s3:
            seconds += test.seconds["parse_items"] / n
        if system.s2:
            return self.projected, seconds + self.project_seconds / n
        return test.items, seconds

    def rank(
        self, system: System, direction: Direction, *, alpha: float | None = None,
        s1: Stage1Output | None = None,
    ) -> tuple[RankedRun, dict[str, float]]:
        texts, text_predicates, text_seconds = self.text_side(system, s1)
        items, item_seconds = self.item_side(system)
        targets = self.test.task.targets
        chosen = alpha if alpha is not None else (
            system.alpha if system.alpha is not None else self.settings.alpha
        )
        options: dict[str, Any] = {"rerank_mode": system.s3, "alpha": chosen, "top_n": self.settings.top_n}
        if direction == "t2a":
            if system.formula:
                options["formulas"] = self.formulas(system, s1)
                options["formula_scorer"] = self.formula_scorer
            run = rank_collection(texts, items, targets, query_predicates=text_predicates,
                                  item_predicates=self.test.item_predicates, **options)
            query_seconds, per_item = text_seconds, item_seconds
        else:
            run = rank_collection(items, texts, targets, query_predicates=self.test.item_predicates,
                                  item_predicates=text_predicates, **options)
            query_seconds, per_item = item_seconds, text_seconds
        n = len(self.test)
        if system.formula and direction == "t2a" and not system.s1:
            query_seconds += self.test.seconds["parse_queries"] / n
        timing = {
            "ms_per_query": 1000 * (query_seconds + run.seconds / n),
            "s_per_1000_items": 1000 * per_item,
            "ms_per_query_ranking": 1000 * run.seconds / n,
            "ms_per_query_rerank": 1000 * run.rerank_seconds / n,
        }
        return run, timing

    @property
    def formula_scorer(self) -> FormulaScorer:
        """Formula scoring with its defaults, through Stage 1's text cache."""
        if self._formula_scorer is None:
            from fortekit.search.formula_scoring import FormulaScorer

            self._formula_scorer = FormulaScorer(self.refiner.encoder)
        return self._formula_scorer

    def formulas(self, system: System, s1: Stage1Output | None = None) -> list[Formula | None]:
        """The formula of each test query: phi* with Stage 1, else Pi(q)."""
        if not system.s1:
            return list(self.test.query_formulas)
        from fortekit.errors import FormulaSyntaxError
        from fortekit.fol import parse_formula

        output = s1 or self.stage1[f"test-{system.anchors}"]
        formulas: list[Formula | None] = []
        for text in output.phi_star:
            try:
                formulas.append(parse_formula(text))
            except FormulaSyntaxError:
                formulas.append(None)  # the whole-query similarity, as for any formula with nothing to score
        return formulas

    def evaluate_direction(self, direction: Direction, systems: Sequence[System]) -> dict[str, Any]:
        test = self.test
        folder = self.out / ("per_query" if direction == "t2a" else "per_query_a2t")
        rows: dict[str, Any] = {}
        baseline: RankedRun | None = None
        for system in systems:
            if system.formula and direction != "t2a":
                continue  # formula scoring scores a text query's formula: text to audio only
            run, timing = self.rank(system, direction)
            baseline = baseline or run
            rows[system.name] = system_row(run.ranks, baseline.ranks, timing=timing, system=system.to_dict())
            extra = {}
            if system.s1:
                extra["refined"] = self.stage1[f"test-{system.anchors}"].refined_texts
            queries = test.task.queries if direction == "t2a" else test.task.clip_ids
            self.files.append(write_per_query_file(
                folder / f"{system.name}.jsonl", queries, run.ranks, test.task.targets, run.top,
                test.task.clip_ids, extra,
            ))
        return {"queries": len(test), "items": len(test), "systems": rows}


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
        EvaluationError: bad data or options (E480-E499).
        FortekitError: from the backbone, Stage 1 or Stage 2, with their codes.
    """
    from fortekit.search.eval.output import write_outputs
    from fortekit.search.eval.sweep import run_sweep

    started = time.perf_counter()
    run = _Run(settings, log or (lambda line: None))
    try:
        settings.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EvaluationError(Errors.E498.format(path=settings.out, problem=exc)) from None
    run.summary["data"] = _data_summary(settings)
    run.prepare()
    for anchors in settings.anchors:  # the primary setting first: its timing sees a cold text cache
        run.stage1_for("test", anchors)
    run.train_stage2()
    systems = ablation_systems(run.primary, settings.anchors)
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
    metrics["sweeps"] = {name: run_sweep(run, name, values) for name, values in settings.sweeps}
    files = write_outputs(run, metrics, started)
    return EvalResult(metrics, files, time.perf_counter() - started)


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

