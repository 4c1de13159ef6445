"""The batch loop of ``fortekit search QUERIES -o OUT``: a query file through the Retriever.

Queries go through :meth:`Retriever.search` ``batch_size`` at a time (one encoder call per
batch, and per depth with Stage 1); each batch's results are written, one JSON record per
query, and flushed as soon as it finishes. A batch that raises a
:class:`~fortekit.errors.FortekitError` is retried one query at a time, so only the bad query
is reported. The file handling (formats, bad lines with their numbers, resume, the settings
check) is fol-refine's: :mod:`fortekit.search.refine.query_io` and
:mod:`fortekit.search.refine.output`.

Example:
    >>> writer = ResultWriter("ranked.jsonl")  # doctest: +SKIP
    >>> runner = SearchRunner(lambda: Retriever("clips.index"), writer)  # doctest: +SKIP
    >>> runner.run(read_queries("queries.txt")).ok  # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, FortekitError
from fortekit.search.refine.run import LineRunner

if TYPE_CHECKING:
    from fortekit.search.hits import SearchResult
    from fortekit.search.refine.output import ResultWriter, ResumeState
    from fortekit.search.refine.query_io import QueryLine
    from fortekit.search.retriever import Retriever

__all__ = ["SearchRunner", "search_record"]


def search_record(line: int, result: SearchResult, query_id: str | None = None) -> dict[str, Any]:
    """The output record of one query: its line number, its own id (a BEIR ``_id``) when the query
    file gives one, then :meth:`SearchResult.to_dict`.

    Example:
        >>> from fortekit.search.hits import Hit, SearchResult
        >>> record = search_record(3, SearchResult("rain", (Hit(1, "clip7", 0.5),)), "q7")
        >>> record["line"], record["query_id"], record["query"], record["hits"][0]["id"]
        (3, 'q7', 'rain', 'clip7')
    """
    own = {} if query_id is None else {"query_id": query_id}
    return {"line": line, **own, **result.to_dict()}


class SearchRunner(LineRunner):
    """Runs query lines through a Retriever in batches and writes one record per query.

    Args:
        retriever: the Retriever, or a function that builds it (then it is built when the
            first query needs it, so a finished run that is resumed loads no model).
        writer: where the records go.
        k: hits per query.
        explain: fill each hit's predicates and clause similarities.
        batch_size: queries searched together.
        resume: queries already in the output (skipped).
        report: called with a message for each skipped or failed line.
        progress: called with the number of lines handled.
        where: the query file's name, for the messages.
    """

    def __init__(
        self,
        retriever: Retriever | Callable[[], Retriever],
        writer: ResultWriter,
        *,
        k: int = 10,
        explain: bool = False,
        batch_size: int = 32,
        resume: ResumeState | None = None,
        report: Callable[[str], None] = print,
        progress: Callable[[int], None] | None = None,
        where: str = "queries",
    ) -> None:
        super().__init__(batch_size=batch_size, resume=resume, report=report, progress=progress, where=where)
        self._retriever: Retriever | None = None if callable(retriever) else retriever
        self._build: Callable[[], Retriever] = retriever if callable(retriever) else (lambda: retriever)
        self.writer = writer
        self.k = k
        self.explain = explain

    @property
    def retriever(self) -> Retriever:
        """The Retriever (built now if it was given as a function)."""
        if self._retriever is None:
            self._retriever = self._build()
        return self._retriever

    @property
    def retriever_built(self) -> bool:
        """Whether the Retriever exists (a resumed, finished run never builds it)."""
        return self._retriever is not None

    def _batch(self, items: list[QueryLine]) -> None:
        found = self._search(items)
        for item in items:
            result = found.get(item.line)
            if result is None:
                self.summary.failed.append(item.line)
                continue
            self.writer.write(search_record(item.line, result, item.query_id))
            if result.source == "lookup":
                self.summary.from_lookup += 1
            else:
                self.summary.refined += 1
        self.progress(len(items))

    def _search(self, items: Sequence[QueryLine]) -> dict[int, SearchResult]:
        """Line number -> result; a query whose search fails is reported and left out."""
        retriever = self.retriever  # outside the try: a Retriever that cannot be built stops the run
        try:
            results = retriever.search([item.query or "" for item in items], k=self.k, explain=self.explain)
            return {item.line: result for item, result in zip(items, results, strict=True)}
        except FortekitError as exc:
            if len(items) == 1:
                self.report(f"{self.where}:{items[0].line}: failed: {Errors.E660.format(error=exc)}")
                return {}
        found: dict[int, SearchResult] = {}
        for item in items:  # find the query at fault: one at a time
            found.update(self._search([item]))
        return found
