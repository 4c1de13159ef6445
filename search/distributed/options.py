"""Where a Ray job runs and how its model stages are sized: :class:`RaySettings`, checked.

A local Ray (``cpus`` CPUs, by default all of this machine's) or a running cluster (its
address, as ``ray start --head`` prints it); ``actors`` and ``actor_cpus`` / ``gpus`` size the
stages that hold a model (the encoder and the captioner of an index build, the refiners of
``fol-refine``); the CPU stages (reading and resampling, parsing) run as Ray tasks of one CPU
each. The ``--ray*`` options that ask for them live with the commands
(:mod:`fortekit.search.cli.ray_options`). Nothing here imports Ray.

Example:
    >>> ray_settings(cpus=2)
    RaySettings(address=None, cpus=2, actors=None, actor_cpus=None, gpus=0.0)
    >>> ray_settings("10.0.0.5:6379").describe()
    'the Ray cluster at 10.0.0.5:6379'
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from fortekit.errors import Errors

__all__ = ["RaySettings", "check_actor_size", "ray_settings"]


@dataclass(frozen=True, slots=True)
class RaySettings:
    """Where a Ray job runs and how its model stages are sized.

    Attributes:
        address: a cluster's address (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``), or None for
            a local Ray started (and shut down) by the command.
        cpus: the local Ray's CPUs (None: ``os.cpu_count()``); a cluster has its own.
        actors: how many actors each model stage runs (None: the job's default).
        actor_cpus: CPUs per model actor (None: 1, less on a Ray too small to run a CPU task beside).
        gpus: GPUs per model actor (0: none; fractions share one GPU).

    Example:
        >>> RaySettings(address="auto").describe()
        'the Ray cluster at auto'
    """

    address: str | None = None
    cpus: int | None = None
    actors: int | None = None
    actor_cpus: float | None = None
    gpus: float = 0.0

    @property
    def local(self) -> bool:
        """Whether the command starts a Ray of its own (no address given)."""
        return self.address is None

    def local_cpus(self) -> int:
        """The CPUs a local Ray is started with: ``cpus``, else this machine's count.

        Example:
            >>> RaySettings(cpus=3).local_cpus()
            3
        """
        return self.cpus if self.cpus is not None else max(1, os.cpu_count() or 1)

    def describe(self) -> str:
        """Where the job runs, in words (for the summaries).

        Example:
            >>> RaySettings(cpus=4).describe()
            'a local Ray with 4 CPUs'
        """
        if self.address is None:
            return f"a local Ray with {self.local_cpus()} CPUs"
        return f"the Ray cluster at {self.address}"


def ray_settings(
    address: str | None = None,
    *,
    cpus: int | None = None,
    actors: int | None = None,
    actor_cpus: float | None = None,
    gpus: float = 0.0,
) -> RaySettings:
    """The :class:`RaySettings` of a job, checked: ``--ray*`` options and Python callers end here.

    Args:
        address: a cluster's address (``HOST:PORT``, ``ray://HOST:PORT``, ``auto``), or None
            for a local Ray.
        cpus: the local Ray's CPUs (None: this machine's); a cluster has its own.
        actors: how many actors each model stage runs (None: the job's default).
        actor_cpus: CPUs per model actor (None: sized to fit).
        gpus: GPUs per model actor.

    Raises:
        DistributedError: `cpus` with a cluster's address, or a model actor larger than the
            local Ray (E822).

    Example:
        >>> ray_settings("auto", actors=2, gpus=1.0)
        RaySettings(address='auto', cpus=None, actors=2, actor_cpus=None, gpus=1.0)
        >>> ray_settings(cpus=2, actor_cpus=4.0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.DistributedError: [E822] --ray-actor-cpus asks 4 CPUs for each model actor, ...
    """
    from fortekit.errors import DistributedError

    if address is not None and cpus is not None:
        raise DistributedError(Errors.E822.format(
            option="--ray-cpus", problem=f"sizes a local Ray, but --ray names the cluster at {address}, "
            "which has the CPUs its nodes were started with",
            fix="Leave it out, or give --ray without an address to start a local Ray of that size.",
        ))
    settings = RaySettings(address=address, cpus=cpus, actors=actors, actor_cpus=actor_cpus, gpus=float(gpus))
    if settings.local:  # a local Ray's size is known before it starts: refused before Ray starts
        check_actor_size(settings, settings.local_cpus(), None, where=settings.describe())
    return settings


def check_actor_size(settings: RaySettings, cpus: float, gpus: float | None, *, where: str) -> None:
    """Raise E822 unless one model actor of `settings` fits on a node of `cpus` CPUs and `gpus` GPUs.

    Ray places an actor on one node that has the CPUs and GPUs it asks for; an actor that fits on
    no node is never placed, and a Ray Data job waits for it forever, printing nothing. So an
    actor larger than every node is refused: before a local Ray starts (``--ray-cpus`` or this
    machine's CPUs; its GPUs are known once it runs) and, for a cluster, once it is reached
    (:meth:`~fortekit.search.distributed.cluster.RayCluster.check_fits`).

    Args:
        settings: the ``--ray*`` settings (``actor_cpus`` None: sized to fit, never refused).
        cpus: the CPUs of the largest node.
        gpus: the GPUs of the largest node; None: not known yet (not checked).
        where: the Ray in words, for the message.

    Raises:
        DistributedError: ``--ray-actor-cpus`` above `cpus`, or ``--ray-gpus`` above `gpus` (E822).

    Example:
        >>> check_actor_size(RaySettings(cpus=2, actor_cpus=2.0), 2, None, where="a local Ray with 2 CPUs")
        >>> check_actor_size(RaySettings(cpus=2, actor_cpus=1e9), 2, None, where="a local Ray with 2 CPUs")
        Traceback (most recent call last):
        ...
        fortekit.errors.DistributedError: [E822] --ray-actor-cpus asks 1e+09 CPUs for each model actor, more than one node of a local Ray with 2 CPUs has (2): ...
    """  # noqa: E501
    from fortekit.errors import DistributedError

    asked = [("--ray-actor-cpus", settings.actor_cpus, cpus, "CPUs",
              "more CPUs (--ray-cpus N for a local Ray, a larger node for a cluster)")]
    if gpus is not None:
        asked.append(("--ray-gpus", settings.gpus, gpus, "GPUs", "a Ray with GPUs, or leave --ray-gpus out"))
    for option, wanted, has, unit, more in asked:
        if wanted is not None and wanted > 0 and wanted > has:
            fix = f"Give at most {has:g} (fractions share one), or {more}." if has else f"Give {more}."
            raise DistributedError(Errors.E822.format(
                option=option, problem=f"asks {wanted:g} {unit} for each model actor, more than one node of "
                f"{where} has ({has:g}): Ray would never place such an actor, and the job would wait for it "
                "forever", fix=fix,
            ))
