"""The thread policy: how many CPU threads torch's kernels use, so that no job oversubscribes.

One rule for every command that encodes and for the :class:`~fortekit.search.retriever.Retriever`:

* a batch job (``fortekit eval``, ``fol-refine``, ``fortekit search``, ``index build``, ...)
  uses the **physical cores** this process may run on (hyper-threads share one core's
  arithmetic units, so a second thread on a core only contends for them);
* the service (``fortekit serve``) gives each of its workers a fixed share,
  ``physical cores // workers`` (at least 1), so that workers do not fight for cores;
* ``--threads N`` (every such command) or ``Retriever(threads=N)`` says otherwise.

torch's own default is every core it sees, whatever the affinity mask and the other processes
on the machine say; on a shared 2-core machine one query then took 1.0-1.2 s instead of about
0.1 s (docs/retriever.md, "Threads"). Nothing here imports torch until a count is applied.

Example:
    >>> 1 <= physical_cores() <= available_cores()
    True
    >>> policy_threads("service", workers=10**6)
    1
    >>> check_threads("auto") is None, check_threads(2)
    (True, 2)
"""

from __future__ import annotations

import os
from functools import cache
from typing import Literal

from fortekit.errors import Errors, ThreadsError

__all__ = ["Role", "apply_threads", "available_cores", "check_threads", "ensure_threads", "physical_cores",
           "policy_threads"]

Role = Literal["batch", "service"]
_applied: list[int] = []  # the count this process applied last (empty: none yet)


def available_cores() -> int:
    """The logical CPUs this process may run on (its affinity mask), at least 1.

    Example:
        >>> available_cores() >= 1
        True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


@cache
def physical_cores() -> int:
    """The physical cores among the CPUs this process may run on, at least 1.

    Read from ``/proc/cpuinfo`` (one core per distinct ``physical id``/``core id`` pair of the
    allowed CPUs); where that is not available, the logical CPUs.

    Example:
        >>> physical_cores() >= 1
        True
    """
    allowed = available_cores()
    try:
        allowed_ids = os.sched_getaffinity(0)
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            text = handle.read()
    except (AttributeError, OSError):
        return allowed
    cores: set[tuple[str, str]] = set()
    for block in text.split("\n\n"):
        fields = dict(line.split(":", 1) for line in block.splitlines() if ":" in line)
        fields = {key.strip(): value.strip() for key, value in fields.items()}
        processor = fields.get("processor")
        if processor is None or not processor.isdigit() or int(processor) not in allowed_ids:
            continue
        core = fields.get("core id")
        if core is None:  # no topology (some virtual machines): each CPU is a core
            return allowed
        cores.add((fields.get("physical id", "0"), core))
    return max(1, min(len(cores) or allowed, allowed))


def policy_threads(role: Role = "batch", *, workers: int = 1) -> int:
    """The policy's thread count: the physical cores for a batch job, a fixed share per worker.

    Args:
        role: "batch" (one job has the machine) or "service" (``workers`` processes share it).
        workers: the service's worker processes.

    Returns:
        The thread count, at least 1.

    Example:
        >>> policy_threads("batch") == physical_cores()
        True
    """
    cores = physical_cores()
    return cores if role == "batch" else max(1, cores // max(1, workers))


def check_threads(value: object, *, name: str = "threads") -> int | None:
    """A thread setting as given: None or "auto" (the policy's default), else an int from 1 to the
    logical CPUs this process may use (more threads than CPUs is the oversubscription this policy
    prevents, and a huge count ends in torch's own overflow error).

    Raises:
        ThreadsError: anything else (E830).

    Example:
        >>> check_threads(None) is None
        True
    """
    if value is None or value == "auto":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= available_cores():
        raise ThreadsError(Errors.E830.format(name=name, value=value, cores=physical_cores(),
                                              cpus=available_cores()))
    return value


def apply_threads(threads: object = None, *, role: Role = "batch", workers: int = 1) -> int:
    """Set torch's intra-op threads for this process: ``threads``, else the policy's count.

    Args:
        threads: an int >= 1, or None/"auto" for :func:`policy_threads`.
        role: see :func:`policy_threads`.
        workers: see :func:`policy_threads`.

    Returns:
        The count now in force.

    Raises:
        ThreadsError: a bad ``threads`` (E830).

    Example:
        >>> import torch
        >>> before = torch.get_num_threads()
        >>> apply_threads(1)
        1
        >>> _ = apply_threads(before)
    """
    count = check_threads(threads)
    if count is None:
        count = policy_threads(role, workers=workers)
    import torch

    if torch.get_num_threads() != count:
        torch.set_num_threads(count)
    _applied[:] = [count]
    return count


def ensure_threads(threads: object = None) -> int:
    """What a :class:`~fortekit.search.retriever.Retriever` applies: ``threads`` when given, else the
    count this process already chose (a command's ``--threads``), else the batch policy's, once.

    Raises:
        ThreadsError: a bad ``threads`` (E830).

    Example:
        >>> ensure_threads() >= 1
        True
    """
    if threads is None and _applied:
        return _applied[0]
    return apply_threads(threads)
