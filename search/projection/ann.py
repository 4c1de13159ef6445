"""A Stage 2 head as an index's ANN part over projected rows knows it: its identity and its rows.

An index may hold an ANN part over the rows a head projects (:mod:`fortekit.search.index.projected`).
Such a part is used only with the very head that made it, told by :func:`head_identity`: the
SHA-256 of the head's weights file and of the ``config`` of its ``projection.json`` (what the
head computes; its training history is left out). A head retrained, or another file, has another
identity, and the search then says it does not use the part.

* :func:`head_identity` and :func:`head_source` cost a file read and no torch (the pipeline asks
  them when it plans a search);
* :func:`index_head` is the head as the index room takes it (a
  :class:`~fortekit.search.index.projected.ProjectedHead`: identity, source, and a function that
  loads the head on first use and projects rows);
* :func:`recorded_head` finds the head an index's part records (``index add`` projects the new
  items with it).

Example:
    >>> from fortekit.search.projection.shipped import shipped_head
    >>> folder = shipped_head("minilm")
    >>> len(head_identity(folder)), head_source(folder, "minilm")
    (64, 'shipped:minilm')
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, ProjectionError
from fortekit.search.index.projected import SHIPPED_SOURCE, ProjectedAnn, ProjectedHead

if TYPE_CHECKING:
    import numpy as np

__all__ = ["head_files", "head_identity", "head_source", "index_head", "recorded_head"]

_WEIGHTS_NAME = "projection.safetensors"  # files.WEIGHTS_NAME (files imports torch; this module does not)
_PREFIX = b"fortekit-projection-head\x00"
_CHUNK = 1 << 20


def head_files(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The weights and config files of a head given as its folder, its ``.safetensors`` or its ``.json``.

    Example:
        >>> [file.name for file in head_files("runs/head")]
        ['projection.safetensors', 'projection.json']
    """
    path = Path(path)
    if path.suffix == ".json":
        path = path.with_suffix(".safetensors")
    elif path.is_dir() or not path.suffix:
        path = path / _WEIGHTS_NAME
    return path, path.with_suffix(".json")


def head_identity(path: str | os.PathLike[str]) -> str:
    """The head's identity: the SHA-256 (hex) of its weights file and of ``projection.json``'s ``config``.

    Read once per file version (its size and time of change) in a process.

    Raises:
        ProjectionError: a file is missing (E462) or the config is not a head's (E465).

    Example:
        >>> import tempfile
        >>> from fortekit.search.projection import ProjectionHead, save_projection
        >>> folder = tempfile.mkdtemp()
        >>> _ = save_projection(ProjectionHead(4), folder)
        >>> head_identity(folder) == head_identity(f"{folder}/projection.safetensors")
        True
    """
    weights, config = head_files(path)
    for file in (weights, config):
        if not file.is_file():
            raise ProjectionError(Errors.E462.format(path=file, problem="no such file"))
    stamp = tuple((os.fspath(file.resolve()), file.stat().st_size, file.stat().st_mtime_ns)
                  for file in (weights, config))
    return _identity(stamp)


@functools.lru_cache(maxsize=32)
def _identity(stamp: tuple[tuple[str, int, int], ...]) -> str:
    weights, config = Path(stamp[0][0]), Path(stamp[1][0])
    try:
        document = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProjectionError(Errors.E465.format(path=config, problem=exc,
                                                 format="fortekit-projection")) from exc
    if not isinstance(document, dict) or not isinstance(document.get("config"), dict):
        raise ProjectionError(Errors.E465.format(path=config, problem="no 'config' object",
                                                 format="fortekit-projection"))
    digest = hashlib.sha256(_PREFIX)
    with weights.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    digest.update(b"\x00" + json.dumps(document["config"], sort_keys=True, separators=(",", ":")).encode())
    return digest.hexdigest()


def head_source(path: str | os.PathLike[str], backbone: str | None = None) -> str:
    """How ``index.json`` names a head: ``shipped:<backbone>`` for the one shipped, else its absolute path.

    Example:
        >>> from fortekit.search.projection.shipped import shipped_head
        >>> head_source(shipped_head("minilm"), "minilm"), head_source("/heads/mine", "minilm")
        ('shipped:minilm', '/heads/mine')
    """
    from fortekit.search.projection.shipped import shipped_head

    shipped = shipped_head(backbone) if backbone else None
    if shipped is not None and head_files(path)[0].resolve() == head_files(shipped)[0].resolve():
        return f"{SHIPPED_SOURCE}{backbone}"
    return os.path.abspath(os.fspath(path))


def index_head(path: str | os.PathLike[str], backbone: str | None = None) -> ProjectedHead:
    """The head at `path` as an index takes it: identity, source and a projection of rows.

    The head itself (torch) is loaded when rows are first projected.

    Raises:
        ProjectionError: as :func:`head_identity`; and, when rows are projected, as
            :func:`~fortekit.search.projection.files.load_projection`.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.projection.shipped import shipped_head
        >>> head = index_head(shipped_head("minilm"), "minilm")
        >>> head.source, head.project(np.eye(384, dtype=np.float32)[:2]).shape
        ('shipped:minilm', (2, 384))
    """
    identity = head_identity(path)
    where = Path(path)
    loaded: list[Any] = []

    def project(rows: np.ndarray) -> np.ndarray:
        from fortekit.search.projection.files import load_projection
        from fortekit.search.projection.head import project_embeddings

        if not loaded:
            loaded.append(load_projection(where))
        return project_embeddings(loaded[0], rows)

    return ProjectedHead(identity, head_source(path, backbone), project)


def recorded_head(part: ProjectedAnn | None, backbone: str,
                  projection: str | os.PathLike[str] | None = None) -> ProjectedHead | None:
    """The head an index's part over projected rows was built with, where it can be found (or `projection`).

    Args:
        part: what ``index.json`` records of the part (None: the index has none).
        backbone: the index's backbone (a shipped head is looked up by it).
        projection: a head given by the caller (``index add --projection PATH``), used instead.

    Returns:
        The head, or None: no part and no head given, or the recorded head is not where the index
        says (checked by the caller, E645, with its identity).

    Example:
        >>> part = ProjectedAnn("0" * 64, "shipped:minilm")
        >>> recorded_head(part, "minilm").source
        'shipped:minilm'
        >>> recorded_head(ProjectedAnn("0" * 64, "/no/such/head"), "minilm") is None
        True
    """
    if projection is not None:
        return index_head(projection, backbone)
    if part is None:
        return None
    if part.source.startswith(SHIPPED_SOURCE):
        from fortekit.search.projection.shipped import shipped_head

        folder = shipped_head(part.source.removeprefix(SHIPPED_SOURCE))
        return None if folder is None else index_head(folder, backbone)
    weights, config = head_files(part.source)
    return index_head(part.source, backbone) if weights.is_file() and config.is_file() else None
