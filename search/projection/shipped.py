"""The Stage 2 heads that ship with fortekit: where they lie, how they were trained, what they saw.

A shipped head is a folder ``shipped/<name>/`` of this package holding ``projection.safetensors``
and ``projection.json`` (read with :func:`~fortekit.search.projection.files.load_projection`,
never unpickled) and ``training_captions.txt``: one short hash (:func:`caption_hash`) per
distinct caption of the head's training clips, sorted. The head for the default encoder
``minilm`` is trained by ``python scripts/train_default_head.py`` on Clotho development clips
1-2,000 exactly as ``fortekit eval --n-train 2000`` trains its Stage 2 (the training block of
its ``projection.json`` records the data file's SHA-256, the settings and the command).

:func:`training_overlap` is the evaluation's contamination guard: a head trained on a
collection must not be evaluated on that collection's captions.

This module imports no torch: looking a head up costs a JSON read.

Example:
    >>> sorted(SHIPPED_HEADS)
    ['minilm']
    >>> shipped_head("no-such-encoder") is None
    True
    >>> caption_hash("  A dog   BARKS ") == caption_hash("a dog barks")
    True
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, ProjectionError

__all__ = [
    "HASH_CHARS",
    "SHIPPED_HEADS",
    "TRAINING_CAPTIONS_NAME",
    "caption_hash",
    "normalise_caption",
    "shipped_head",
    "shipped_head_training",
    "training_overlap",
]

SHIPPED_HEADS: dict[str, str] = {"minilm": "minilm"}
"""Backbone name -> the folder under ``shipped/`` of the head trained for it."""

TRAINING_CAPTIONS_NAME = "training_captions.txt"
HASH_CHARS = 16  # hex characters kept of a caption's SHA-256 (64 bits: no collision among millions)
_CONFIG_NAME = "projection.json"  # files.CONFIG_NAME, without importing torch
_WEIGHTS_NAME = "projection.safetensors"
_FORMAT = "fortekit-projection"


def normalise_caption(caption: str) -> str:
    """A caption as its hash sees it: lowercased, runs of whitespace made one space, stripped.

    Example:
        >>> normalise_caption("  Rain\\tfalls ON   a roof. ")
        'rain falls on a roof.'
    """
    return " ".join(caption.lower().split())


def caption_hash(caption: str) -> str:
    """The first :data:`HASH_CHARS` hex characters of the SHA-256 of the normalised caption (UTF-8).

    Example:
        >>> caption_hash("A dog barks")
        '358c5547b62d9394'
    """
    return hashlib.sha256(normalise_caption(caption).encode("utf-8")).hexdigest()[:HASH_CHARS]


def _folder(backbone: str) -> Path | None:
    """The shipped folder of ``backbone``'s head when it holds the weights and the config, else None."""
    name = SHIPPED_HEADS.get(backbone)
    if name is None:
        return None
    root = resources.files(__package__ or "fortekit.search.projection") / "shipped" / name
    folder = Path(str(root))  # the package is installed as files (a wheel or an editable install)
    if not (folder / _WEIGHTS_NAME).is_file() or not (folder / _CONFIG_NAME).is_file():
        return None
    return folder


def _required(backbone: str) -> Path:
    folder = _folder(backbone)
    if folder is None:
        options = ", ".join(sorted(b for b in SHIPPED_HEADS if _folder(b) is not None)) or "none"
        raise ProjectionError(Errors.E472.format(backbone=backbone, options=options))
    return folder


@functools.lru_cache(maxsize=8)
def _document(folder: Path) -> dict[str, Any]:
    """The parsed projection.json of a shipped folder (read once per process)."""
    path = folder / _CONFIG_NAME
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProjectionError(Errors.E473.format(backbone=folder.name, path=path, problem=exc)) from exc
    if not isinstance(document, dict) or document.get("format") != _FORMAT:
        raise ProjectionError(Errors.E473.format(
            backbone=folder.name, path=path, problem=f"it is not a {_FORMAT} config",
        ))
    config = document.get("config")
    if not isinstance(config, dict) or not isinstance(config.get("dim"), int):
        raise ProjectionError(Errors.E473.format(backbone=folder.name, path=path, problem="no config.dim"))
    return document


@functools.lru_cache(maxsize=8)
def _training_hashes(folder: Path) -> frozenset[str]:
    """The caption hashes of a shipped folder's training_captions.txt (read once per process)."""
    path = folder / TRAINING_CAPTIONS_NAME
    try:
        lines = path.read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectionError(Errors.E473.format(backbone=folder.name, path=path, problem=exc)) from exc
    bad = next((line for line in lines if len(line) != HASH_CHARS or line.strip("0123456789abcdef")), None)
    if bad is not None or not lines:
        problem = f"the line {bad!r} is no caption hash" if bad is not None else "it is empty"
        raise ProjectionError(Errors.E473.format(backbone=folder.name, path=path, problem=problem))
    return frozenset(lines)


def shipped_head(backbone: str, dim: int | None = None) -> Path | None:
    """The folder of the Stage 2 head shipped for ``backbone``, or None.

    Args:
        backbone: the text encoder's registered name (``"minilm"``).
        dim: the encoder's width; a head of another width is not returned (None: any width).

    Returns:
        The folder (pass it to :func:`~fortekit.search.projection.files.load_projection` or as
        ``projection=`` to a Retriever), or None when no head ships for the backbone or its
        width is not ``dim``.

    Raises:
        ProjectionError: the shipped head's projection.json is damaged (E473).

    Example:
        >>> shipped_head("minilm", 384).name
        'minilm'
        >>> shipped_head("minilm", 512) is None, shipped_head("clap") is None
        (True, True)
    """
    folder = _folder(backbone)
    if folder is None:
        return None
    if dim is not None and _document(folder)["config"]["dim"] != dim:
        return None
    return folder


def shipped_head_training(backbone: str) -> dict[str, Any]:
    """The training block of the shipped head's projection.json: data, clips, settings, command.

    Raises:
        ProjectionError: no head ships for ``backbone`` (E472), or its config has no training
            block (E473).

    Example:
        >>> shipped_head_training("minilm")["clips"]
        'clotho development clips 1-2000'
        >>> shipped_head_training("clap")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        fortekit.errors.ProjectionError: [E472] No Stage 2 head ships for the backbone 'clap' ...
    """
    folder = _required(backbone)
    training = _document(folder).get("training")
    if not isinstance(training, dict):
        raise ProjectionError(Errors.E473.format(
            backbone=backbone, path=folder / _CONFIG_NAME, problem="no 'training' object",
        ))
    return dict(training)


def training_overlap(backbone: str, captions: Iterable[str]) -> int:
    """How many of ``captions`` were among the training captions of the head shipped for ``backbone``.

    Captions are compared by :func:`caption_hash` (case and whitespace ignored); each given
    caption counts once per occurrence.

    Raises:
        ProjectionError: no head ships for ``backbone`` (E472), or its training_captions.txt is
            missing or damaged (E473).

    Example:
        >>> training_overlap("minilm", ["A muddled noise of broken channel of the TV", "no such caption"])
        1
    """
    seen = _training_hashes(_required(backbone))
    return sum(caption_hash(caption) in seen for caption in captions)
