"""The batch loop of ``fol-refine``: queries in, one result line out per query.

Queries go through :meth:`Refiner.refine_many` ``batch_size`` at a time; each
batch's results are written (and flushed) as soon as it finishes. A batch that
raises a :class:`~fortekit.errors.FortekitError` is retried one query at a time,
so only the bad query is reported. Queries a lookup table knows skip the search;
with an index, each batch is ranked through :meth:`Retriever.search
<fortekit.search.retriever.Retriever.search>` from the refinements just made (or looked up), as
``fortekit search`` ranks them.

Example:
    >>> from fortekit.search import Refiner  # doctest: +SKIP
    >>> runner = BatchRunner(Refiner(), ResultWriter("out.jsonl"))  # doctest: +SKIP
    >>> report = runner.run(read_queries("examples/queries.txt"))  # doctest: +SKIP
    >>> report.refined, report.bad  # doctest: +SKIP
    (12, [9, 14])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, FortekitError
from fortekit.search.refine.lookup import LookupTable
from fortekit.search.refine.output import ResultWriter, result_record
from fortekit.search.refine.query_io import QueryLine
from fortekit.search.refine.resume import ResumeState

if TYPE_CHECKING:
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.retriever import Retriever
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.result import RefinementResult

__all__ = ["BatchRunner", "LineRunner", "RunReport", "TargetAnchors"]


@dataclass(slots=True)
class RunReport:
    """What a run did.

    Attributes:
        refined: queries searched and written in this run.
        from_lookup: queries answered by the lookup table and written.
        already_done: queries skipped because the output already held them.
        bad: line numbers skipped as unusable (empty, not UTF-8, too long, bad JSON).
        failed: line numbers whose search raised an error.
        seconds: wall time of the run.
    """

    refined: int = 0
    from_lookup: int = 0
    already_done: int = 0
    bad: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether every line was usable and refined."""
        return not self.bad and not self.failed


class TargetAnchors:
    """Oracle anchors from a query file's target column: e+ is the target item's embedding.

    Feeds :class:`~fortekit.search.stage1.anchors.OracleAnchors` batch by batch, so a long
    file never holds all its targets in memory.

    Args:
        index: the collection the target ids name.

    Example:
        >>> anchors = TargetAnchors(index)  # doctest: +SKIP
        >>> anchors.set_batch([("a dog barks", "Y7_ZZtG9qWRU")])  # doctest: +SKIP
    """

    def __init__(self, index: AudioIndex) -> None:
        from fortekit.search.stage1.anchors import OracleAnchors

        self.index = index
        self.rows = {item_id: row for row, item_id in enumerate(index.ids)}
        self.source = OracleAnchors({})

    def set_batch(self, pairs: Iterable[tuple[str, str | None]]) -> None:
        """The (query, target id) pairs of the next batch; unknown ids get no anchor (E409 later)."""
        embeddings = self.index.embedding_tensor("cpu")
        self.source.anchors.clear()
        for query, target in pairs:
            row = self.rows.get(target) if target is not None else None
            if row is not None:
                self.source.anchors[query] = (embeddings[row], None)


class LineRunner:
    """The loop over a query file's lines that fol-refine and ``fortekit search -o`` share.

    Bad lines are reported and counted, lines the output already holds are skipped, and
    the others are handed to :meth:`_batch` ``batch_size`` at a time; a subclass does the
    work of a batch and writes its records.

    Args:
        batch_size: lines handled together.
        resume: queries already in the output (skipped).
        report: called with a message for each skipped or failed line.
        progress: called with the number of lines handled (for a progress bar).
        where: the query file's name, for the messages.
    """

    def __init__(
        self,
        *,
        batch_size: int = 32,
        resume: ResumeState | None = None,
        report: Callable[[str], None] = print,
        progress: Callable[[int], None] | None = None,
        where: str = "queries",
    ) -> None:
        self.batch_size = max(1, batch_size)
        self.resume = resume or ResumeState()
        self.report = report
        self.progress = progress or (lambda count: None)
        self.where = where
        self.summary = RunReport()

    def run(self, lines: Iterable[QueryLine]) -> RunReport:
        """Handle every usable, not yet done line of `lines`, a batch at a time.

        Returns:
            The report (also kept as ``self.summary``, which is up to date when the
            loop is interrupted).

        Raises:
            QueryFileError: the output cannot be written; it holds the result of a line
                whose text has changed since (E672).
            KeyboardInterrupt: passed on; every finished batch is written.
        """
        started = time.perf_counter()
        pending: list[QueryLine] = []
        try:
            for item in lines:
                if item.problem is not None:
                    self.summary.bad.append(item.line)
                    self.report(f"{self.where}:{item.line}: skipped: {item.problem}")
                    self.progress(1)
                elif self.resume.holds(item, where=self.where):  # E672: a line whose text changed
                    self.summary.already_done += 1
                    self.progress(1)
                else:
                    pending.append(item)
                    if len(pending) >= self.batch_size:
                        self._batch(pending)
                        pending = []
            if pending:
                self._batch(pending)
        finally:
            self.summary.seconds = time.perf_counter() - started
        return self.summary

    def _batch(self, items: list[QueryLine]) -> None:
        raise NotImplementedError


