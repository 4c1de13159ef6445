"""Stage 2 training and validation data: :class:`ProjectionData` and its safetensors file.

A data file is one safetensors file of float tensors ``query`` (n, d) (the refined queries q*),
``audio`` (n, d) (the frozen audio embeddings) and optionally ``negative`` (n, d)
(f_T(G(phi-)) per item). It is read through :func:`~fortekit.search.projection.files.read_safetensors`,
which refuses a pickled file instead of unpickling it.

Example:
    >>> import tempfile, torch
    >>> path = f"{tempfile.mkdtemp()}/train.safetensors"
    >>> data = ProjectionData(torch.eye(2), torch.eye(2), torch.ones(2, 2))
    >>> load_projection_data(save_projection_data(path, data)).size
    2
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import torch

from fortekit.errors import Errors, ProjectionError
from fortekit.search.projection.files import read_safetensors

__all__ = ["ProjectionData", "load_projection_data", "save_projection_data"]

_DATA_KEYS = ("query", "audio", "negative")


@dataclass(frozen=True, eq=False)  # tensors have no single truth value to compare
class ProjectionData:
    """Stage 2 training or validation items, row i of each tensor being item i.

    Attributes:
        query: (n, d) refined query embeddings q* = f_T(G(phi*)).
        audio: (n, d) frozen audio embeddings e_a.
        negative: (n, d) negative-query embeddings f_T(G(phi-)), or None (no L_logic).

    Raises:
        ProjectionError: shapes disagree, n < 2, or a value is not finite (E466).

    Example:
        >>> import torch
        >>> data = ProjectionData(query=torch.eye(3), audio=torch.eye(3))
        >>> data.size, data.dim, data.negative is None
        (3, 3, True)
    """

    query: torch.Tensor
    audio: torch.Tensor
    negative: torch.Tensor | None = None

    def __post_init__(self) -> None:
        for name in _DATA_KEYS:
            value = getattr(self, name)
            if value is None and name == "negative":
                continue
            if not isinstance(value, torch.Tensor) or value.ndim != 2 or not value.is_floating_point():
                shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
                raise ProjectionError(Errors.E466.format(
                    path="<in memory>", problem=f"{name!r} is {shape}, not a 2-D float tensor",
                ))
            if value.shape != self.query.shape:
                raise ProjectionError(Errors.E466.format(
                    path="<in memory>", problem=f"{name!r} has shape {tuple(value.shape)} but 'query' "
                    f"{tuple(self.query.shape)}",
                ))
            if not bool(torch.isfinite(value).all()):
                raise ProjectionError(Errors.E466.format(
                    path="<in memory>", problem=f"{name!r} has NaN or inf",
                ))
            # Own float32 CPU copies: the loop moves them to its device once.
            object.__setattr__(self, name, value.detach().to("cpu", torch.float32).contiguous())
        if self.query.shape[0] < 2:
            raise ProjectionError(Errors.E466.format(
                path="<in memory>", problem=f"{self.query.shape[0]} item(s); InfoNCE needs at least 2",
            ))

    @property
    def size(self) -> int:
        """The number of items n."""
        return int(self.query.shape[0])

    @property
    def dim(self) -> int:
        """The embedding dimension d."""
        return int(self.query.shape[1])

    def fingerprint(self) -> str:
        """SHA-1 of the tensors' bytes (a resumed run must see the same data)."""
        digest = hashlib.sha1(usedforsecurity=False)
        for name in _DATA_KEYS:
            value = getattr(self, name)
            if value is not None:
                digest.update(name.encode())
                digest.update(value.numpy().tobytes())
        return digest.hexdigest()


def save_projection_data(
    path: str | Path, data: ProjectionData, metadata: dict[str, str] | None = None,
) -> Path:
    """Write Stage 2 data as safetensors: tensors 'query', 'audio' and (if any) 'negative'.

    Args:
        path: the .safetensors file to write.
        data: the items.
        metadata: free-form strings kept in the file header (e.g. the backbone's name).

    Returns:
        `path` as a Path.

    Raises:
        ProjectionError: the file cannot be written (E470).

    Example:
        >>> import tempfile, torch
        >>> path = f"{tempfile.mkdtemp()}/train.safetensors"
        >>> data = ProjectionData(torch.eye(2), torch.eye(2), torch.ones(2, 2))
        >>> load_projection_data(save_projection_data(path, data)).negative.tolist()
        [[1.0, 1.0], [1.0, 1.0]]
    """
    from safetensors.torch import save_file

    path = Path(path)
    tensors = {name: getattr(data, name) for name in _DATA_KEYS if getattr(data, name) is not None}
    from fortekit.errors import OutputError
    from fortekit.safe_write import atomic_write

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, lambda temporary: save_file(tensors, str(temporary), metadata=metadata))
    except OutputError:  # the safe writer's coded errors (E741, E743 naming the file)
        raise
    except OSError as exc:
        raise ProjectionError(Errors.E470.format(path=path, problem=exc)) from exc
    return path


def load_projection_data(path: str | Path) -> ProjectionData:
    """Read a file that save_projection_data() wrote (or any safetensors file with those tensors).

    Args:
        path: the .safetensors file.

    Returns:
        The items (float32, CPU).

    Raises:
        ProjectionError: missing file (E462), not safetensors (E463), missing, extra or mis-shaped
            tensors (E466).

    Example:
        >>> load_projection_data("no/such.safetensors")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        fortekit.errors.ProjectionError: [E462] No projection at no/such.safetensors: no such file...
    """
    tensors, _ = read_safetensors(path)
    missing = [name for name in ("query", "audio") if name not in tensors]
    extra = sorted(set(tensors) - set(_DATA_KEYS))
    if missing or extra:
        problems = [f"missing {', '.join(missing)}"] if missing else []
        problems += [f"unexpected {', '.join(extra)}"] if extra else []
        problem = "; ".join(problems)
        raise ProjectionError(Errors.E466.format(path=path, problem=problem))
    try:
        return ProjectionData(tensors["query"], tensors["audio"], tensors.get("negative"))
    except ProjectionError as exc:
        raise ProjectionError(str(exc).replace("<in memory>", str(path))) from exc
