"""The ``--ray`` options that ``fortekit index build`` and ``fol-refine`` share, and what they ask for.

``--ray`` alone runs a local Ray (``--ray-cpus`` CPUs, by default all of this machine's);
``--ray HOST:PORT`` connects to a running cluster (``ray start --head`` prints its address).
``--ray-actors`` and ``--ray-actor-cpus`` / ``--ray-gpus`` size the stages that hold a model (the
encoder and the captioner of an index build, the refiners of ``fol-refine``); the CPU stages
(reading and resampling, parsing) run as Ray tasks of one CPU each. Nothing here imports Ray.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_ray_options(parser, what="refiners")
    >>> settings_from_args(parser.parse_args(["--ray", "--ray-cpus", "2"]))
    RaySettings(address=None, cpus=2, actors=None, actor_cpus=None, gpus=0.0)
    >>> settings_from_args(parser.parse_args(["--ray", "10.0.0.5:6379"])).describe()
    'the Ray cluster at 10.0.0.5:6379'
    >>> settings_from_args(parser.parse_args([])) is None
    True
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from typing import Any

from fortekit.errors import Errors

__all__ = ["LOCAL", "RaySettings", "add_ray_options", "check_actor_size", "settings_from_args"]

#: What ``--ray`` without an address stands for (a local Ray).
LOCAL = "local"

_ADDRESS = re.compile(r"^(ray://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


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


def _bad(option: str, expected: str, value: str, fix: str = "") -> argparse.ArgumentTypeError:
    message = Errors.E822.format(option=option, problem=f"takes {expected}, not {value!r}",
                                 fix=fix or "Give such a value, or leave the option out.")
    return argparse.ArgumentTypeError(message)


def _address(text: str) -> str:
    value = text.strip()
    if value == LOCAL:  # argparse passes the const of a bare --ray through the type too
        return value
    if value == "auto" or _ADDRESS.match(value):
        port = int(value.rsplit(":", 1)[1]) if value != "auto" else 1
        if 0 < port < 65536:
            return value
    raise _bad("--ray", "a cluster address HOST:PORT (or ray://HOST:PORT, or auto)", text,
               "`ray start --head` prints the address to give (e.g. 127.0.0.1:6379); without an "
               "address --ray starts a local Ray. Put --ray after the query file or the other options, "
               "so that it does not take their value for an address.")


def _whole(option: str) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise _bad(option, "a whole number >= 1", text)
        return value

    return parse


def _amount(option: str, *, zero: bool) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not (value >= 0.0 if zero else value > 0.0) or value != value or value == float("inf"):
            raise _bad(option, "a number >= 0" if zero else "a number > 0 (fractions share a CPU)", text)
        return value

    return parse


def add_ray_options(parser: argparse.ArgumentParser | Any, *, what: str) -> None:
    """Add ``--ray [ADDRESS]``, ``--ray-cpus``, ``--ray-actors``, ``--ray-actor-cpus`` and ``--ray-gpus``.

    Args:
        parser: an ``ArgumentParser`` or one of its argument groups.
        what: what the actors hold, for the help ("encoders and captioners", "refiners").

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_ray_options(parser, what="refiners")
        >>> parser.parse_args(["--ray"]).ray
        'local'
    """
    parser.add_argument(
        "--ray", nargs="?", const=LOCAL, default=None, type=_address, metavar="ADDRESS",
        help="run the batch work as a Ray Data job: on a local Ray, or on the cluster at ADDRESS "
        "(HOST:PORT, as `ray start --head` prints it); needs `pip install 'fortekit[ray]'` "
        "(docs/scale.md, \"Ray for the batch work\")",
    )
    parser.add_argument("--ray-cpus", type=_whole("--ray-cpus"), metavar="N",
                        help="with --ray and no ADDRESS: the local Ray's CPUs (default: this machine's)")
    parser.add_argument("--ray-actors", type=_whole("--ray-actors"), metavar="N",
                        help=f"with --ray: how many {what} run at once (default: 1 for a model that "
                        "encodes, one per CPU for the refiners)")
    parser.add_argument("--ray-actor-cpus", type=_amount("--ray-actor-cpus", zero=False), metavar="C",
                        help=f"with --ray: CPUs each of the {what} holds (default: 1, less on a Ray too "
                        "small to run the CPU stages beside them)")
    parser.add_argument("--ray-gpus", type=_amount("--ray-gpus", zero=True), metavar="G",
                        help=f"with --ray: GPUs each of the {what} holds (default: 0; 0.5: two a GPU)")


def settings_from_args(args: argparse.Namespace, *, command: str = "fortekit") -> RaySettings | None:
    """The :class:`RaySettings` that parsed ``--ray*`` options ask for; None without ``--ray``.

    Raises:
        DistributedError: a ``--ray-*`` option without ``--ray``, or ``--ray-cpus`` with a cluster's
            address (E822).

    Example:
        >>> settings_from_args(argparse.Namespace(ray="auto", ray_cpus=None, ray_actors=2,
        ...                                       ray_actor_cpus=None, ray_gpus=1.0))
        RaySettings(address='auto', cpus=None, actors=2, actor_cpus=None, gpus=1.0)
    """
    from fortekit.errors import DistributedError

    given = {option: getattr(args, option.removeprefix("--").replace("-", "_"), None)
             for option in ("--ray-cpus", "--ray-actors", "--ray-actor-cpus", "--ray-gpus")}
    if getattr(args, "ray", None) is None:
        for option, value in given.items():
            if value is not None:
                raise DistributedError(Errors.E822.format(
                    option=option, problem=f"sizes the Ray job of --ray, which {command} was not given",
                    fix="Leave it out, or add --ray (a local Ray) or --ray HOST:PORT (a cluster).",
                ))
        return None
    address = None if args.ray == LOCAL else args.ray
    if address is not None and given["--ray-cpus"] is not None:
        raise DistributedError(Errors.E822.format(
            option="--ray-cpus", problem=f"sizes a local Ray, but --ray names the cluster at {address}, "
            "which has the CPUs its nodes were started with",
            fix="Leave it out, or give --ray without an address to start a local Ray of that size.",
        ))
    settings = RaySettings(
        address=address, cpus=args.ray_cpus, actors=args.ray_actors,
        actor_cpus=args.ray_actor_cpus, gpus=float(args.ray_gpus or 0.0),
    )
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
