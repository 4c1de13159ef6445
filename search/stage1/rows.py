"""Reading and checking the embedding rows of Stage 1's saved files (a caption corpus, an anchor bank).

A corpus or bank directory is user input: its ``.safetensors`` file may be random bytes, lack
the ``embeddings`` tensor, hold integers, a vector or rows of NaN. These helpers turn each of
those into a plain reason (a :class:`ValueError`), which the caller wraps in its own coded
error (E412 for a corpus, E408 for a bank), so that no SafetensorError, KeyError or
RuntimeError reaches a user. Nothing is unpickled: safetensors holds raw tensors only.

Example:
    >>> import tempfile, torch
    >>> from pathlib import Path
    >>> from safetensors.torch import save_file
    >>> path = Path(tempfile.mkdtemp()) / "rows.safetensors"
    >>> save_file({"embeddings": torch.eye(2)}, str(path))
    >>> read_rows(path).shape
    torch.Size([2, 2])
    >>> save_file({"other": torch.eye(2)}, str(path))
    >>> read_rows(path)
    Traceback (most recent call last):
    ...
    ValueError: ... holds no tensor 'embeddings' (it holds: other)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["first_bad_row", "read_rows", "unit_rows"]


def read_rows(path: str | os.PathLike[str], key: str = "embeddings") -> torch.Tensor:
    """The 2-D float32 tensor ``key`` of a safetensors file.

    Args:
        path: the ``.safetensors`` file.
        key: the tensor's name.

    Returns:
        The tensor, as float32.

    Raises:
        ValueError: the file is missing or unreadable, is not safetensors, lacks ``key``, or
            ``key`` is not a 2-D floating-point tensor (the message says which).
        OSError: the file cannot be opened.
    """
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    source = Path(path)
    try:
        tensors = load_file(str(source))
    except SafetensorError as exc:
        raise ValueError(f"{source} is not a readable safetensors file ({exc})") from None
    if key not in tensors:
        held = ", ".join(sorted(tensors)[:5]) or "nothing"
        raise ValueError(f"{source} holds no tensor {key!r} (it holds: {held})")
    rows = tensors[key]
    if not rows.is_floating_point() or rows.ndim != 2:
        raise ValueError(
            f"the tensor {key!r} of {source} is {rows.dtype} of shape {tuple(rows.shape)}; "
            "expected float rows (n, dim)"
        )
    return rows.to(torch.float32)


def first_bad_row(rows: torch.Tensor) -> int | None:
    """The first row holding NaN or an infinity, or None when every value is finite.

    Example:
        >>> import torch
        >>> first_bad_row(torch.tensor([[1.0, 0.0], [float("nan"), 1.0]])), first_bad_row(torch.eye(2))
        (1, None)
    """
    import torch

    if rows.numel() == 0:
        return None
    finite = torch.isfinite(rows).reshape(rows.shape[0], -1).all(dim=1)
    if bool(finite.all()):
        return None
    return int((~finite).nonzero()[0, 0])


def unit_rows(rows: torch.Tensor, tolerance: float = 1e-3) -> bool:
    """Whether every row has unit norm (within ``tolerance``): a saved file's rows need no normalising.

    Example:
        >>> import torch
        >>> unit_rows(torch.eye(3)), unit_rows(torch.full((2, 2), 3.0))
        (True, False)
    """
    import torch

    if rows.numel() == 0:
        return True
    return bool(torch.all((rows.norm(dim=-1) - 1.0).abs() <= tolerance))
