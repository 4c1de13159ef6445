"""Stage 2 files: the projection head as safetensors plus JSON (never pickle), and the safe reader.

A trained head is two files: ``projection.safetensors`` (its tensors) and ``projection.json``
(format, config, training history, fortekit version). Every reader first checks the safetensors
header (:func:`read_safetensors`), so a pickled file (torch.save, .pt, .bin) is refused with an
error instead of being unpickled. Training data files are in :mod:`fortekit.search.projection.data`.

Example:
    >>> import tempfile, torch
    >>> from fortekit.search.projection.head import ProjectionHead
    >>> folder = tempfile.mkdtemp()
    >>> _ = save_projection(ProjectionHead(4), folder)
    >>> load_projection(folder).dim
    4
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from fortekit import __version__
from fortekit.errors import Errors, ProjectionError
from fortekit.search.projection.ann import head_files

if TYPE_CHECKING:
    from fortekit.search.projection.head import ProjectionConfig, ProjectionHead

__all__ = [
    "CONFIG_NAME",
    "WEIGHTS_NAME",
    "load_projection",
    "read_projection_config",
    "read_safetensors",
    "save_projection",
]

WEIGHTS_NAME = "projection.safetensors"
CONFIG_NAME = "projection.json"
FORMAT = "fortekit-projection"
FORMAT_VERSION = 1
_PICKLE_SUFFIXES = {".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle"}


def read_safetensors(path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Tensors and metadata of a safetensors file, after checking that it is one (never unpickles).

    Args:
        path: the file.

    Returns:
        (tensors on the CPU, metadata).

    Raises:
        ProjectionError: the file is missing (E462) or not safetensors, e.g. a torch.save pickle (E463).

    Example:
        >>> import tempfile, torch
        >>> path = f"{tempfile.mkdtemp()}/model.pt"
        >>> torch.save({"w": torch.zeros(1)}, path)
        >>> read_safetensors(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        fortekit.errors.ProjectionError: [E463] ... is not a safetensors file (the suffix .pt is ...
    """
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise ProjectionError(Errors.E462.format(path=path, problem="no such file"))
    problem = _not_safetensors(path)
    if problem is not None:
        raise ProjectionError(Errors.E463.format(path=path, problem=problem))
    try:
        with safe_open(str(path), framework="pt", device="cpu") as handle:
            metadata = dict(handle.metadata() or {})
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}  # noqa: SIM118
    except Exception as exc:  # safetensors raises its own SafetensorError and OSError subclasses
        raise ProjectionError(Errors.E463.format(path=path, problem=f"{type(exc).__name__}: {exc}")) from exc
    return tensors, metadata


def _not_safetensors(path: Path) -> str | None:
    """Why `path` is not a safetensors file, or None: checks the 8-byte header length and the '{'."""
    if path.suffix.lower() in _PICKLE_SUFFIXES:
        return f"the suffix {path.suffix} is that of a pickled torch file"
    with path.open("rb") as handle:
        head = handle.read(9)
    size = path.stat().st_size
    if head.startswith(b"PK\x03\x04"):
        return "it is a zip archive, which is what torch.save() writes"
    if len(head) >= 9:
        (header_length,) = struct.unpack("<Q", head[:8])
        if header_length <= size - 8 and head[8:9] == b"{":
            # A valid header comes first: its length's low byte may well be 0x80, a pickle's first byte.
            return None
    if head[:1] == b"\x80":
        return "it is a pickle stream"
    if len(head) < 9:
        return f"it has only {size} bytes"
    return "it does not start with a safetensors header"


