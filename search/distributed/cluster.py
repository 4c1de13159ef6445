"""Ray itself: importing it (E820), starting or reaching a cluster (E821, E824), sizing the stages.

:func:`ray_session` is the one place that calls ``ray.init``: without an address it starts a local
Ray (``num_cpus`` from ``--ray-cpus`` or this machine, no dashboard) and shuts it down at the end;
with one it first checks that the address answers at all (a refused or silent port fails within
seconds, where Ray would retry for minutes), then connects. A process that already runs Ray (a
notebook, a test) keeps it: the job runs there and leaves it running.

Example:
    >>> from fortekit.search.distributed.options import RaySettings
    >>> with ray_session(RaySettings(cpus=2), command="fol-refine") as cluster:  # doctest: +SKIP
    ...     cluster.cpus
    2.0
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import re
import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from fortekit.errors import DistributedError, Errors, FortekitError
from fortekit.search.distributed.options import RaySettings, check_actor_size

__all__ = [
    "CONNECT_TIMEOUT_S",
    "RayCluster",
    "check_reachable",
    "configure_dataset",
    "error_payload",
    "job_failed",
    "load_error",
    "object_column",
    "raise_payload",
    "ray_session",
    "require_ray",
]

#: Seconds the address of a cluster has to accept a connection before E821.
CONNECT_TIMEOUT_S = 5.0

#: Ray's own retries when the port answers but is slow (seconds; used unless already set).
_RAY_TIMEOUTS = {"RAY_gcs_rpc_server_connect_timeout_s": "5", "RAY_gcs_server_port_wait_time_s": "2"}


def require_ray(command: str) -> Any:
    """``ray`` with ``ray.data`` imported, or E820 naming the extra to install.

    Raises:
        DistributedError: Ray (or Ray Data, or what it needs: pyarrow, pandas) cannot be imported
            (E820).

    Example:
        >>> ray = require_ray("fol-refine")  # doctest: +SKIP
        >>> ray.data.from_items([1]).count()  # doctest: +SKIP
        1
    """
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise DistributedError(Errors.E820.format(command=command, problem=str(exc) or type(exc).__name__)) \
            from None
    return ray


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse a cluster address whose port does not accept a TCP connection within ``timeout`` (E821).

    ``auto`` (the cluster Ray finds on this machine) is left to Ray.

    Raises:
        DistributedError: E821.

    Example:
        >>> check_reachable("127.0.0.1:1")
        Traceback (most recent call last):
        ...
        fortekit.errors.DistributedError: [E821] Cannot reach the Ray cluster at 127.0.0.1:1: ...
    """
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except TimeoutError:
        problem = f"its port gave no answer within {timeout:g} s"
    except OSError as exc:
        problem = exc.strerror or str(exc) or type(exc).__name__
    except ValueError:
        problem = "its port is not a number"
    else:
        return
    raise DistributedError(Errors.E821.format(address=address, problem=problem))


@dataclass(frozen=True, slots=True)
class RayCluster:
    """The Ray a job runs on: its CPUs and GPUs, and where it is.

    Attributes:
        cpus: the cluster's CPUs (``ray.cluster_resources()``).
        gpus: its GPUs.
        where: in words, for the summaries.
        node_cpus: the CPUs of its largest node, where one actor must fit (None: ``cpus``).
        node_gpus: the GPUs of its node with the most (None: ``gpus``).
    """

    cpus: float
    gpus: float
    where: str
    node_cpus: float | None = None
    node_gpus: float | None = None

    def check_fits(self, settings: RaySettings) -> None:
        """Raise E822 unless one model actor (``--ray-actor-cpus``, ``--ray-gpus``) fits on a node.

        Called before a job starts its actors: one that fits nowhere would never be placed, and
        the job would wait for it forever without a word.

        Args:
            settings: the ``--ray*`` settings.

        Raises:
            DistributedError: an actor larger than every node (E822).

        Example:
            >>> RayCluster(2.0, 0.0, "a local Ray with 2 CPUs").check_fits(RaySettings(gpus=1.0))
            Traceback (most recent call last):
            ...
            fortekit.errors.DistributedError: [E822] --ray-gpus asks 1 GPUs for each model actor, more than one node of a local Ray with 2 CPUs has (0): ...
        """  # noqa: E501
        cpus = self.cpus if self.node_cpus is None else self.node_cpus
        gpus = self.gpus if self.node_gpus is None else self.node_gpus
        check_actor_size(settings, cpus, gpus, where=self.where)

    def actor_cpus(self, settings: RaySettings, actors: int) -> float:
        """CPUs per model actor: ``--ray-actor-cpus``, else 1, or less where ``actors`` actors of one
        CPU would leave no CPU for the CPU stages (on 2 CPUs with 2 model stages: 0.5 each).

        Example:
            >>> RayCluster(2.0, 0.0, "here").actor_cpus(RaySettings(), 2)
            0.5
        """
        if settings.actor_cpus is not None:
            return settings.actor_cpus
        if self.cpus >= actors + 1:
            return 1.0
        return max(0.25, (self.cpus - 1.0) / actors) if self.cpus > 1 else max(0.25, self.cpus / (actors + 1))


