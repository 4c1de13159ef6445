"""The ``--ray`` options that ``fortekit index build`` and ``fol-refine`` share, and what they ask for.

``--ray`` alone runs a local Ray (``--ray-cpus`` CPUs, by default all of this machine's);
``--ray HOST:PORT`` connects to a running cluster (``ray start --head`` prints its address).
``--ray-actors`` and ``--ray-actor-cpus`` / ``--ray-gpus`` size the stages that hold a model (the
encoder and the captioner of an index build, the refiners of ``fol-refine``). The options
become a :class:`~fortekit.search.distributed.options.RaySettings`
(:func:`~fortekit.search.distributed.options.ray_settings`), which the Ray jobs take. Nothing
here imports Ray.

Example:
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
import re
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors

if TYPE_CHECKING:
    from fortekit.search.distributed.options import RaySettings

__all__ = ["LOCAL", "add_ray_options", "settings_from_args"]

#: What ``--ray`` without an address stands for (a local Ray).
LOCAL = "local"

_ADDRESS = re.compile(r"^(ray://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


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
    """The :class:`~fortekit.search.distributed.options.RaySettings` that parsed ``--ray*`` options
    ask for; None without ``--ray``.

    Raises:
        DistributedError: a ``--ray-*`` option without ``--ray``, or ``--ray-cpus`` with a cluster's
            address (E822).

    Example:
        >>> settings_from_args(argparse.Namespace(ray="auto", ray_cpus=None, ray_actors=2,
        ...                                       ray_actor_cpus=None, ray_gpus=1.0))
        RaySettings(address='auto', cpus=None, actors=2, actor_cpus=None, gpus=1.0)
    """
    from fortekit.errors import DistributedError
    from fortekit.search.distributed.options import ray_settings

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
    return ray_settings(None if args.ray == LOCAL else args.ray, cpus=args.ray_cpus, actors=args.ray_actors,
                        actor_cpus=args.ray_actor_cpus, gpus=float(args.ray_gpus or 0.0))
