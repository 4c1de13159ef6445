"""An output folder of ``fortekit eval --beir``, read for the evaluation page of ``fortekit serve --eval``.

A run folder holds ``config.json`` (the settings and the collection's files), ``metrics.json``
(each system's mean measures) and ``per_query/<system>.jsonl`` (each query's measures and top
10). :class:`EvalRun` reads them, and the collection the run evaluated (its captions, its qrels and
``item_concepts.jsonl``), and answers the three views of the page as JSON-ready dicts: the
systems' means (:meth:`EvalRun.summary`), one row per query comparing a system with a baseline
(:meth:`EvalRun.queries`), and one query's two top 10s side by side (:meth:`EvalRun.query`).

Nothing here imports FastAPI or torch. ``config.json`` and ``metrics.json`` are read by
:meth:`EvalRun.load`; a system's per-query file and the collection are read on first use, once
(:meth:`EvalRun.preload` reads everything at once), through the readers of ``fortekit eval
--beir`` (:func:`~fortekit.search.eval.beir.load_beir`). An item *violates* a query when its
captions hold a sound the query's formula excludes, by the grounded check that counts
``violated@10`` (:mod:`fortekit.search.serve.eval_marks`: the run's stored judgement, else the
check on the parsed captions); an item with no caption the parser read falls back to the
concept annotation: the
query is an exclusion (its metadata names a concept ``b`` and its ``kind`` is one of the run's
``violation_kinds``, "without" by default) and ``item_concepts.jsonl`` says the item mentions ``b``.

Example:
    >>> import json, tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> data = root / "data"
    >>> (data / "qrels").mkdir(parents=True)
    >>> items = {"d1": "rain on a roof", "d2": "rain and thunder", "d3": "a dog barks"}
    >>> _ = (data / "corpus.jsonl").write_text(
    ...     "".join(json.dumps({"_id": i, "text": t}) + "\\n" for i, t in items.items()))
    >>> exclusion = {"kind": "without", "b": "thunder"}
    >>> _ = (data / "queries.jsonl").write_text(
    ...     json.dumps({"_id": "q1", "text": "rain without thunder", "metadata": exclusion}) + "\\n")
    >>> _ = (data / "qrels" / "test.tsv").write_text("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t1\\n")
    >>> _ = (data / "item_concepts.jsonl").write_text(
    ...     json.dumps({"_id": "d2", "concepts": {"thunder": 1}}) + "\\n")
    >>> run = root / "run"
    >>> (run / "per_query").mkdir(parents=True)
    >>> _ = (run / "config.json").write_text(json.dumps({"settings": {"beir": str(data)}}))
    >>> means = {"baseline": {"nDCG@10": 0.63, "violation@10": 0.5},
    ...          "formula": {"nDCG@10": 1.0, "violation@10": 0.0}}
    >>> _ = (run / "metrics.json").write_text(json.dumps({"queries": 1, "items": 3, "systems": means}))
    >>> def line(ndcg, violation, top):
    ...     return json.dumps({"query_id": "q1", "query": "rain without thunder", "kind": "without",
    ...                        "metadata": exclusion, "nDCG@10": ndcg,
    ...                        "violation@10": violation, "top": top}) + "\\n"
    >>> _ = (run / "per_query" / "baseline.jsonl").write_text(line(0.63, 0.5, ["d2", "d1"]))
    >>> _ = (run / "per_query" / "formula.jsonl").write_text(line(1.0, 0.0, ["d1", "d3"]))
    >>> evaluation = EvalRun.load(run)
    >>> evaluation.systems, evaluation.summary()["baseline"], evaluation.summary()["system"]
    (('baseline', 'formula'), 'baseline', 'formula')
    >>> row = evaluation.queries("formula")[0]
    >>> row["excluded"], round(row["gain"], 2)
    ('thunder', 0.37)
    >>> view = evaluation.query("q1", "formula")
    >>> [(hit["id"], hit["relevance"], hit["violates"]) for hit in view["baseline"]["top"]]
    [('d2', 0, True), ('d1', 1, False)]
    >>> view["baseline"]["top"][0]["violated"], view["system"]["top"][1]["judged_by"]
    (['¬∃y Thunder(y)'], 'captions')
    >>> view["system"]["top"][0]["caption"], view["relevant"]
    ('rain on a roof', 1)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, FortekitError, ServeError
from fortekit.search.eval.beir import BeirCollection, BeirItem, load_beir
from fortekit.search.eval.beir_metrics import GROUNDED_VIOLATION, VIOLATION
from fortekit.search.eval.beir_metrics import MEASURES as _RANKING_MEASURES
from fortekit.search.serve.eval_marks import PageMarks
from fortekit.search.serve.run_files import (
    CONFIG,
    GAIN_MEASURE,
    METRICS,
    PER_QUERY,
    RunRecord,
    find_collection,
    finite_number,
    not_a_run,
    read_object,
    read_records,
    t2a_systems,
)

__all__ = ["MEASURES", "QUERY_FIELDS", "QUERY_ROUTE", "EvalRun"]

#: The measures :meth:`EvalRun.summary` reports for each system, in the page's column order.
MEASURES: tuple[str, ...] = (*_RANKING_MEASURES, VIOLATION, GROUNDED_VIOLATION)
#: How an E792 about ``k`` names the route and its fields (the API's route for :meth:`EvalRun.query`).
QUERY_ROUTE = "GET /v1/eval/queries/{query_id}"
QUERY_FIELDS = "query_id, system, baseline, k"
DEFAULT_VIOLATION_KINDS: tuple[str, ...] = ("without",)


class EvalRun:
    """An output folder of ``fortekit eval --beir`` and the collection it evaluated, for the eval page.

    Build one with :meth:`load`. Each method answers a JSON-ready dict (or list of dicts); a file
    is read on first use and kept, so after :meth:`preload` (or a first call) a query is answered
    from memory. The lazy reads are guarded by a lock: one instance may serve several threads.

    Attributes:
        name: the run folder's name.
        path: the run folder (absolute).
        systems: the text-to-audio systems of ``metrics.json``, in its order.
        baseline: "baseline" when the run has it, else its first system: the default comparison.
        system: the system the page opens on: ``default`` (what ``fortekit search`` runs) when the
            run has it, else its first system that is not the baseline.
        collection_path: the collection folder the run is read against.
    """

    def __init__(self, path: Path, config: Mapping[str, Any], metrics: Mapping[str, Any],
                 systems: Mapping[str, Mapping[str, Any]], collection_path: Path) -> None:
        """Use :meth:`load`; this takes what it has read and checked."""
        self.path = path
        self.name = path.name
        self.systems: tuple[str, ...] = tuple(systems)
        self.baseline = "baseline" if "baseline" in systems else self.systems[0]
        others = [name for name in self.systems if name != self.baseline]
        self.system = "default" if "default" in others else (others or [self.baseline])[0]
        self.collection_path = collection_path
        self._config = config
        self._metrics = metrics
        self._means = systems
        settings = config.get("settings")
        kinds = settings.get("violation_kinds") if isinstance(settings, dict) else None
        self._violation_kinds: tuple[str, ...] = (
            tuple(kind for kind in kinds if isinstance(kind, str)) if isinstance(kinds, list)
            else DEFAULT_VIOLATION_KINDS
        )
        self._records: dict[str, dict[str, RunRecord]] = {}
        self._query_ids: frozenset[str] | None = None
        self._reference: str | None = None
        self._collection: BeirCollection | None = None
        self._items: dict[str, BeirItem] = {}
        self._marks: PageMarks | None = None
        self._lock = threading.Lock()

    # --- loading -------------------------------------------------------------------------------

    @classmethod
    def load(cls, run_dir: str | os.PathLike[str],
             collection: str | os.PathLike[str] | None = None) -> EvalRun:
        """Open a run folder: read ``config.json`` and ``metrics.json``, find the collection.

        Args:
            run_dir: the ``-o`` folder of a ``fortekit eval --beir`` run.
            collection: the collection's folder (corpus.jsonl, queries.jsonl, qrels/test.tsv and
                item_concepts.jsonl); None: the folder of config.json's ``data.corpus.path`` when
                it still holds the corpus, else ``settings.beir`` resolved against the folder the
                run was made from, the run folder's parent and the current directory.

        Returns:
            The :class:`EvalRun` (per-query files and the collection are read on first use).

        Raises:
            ServeError: not a run folder, or a bad config.json/metrics.json, or a missing
                per-query file (E800, status 400); no collection found (E801, status 400).

        Example:
            >>> EvalRun.load("/nonexistent/run")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            fortekit.errors.ServeError: [E800] /nonexistent/run is not ... --beir`: no such folder. ...
        """
        path = Path(run_dir).expanduser()
        if not path.is_dir():
            raise not_a_run(path, "no such folder" if not path.exists() else "it is a file, not a folder")
        path = path.resolve()
        config = read_object(path, CONFIG)
        metrics = read_object(path, METRICS)
        systems = t2a_systems(path, metrics)
        folder = path / PER_QUERY
        if not folder.is_dir():
            raise not_a_run(path, f"it has no {PER_QUERY}/ folder")
        for name in systems:
            if not (folder / f"{name}.jsonl").is_file():
                raise not_a_run(path, f"{PER_QUERY}/{name}.jsonl is missing, although metrics.json "
                                       f"lists the system {name!r}")
        return cls(path, config, metrics, systems, find_collection(path, config, metrics, collection))

    def _system_records(self, system: str) -> dict[str, RunRecord]:
        """A system's records, read on first use (E802 for an unknown system)."""
        records = self._records.get(system)
        if records is not None:
            return records
        if system not in self._means:
            options = ", ".join(self.systems)
            raise ServeError(Errors.E802.format(name=system, options=options), status=404)
        with self._lock:
            if system not in self._records:
                records = read_records(self.path, system)
                ids = frozenset(records)
                if self._query_ids is None:
                    self._query_ids, self._reference = ids, system
                elif ids != self._query_ids:
                    odd = sorted(ids ^ self._query_ids)[0]
                    raise not_a_run(self.path, f"{PER_QUERY}/{system}.jsonl and {PER_QUERY}/"
                                                f"{self._reference}.jsonl hold different queries "
                                                f"({odd!r} is in one only)")
                self._records[system] = records
            return self._records[system]

    def _read_collection(self) -> BeirCollection:
        """The collection, read on first use (E801 when it cannot be read)."""
        if self._collection is not None:
            return self._collection
        with self._lock:
            if self._collection is None:
                try:
                    collection = load_beir(self.collection_path)
                except FortekitError as exc:
                    raise ServeError(Errors.E801.format(path=self.collection_path, run=self.path,
                                                        problem=str(exc))) from None
                except OSError as exc:
                    raise ServeError(Errors.E801.format(path=self.collection_path, run=self.path,
                                                        problem=exc.strerror or str(exc))) from None
                self._items = {item.id: item for item in collection.items}
                self._marks = PageMarks(self._items, collection.item_concepts)
                self._collection = collection
            return self._collection

    def preload(self) -> EvalRun:
        """Read every system's per-query file and the collection now, rather than on first use.

        Returns:
            The run itself.

        Raises:
            ServeError: a bad per-query file (E800) or collection (E801).
        """
        for system in self.systems:
            self._system_records(system)
        self._read_collection()
        return self

    # --- the views -------------------------------------------------------------------------------

    def _baseline(self, baseline: str | None) -> str:
        return self.baseline if baseline is None else baseline

    def _excluded(self, record: RunRecord) -> str | None:
        """The concept a query excludes (its metadata's ``b``), or None when it is no exclusion."""
        concept = record.metadata.get("b")
        kind = record.kind if record.kind is not None else record.metadata.get("kind")
        if isinstance(concept, str) and concept and (kind is None or kind in self._violation_kinds):
            return concept
        return None

    def summary(self) -> dict[str, Any]:
        """The systems' means from ``metrics.json``, for the page's first table.

        Returns:
            ``{"run", "collection", "queries", "items", "measures", "systems": [{"name",
            "description", measure: float or None, ...}], "baseline", "system"}`` (``system``:
            the one the page opens on, :attr:`system`), the systems in
            metrics.json's order (a measure it lacks, or that is not a finite number, is None).

        Example:
            >>> EvalRun.load("runs/x").summary()["measures"][:2]  # doctest: +SKIP
            ['nDCG@10', 'AP']
        """
        block = self._metrics.get("t2a")
        counts = block if isinstance(block, dict) else self._metrics
        rows = []
        for name, means in self._means.items():
            description = means.get("description")
            row: dict[str, Any] = {"name": name,
                                   "description": description if isinstance(description, str) else ""}
            row.update({measure: finite_number(means.get(measure)) for measure in MEASURES})
            rows.append(row)

        def count(key: str) -> int | None:
            value = counts.get(key, self._metrics.get(key))
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        # the collection by its folder's name, as the run: no answer shows a path of the server's disk
        return {"run": self.name, "collection": self.collection_path.name, "queries": count("queries"),
                "items": count("items"), "measures": list(MEASURES), "systems": rows,
                "baseline": self.baseline, "system": self.system}

    def queries(self, system: str, baseline: str | None = None) -> list[dict[str, Any]]:
        """One row per query comparing ``system`` with ``baseline``, best gain first.

        Args:
            system: a system of the run.
            baseline: the system to compare with (None: :attr:`baseline`).

        Returns:
            ``[{"query_id", "query", "kind", "excluded", "baseline": {"nDCG@10", "violation@10",
            "violated@10"},
            "system": {...}, "gain"}]``: ``excluded`` is the concept an exclusion query excludes
            (else None), ``gain`` the system's nDCG@10 minus the baseline's; sorted by gain
            descending, ties in the run's query order.

        Raises:
            ServeError: an unknown system (E802, status 404); a bad per-query file (E800).

        Example:
            >>> EvalRun.load("runs/x").queries("formula")[0]["gain"]  # doctest: +SKIP
            0.82
        """
        chosen = self._system_records(system)
        other = self._system_records(self._baseline(baseline))
        rows: list[tuple[float, dict[str, Any]]] = []
        for query_id, record in chosen.items():
            base = other[query_id]
            rows.append((record.ndcg - base.ndcg, {
                "query_id": query_id, "query": record.query, "kind": record.kind,
                "excluded": self._excluded(record),
                "baseline": {GAIN_MEASURE: base.ndcg, VIOLATION: base.violation,
                             GROUNDED_VIOLATION: base.grounded},
                "system": {GAIN_MEASURE: record.ndcg, VIOLATION: record.violation,
                           GROUNDED_VIOLATION: record.grounded},
                "gain": record.ndcg - base.ndcg,
            }))
        rows.sort(key=lambda pair: -pair[0])  # stable: ties keep the run's query order
        return [row for _, row in rows]

    def _side(self, name: str, record: RunRecord, excluded: str | None, k: int) -> dict[str, Any]:
        collection, marks = self._collection, self._marks
        assert collection is not None and marks is not None  # read by the caller
        judged = collection.qrels.get(record.query_id, {})
        for item_id in record.top[:k]:
            if item_id not in self._items:
                raise ServeError(Errors.E801.format(
                    path=self.collection_path, run=self.path,
                    problem=f"its corpus has no item {item_id!r}, which {name} ranked for the query "
                            f"{record.query_id!r}: the run evaluated another collection",
                ))
        top = [{"rank": rank, "id": item_id, "caption": self._items[item_id].text,
                "relevance": int(judged.get(item_id, 0)), **mark}
               for rank, (item_id, mark) in enumerate(zip(record.top[:k], marks.hits(record, excluded, k),
                                                          strict=True), start=1)]
        return {"name": name, GAIN_MEASURE: record.ndcg, VIOLATION: record.violation,
                GROUNDED_VIOLATION: record.grounded, "top": top}

    def query(self, query_id: str, system: str, baseline: str | None = None, k: int = 10) -> dict[str, Any]:
        """One query's top ``k`` under the baseline and under ``system``, side by side.

        Args:
            query_id: a query id of the run (those of :meth:`queries`).
            system: a system of the run.
            baseline: the system to compare with (None: :attr:`baseline`).
            k: how many of the stored top items to show (1 to 10; ``fortekit eval`` stores 10).

        Returns:
            ``{"query_id", "query", "kind", "excluded", "relevant", "baseline": side, "system":
            side, "gain"}``, ``relevant`` the number of items the qrels judge relevant (score 1 or
            more) and each side ``{"name", "nDCG@10", "violation@10", "violated@10", "top":
            [{"rank", "id", "caption", "relevance", "violates", "violated", "judged_by"}]}``:
            ``caption`` the corpus ``text``, ``relevance`` the qrels score (0 when not judged),
            ``violates`` whether the item's captions hold a sound the query excludes, by the
            grounded check (``violated``: those sounds; ``judged_by`` "captions"), or, for an
            item with no caption, whether it mentions the excluded concept ``b`` (``judged_by``
            "concepts"); ``judged_by`` None: nothing excluded to judge.

        Raises:
            ServeError: an unknown system (E802, status 404) or query (E808, status 404); k not
                an int from 1 to 10 (E792, status 422); a bad per-query file (E800) or a
                collection that cannot be read or lacks a ranked item (E801).

        Example:
            >>> EvalRun.load("runs/x").query("q0094", "formula")["system"]["top"][0]["rank"]  # doctest: +SKIP
            1
        """
        chosen = self._system_records(system)
        name = self._baseline(baseline)
        other = self._system_records(name)
        stored = max(len(record.top) for record in chosen.values()) or 10
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= max(stored, 10):
            raise ServeError(Errors.E792.format(
                where="k", problem=f"must be an int from 1 to {max(stored, 10)}, got {k!r}",
                route=QUERY_ROUTE, fields=QUERY_FIELDS,
            ), status=422)
        record = chosen.get(query_id) if isinstance(query_id, str) else None
        if record is None:
            raise ServeError(Errors.E808.format(query_id=query_id, count=len(chosen)), status=404)
        base = other[query_id]
        collection = self._read_collection()
        judged = collection.qrels.get(query_id)
        if judged is None:
            raise ServeError(Errors.E801.format(
                path=self.collection_path, run=self.path,
                problem=f"it judges no item relevant to the query {query_id!r}: the run evaluated "
                        "another collection",
            ))
        excluded = self._excluded(record)
        return {
            "query_id": query_id, "query": record.query, "kind": record.kind, "excluded": excluded,
            "relevant": sum(1 for score in judged.values() if score >= 1),
            "baseline": self._side(name, base, excluded, k),
            "system": self._side(system, record, excluded, k),
            "gain": record.ndcg - base.ndcg,
        }

    def __repr__(self) -> str:
        return f"EvalRun({str(self.path)!r}, systems={list(self.systems)!r})"
