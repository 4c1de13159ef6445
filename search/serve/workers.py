"""Worker processes of ``fortekit serve --workers N``: one listening socket, N processes that accept on it.

A search is mostly Python (the parse, Stage 1's judge, formula scoring, the ranking) and holds the
interpreter's lock, so one server process keeps about one core busy however many requests wait
(docs/serve.md, "Workers"). With ``--workers N`` the command binds its socket once, then forks N
processes before anything is loaded; each loads the index and the models and runs its own event
loop on the inherited socket, and the kernel hands each new connection to one process that is
waiting in ``accept``. A worker still loading accepts nothing, so no request waits on it. Each
worker gets ``physical cores // N`` torch threads (:mod:`fortekit._threads`).

The parent only supervises: SIGINT and SIGTERM are passed on as SIGTERM (each worker finishes
what it is answering), SIGHUP as SIGHUP (each reloads its index). When a worker exits on its own,
the parent stops the others and exits with its status: a supervisor (systemd, a container
runtime) restarts the whole service, as for one process. POSIX only (``os.fork``).

Example:
    >>> fork_supported()
    True
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from types import FrameType

__all__ = ["fork_supported", "max_workers", "run_workers"]

#: Workers per CPU this process may run on, at most: a search is CPU-bound, so more gain nothing.
WORKERS_PER_CPU = 4


def fork_supported() -> bool:
    """Whether this platform can fork worker processes (POSIX).

    Example:
        >>> isinstance(fork_supported(), bool)
        True
    """
    return hasattr(os, "fork")


def max_workers() -> int:
    """The most workers ``--workers`` accepts: :data:`WORKERS_PER_CPU` per CPU this process may use.

    Example:
        >>> max_workers() >= WORKERS_PER_CPU
        True
    """
    from fortekit._threads import available_cores

    return WORKERS_PER_CPU * available_cores()


def run_workers(count: int, serve_one: Callable[[], int]) -> int:
    """Fork ``count`` workers that each run ``serve_one`` (load, then serve until stopped); supervise them.

    Args:
        count: the worker processes (at least 2; one process serves without this).
        serve_one: what a worker runs; its return value is the worker's exit status. It runs in
            the child only, which leaves through ``os._exit`` and never returns here.

    Returns:
        0 when every worker stopped cleanly after a signal; else the status of the first worker that
        exited on its own (1 when it was killed by a signal).

    Example:
        >>> run_workers(2, lambda: 0)  # doctest: +SKIP
        0
    """
    sys.stdout.flush()
    sys.stderr.flush()
    children: list[int] = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:  # the worker: never back into the parent's code
            status = 1
            try:
                status = serve_one()
            except BaseException as exc:  # a worker reports and exits, whatever happened
                if not isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    print(f"fortekit serve: worker {os.getpid()} stopped: {exc!r}", file=sys.stderr)
                status = exc.code if isinstance(exc, SystemExit) and isinstance(exc.code, int) else 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        children.append(pid)
    return _supervise(children)


def _supervise(children: list[int]) -> int:
    """Pass signals on to the workers and wait for them; the first unasked exit stops the others."""
    alive = set(children)
    stopping = False

    def pass_on(number: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        if number != signal.SIGHUP:
            stopping = True
        forwarded = signal.SIGHUP if number == signal.SIGHUP else signal.SIGTERM
        for pid in list(alive):
            try:
                os.kill(pid, forwarded)
            except ProcessLookupError:
                alive.discard(pid)

    previous = {number: signal.signal(number, pass_on)
                for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    status = 0
    try:
        while alive:
            try:
                pid, raw = os.wait()
            except ChildProcessError:
                break
            alive.discard(pid)
            code = os.waitstatus_to_exitcode(raw)
            if not stopping:  # a worker exited unasked: the service stops as a whole
                status = code if code > 0 else 1
                stopping = True
                pass_on(signal.SIGTERM, None)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return status
