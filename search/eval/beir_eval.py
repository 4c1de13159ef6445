"""``fortekit eval --beir DIR``: every registered system on a multi-relevance BEIR collection.

The folder is read by :func:`fortekit.search.eval.beir.load_beir`; the systems come from
:data:`fortekit.search.eval.beir_systems.SYSTEMS`; the metrics are trec_eval's through
ir-measures (:mod:`fortekit.search.eval.beir_metrics`), with violation@10 when the folder has
``item_concepts.jsonl`` (read for that metric only) and violated@10, the grounded violation check
over the items' captions, for every query whose formula excludes a sound
(:mod:`fortekit.search.eval.grounded`). Outputs in ``out``: ``metrics.json``,
``results.md``, ``per_query/<system>.jsonl``, ``config.json``, Stage 1's cache ``stage1/`` and,
with audio items, ``modality_gap.png``. Both directions by default (``directions``): text to
audio ranks the items for each query; audio to text ranks the query texts for each item by the
scores the system gave the pairs (:mod:`fortekit.search.eval.beir_a2t`), written to
``per_query_a2t/<system>.jsonl`` and the ``a2t`` block of ``metrics.json``.

Example:
    >>> settings = BeirSettings(beir=Path("negation/audiocaps_val"), out=Path("runs/val"),
    ...                         systems=("baseline", "S3-polarity"))
    >>> settings.systems
    ('baseline', 'S3-polarity')
    >>> run_beir_evaluation(settings, log=print)  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from fortekit import __version__
from fortekit.errors import Errors, EvaluationError
from fortekit.search.eval.beir import BeirCollection, load_beir
from fortekit.search.eval.beir_metrics import (
    GROUNDED_VIOLATION,
    VIOLATION,
    breakdown_fields,
    group_summary,
    per_query_measures,
    query_groups,
    violation_at,
)
from fortekit.search.eval.beir_report import results_markdown
from fortekit.search.eval.beir_systems import SYSTEMS, BeirData, parse_systems
from fortekit.search.eval.evaluate import EvalResult
from fortekit.search.eval.grounded import TOP_MARKS, add_grounded, beir_marks
from fortekit.search.formula.scoring import FormulaScoringConfig
from fortekit.search.stage1.config import RefineConfig

__all__ = ["ANCHORS", "DIRECTIONS", "BeirSettings", "results_markdown", "run_beir_evaluation"]

ANCHORS = ("none", "proxy", "feedback")
DIRECTIONS = ("t2a", "a2t")
TOP_STORED = 10


@dataclass(frozen=True)
class BeirSettings:
    """Everything a ``--beir`` run depends on (written to ``config.json``).

    Attributes:
        beir: the BEIR folder.
        out: the output directory.
        systems: the systems to run (``baseline`` is added first when missing; empty: those run
            by default, every one but ``S1`` and ``S2``).
        by: the metadata fields to break down by (None: every field with 2-10 values).
        backbone: the encoder's registered name.
        backbone_options: its options (e.g. ``{"model": "runs/clap"}`` for ``small-clap``).
        captioner: a captioner plug-in that captions the audio items (Stage 3's and Stage 1's
            item texts), or None: the items' stored text.
        captioner_options: its options.
        device: "auto", "cpu", "cuda", ...
        anchors: Stage 1's anchor setting, "none", "proxy" or "feedback".
        elaborator: Stage 1's elaborator, "lexical" or "corpus" (the items' own captions).
        projection: a trained Stage 2 head for ``full`` (None: no Stage 2).
        formula: the formula-scoring configuration.
        refine: Stage 1's configuration.
        alpha: Stage 3's weight of s_pred.
        top_n: how many items Stage 3 re-ranks.
        limit_queries: only the first N queries (quick runs).
        umap: with audio items, draw ``modality_gap.png`` (:mod:`fortekit.search.eval.beir_gap`);
            its statistics go to ``metrics.json`` either way.
        violation_kinds: violation@10 is computed for queries whose metadata names a concept
            ``b`` and whose ``kind`` is one of these (or that have no ``kind``): exclusions. For
            an "A and B" query a top 10 mentioning B is what was asked for, not a violation.
        directions: "t2a" (each query ranks the items), "a2t" (each item ranks the query texts)
            or both (default).

    Raises:
        EvaluationError: an unknown system (E506) or anchor setting, or a bad option (E508); no,
            an unknown or a repeated direction (E592).

    Example:
        >>> BeirSettings(beir=Path("b"), out=Path("o"), directions=("a2t", "x"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.EvaluationError: [E592] The direction(s) ('a2t', 'x') ...
    """

    beir: Path
    out: Path
    systems: tuple[str, ...] = ()
    by: tuple[str, ...] | None = None
    backbone: str = "minilm"
    backbone_options: dict[str, Any] = field(default_factory=dict)
    captioner: str | None = None
    captioner_options: dict[str, Any] = field(default_factory=dict)
    device: str = "auto"
    anchors: str = "feedback"
    elaborator: str = "corpus"
    projection: Path | None = None
    formula: FormulaScoringConfig = field(default_factory=FormulaScoringConfig)
    refine: RefineConfig = field(default_factory=RefineConfig.feedback)
    alpha: float = 0.3
    top_n: int = 50
    limit_queries: int | None = None
    umap: bool = True
    violation_kinds: tuple[str, ...] = ("without",)
    directions: tuple[str, ...] = DIRECTIONS

    def __post_init__(self) -> None:
        object.__setattr__(self, "systems", tuple(parse_systems(",".join(self.systems) or None)))
        directions = tuple(self.directions)
        if not directions or len(set(directions)) < len(directions) or not set(directions) <= set(DIRECTIONS):
            raise EvaluationError(Errors.E592.format(value=directions))
        object.__setattr__(self, "directions", directions)
        checks = [
            (self.anchors in ANCHORS, f"--anchors {self.anchors!r} is not valid with --beir",
             f"Use one of {', '.join(ANCHORS)}."),
            (self.elaborator in ("lexical", "corpus"), f"--elaborator {self.elaborator!r} is not valid",
             "Use lexical or corpus."),
            (0.0 <= self.alpha <= 1.0, f"--alpha {self.alpha} is not valid", "Pass a number in [0, 1]."),
            (self.top_n >= 1, f"--top-n {self.top_n} is not valid", "Pass 1 or more."),
            (self.limit_queries is None or self.limit_queries >= 1,
             f"--limit-queries {self.limit_queries} keeps no query", "Pass 1 or more, or leave it out."),
        ]
        for ok, problem, fix in checks:
            if not ok:
                raise EvaluationError(Errors.E508.format(problem=problem, fix=fix))

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON values."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["formula"] = self.formula.to_dict()
        values["refine"] = self.refine.to_dict()
        for name in ("backbone_options", "captioner_options"):
            values[name] = {k: str(v) if isinstance(v, Path) else v for k, v in values[name].items()}
        return {k: str(v) if isinstance(v, Path) else v for k, v in values.items()}


def _rankings(collection: BeirCollection, order: np.ndarray) -> dict[str, list[str]]:
    ids = np.asarray([item.id for item in collection.items], dtype=object)
    return {query.id: ids[row].tolist() for query, row in zip(collection.queries, order, strict=True)}


def _records(collection: BeirCollection, rankings: Mapping[str, list[str]],
             extra: Mapping[str, Sequence[Any]], violation_kinds: Sequence[str]) -> list[dict[str, Any]]:
    """Per query: id, text, metadata, the measures, violation@10 (None where not applicable), the top 10
    (violated@10 and the top's marks left None, for :func:`~fortekit.search.eval.grounded.add_grounded`)."""
    values = per_query_measures(collection.qrels, rankings)
    concepts = collection.item_concepts
    records: list[dict[str, Any]] = []
    for position, query in enumerate(collection.queries):
        ranking = rankings[query.id]
        b, kind = query.metadata.get("b"), query.metadata.get("kind")
        violation = None
        if concepts is not None and isinstance(b, str) and (kind is None or kind in violation_kinds):
            violation = violation_at(ranking, b, concepts, k=TOP_STORED)
        record: dict[str, Any] = {
            "query_id": query.id, "query": query.text, "kind": kind, "metadata": dict(query.metadata),
            **values[query.id], VIOLATION: violation, GROUNDED_VIOLATION: None, "top": ranking[:TOP_STORED],
            TOP_MARKS: None,
        }
        for name, column in extra.items():
            record[name] = column[position]
        records.append(record)
    return records


def _summaries(collection: BeirCollection, records: Mapping[str, list[dict[str, Any]]],
               by: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(overall per system, breakdown field -> value -> system -> summary)."""
    baseline = records["baseline"]
    overall = {name: group_summary(rows, None if name == "baseline" else baseline)
               for name, rows in records.items()}
    breakdown: dict[str, Any] = {}
    for name in by:
        groups = query_groups([query.metadata for query in collection.queries], name)
        breakdown[name] = {
            value: {
                system: group_summary([rows[i] for i in members],
                                      None if system == "baseline" else [baseline[i] for i in members])
                for system, rows in records.items()
            }
            for value, members in groups.items()
        }
    return overall, breakdown


def _chance(collection: BeirCollection, by: Sequence[str]) -> dict[str, Any]:
    """Text to audio's chance levels: all queries, then per breakdown value (every item a candidate)."""
    from fortekit.search.eval.beir_a2t import chance_levels

    chance: dict[str, Any] = {"all": chance_levels(collection.qrels, len(collection.items))}
    ids = [query.id for query in collection.queries]
    for name in by:
        groups = query_groups([query.metadata for query in collection.queries], name)
        chance[name] = {value: chance_levels({ids[i]: collection.qrels[ids[i]] for i in members},
                                             len(collection.items)) for value, members in groups.items()}
    return chance


def _write(path: Path, records: Sequence[Mapping[str, Any]]) -> Path:
    from fortekit.search.eval.per_query import write_per_query

    try:
        return write_per_query(path, records)
    except OSError as exc:
        raise EvaluationError(Errors.E524.format(path=path, problem=exc)) from None


def _data_files(collection: BeirCollection) -> dict[str, Any]:
    from fortekit.search.eval.data import file_sha256

    return {role: {"path": str(path.resolve()), "sha256": file_sha256(path)}
            for role, path in collection.files.items()}


def _versions() -> dict[str, str]:
    from importlib import metadata

    from fortekit.search.eval.evaluate import environment

    versions = environment()
    for package in ("ir-measures", "pytrec-eval-terrier", "scipy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def run_beir_evaluation(settings: BeirSettings, log: Callable[[str], None] | None = None) -> EvalResult:
    """Run the systems of ``settings`` on the BEIR folder and write the outputs.

    ``settings.out`` is created with fortekit's marker file (when new or empty) and locked for
    the run: a second run on it gets E742; every file is written atomically; nothing there is
    ever deleted.

    Args:
        settings: what to run.
        log: called with progress lines (default: silent).

    Returns:
        An :class:`~fortekit.search.eval.evaluate.EvalResult` (the metrics document, the files written).

    Raises:
        EvaluationError: a bad folder (E500-E505, E510), options (E506-E508), ir-measures
            missing (E509), an unwritable ``out`` (E524), audio to text with fewer than 2
            queries (E593).
        OutputError: ``out`` a link (E741), busy (E742), a failed write (E743, naming the file).
        FortekitError: from the backbone, Stage 1 or Stage 2, with their codes.
    """
    from fortekit.search.eval.report import open_output_folder

    collection = load_beir(settings.beir)  # a bad folder fails before anything is created
    lock = open_output_folder(settings.out)
    try:
        return _run_beir(settings, log, collection)
    finally:
        lock.release()


def _run_beir(settings: BeirSettings, log: Callable[[str], None] | None,
              loaded: BeirCollection) -> EvalResult:
    """The body of :func:`run_beir_evaluation`, with ``settings.out`` created and locked.

    Args:
        settings: what to run.
        log: called with progress lines (default: silent).

    Returns:
        An :class:`~fortekit.search.eval.evaluate.EvalResult` (the metrics document, the files written).

    Raises:
        EvaluationError: a bad folder (E500-E505, E510), options (E506-E508), ir-measures
            missing (E509), an unwritable ``out`` (E524), audio to text with fewer than 2
            queries (E593).
        FortekitError: from the backbone, Stage 1 or Stage 2, with their codes.
    """
    from fortekit.plugins import get_backbone
    from fortekit.search.eval.beir_a2t import a2t_block, score_matrix
    from fortekit.search.eval.report import write_json, write_text
    from fortekit.search.eval.stage1 import cache_key

    say = log or (lambda line: None)
    started = time.perf_counter()
    collection = loaded.limit_queries(settings.limit_queries)
    if "a2t" in settings.directions and len(collection.queries) < 2:
        why = f" (--limit-queries {settings.limit_queries})" if settings.limit_queries else ""
        raise EvaluationError(Errors.E593.format(count=len(collection.queries), why=why))
    by = breakdown_fields([q.metadata for q in collection.queries], settings.by)
    data_files = _data_files(collection)
    say(f"{collection.folder}: {len(collection.items)} items, {len(collection.queries)} queries "
        f"({collection.dropped_queries} without a relevant item dropped); loading {settings.backbone}")
    backbone = get_backbone(settings.backbone, **{"device": settings.device, **settings.backbone_options})
    captioner = None
    if settings.captioner is not None:
        from fortekit.plugins import get_captioner

        captioner = get_captioner(settings.captioner, **settings.captioner_options)
    options = {k: str(v) for k, v in settings.backbone_options.items()}
    key = {"version": __version__, "backbone": settings.backbone, "backbone_options": options,
           "captioner": settings.captioner, "data": cache_key({
        "corpus": data_files["corpus"]["sha256"], "queries": data_files["queries"]["sha256"],
        "limit_queries": settings.limit_queries,
    })}
    data = BeirData(collection, backbone, refine=settings.refine, anchors=settings.anchors,
                    elaborator=settings.elaborator,
                    formula=settings.formula, alpha=settings.alpha, top_n=settings.top_n,
                    projection=settings.projection, stage1_dir=settings.out / "stage1", stage1_key=key,
                    device=settings.device, captioner=captioner, log=say)
    records: dict[str, list[dict[str, Any]]] = {}
    matrices: dict[str, Any] = {}
    timings: dict[str, dict[str, float]] = {}
    files: list[Path] = []
    for name in settings.systems:
        spec = SYSTEMS[name]
        ranking = spec.rank(data)
        if "a2t" in settings.directions:
            matrices[name] = score_matrix(ranking)
        rankings = _rankings(collection, ranking.order)
        records[name] = _records(collection, rankings, ranking.extra, settings.violation_kinds)
        query_seconds = sum(data.seconds.get(step, 0.0) for step in spec.query_steps)
        item_seconds = sum(data.seconds.get(step, 0.0) for step in spec.item_steps)
        timings[name] = {
            "ms_per_query": 1000 * (query_seconds + ranking.seconds) / len(collection.queries),
            "ms_per_query_ranking": 1000 * ranking.seconds / len(collection.queries),
            "s_per_1000_items": 1000 * item_seconds / len(collection.items),
        }
        mean_ndcg = np.mean([row["nDCG@10"] for row in records[name]])
        say(f"{name}: nDCG@10 {mean_ndcg:.3f} ({timings[name]['ms_per_query']:.1f} ms/query)")
    metrics: dict[str, Any] = {
        "fortekit_version": __version__, "collection": str(collection.folder),
        "queries": len(collection.queries), "items": len(collection.items),
        "directions": list(settings.directions),
    }
    if "t2a" in settings.directions:
        marks = beir_marks(data)  # after the timings: parsing for the measure is no system's cost
        for name, rows in records.items():
            add_grounded(rows, marks, k=TOP_STORED)
            files.append(_write(settings.out / "per_query" / f"{name}.jsonl", rows))
        overall, breakdown = _summaries(collection, records, by)
        for name, row in overall.items():
            row.update(timings[name], description=SYSTEMS[name].description)
        # "systems" and "breakdown" at the top: text to audio, as metrics.json had them before "t2a"
        metrics.update(systems=overall, breakdown=breakdown)
        metrics["t2a"] = {"queries": len(collection.queries), "items": len(collection.items),
                          "systems": overall, "breakdown": breakdown, "chance": _chance(collection, by)}
    if "a2t" in settings.directions:
        a2t_records, block = a2t_block(collection, matrices, by, settings.violation_kinds)
        for name, row in block["systems"].items():
            row["description"] = SYSTEMS[name].description
            files.append(_write(settings.out / "per_query_a2t" / f"{name}.jsonl", a2t_records[name]))
        metrics["a2t"] = block
        say("audio to text: " + ", ".join(f"{name} nDCG@10 {row['nDCG@10']:.3f}"
                                          for name, row in block["systems"].items()))
    metrics["preparation_seconds"] = dict(data.seconds)
    if "stage1" in data.__dict__:
        output, _ = data.stage1
        metrics["stage1"] = {"anchors": settings.anchors, "elaborator": settings.elaborator,
                             "queries": len(output.seconds),
                             "refined": output.refined, "from_cache": output.from_cache,
                             "ms_per_query": 1000 * output.seconds_per_query}
    if data.item_sources.get("audio"):
        from fortekit.search.eval.beir_gap import modality_gap

        metrics["modality_gap"] = modality_gap(data, settings.out, draw=settings.umap, log=say)
        if str(metrics["modality_gap"].get("plot", "")).endswith(".png"):
            files.append(settings.out / "modality_gap.png")
    seconds = time.perf_counter() - started
    metrics["seconds"] = seconds
    config = {
        "settings": settings.to_dict(), "data": data_files, "versions": _versions(),
        "counts": {"items": len(collection.items), "queries": len(collection.queries),
                   "dropped_queries": collection.dropped_queries, "item_sources": data.item_sources,
                   "item_texts": data.item_text_source},
        "breakdown_fields": by, "stage1_key": key,
        "systems": {name: SYSTEMS[name].description for name in settings.systems},
        "item_concepts": "read for violation@10 only" if collection.item_concepts is not None else None,
        GROUNDED_VIOLATION: "the grounded violation check (fortekit.fol.violation) over the items' captions",
    }
    files.append(write_json(settings.out / "metrics.json", metrics))
    files.append(write_json(settings.out / "config.json", config))
    files.append(write_text(settings.out / "results.md", results_markdown(metrics)))
    return EvalResult(metrics, files, seconds)