def _quiet_ray_logs() -> None:
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.WARNING)


@contextlib.contextmanager
def ray_session(settings: RaySettings, *, command: str) -> Iterator[RayCluster]:
    """Start a local Ray or connect to a cluster for the block; shut a Ray it started down at the end.

    Args:
        settings: where (and, for a local Ray, with how many CPUs).
        command: the command, for the messages ("fortekit index build", "fol-refine").

    Yields:
        The :class:`RayCluster`.

    Raises:
        DistributedError: Ray is not installed (E820), the cluster cannot be reached (E821), a local
            Ray cannot start (E824).

    Example:
        >>> with ray_session(RaySettings(address="127.0.0.1:1"), command="fol-refine"):
        ...     pass
        Traceback (most recent call last):
        ...
        fortekit.errors.DistributedError: [E821] Cannot reach the Ray cluster at 127.0.0.1:1: ...
    """
    ray = require_ray(command)
    started = False
    if settings.address is not None:
        check_reachable(settings.address)  # before Ray's own retries (minutes) and before any ray.init
    if not ray.is_initialized():
        _quiet_ray_logs()
        common: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "logging_level": logging.WARNING}
        if settings.address is None:
            try:
                ray.init(num_cpus=settings.local_cpus(), **common)
            except Exception as exc:  # Ray raises what its processes met
                raise DistributedError(Errors.E824.format(problem=f"{type(exc).__name__}: {exc}")) from None
        else:
            for name, value in _RAY_TIMEOUTS.items():
                os.environ.setdefault(name, value)
            try:
                ray.init(address=settings.address, **common)
            except (ConnectionError, TimeoutError, OSError, RuntimeError, ValueError) as exc:
                with contextlib.suppress(Exception):
                    ray.shutdown()
                problem = f"{type(exc).__name__}: {exc}"
                if settings.address != "auto" and os.environ.get("RAY_AUTH_MODE") is None:
                    # Ray sends its token to a named address only when asked to (a cluster found with
                    # `auto` gets it unasked).
                    problem += (" (a cluster started with token authentication, as `ray start` starts "
                                "one, takes only clients that present its token: set RAY_AUTH_MODE=token, "
                                "with the token in ~/.ray/auth_token or RAY_AUTH_TOKEN, or give --ray auto "
                                "on the cluster's own machine)")
                message = Errors.E821.format(address=settings.address, problem=problem)
                raise DistributedError(message) from None
        started = True
    try:
        resources = ray.cluster_resources()
        nodes = [node.get("Resources", {}) for node in ray.nodes() if node.get("Alive", True)]
        yield RayCluster(cpus=float(resources.get("CPU", 0.0)), gpus=float(resources.get("GPU", 0.0)),
                         where=settings.describe(),
                         node_cpus=max((float(node.get("CPU", 0.0)) for node in nodes), default=None),
                         node_gpus=max((float(node.get("GPU", 0.0)) for node in nodes), default=None))
    finally:
        if started:
            ray.shutdown()


def configure_dataset(dataset: Any, *, progress: bool) -> Any:
    """Set a job's Ray Data options on its first dataset (the stages after it copy them): rows in
    input order, a stage that raised fails the job (no block skipped), Ray's progress bars only when
    asked for.

    Returns:
        The dataset.

    Example:
        >>> ray = require_ray("fol-refine")  # doctest: +SKIP
        >>> dataset = configure_dataset(ray.data.from_items([1]), progress=False)  # doctest: +SKIP
        >>> dataset.context.execution_options.preserve_order  # doctest: +SKIP
        True
    """
    if not progress:  # "progress bars disabled", the execution plan, the stats: not for a quiet run
        logging.getLogger("ray.data").setLevel(logging.ERROR)
    context = dataset.context
    context.execution_options.preserve_order = True
    context.enable_progress_bars = progress
    context.print_on_execution_start = progress
    context.enable_auto_log_stats = False
    context.max_errored_blocks = 0
    return dataset


