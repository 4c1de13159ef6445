"""The text side of Stage 1: one backbone call per batch, a text-embedding cache, counters.

The beam search verbalises many candidates that differ in one word, and the same
queries come back day after day; every text is encoded once. The cache lives in
memory (least recently used entries go first) and, optionally, on disk in an
SQLite file of raw float32 rows (no pickle), keyed by the exact text.

Example:
    >>> from fortekit.plugins import get_backbone
    >>> encoder = CachedTextEncoder(get_backbone("minilm", device="cpu"))  # doctest: +SKIP
    >>> encoder.encode(["a dog barks", "rain", "a dog barks"]).shape  # doctest: +SKIP
    torch.Size([3, 384])
    >>> encoder.stats  # doctest: +SKIP
    EncoderStats(calls=1, texts_encoded=2, cache_hits=1, seconds=0.01)
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fortekit.errors import Errors, SearchError

if TYPE_CHECKING:
    import torch

    from fortekit.plugins.protocols import Backbone

__all__ = ["CachedTextEncoder", "EncoderStats", "TextEmbeddingCache"]


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

    Raises:
        SearchError: the file is unreadable or was written for another backbone.

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
    ) -> None:
        self.backbone = backbone
        self.dim = dim
        self.max_entries = max_entries
        self._memory: OrderedDict[str, torch.Tensor] = OrderedDict()
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
            db = sqlite3.connect(self.path)
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            db.execute("CREATE TABLE IF NOT EXISTS rows (text TEXT PRIMARY KEY, vector BLOB)")
            found = dict(db.execute("SELECT key, value FROM meta").fetchall())
        except (sqlite3.Error, OSError) as exc:
            raise SearchError(Errors.E404.format(path=self.path, problem=exc)) from exc
        if not found:
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)", [("backbone", self.backbone), ("dim", str(self.dim))]
            )
            db.commit()
        elif found.get("backbone") != self.backbone or found.get("dim") != str(self.dim):
            db.close()
            raise SearchError(Errors.E405.format(
                path=self.path, found=found.get("backbone"), found_dim=found.get("dim"),
                expected=self.backbone, expected_dim=self.dim,
            ))
        self._db = db

    def get(self, text: str) -> torch.Tensor | None:
        """The cached embedding of ``text`` (a CPU float32 row), or None."""
        row = self._memory.get(text)
        if row is not None:
            self._memory.move_to_end(text)
            return row
        if self._db is None:
            return None
        found = self._db.execute("SELECT vector FROM rows WHERE text = ?", (text,)).fetchone()
        if found is None:
            return None
        import torch

        blob = bytes(found[0])
        if len(blob) != 4 * self.dim:
            raise SearchError(Errors.E404.format(path=self.path, problem=f"a row of {len(blob)} bytes"))
        vector = torch.frombuffer(bytearray(blob), dtype=torch.float32)
        self._remember(text, vector)
        return vector

    def put(self, texts: Sequence[str], vectors: torch.Tensor) -> None:
        """Store one row per text (moved to the CPU)."""
        rows = vectors.detach().to("cpu", dtype=vectors.dtype).float()
        for text, row in zip(texts, rows, strict=True):
            self._remember(text, row.clone())
        if self._db is not None:
            self._db.executemany(
                "INSERT OR REPLACE INTO rows VALUES (?, ?)",
                [(text, row.numpy().tobytes()) for text, row in zip(texts, rows, strict=True)],
            )
            self._db.commit()

    def _remember(self, text: str, row: torch.Tensor) -> None:
        self._memory[text] = row
        self._memory.move_to_end(text)
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
    """

    def __init__(self, backbone: Backbone, cache: TextEmbeddingCache | None = None) -> None:
        self.backbone = backbone
        self.cache = cache if cache is not None else TextEmbeddingCache(
            backbone=backbone.name, dim=int(backbone.dim)
        )
        self.stats = EncoderStats()

    @property
    def device(self) -> str:
        return str(self.backbone.device)

    @property
    def dim(self) -> int:
        return int(self.backbone.dim)

    def encode(self, texts: Sequence[str]) -> torch.Tensor:
        """Embeddings of ``texts`` (duplicates allowed), shape (len(texts), dim), on the backbone's device.

        Raises:
            SearchError: the backbone returned a tensor of the wrong shape.
        """
        import torch

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
                raise SearchError(Errors.E403.format(got=got, count=len(missing), dim=self.dim))
            self.cache.put(missing, fresh)
            for text, row in zip(missing, fresh.detach().float().cpu(), strict=True):
                rows[text] = row
        if not texts:
            return torch.empty((0, self.dim), dtype=torch.float32, device=self.device)
        return torch.stack([rows[text] for text in texts]).to(self.device)
