"""Searches that arrive together run together: one encoder call for the queries of many requests.

Requests wait in one queue; whichever waiting thread finds the model free takes every waiting
request with the same key (stage switches, ``k``, ``explain``), up to ``max_batch`` queries, runs
them as one batch and hands each request its own results. When the last batch served several
requests, the next one waits up to ``gather_ms`` for as many to arrive: clients whose answers
just came back send their next request a moment later, and without the wait the batches
alternate between the many that waited and the one that came first. Only one batch runs at a time, so
the model, its caches and spaCy are never used by two threads at once. When a batch fails, its
requests run again one by one, so one request's error never reaches another.

Example:
    >>> batcher = MicroBatcher(lambda key, texts: [t.upper() for t in texts], max_batch=8, max_queue=4)
    >>> batcher.submit("k", ["a", "b"])
    ['A', 'B']
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fortekit.errors import Errors, ServeError

__all__ = ["MicroBatcher"]

Result = TypeVar("Result")


@dataclass(slots=True)
class _Request(Generic[Result]):
    key: Hashable
    texts: list[str]
    results: list[Result] | None = None
    error: BaseException | None = None
    done: bool = False


class MicroBatcher(Generic[Result]):
    """Run ``run(key, texts)`` over the texts of the requests waiting with the same key.

    Args:
        run: ranks a list of texts under a key; returns one result per text, in order.
        max_batch: the most texts in one call (a request larger than that runs alone).
        max_queue: the most requests waiting at once (503, E806, past it).
        gather_ms: how long a batch may wait for the requests of the last batch's clients (0: never).

    Attributes:
        batches: how many calls of ``run`` were made; ``batched``: how many of them served more
            than one request.
    """

    def __init__(self, run: Callable[[Any, list[str]], Sequence[Result]], *, max_batch: int,
                 max_queue: int, gather_ms: float = 5.0) -> None:
        self._run = run
        self.max_batch = max_batch
        self.max_queue = max_queue
        self._pending: list[_Request[Result]] = []
        self._busy = False
        self._condition = threading.Condition()
        self.gather_s = max(0.0, gather_ms) / 1000
        self._last_size = 1
        self.batches = 0
        self.batched = 0

    def submit(self, key: Hashable, texts: Sequence[str]) -> list[Result]:
        """Rank ``texts`` under ``key`` with the other waiting requests of that key.

        Returns:
            One result per text, in order.

        Raises:
            ServeError: the queue is full (E806, status 503).
            Exception: what ``run`` raised for these texts alone.
        """
        request: _Request[Result] = _Request(key, list(texts))
        with self._condition:
            if len(self._pending) >= self.max_queue:
                raise ServeError(Errors.E806.format(waiting=len(self._pending)), status=503)
            self._pending.append(request)
            self._condition.notify_all()  # a batch that gathers stops waiting once enough are here
        while True:
            with self._condition:
                while not request.done and self._busy:
                    self._condition.wait()
                if request.done:
                    break
                self._busy = True
                self._gather()
                batch = self._take()
                self._last_size = len(batch)
            try:
                self._serve(batch)
            finally:
                with self._condition:
                    for unfinished in batch:  # interrupted: its waiters must not wait for ever
                        if not unfinished.done:
                            unfinished.error = RuntimeError("the batch was interrupted")
                            unfinished.done = True
                    self._busy = False
                    self._condition.notify_all()
        if request.error is not None:
            raise request.error
        assert request.results is not None
        return request.results

    def _gather(self) -> None:
        """Wait (the lock held by the caller) up to ``gather_s`` for the last batch's number of requests."""
        wanted = min(self._last_size, self.max_batch)
        if self.gather_s <= 0 or wanted <= 1:
            return
        deadline = time.monotonic() + self.gather_s
        while len(self._pending) < wanted:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self._condition.wait(left)

    def _take(self) -> list[_Request[Result]]:
        """The oldest waiting request and the others of its key that fit in one batch."""
        first = self._pending[0]
        batch: list[_Request[Result]] = []
        size = 0
        for waiting in list(self._pending):
            if waiting.key != first.key or (batch and size + len(waiting.texts) > self.max_batch):
                continue
            batch.append(waiting)
            size += len(waiting.texts)
            self._pending.remove(waiting)
        return batch

    def _serve(self, batch: list[_Request[Result]]) -> None:
        self.batches += 1
        self.batched += len(batch) > 1
        texts = [text for request in batch for text in request.texts]
        try:
            results = list(self._run(batch[0].key, texts))
        except Exception as error:
            if len(batch) == 1:
                self._finish(batch[0], error=error)
                return
            for request in batch:  # one request's failure must not fail the others
                try:
                    self._finish(request, results=list(self._run(request.key, request.texts)))
                except Exception as alone:
                    self._finish(request, error=alone)
            return
        start = 0
        for request in batch:
            self._finish(request, results=results[start:start + len(request.texts)])
            start += len(request.texts)

    def _finish(self, request: _Request[Result], *, results: list[Result] | None = None,
                error: BaseException | None = None) -> None:
        with self._condition:
            request.results, request.error, request.done = results, error, True