#: A line of a traceback that names the exception: ``RuntimeError: the encoder lost its GPU``.
_RAISED = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)): (.*)$")


def job_failed(exc: BaseException, *, stage: str, state: str) -> DistributedError:
    """E823 for an exception that Ray raised while the job ran (a stage raised, an actor died).

    Ray sends a stage's exception back as text inside its own (``RayTaskError(UserCodeException)``):
    the message names the first exception of that text that is not Ray's, else Ray's.

    Example:
        >>> str(job_failed(RuntimeError("boom"), stage="embedding", state="Nothing was written."))[:60]
        '[E823] The Ray job failed in its embedding stage: RuntimeErr'
    """
    cause: BaseException = exc
    while isinstance(getattr(cause, "cause", None), BaseException) and cause.cause is not cause:  # type: ignore[attr-defined]
        cause = cause.cause  # type: ignore[attr-defined]
    raised = [match.groups() for line in str(exc).splitlines()
              if (match := _RAISED.match(re.sub(r"\x1b\[[0-9;]*m", "", line).strip()))
              and not match.group(1).startswith("ray.")]
    if raised:
        name, text = raised[0]
        problem = f"{name.rsplit('.', 1)[-1]}: {text[:300]}"
    else:
        lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
        problem = f"{type(cause).__name__}: {lines[0][:300]}" if lines else type(cause).__name__
    return DistributedError(Errors.E823.format(stage=stage, problem=problem, state=state))


def object_column(values: Sequence[Any]) -> Any:
    """A column of Python objects (bytes, str) as Ray Data's numpy batches hold them.

    Example:
        >>> object_column([b"a", b""]).dtype
        dtype('O')
    """
    import numpy as np

    column = np.empty(len(values), dtype=object)
    column[:] = list(values)
    return column


def error_payload(exc: BaseException) -> bytes:
    """An error raised inside a stage, as bytes a row carries back to the driver.

    The class is sent by name with its arguments and attributes, and rebuilt without calling its
    ``__init__`` (some coded errors take keyword arguments that plain pickling would lose).

    Example:
        >>> from fortekit.errors import AudioReadError
        >>> error = load_error(error_payload(AudioReadError("[E214] no", source="a.wav")), stage="", state="")
        >>> error, error.source
        (AudioReadError('[E214] no'), 'a.wav')
    """
    kind = type(exc)
    state = dict(getattr(exc, "__dict__", {}))
    for value in (state, {}):
        try:
            return pickle.dumps((kind.__module__, kind.__qualname__, tuple(exc.args), value))
        except Exception:  # something that will not pickle: without the attributes, then as text
            continue
    return pickle.dumps((FortekitError.__module__, FortekitError.__qualname__, (str(exc),), {}))


def _rebuilt(module: str, name: str, args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    import importlib

    kind: Any = importlib.import_module(module)
    for part in name.split("."):
        kind = getattr(kind, part)
    if not (isinstance(kind, type) and issubclass(kind, BaseException)):
        raise TypeError(f"{module}.{name} is not an exception")
    error: BaseException = kind.__new__(kind, *args)
    error.args = tuple(args)
    error.__dict__.update(state)
    return error


def load_error(payload: bytes, *, stage: str, state: str) -> BaseException:
    """The error a stage sent back (:func:`error_payload`), rebuilt on the driver.

    Returns:
        That error; E823 when it cannot be rebuilt.

    Example:
        >>> load_error(error_payload(FortekitError("[E000] no")), stage="parse", state="")
        FortekitError('[E000] no')
    """
    try:
        module, name, args, attributes = pickle.loads(payload)  # written by this job's own stages
        return _rebuilt(module, name, args, attributes)
    except Exception as exc:
        return DistributedError(Errors.E823.format(
            stage=stage, problem=f"its error could not be read back ({type(exc).__name__}: {exc})",
            state=state,
        ))


def raise_payload(payload: bytes, *, stage: str, state: str = "Nothing was written.") -> None:
    """Raise the coded error a stage sent back on the driver, as the one process would have raised it.

    Raises:
        FortekitError: that error; E823 when it cannot be read back.
    """
    raise load_error(payload, stage=stage, state=state)
