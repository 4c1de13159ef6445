"""An optional FAISS index over the same rows, for collections past about a million items.

Exact search (a matrix product) is the default and fast enough for most collections; FAISS
adds an inverted-file index (``ivf``: approximate, sub-linear) or a flat inner-product index
(``flat``: exact, CPU). Rows and queries are L2-normalised, so the inner product is the
cosine similarity. The index is written with ``faiss.write_index`` (FAISS's own binary
format, no pickle) as ``faiss.index`` beside the other files. faiss is an optional
dependency: ``pip install 'fortekit[faiss]'``.

Example:
    >>> import numpy as np
    >>> from fortekit.search.index.faiss_search import FaissSearcher
    >>> rows = np.eye(4, dtype=np.float32)
    >>> searcher = FaissSearcher.build(rows, kind="flat")
    >>> searcher.search(rows[2:3], k=1)[1].tolist()
    [[2]]
"""

from __future__ import annotations

import math
import os
from types import ModuleType
from typing import Any

import numpy as np

from fortekit._checks import check_int
from fortekit.errors import AudioIndexError, Errors

__all__ = ["FAISS_KINDS", "FaissSearcher", "import_faiss"]

#: The kinds of FAISS index :meth:`FaissSearcher.build` makes.
FAISS_KINDS = ("flat", "ivf")
_ADD_ROWS = 65_536  # rows normalised and added at a time, so a mapped matrix is never copied whole


def import_faiss() -> ModuleType:
    """The faiss module, or E612 saying how to install it.

    Example:
        >>> import_faiss().__name__
        'faiss'
    """
    try:
        import faiss
    except ImportError as exc:
        raise AudioIndexError(Errors.E612.format(problem=f"{type(exc).__name__}: {exc}")) from exc
    module: ModuleType = faiss
    return module


def _unit_rows(rows: np.ndarray) -> np.ndarray:
    rows = np.ascontiguousarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.ascontiguousarray(rows / np.maximum(norms, 1e-12), dtype=np.float32)


class FaissSearcher:
    """A FAISS inner-product index (flat or IVF) over unit rows.

    Args:
        index: the faiss index object.
        kind: "flat" or "ivf".

    Example:
        >>> import numpy as np
        >>> FaissSearcher.build(np.eye(8, dtype=np.float32)).kind
        'flat'
    """

    def __init__(self, index: Any, kind: str) -> None:
        self.index = index
        self.kind = kind

    def __repr__(self) -> str:
        return f"FaissSearcher(kind={self.kind!r}, count={self.index.ntotal})"

    @classmethod
    def build(
        cls, rows: np.ndarray, *, kind: str = "flat", nlist: int | None = None, nprobe: int | None = None,
        seed: int = 0,
    ) -> FaissSearcher:
        """Build a FAISS index over `rows` (normalised here, chunk by chunk).

        Args:
            rows: float32 (n, d), in memory or memory-mapped.
            kind: "flat" (exact inner product) or "ivf" (inverted file, approximate).
            nlist: IVF cells (default about 4 sqrt(n), at most n).
            nprobe: IVF cells searched per query (default min(nlist, 16)).
            seed: seeds the choice of training rows and FAISS's k-means.

        Returns:
            The searcher.

        Raises:
            AudioIndexError: faiss is missing (E612), a bad kind, nlist or nprobe (E613).
        """
        faiss = import_faiss()
        if kind not in FAISS_KINDS:
            expected = " or ".join(map(repr, FAISS_KINDS))
            raise AudioIndexError(Errors.E613.format(name="kind", expected=expected, value=kind))
        n, dim = int(rows.shape[0]), int(rows.shape[1])
        if kind == "flat":
            index = faiss.IndexFlatIP(dim)
        else:
            cells = nlist if nlist is not None else max(1, min(n, round(4 * math.sqrt(n))))
            _check_positive("nlist", cells, upper=n)
            index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, cells, faiss.METRIC_INNER_PRODUCT)
            index.cp.seed = seed
            train_rows = min(n, max(cells * 64, 10_000))
            chosen = np.sort(np.random.default_rng(seed).choice(n, size=train_rows, replace=False))
            index.train(_unit_rows(rows[chosen]))
            probes = nprobe if nprobe is not None else min(cells, 16)
            index.nprobe = _check_positive("nprobe", probes, upper=cells)
        for start in range(0, n, _ADD_ROWS):
            index.add(_unit_rows(rows[start:start + _ADD_ROWS]))
        return cls(index, kind)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best rows per query: (scores (q, k) float32, rows (q, k) int64).

        An IVF index that finds fewer than k rows pads with row -1 and score -inf.
        """
        scores, rows = self.index.search(_unit_rows(queries), min(k, int(self.index.ntotal)))
        scores = np.where(rows < 0, -np.inf, scores).astype(np.float32)
        return scores, rows.astype(np.int64)

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the index with ``faiss.write_index``."""
        import_faiss().write_index(self.index, os.fspath(path))

    @classmethod
    def read(cls, path: str | os.PathLike[str], kind: str, *, count: int, dim: int) -> FaissSearcher:
        """Read an index that :meth:`write` wrote, and check it covers `count` rows of `dim`.

        Raises:
            AudioIndexError: faiss is missing (E612), the file is unreadable or does not
                match the index (E600).
        """
        faiss = import_faiss()
        try:
            index = faiss.read_index(os.fspath(path))
        except RuntimeError as exc:
            raise AudioIndexError(Errors.E600.format(
                path=path, problem=f"not a FAISS index ({str(exc).splitlines()[0]})",
                fix="Rebuild it with index.build_faiss() and save the index again.",
            )) from exc
        if int(index.ntotal) != count or int(index.d) != dim:
            raise AudioIndexError(Errors.E600.format(
                path=path, problem=f"it holds {index.ntotal} rows of dimension {index.d}, "
                                   f"the index {count} of dimension {dim}",
                fix="Rebuild it with index.build_faiss() and save the index again.",
            ))
        return cls(index, kind)


def _check_positive(name: str, value: object, *, upper: int) -> int:
    return check_int(value, name=name, high=upper, error=AudioIndexError, message=Errors.E613)
