"""An optional FAISS index over the same rows, for collections past about a million items.

Exact search (a matrix product) is the default and fast enough for most collections; FAISS
adds a flat inner-product index (``flat``: exact, CPU), an inverted-file index (``ivf``:
approximate, sub-linear), a graph index (``hnsw``: HNSW, Malkov & Yashunin 2018, approximate,
the rows kept whole) or an inverted file over product-quantised codes (``ivfpq``: Jégou et al.
2011, approximate and compressed, ``dim / 8`` bytes a row by default). Their search settings
(``nprobe``, ``efSearch``) are stored in the FAISS file. Rows and queries are L2-normalised, so
the inner product is the cosine similarity. The index is written with ``faiss.write_index``
(FAISS's own binary format, no pickle) as ``faiss.index`` beside the other files. faiss is an optional
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
FAISS_KINDS = ("flat", "ivf", "hnsw", "ivfpq")
#: HNSW's defaults, the values the FAISS documentation and the HNSW paper start from: links per
#: node, candidates kept while building, candidates kept while searching.
HNSW_M, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH = 32, 80, 64
#: Product quantisation needs about 39 training rows per centroid (FAISS warns below that).
_PQ_ROWS_PER_CENTROID = 39
_PQ_MIN_ROWS = 1_000
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
    """A FAISS inner-product index (flat, IVF, HNSW or IVF-PQ) over unit rows.

    Args:
        index: the faiss index object.
        kind: one of :data:`FAISS_KINDS`.

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
        seed: int = 0, ef_search: int | None = None, pq_bytes: int | None = None,
    ) -> FaissSearcher:
        """Build a FAISS index over `rows` (normalised here, chunk by chunk).

        Args:
            rows: float32 (n, d), in memory or memory-mapped.
            kind: "flat" (exact inner product), "ivf" (inverted file), "hnsw" (graph) or "ivfpq"
                (inverted file over product-quantised codes; at least 1,000 rows).
            nlist: IVF cells of "ivf" and "ivfpq" (default about 4 sqrt(n), at most n).
            nprobe: IVF cells searched per query (default min(nlist, 16)).
            seed: seeds the choice of training rows and FAISS's k-means.
            ef_search: HNSW's candidates kept while searching (default :data:`HNSW_EF_SEARCH`).
            pq_bytes: "ivfpq"'s sub-quantisers, a divisor of the dimension (default dim / 8): the bytes
                a row takes from 9,984 rows on (256 centroids each), fewer bits on less data.

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
        elif kind == "hnsw":
            index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            index.hnsw.efSearch = _check_positive(
                "ef_search", HNSW_EF_SEARCH if ef_search is None else ef_search, upper=1 << 20)
        else:
            cells = nlist if nlist is not None else max(1, min(n, round(4 * math.sqrt(n))))
            _check_positive("nlist", cells, upper=n)
            if kind == "ivf":
                index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, cells, faiss.METRIC_INNER_PRODUCT)
            else:
                index = _ivfpq(faiss, n, dim, cells, pq_bytes)
            index.cp.seed = seed
            wanted = max(cells * 64, 10_000, 256 * _PQ_ROWS_PER_CENTROID if kind == "ivfpq" else 0)
            train_rows = min(n, wanted)
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


def _ivfpq(faiss: Any, n: int, dim: int, cells: int, pq_bytes: int | None) -> Any:
    """An untrained IVF-PQ index: ``pq_bytes`` sub-quantisers of 8 bits (fewer bits on small data)."""
    if n < _PQ_MIN_ROWS:
        raise AudioIndexError(Errors.E613.format(
            name="kind", value="ivfpq", expected=f"'flat', 'ivf' or 'hnsw' below {_PQ_MIN_ROWS:,} rows "
            "(product quantisation trains up to 256 centroids per sub-quantiser)"))
    subquantizers = pq_bytes if pq_bytes is not None else max(1, dim // 8)
    _check_positive("pq_bytes", subquantizers, upper=dim)
    if dim % subquantizers:
        raise AudioIndexError(Errors.E613.format(
            name="pq_bytes", expected=f"a divisor of the dimension {dim}", value=subquantizers))
    bits = min(8, int(math.log2(n // _PQ_ROWS_PER_CENTROID)))
    return faiss.IndexIVFPQ(faiss.IndexFlatIP(dim), dim, cells, subquantizers, bits,
                            faiss.METRIC_INNER_PRODUCT)


def _check_positive(name: str, value: object, *, upper: int) -> int:
    return check_int(value, name=name, high=upper, error=AudioIndexError, message=Errors.E613)