def save_projection(
    head: ProjectionHead,
    path: str | Path,
    *,
    config: ProjectionConfig | None = None,
    history: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write `head` as safetensors plus a JSON config (format, config, history, fortekit version).

    Args:
        head: the trained head.
        path: a directory (gets projection.safetensors and projection.json) or a .safetensors path.
        config: the settings it was trained with (default: its architecture with default training).
        history: per-epoch training records to keep with it.
        extra: more JSON-ready fields for projection.json (e.g. validation R@1 before training).

    Returns:
        The path of the weights.

    Raises:
        ProjectionError: `config` does not describe `head` (E464) or the files cannot be written (E470).

    Example:
        >>> import tempfile
        >>> from fortekit.search.projection.head import ProjectionHead
        >>> folder = tempfile.mkdtemp()
        >>> save_projection(ProjectionHead(4), folder).name
        'projection.safetensors'
    """
    from safetensors.torch import save_file

    from fortekit.search.projection.head import ProjectionConfig

    weights_path, config_path = head_files(path)
    if config is None:
        config = ProjectionConfig(
            dim=head.dim, hidden_mult=head.hidden_mult, dropout=head.dropout_p,
            temperature_init=head.temperature_init,
        )
    if (config.dim, config.hidden_mult) != (head.dim, head.hidden_mult):
        raise ProjectionError(Errors.E464.format(
            path=weights_path, problem=f"config dim={config.dim}, hidden_mult={config.hidden_mult} but the "
            f"head has dim={head.dim}, hidden_mult={head.hidden_mult}", expected=_expected_shapes(head),
        ))
    tensors = {name: value.detach().to("cpu").contiguous() for name, value in head.state_dict().items()}
    document = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "fortekit_version": __version__,
        "config": config.to_dict(), "tensors": {name: list(value.shape) for name, value in tensors.items()},
        "history": history or [], **(extra or {}),
    }
    from fortekit.errors import OutputError
    from fortekit.safe_write import atomic_write, atomic_write_text

    try:
        weights_path.parent.mkdir(parents=True, exist_ok=True)
        metadata = {"format": FORMAT}
        atomic_write(weights_path, lambda temporary: save_file(tensors, str(temporary), metadata=metadata))
        atomic_write_text(config_path, json.dumps(document, indent=2) + "\n")
    except OutputError:  # the safe writer's coded errors (E741, E743 naming the file)
        raise
    except OSError as exc:
        raise ProjectionError(Errors.E470.format(path=weights_path, problem=exc)) from exc
    return weights_path


def read_projection_config(path: str | Path) -> dict[str, Any]:
    """The JSON document save_projection() wrote next to the weights (format, config, history).

    Args:
        path: the directory, its projection.safetensors or its projection.json.

    Returns:
        The parsed document.

    Raises:
        ProjectionError: the file is missing (E462) or not a projection config (E465).

    Example:
        >>> import tempfile
        >>> from fortekit.search.projection.head import ProjectionHead
        >>> folder = tempfile.mkdtemp()
        >>> _ = save_projection(ProjectionHead(4), folder)
        >>> read_projection_config(folder)["config"]["dim"]
        4
    """
    _, config_path = head_files(path)
    if not config_path.is_file():
        raise ProjectionError(Errors.E462.format(path=config_path, problem="the JSON config is missing"))
    try:
        document = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProjectionError(Errors.E465.format(path=config_path, problem=exc, format=FORMAT)) from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        found = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise ProjectionError(Errors.E465.format(
            path=config_path, problem=f"format is {found!r}", format=FORMAT,
        ))
    if not isinstance(document.get("config"), dict):
        raise ProjectionError(Errors.E465.format(
            path=config_path, problem="no 'config' object", format=FORMAT,
        ))
    return document


def load_projection(path: str | Path, device: str = "cpu") -> ProjectionHead:
    """Load a head that save_projection() (or `fortekit train-projection`) wrote, in eval mode.

    Args:
        path: the directory, its projection.safetensors or its projection.json.
        device: where to put it ("cpu", "cuda", "auto", ...).

    Returns:
        The head, in eval mode.

    Raises:
        ProjectionError: a file is missing (E462), the weights are not safetensors (E463), the config
            is invalid (E465/E460) or the tensors do not fit it: missing, extra or mis-shaped (E464).

    Example:
        >>> import tempfile
        >>> from fortekit.search.projection.head import ProjectionHead
        >>> folder = tempfile.mkdtemp()
        >>> _ = save_projection(ProjectionHead(4), folder)
        >>> load_projection(folder).training
        False
    """
    from fortekit.plugins._runtime import resolve_device
    from fortekit.search.projection.head import ProjectionConfig, ProjectionHead

    weights_path, config_path = head_files(path)
    if not weights_path.exists():
        raise ProjectionError(Errors.E462.format(path=weights_path, problem="no such file"))
    tensors, _ = read_safetensors(weights_path)
    document = read_projection_config(config_path)
    try:
        config = ProjectionConfig.from_dict(document["config"])
    except TypeError as exc:
        raise ProjectionError(Errors.E465.format(path=config_path, problem=exc, format=FORMAT)) from exc
    head = ProjectionHead.from_config(config)
    _check_tensors(head, tensors, weights_path)
    head.load_state_dict({name: value.to(torch.float32) for name, value in tensors.items()})
    return head.to(resolve_device(device)).eval()


def _expected_shapes(head: ProjectionHead) -> str:
    return ", ".join(f"{name} {tuple(value.shape)}" for name, value in head.state_dict().items())


def _check_tensors(head: ProjectionHead, tensors: dict[str, torch.Tensor], path: Path) -> None:
    expected = {name: tuple(value.shape) for name, value in head.state_dict().items()}
    problems = []
    if missing := sorted(set(expected) - set(tensors)):
        problems.append(f"missing {', '.join(missing)}")
    if extra := sorted(set(tensors) - set(expected)):
        problems.append(f"unexpected {', '.join(extra)}")
    for name in sorted(set(expected) & set(tensors)):
        value = tensors[name]
        if tuple(value.shape) != expected[name]:
            problems.append(f"{name} has shape {tuple(value.shape)}, not {expected[name]}")
        elif not value.is_floating_point():
            problems.append(f"{name} has dtype {value.dtype}")
    if problems:
        raise ProjectionError(Errors.E464.format(
            path=path, problem="; ".join(problems), expected=_expected_shapes(head),
        ))