class BatchRunner(LineRunner):
    """Runs queries through a refiner in batches and writes one record per query.

    Args:
        refiner: the Stage 1 refiner, or a function that builds it: then it is built
            when the first query needs a search or an encoding, so that a resumed run
            with nothing left to do, or one the lookup table answers, loads no model.
        writer: where results go.
        batch_size: queries searched together.
        resume: queries already in the output (skipped).
        lookup: a lookup table (known queries skip the search), or None.
        index: an index to rank with every query's q*, or None.
        top_k: ranking length.
        targets: oracle anchors fed from the query file's target column, or None.
        device: where the index is searched ("auto": CUDA when present).
        report: called with a message for each skipped or failed line.
        progress: called with the number of lines handled (for a progress bar).
        where: the query file's name, for the messages.
        retriever: builds the :class:`~fortekit.search.retriever.Retriever` that ranks the
            index from each query's q* and phi* (formula scoring, Stage 3), given the refiner
            once it exists (e.g. a :class:`~fortekit.search.retriever.Retriever`); None
            ranks by q* alone (a Retriever with formula scoring and Stage 3 off).
    """

    def __init__(
        self,
        refiner: Refiner | Callable[[], Refiner],
        writer: ResultWriter,
        *,
        batch_size: int = 32,
        resume: ResumeState | None = None,
        lookup: LookupTable | None = None,
        index: AudioIndex | None = None,
        top_k: int = 10,
        targets: TargetAnchors | None = None,
        device: str = "auto",
        report: Callable[[str], None] = print,
        progress: Callable[[int], None] | None = None,
        where: str = "queries",
        retriever: Callable[[Refiner], Retriever] | None = None,
    ) -> None:
        super().__init__(batch_size=batch_size, resume=resume, report=report, progress=progress, where=where)
        self._refiner: Refiner | None = None if callable(refiner) else refiner
        self._build: Callable[[], Refiner] = refiner if callable(refiner) else (lambda: refiner)
        self.writer = writer
        self.lookup = lookup
        self.index = index
        self.top_k = top_k
        self.targets = targets
        self.device = device
        self._make_retriever = retriever
        self._retriever: Retriever | None = None

    @property
    def refiner(self) -> Refiner:
        """The refiner (built now if it was given as a function)."""
        if self._refiner is None:
            self._refiner = self._build()
        return self._refiner

    @property
    def refiner_built(self) -> bool:
        """Whether the refiner exists (a lazily built one may never be needed)."""
        return self._refiner is not None

    def _batch(self, items: list[QueryLine]) -> None:
        lookup = self.lookup
        hits = {item.line for item in items if lookup is not None and _query(item) in lookup}
        searched = self._search([item for item in items if item.line not in hits])
        done = [item for item in items if item.line in hits or _query(item) in searched]
        rankings: Sequence[list[dict[str, Any]] | None] = [None] * len(done)
        if self.index is not None and done:
            rankings = self._rank(done, searched)
        for item, ranking in zip(done, rankings, strict=True):
            if lookup is not None and item.line in hits:
                stored = lookup.get(_query(item)) or {}
                record = result_record(item.line, _query(item), stored, source="lookup", ranking=ranking,
                                       query_id=item.query_id)
                self.writer.write(record)  # counted once written: a full disk is not a refined query
                self.summary.from_lookup += 1
            else:
                result = searched[_query(item)].to_dict()
                record = result_record(item.line, _query(item), result, source="refine", ranking=ranking,
                                       query_id=item.query_id)
                self.writer.write(record)
                self.summary.refined += 1
        self.summary.failed.extend(
            item.line for item in items if item.line not in hits and _query(item) not in searched
        )
        self.progress(len(items))

    def _search(self, items: Sequence[QueryLine]) -> dict[str, RefinementResult]:
        """Query text -> result; a query whose search fails is reported and left out."""
        texts = list(dict.fromkeys(_query(item) for item in items))
        if not texts:
            return {}
        if self.targets is not None:
            self.targets.set_batch((_query(item), item.target) for item in items)
        try:
            results = self.refiner.refine_many(texts, batch_size=len(texts))
            return dict(zip(texts, results, strict=True))
        except FortekitError:
            pass  # find the query at fault: one at a time
        found: dict[str, RefinementResult] = {}
        for text in texts:
            try:
                found[text] = self.refiner.refine(text)
            except FortekitError as exc:
                lines = ", ".join(str(item.line) for item in items if item.query == text)
                self.report(f"{self.where}:{lines}: failed: {Errors.E660.format(error=exc)}")
        return found

    def _rank(
        self, done: Sequence[QueryLine], searched: dict[str, RefinementResult],
    ) -> list[list[dict[str, Any]] | None]:
        """Each query's ranking through the Retriever, from its refinement (searched or looked up)."""
        retriever = self.retriever
        results = retriever.search([_query(item) for item in done], k=self.top_k, refinements=searched)
        return [
            [{"id": hit.item_id, "score": round(hit.score, 6), "caption": hit.caption} for hit in result.hits]
            for result in results
        ]

    @property
    def retriever(self) -> Retriever:
        """The Retriever that ranks the index (built, with the refiner, when first needed).

        Its lookup table is the runner's: a looked-up query is ranked from its stored refinement.
        """
        if self._retriever is None:
            assert self.index is not None  # only ranked with an index
            if self._make_retriever is not None:
                retriever = self._make_retriever(self.refiner)
            else:
                from fortekit.search.pipeline import PipelineSpec
                from fortekit.search.retriever import Retriever

                spec = PipelineSpec.from_switches(stage1=self.refiner, formula_scoring="off", stage3="off")
                retriever = Retriever(self.index, spec, device=self.device)
            if retriever.lookup is not self.lookup:
                retriever = retriever.replace(lookup=self.lookup)
            self._retriever = retriever
        return self._retriever


def _query(item: QueryLine) -> str:
    return item.query or ""

