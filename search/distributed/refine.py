"""``fol-refine QUERIES --ray``: the refinement of a query log as a Ray Data job.

The driver reads the query file as the one process does (:class:`~fortekit.search.refine.run.LineRunner`:
bad lines reported, lines the output already holds skipped, the rest grouped ``--batch-size`` at a
time), then hands the batches to actors through ``ray.data.from_items`` (one row a batch). Each actor
builds, once, the same :class:`~fortekit.search.refine.run.BatchRunner` the one process runs (the
command gives the function that builds it) and runs every batch it gets through it, writing into a
list instead of the file. The driver takes the batches back in input order and writes their records
with the run's own writer, batch by batch: the same records in the same order as in one process,
resumable the same way (a re-run skips what the output holds), and an interrupted or failed job leaves
the output as it was after its last written batch.

Example:
    >>> runner = RayRefineRunner(make_batch_runner, writer, cluster=cluster,
    ...                          settings=RaySettings(cpus=2))  # doctest: +SKIP
    >>> runner.run(read_queries(Path("queries.txt"))).refined  # doctest: +SKIP
    200
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fortekit.errors import FortekitError
from fortekit.search.distributed.cluster import (
    RayCluster,
    configure_dataset,
    error_payload,
    job_failed,
    load_error,
    object_column,
    require_ray,
)
from fortekit.search.distributed.options import RaySettings
from fortekit.search.refine.job import SetupError
from fortekit.search.refine.output import ResultWriter
from fortekit.search.refine.query_io import QueryLine
from fortekit.search.refine.resume import ResumeState
from fortekit.search.refine.run import LineRunner, RunReport

__all__ = ["REFINE_STATE", "BatchRunnerFactory", "RayRefineRunner", "RecordCollector", "RefineStage"]

#: What a failed job leaves (the last line of E823).
REFINE_STATE = "The output keeps every batch written before the failure."

#: Builds, inside an actor, the runner of one process from (its writer, its report function).
BatchRunnerFactory = Callable[[ResultWriter, Callable[[str], None]], LineRunner]


class RecordCollector(ResultWriter):
    """A :class:`ResultWriter` that keeps the records in a list (an actor's output, sent to the driver).

    Example:
        >>> collector = RecordCollector()
        >>> collector.write({"line": 1, "query": "rain"})
        >>> collector.records
        [{'line': 1, 'query': 'rain'}]
    """

    def __init__(self) -> None:  # no file: nothing of ResultWriter's own set-up
        self.records: list[dict[str, Any]] = []
        self.written = 0
        self._closed = False

    def write(self, record: Mapping[str, Any]) -> None:
        """Keep one record."""
        self.records.append(dict(record))
        self.written += 1

    def close(self) -> None:
        """Nothing to close."""
        self._closed = True


class RefineStage:
    """An actor of the job: builds the runner once (:data:`BatchRunnerFactory`) and refines the batches
    of queries it gets, one result row per batch.

    A result is the records and the messages of the batch and its counts; or the error that stopped it:
    a model that cannot be built (as :class:`~fortekit.search.refine.job.SetupError` in one process), a
    coded error, or anything else as E823.
    """

    def __init__(self, factory: BatchRunnerFactory) -> None:
        self.factory = factory
        self.collector = RecordCollector()
        self.messages: list[str] = []
        self.runner: LineRunner | None = None

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        batch["result"] = object_column([pickle.dumps(self._refine(blob)) for blob in batch["lines"]])
        return batch

    def _refine(self, blob: bytes) -> dict[str, Any]:
        lines: list[QueryLine] = pickle.loads(blob)  # this job's own rows
        self.collector.records.clear()
        self.messages.clear()
        try:
            if self.runner is None:
                self.runner = self.factory(self.collector, self.messages.append)
            self.runner.summary = RunReport()
            report = self.runner.run(lines)
        except SetupError as exc:
            return {"setup": error_payload(exc.error)}
        except FortekitError as exc:
            return {"error": error_payload(exc)}
        except Exception as exc:  # sent back to the driver as E823
            return {"error": error_payload(job_failed(exc, stage="refinement", state=REFINE_STATE))}
        return {"records": list(self.collector.records), "messages": list(self.messages),
                "refined": report.refined, "from_lookup": report.from_lookup, "failed": list(report.failed)}


class RayRefineRunner(LineRunner):
    """The runner of ``fol-refine --ray``: the one process's line loop, the batches refined on Ray.

    Args:
        factory: builds the one-process runner inside each actor from (writer, report); it must pickle
            (a module-level class holding the command's options, not a loaded model).
        writer: where the records go (the run's output), in input order.
        cluster: the Ray session (:func:`~fortekit.search.distributed.cluster.ray_session`).
        settings: how the actors are sized: ``actors`` (default: one per ``actor_cpus`` of the
            cluster's CPUs, at most one per batch), ``actor_cpus`` (default 1), ``gpus``.
        batch_size: queries per batch (as in one process: the same batches, the same results).
        resume: queries already in the output (skipped).
        report: called with a message for each skipped or failed line.
        progress: called with the number of lines handled.
        where: the query file's name, for the messages.

    Example:
        >>> runner = RayRefineRunner(factory, writer, cluster=cluster, settings=settings)  # doctest: +SKIP
    """

    def __init__(
        self,
        factory: BatchRunnerFactory,
        writer: ResultWriter,
        *,
        cluster: RayCluster,
        settings: RaySettings,
        batch_size: int = 32,
        resume: ResumeState | None = None,
        report: Callable[[str], None] = print,
        progress: Callable[[int], None] | None = None,
        where: str = "queries",
    ) -> None:
        super().__init__(batch_size=batch_size, resume=resume, report=report, progress=progress, where=where)
        self.factory, self.writer, self.cluster, self.settings = factory, writer, cluster, settings
        self.actors = 0
        self._batches: list[list[QueryLine]] = []

    def _batch(self, items: list[QueryLine]) -> None:
        self._batches.append(list(items))  # refined on Ray once every line has been read

    def run(self, lines: Iterable[QueryLine]) -> RunReport:
        """Read every line (bad and done ones counted as in one process), refine the batches on Ray and
        write their records in input order.

        Raises:
            SetupError: an actor could not build the refiner (a usage-level error, as in one process).
            FortekitError: a coded error stopped a batch; E823 for a failure of Ray or of a stage.
            QueryFileError: the output cannot be written.
        """
        import time

        started = time.perf_counter()
        try:
            super().run(lines)
            if self._batches:
                self._run_job()
        finally:
            self.summary.seconds = time.perf_counter() - started
        return self.summary

    def _run_job(self) -> None:
        ray = require_ray("fol-refine")
        # E822: an actor that fits on no node would be waited for forever, without a word
        self.cluster.check_fits(self.settings)
        actor_cpus = self.settings.actor_cpus or 1.0
        actors = self.settings.actors or max(1, int(self.cluster.cpus // actor_cpus))
        self.actors = min(actors, len(self._batches))
        rows = [{"batch": number, "lines": pickle.dumps(batch)} for number, batch in enumerate(self._batches)]
        dataset = configure_dataset(ray.data.from_items(rows, override_num_blocks=len(rows)), progress=False)
        dataset = dataset.map_batches(
            RefineStage, fn_constructor_args=(self.factory,), batch_size=1, batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=self.actors), num_cpus=actor_cpus,
            num_gpus=self.settings.gpus or None,
        )
        batches = iter(self._batches)
        try:
            for row in dataset.iter_rows():
                self._write(next(batches), pickle.loads(row["result"]))  # this job's own rows
        except (FortekitError, SetupError, OSError):
            raise
        except Exception as exc:  # Ray's own: a lost actor, a worker that died
            raise job_failed(exc, stage="refinement", state=REFINE_STATE) from None

    def _write(self, batch: list[QueryLine], result: dict[str, Any]) -> None:
        """One batch's records into the output, its counts into the report (or the error that stopped it)."""
        if "setup" in result:
            raise SetupError(load_error(result["setup"], stage="refinement", state=REFINE_STATE))  # type: ignore[arg-type]
        if "error" in result:
            raise load_error(result["error"], stage="refinement", state=REFINE_STATE)
        for message in result["messages"]:
            self.report(message)
        for record in result["records"]:
            self.writer.write(record)
        self.summary.refined += result["refined"]
        self.summary.from_lookup += result["from_lookup"]
        self.summary.failed.extend(result["failed"])
        self.progress(len(batch))
