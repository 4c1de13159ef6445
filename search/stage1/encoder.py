"""The text side of Stage 1: one backbone call per batch, a text-embedding cache, counters.

The beam search verbalises many candidates that differ in one word, and the same
queries come back day after day; every text is encoded once. The cache lives in
memory (least recently used entries go first) and, optionally, on disk in an
SQLite file of raw float32 rows (no pickle), keyed by the backbone's identity and the exact
text. The identity (:func:`backbone_identity`) is the plug-in's name and class, its options
and the size and modification time of its model files, so two models that share a
``cache_dir`` (two hf-clap checkpoints, one retrained in place) never serve each other's rows.

Example:
    >>> from fortekit.plugins import get_backbone
    >>> encoder = CachedTextEncoder(get_backbone("minilm", device="cpu"))  # doctest: +SKIP
    >>> encoder.encode(["a dog barks", "rain", "a dog barks"]).shape  # doctest: +SKIP
    torch.Size([3, 384])
    >>> encoder.stats  # doctest: +SKIP
    EncoderStats(calls=1, texts_encoded=2, cache_hits=1, seconds=0.01)
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, RefineError

if TYPE_CHECKING:
    import torch

    from fortekit.plugins.protocols import Backbone

__all__ = ["CachedTextEncoder", "EncoderStats", "TextEmbeddingCache", "backbone_identity"]

#: Attributes that change where or how fast a backbone runs, not the vectors it gives.
_RUNTIME_ATTRIBUTES = frozenset({"device", "batch_size"})
#: The most files of a model folder whose size and time enter the identity.
_MAX_FILES = 64


def _describe_path(path: Path) -> Any:
    """A model path's name, size and time (a folder: those of its files), or None if it is no file."""
    try:
        resolved = path.expanduser().resolve()
        if resolved.is_file():
            info = resolved.stat()
            return [str(resolved), info.st_size, info.st_mtime_ns]
        if resolved.is_dir():
            files = sorted(entry for entry in resolved.iterdir() if entry.is_file())[:_MAX_FILES]
            return [str(resolved), [[f.name, f.stat().st_size, f.stat().st_mtime_ns] for f in files]]
    except (OSError, ValueError, RuntimeError):  # unreadable, or not a path at all
        return None
    return None


