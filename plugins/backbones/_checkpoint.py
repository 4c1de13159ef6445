"""Reading checkpoints safely and fitting them to a model (shared by laion-clap and msclap).

Weights are read with safetensors or ``torch.load(weights_only=True)``: never with a
full unpickler, which can run arbitrary code. Keys named ``*embeddings.position_ids``
are dropped on both sides: older transformers saved that buffer, newer ones do not
(it is recomputed), and it is the known cause of "unexpected key" failures when a
LAION-CLAP or CLAP checkpoint meets a newer transformers.

Example:
    >>> import torch
    >>> from fortekit.plugins.backbones._checkpoint import fit_state_dict, strip_prefix
    >>> layer = torch.nn.Linear(2, 2)
    >>> state = {"module." + k: v for k, v in layer.state_dict().items()}
    >>> fit_state_dict(layer, strip_prefix(state), "ckpt.pt", "Linear")
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, ModelLoadError, ModelNotFoundError

if TYPE_CHECKING:
    import torch

__all__ = ["IGNORED_SUFFIXES", "fit_state_dict", "read_state_dict", "strip_prefix"]

#: Keys that may be present on one side only without harm.
IGNORED_SUFFIXES = ("embeddings.position_ids",)


def read_state_dict(
    path: str | os.PathLike[str], *, what: str, hint: str, nested: Iterable[str] = ("state_dict",),
) -> dict[str, torch.Tensor]:
    """Read a state dict from a ``.safetensors`` file or a tensors-only torch checkpoint.

    Args:
        path: the checkpoint.
        what: what it is, for messages ("LAION-CLAP checkpoint").
        hint: where to get it, for the not-found message.
        nested: keys under which checkpoints keep the state dict ("state_dict", "model").

    Returns:
        Parameter name -> tensor, with a DataParallel "module." prefix removed.

    Raises:
        ModelNotFoundError: no such file.
        ModelLoadError: the file holds more than tensors, or is not a checkpoint.
    """
    import torch

    file = Path(path).expanduser()
    if not file.is_file():
        raise ModelNotFoundError(Errors.E206.format(what=what, path=file, hint=hint))
    if file.suffix == ".safetensors":
        from safetensors.torch import load_file

        try:
            loaded: Any = load_file(str(file), device="cpu")
        except Exception as exc:  # safetensors raises its own SafetensorError
            raise ModelLoadError(Errors.E208.format(what=what, path=file, problem=exc)) from exc
    else:
        try:
            loaded = torch.load(str(file), map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as exc:
            raise ModelLoadError(Errors.E209.format(path=file, problem=str(exc).splitlines()[0])) from exc
        except (RuntimeError, OSError, EOFError, ValueError) as exc:
            raise ModelLoadError(Errors.E208.format(what=what, path=file, problem=exc)) from exc
    for key in nested:
        if isinstance(loaded, Mapping) and isinstance(loaded.get(key), Mapping):
            loaded = loaded[key]
            break
    if not isinstance(loaded, Mapping) or not all(isinstance(v, torch.Tensor) for v in loaded.values()):
        raise ModelLoadError(Errors.E208.format(
            what=what, path=file, problem="it holds no mapping of parameter names to tensors",
        ))
    return strip_prefix(dict(loaded))


def strip_prefix(state: dict[str, Any], prefix: str = "module.") -> dict[str, Any]:
    """Remove the prefix that DataParallel/DistributedDataParallel put on every key."""
    if state and all(key.startswith(prefix) for key in state):
        return {key[len(prefix):]: value for key, value in state.items()}
    return state


def _ignored(key: str) -> bool:
    return key.endswith(IGNORED_SUFFIXES)


def fit_state_dict(
    model: torch.nn.Module,
    state: dict[str, torch.Tensor],
    path: str | os.PathLike[str],
    model_name: str,
    *,
    hint: str = "",
    may_miss: tuple[str, ...] = (),
) -> None:
    """Load `state` into `model`, allowing only the harmless differences.

    Args:
        model: the freshly built model.
        state: from :func:`read_state_dict`.
        path: the checkpoint, for messages.
        model_name: the model, for messages.
        hint: what to try when the checkpoint does not fit (fusion? another size?).
        may_miss: key prefixes that may be absent from the checkpoint (parts already
            loaded from elsewhere, such as a pretrained text tower).

    Raises:
        ModelLoadError: missing or unexpected keys beyond position_ids, or shape mismatches.
    """
    state = {key: value for key, value in state.items() if not _ignored(key)}
    try:
        result = model.load_state_dict(state, strict=False)
    except RuntimeError as exc:  # size mismatches are raised even with strict=False
        raise ModelLoadError(Errors.E208.format(what=model_name, path=path, problem=f"{exc} {hint}")) from exc
    missing = [k for k in result.missing_keys if not _ignored(k) and not k.startswith(may_miss)]
    unexpected = [k for k in result.unexpected_keys if not _ignored(k)]
    if missing or unexpected:
        raise ModelLoadError(Errors.E210.format(
            path=path, model=model_name, n_missing=len(missing), missing=missing[:3] or "none",
            n_unexpected=len(unexpected), unexpected=unexpected[:3] or "none", hint=hint,
        ))