def _describe(value: Any, depth: int = 0) -> Any:
    """A JSON-able description of one attribute value (None for what says nothing about the model)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, Path):
        return _describe_path(value) or str(value)
    if isinstance(value, str):
        if os.sep in value or value.startswith((".", "~")):
            return _describe_path(Path(value)) or value
        return value
    if depth < 2 and callable(getattr(value, "encode_text", None)):  # a tower that is itself a backbone
        return _attributes(value, depth + 1)
    return None  # a torch module, a processor, a tokenizer: their files are described by path


def _attributes(backbone: Any, depth: int = 0) -> dict[str, Any]:
    try:
        fields = dict(vars(backbone))
    except TypeError:  # __slots__
        fields = {name: getattr(backbone, name, None) for name in getattr(backbone, "__slots__", ())}
    described = {
        name: _describe(value, depth) for name, value in sorted(fields.items())
        if name not in _RUNTIME_ATTRIBUTES
    }
    return {
        "class": f"{type(backbone).__module__}.{type(backbone).__qualname__}",
        "name": str(getattr(backbone, "name", "")), "dim": getattr(backbone, "dim", None),
        **{name: value for name, value in described.items() if value is not None},
    }


def backbone_identity(backbone: Any) -> str:
    """The identity of a backbone's vectors: ``NAME@HASH`` of its class, options and model files.

    A plug-in that names its model fully gives a ``cache_identity`` string (name, options,
    weights path, size and modification time; see :mod:`fortekit.plugins.protocols`): it is
    used, with the class and dimension. For any other backbone the identity is derived from
    what every plug-in keeps: its name, class and dimension; its scalar and path attributes,
    private ones and a nested text tower's included (model folder, checkpoint, seed, token
    limit, fusion, ...; not the device or the batch size); and, for each path, the size and
    modification time of the file or of the files in the folder. Two backbones with the same
    identity give the same vectors.

    Args:
        backbone: any backbone object.

    Returns:
        ``"<name>@<16 hex digits>"``.

    Example:
        >>> class Demo:
        ...     name, dim, device = "demo", 2, "cpu"
        ...     def __init__(self, model): self.model = model
        ...     def encode_text(self, texts): ...
        >>> backbone_identity(Demo("a")) == backbone_identity(Demo("a")), backbone_identity(Demo("a"))[:5]
        (True, 'demo@')
        >>> backbone_identity(Demo("a")) == backbone_identity(Demo("b"))
        False
    """
    own = getattr(backbone, "cache_identity", None)
    if isinstance(own, str) and own:  # the plug-in's own account of its model
        description: dict[str, Any] = {
            "class": f"{type(backbone).__module__}.{type(backbone).__qualname__}",
            "name": str(getattr(backbone, "name", "")), "dim": getattr(backbone, "dim", None),
            "cache_identity": own,
        }
    else:
        description = _attributes(backbone)
    text = json.dumps(description, sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"{description['name']}@{digest}"


@dataclass(slots=True)
class EncoderStats:
    """What the encoder did: backbone calls, texts it encoded, texts the cache served, time inside."""

    calls: int = 0
    texts_encoded: int = 0
    cache_hits: int = 0
    seconds: float = 0.0

    def reset(self) -> None:
        """Set every counter back to zero."""
        self.calls = self.texts_encoded = self.cache_hits = 0
        self.seconds = 0.0


class TextEmbeddingCache:
    """Text -> embedding, in memory (LRU, ``max_entries``) and optionally in an SQLite file.

    Args:
        path: a directory for the on-disk cache (``text_cache.sqlite``), or None.
        backbone: the backbone's name, recorded in the file so that embeddings of two
            encoders never mix.
        dim: the embedding dimension, recorded likewise.
        max_entries: the most rows kept in memory.
        identity: the backbone's full identity (:func:`backbone_identity`), part of every
            row's key. None: the name alone, until :class:`CachedTextEncoder` binds the
            identity of the backbone it encodes with (:meth:`bind`).

    Raises:
        RefineError: the file is unreadable or was written for another backbone.

    Example:
        >>> import torch
        >>> cache = TextEmbeddingCache(backbone="demo", dim=2)
        >>> cache.put(["rain"], torch.tensor([[0.6, 0.8]]))
        >>> cache.get("rain").tolist()
        [0.6000000238418579, 0.800000011920929]
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        backbone: str = "",
        dim: int = 0,
        max_entries: int = 200_000,
        identity: str | None = None,
    ) -> None:
        self.backbone = backbone
        self.dim = dim
        self.max_entries = max_entries
        self.identity = identity or backbone
        self.bound = identity is not None
        self._memory: OrderedDict[tuple[str, str], torch.Tensor] = OrderedDict()
        self._db: sqlite3.Connection | None = None
        self.path: Path | None = None
        if path is not None:
            self.path = Path(path).expanduser() / "text_cache.sqlite"
            self._open_disk()

    def __len__(self) -> int:
        return len(self._memory)

    def _open_disk(self) -> None:
        assert self.path is not None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Two runs may share a cache folder: wait for the other's write instead of failing.
            db = sqlite3.connect(self.path, timeout=60)
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            # Rows are keyed by the backbone's identity as well as the text. (The "rows" table
            # of earlier versions, keyed by the text alone, is never read: its model is unknown.)
            db.execute(
                "CREATE TABLE IF NOT EXISTS vectors (model TEXT, text TEXT, vector BLOB, "
                "PRIMARY KEY (model, text))"
            )
            found = dict(db.execute("SELECT key, value FROM meta").fetchall())
        except (sqlite3.Error, OSError) as exc:
            raise RefineError(Errors.E404.format(path=self.path, problem=exc)) from exc
        if not found:
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)", [("backbone", self.backbone), ("dim", str(self.dim))]
            )
            db.commit()
        elif found.get("backbone") != self.backbone or found.get("dim") != str(self.dim):
            db.close()
            raise RefineError(Errors.E405.format(
                path=self.path, found=found.get("backbone"), found_dim=found.get("dim"),
                expected=self.backbone, expected_dim=self.dim,
            ))
        self._db = db

    def bind(self, identity: str) -> None:
        """Key the rows by ``identity`` from now on (a cache made with the backbone's name alone).

        Example:
            >>> cache = TextEmbeddingCache(backbone="demo", dim=2)
            >>> cache.bind("demo@0123"); cache.identity, cache.bound
            ('demo@0123', True)
        """
        self.identity = identity
        self.bound = True

    def get(self, text: str) -> torch.Tensor | None:
        """The cached embedding of ``text`` (a CPU float32 row), or None."""
        key = (self.identity, text)
        row = self._memory.get(key)
        if row is not None:
            self._memory.move_to_end(key)
            return row
        if self._db is None:
            return None
        try:
            found = self._db.execute(
                "SELECT vector FROM vectors WHERE model = ? AND text = ?", key
            ).fetchone()
        except sqlite3.Error as exc:
            raise RefineError(Errors.E404.format(path=self.path, problem=exc)) from exc
        if found is None:
            return None
        import torch

        blob = bytes(found[0])
        if len(blob) != 4 * self.dim:
            raise RefineError(Errors.E404.format(path=self.path, problem=f"a row of {len(blob)} bytes"))
        vector = torch.frombuffer(bytearray(blob), dtype=torch.float32)
        if not bool(torch.isfinite(vector).all()):
            raise RefineError(Errors.E404.format(path=self.path, problem="a row holds NaN or inf"))
        self._remember(text, vector)
        return vector

    def put(self, texts: Sequence[str], vectors: torch.Tensor) -> None:
        """Store one row per text (moved to the CPU)."""
        rows = vectors.detach().to("cpu", dtype=vectors.dtype).float()
        for text, row in zip(texts, rows, strict=True):
            self._remember(text, row.clone())
        if self._db is not None:
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                    [(self.identity, text, row.numpy().tobytes())
                     for text, row in zip(texts, rows, strict=True)],
                )
                self._db.commit()
            except sqlite3.Error as exc:  # a full disk, a file removed under us: coded, names the file
                raise RefineError(Errors.E404.format(path=self.path, problem=exc)) from exc

    def _remember(self, text: str, row: torch.Tensor) -> None:
        key = (self.identity, text)
        self._memory[key] = row
        self._memory.move_to_end(key)
        while len(self._memory) > self.max_entries:
            self._memory.popitem(last=False)

    def close(self) -> None:
        """Close the on-disk cache (memory stays)."""
        if self._db is not None:
            self._db.close()
            self._db = None


class CachedTextEncoder:
    """``f_T`` through a cache: de-duplicates, serves known texts, encodes the rest in ONE call.

    Args:
        backbone: any :class:`fortekit.plugins.Backbone`.
        cache: a :class:`TextEmbeddingCache` (default: in memory only).

    Example:
        >>> from fortekit.plugins import get_backbone
        >>> encoder = CachedTextEncoder(get_backbone("minilm", device="cpu"))  # doctest: +SKIP
        >>> encoder.encode(["wind", "wind"]).shape, encoder.stats.texts_encoded  # doctest: +SKIP
        (torch.Size([2, 384]), 1)
        >>> encoder.encode("wind").shape  # doctest: +SKIP
        torch.Size([384])
    """

    def __init__(self, backbone: Backbone, cache: TextEmbeddingCache | None = None) -> None:
        self.backbone = backbone
        self.cache = cache if cache is not None else TextEmbeddingCache(
            backbone=backbone.name, dim=int(backbone.dim)
        )
        if not self.cache.bound:  # made with the name alone: key its rows by this backbone's identity
            self.cache.bind(backbone_identity(backbone))
        self.stats = EncoderStats()

    @property
    def device(self) -> str:
        return str(self.backbone.device)

    @property
    def dim(self) -> int:
        return int(self.backbone.dim)

    def encode(self, texts: str | Sequence[str]) -> torch.Tensor:
        """Embeddings of ``texts`` (duplicates allowed), shape (len(texts), dim), on the backbone's device.

        One text (a bare str) gives its vector, a 1-D tensor (dim,), as a backbone's
        ``encode_text`` does (sentence-transformers' convention); the backbone is still given a list.

        Raises:
            RefineError: the backbone returned a tensor of the wrong shape.
        """
        import torch

        if isinstance(texts, str):
            return self.encode([texts])[0]

        unique = list(dict.fromkeys(texts))
        rows: dict[str, torch.Tensor] = {}
        missing: list[str] = []
        for text in unique:
            row = self.cache.get(text)
            if row is None:
                missing.append(text)
            else:
                rows[text] = row
        self.stats.cache_hits += len(texts) - len(missing)
        if missing:
            started = time.perf_counter()
            fresh = self.backbone.encode_text(missing)
            self.stats.seconds += time.perf_counter() - started
            self.stats.calls += 1
            self.stats.texts_encoded += len(missing)
            if not isinstance(fresh, torch.Tensor) or tuple(fresh.shape) != (len(missing), self.dim):
                got = tuple(fresh.shape) if isinstance(fresh, torch.Tensor) else type(fresh).__name__
                raise RefineError(Errors.E403.format(got=got, count=len(missing), dim=self.dim))
            self.cache.put(missing, fresh)
            for text, row in zip(missing, fresh.detach().float().cpu(), strict=True):
                rows[text] = row
        if not texts:
            return torch.empty((0, self.dim), dtype=torch.float32, device=self.device)
        return torch.stack([rows[text] for text in texts]).to(self.device)
