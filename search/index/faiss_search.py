"""An optional FAISS index over the same rows, for collections past about a million items.

Exact search (a matrix product) is the default and fast enough for most collections; FAISS
adds a flat inner-product index (``flat``: exact, CPU), an inverted-file index (``ivf``:
approximate, sub-linear), a graph index (``hnsw``: HNSW, Malkov & Yashunin 2018, approximate,
the rows kept whole) or an inverted file over product-quantised codes (``ivfpq``: Jégou et al.
2011, approximate and compressed, ``dim / 8`` bytes a row by default). Their search settings
(``nprobe``, ``efSearch``) are stored in the FAISS file and, as ``faiss_settings``, in
``index.json`` (so that ``index add`` never reads the file for them). Rows and queries are
L2-normalised, so the inner product is the cosine similarity. The index is written with ``faiss.write_index``
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
from fortekit.search.index.ann import APPROXIMATE_KINDS

__all__ = [
    "APPROXIMATE_KINDS",
    "COMPRESSED_KINDS",
    "FAISS_KINDS",
    "FaissSearcher",
    "import_faiss",
    "measure_recall",
    "rescore",
    "rescored_pool",
]

#: The kinds of FAISS index :meth:`FaissSearcher.build` makes.
FAISS_KINDS = ("flat", "ivf", "hnsw", "ivfpq")
#: The kinds that keep compressed codes, not the rows: their hits are re-scored with the stored rows.
COMPRESSED_KINDS = ("ivfpq",)
#: A compressed kind is asked for this many times k hits (at least :data:`RESCORED_MIN`), re-scored exactly.
RESCORED_FACTOR, RESCORED_MIN = 4, 100
#: Stored rows searched for when checking that a FAISS file holds this index's rows, and the
#: rows searched (as queries) when measuring recall at build time.
_CHECKED_ROWS, _RECALL_QUERIES = 8, 200
#: HNSW's links per node and candidates kept while building: the values the FAISS documentation
#: and the HNSW paper start from.
HNSW_M, HNSW_EF_CONSTRUCTION = 32, 80
#: Candidates kept while searching, chosen on development captions at 1,000,000 items
#: (``python scripts/ann_tuning.py --sweep --kinds hnsw --items 1000000``, docs/scale.md): the
#: largest setting whose search stays under 5% of encoding the query with MiniLM (17 ms): 16, 32,
#: 64, 128 and 256 reach recall@10 0.964, 0.978, 0.988, 0.998, 0.998 in 0.15-0.92 ms.
HNSW_EF_SEARCH = 128
#: HNSW asked for more rows than ``ef_search`` (a candidate pool) keeps this many times as many
#: candidates: on 200,000 development caption rows recall@1000 is 0.985 keeping 1,000 (6 ms),
#: 0.998 keeping 2,000 (13 ms) and 0.999 keeping 4,000 (30 ms).
POOL_EF_FACTOR = 2
#: A query that an IVF kind's ``nprobe`` cells leave short of k rows is searched again with this many
#: times the cells, until it is full or every cell is probed (see :meth:`FaissSearcher.search`).
NPROBE_WIDENING = 4
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

    @property
    def count(self) -> int:
        """The rows the index holds."""
        return int(self.index.ntotal)

    def settings(self) -> dict[str, int]:
        """The settings stored in the FAISS file, as ``index.json`` records them (``faiss_settings``).

        HNSW: ``ef_search``; IVF: ``nprobe`` and ``nlist``; IVF-PQ: those and ``pq_bytes``; flat: none.

        Example:
            >>> import numpy as np
            >>> FaissSearcher.build(np.eye(8, dtype=np.float32), kind="hnsw", ef_search=32).settings()
            {'ef_search': 32}
            >>> FaissSearcher.build(np.eye(8, dtype=np.float32), kind="ivf", nlist=2).settings()
            {'nprobe': 2, 'nlist': 2}
        """
        if self.kind == "hnsw":
            return {"ef_search": int(self.index.hnsw.efSearch)}
        if self.kind in ("ivf", "ivfpq"):
            found = {"nprobe": int(self.index.nprobe), "nlist": int(self.index.nlist)}
            return {**found, "pq_bytes": int(self.index.pq.M)} if self.kind == "ivfpq" else found
        return {}

    def like(self, rows: np.ndarray) -> FaissSearcher:
        """A searcher of the same kind and settings over other rows (a shard's part of the ANN).

        An IVF kind keeps this one's trained cells and codebooks (a copy, emptied and refilled), so
        that a shard of any size is searched the way the rest is and costs no training; HNSW and
        flat build their graph or list anew.

        Example:
            >>> import numpy as np
            >>> base = FaissSearcher.build(np.eye(8, dtype=np.float32), kind="hnsw", ef_search=32)
            >>> part = base.like(np.eye(8, dtype=np.float32)[:3])
            >>> part.kind, part.count, part.settings()
            ('hnsw', 3, {'ef_search': 32})
        """
        if self.kind in ("ivf", "ivfpq"):
            index = import_faiss().clone_index(self.index)
            index.reset()
            for start in range(0, int(rows.shape[0]), _ADD_ROWS):
                index.add(_unit_rows(rows[start:start + _ADD_ROWS]))
            return FaissSearcher(index, self.kind)
        return FaissSearcher.build(rows, kind=self.kind, **self.settings())

    def check_rows(self, rows: np.ndarray, path: str | os.PathLike[str]) -> None:
        """Raise E636 unless a few stored rows, searched for, are found at their own places.

        A FAISS file copied from another index of the same size and dimension (another backbone,
        another collection) would otherwise answer with rows that mean other items.

        Example:
            >>> import numpy as np
            >>> rows = np.eye(8, dtype=np.float32)
            >>> FaissSearcher.build(rows, kind="flat").check_rows(rows[::-1].copy(), "faiss.index")
            Traceback (most recent call last):
            ...
            fortekit.errors.AudioIndexError: [E636] The ANN index faiss.index does not hold this index's ...
        """
        n = int(rows.shape[0])
        chosen = np.unique(np.linspace(0, n - 1, num=min(n, _CHECKED_ROWS)).astype(np.int64))
        scores, found = self.search(np.asarray(rows[chosen]), min(n, 10))
        # A kind that keeps rows whole finds a row at the top score (a duplicate row ties with it);
        # product-quantised codes only approximate it, so there the top 10 must hold it.
        tolerance = np.inf if self.kind == "ivfpq" else 1e-4
        near_top = scores >= scores[:, :1] - tolerance
        hits = sum(int(row in set(found_rows[near].tolist()))
                   for row, found_rows, near in zip(chosen, found, near_top, strict=True))
        # An approximate kind may miss a row now and then; rows of another collection miss nearly all.
        if hits * 2 < len(chosen):
            raise AudioIndexError(Errors.E636.format(
                path=path, problem=f"{len(chosen) - hits} of {len(chosen)} stored rows searched for were "
                "not found at their own places"))

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best rows per query: (scores (q, k) float32, rows (q, k) int64), never a -1 row.

        FAISS pads an answer with row -1 when it finds fewer than k rows: an IVF kind whose
        ``nprobe`` cells hold fewer than k rows, an HNSW graph whose search stops early. No caller
        sees such padding: a query left short is searched again with :data:`NPROBE_WIDENING` times
        the cells, up to all of them (every row then is a candidate), and an HNSW query left short
        is searched exactly over the graph's stored rows. Asked for more than it holds, the index
        gives every row (k is clipped to the count). HNSW asked for more than ``efSearch`` rows
        keeps :data:`POOL_EF_FACTOR` times k candidates for this search.

        Args:
            queries: (q, d) float32 (normalised here).
            k: rows per query; more than the index holds is clipped.

        Returns:
            (scores (q, min(k, count)) float32, rows (q, min(k, count)) int64), best first.

        Example:
            >>> rows = np.random.default_rng(0).normal(size=(3000, 16)).astype(np.float32)
            >>> found = FaissSearcher.build(rows, kind="hnsw", ef_search=16).search(rows[:2], 1000)[1]
            >>> bool((found >= 0).all())
            True
            >>> few_cells = FaissSearcher.build(rows, kind="ivf", nprobe=1)  # about 14 rows a cell
            >>> bool((few_cells.search(rows[:2], 100)[1] >= 0).all())
            True
        """
        k = min(k, int(self.index.ntotal))
        unit = _unit_rows(queries)
        if self.kind == "hnsw" and k > self.index.hnsw.efSearch:
            # HNSW keeps efSearch candidates: asked for more, it pads with -1 instead of widening.
            # A pool (formula scoring's 1,000) keeps twice its size: its tail is what the formula
            # lifts, and recall@1000 goes from 0.985 to 0.998 (docs/scale.md).
            params = import_faiss().SearchParametersHNSW()
            params.efSearch = POOL_EF_FACTOR * k
            scores, rows = self.index.search(unit, k, params=params)
        else:
            scores, rows = self.index.search(unit, k)
        scores, rows = np.asarray(scores, dtype=np.float32), np.asarray(rows, dtype=np.int64)
        short = np.flatnonzero((rows < 0).any(axis=1))
        if short.size:
            # Formula scoring, Stage 3 and the id lookup index rows: a -1 would name the last item
            # or raise IndexError far from here, so the padding is filled where FAISS answers.
            scores[short], rows[short] = self._filled(unit[short], k)
        return scores, rows

    def _filled(self, unit: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best rows of queries that a first search left short, searched more widely."""
        faiss = import_faiss()
        if self.kind in ("ivf", "ivfpq"):
            # Widen nprobe step by step: the few short queries pay for more cells, not all of them,
            # and the last step probes every cell, where each stored row is a candidate.
            nlist, probes = int(self.index.nlist), int(self.index.nprobe)
            scores, rows = np.empty((len(unit), k), np.float32), np.empty((len(unit), k), np.int64)
            todo = np.arange(len(unit))
            while todo.size:
                probes = min(nlist, probes * NPROBE_WIDENING)
                params = faiss.SearchParametersIVF()
                params.nprobe = probes
                found_scores, found = self.index.search(unit[todo], k, params=params)
                done = (found >= 0).all(axis=1) | (probes >= nlist)
                scores[todo[done]], rows[todo[done]] = found_scores[done], found[done]
                todo = todo[~done]
        elif self.kind == "hnsw":
            # The graph's stored rows, searched exactly: what an HNSW search approximates.
            scores, rows = faiss.downcast_index(self.index.storage).search(unit, k)
        else:  # flat: every row is scored, so nothing is ever missing
            scores, rows = self.index.search(unit, k)
        rows = np.asarray(rows, dtype=np.int64)
        if (rows < 0).any():  # cannot happen with k <= count; refused rather than passed on
            raise AudioIndexError(Errors.E636.format(
                path="(in memory)", problem=f"a {self.kind} search of all its rows found fewer than {k}"))
        return np.asarray(scores, dtype=np.float32), rows

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the index with ``faiss.write_index``."""
        import_faiss().write_index(self.index, os.fspath(path))

    @classmethod
    def read(cls, path: str | os.PathLike[str], kind: str, *, count: int, dim: int) -> FaissSearcher:
        """Read an index that :meth:`write` wrote, and check it covers `count` rows of `dim`.

        Args:
            path: the ``faiss.index`` file.
            kind: the kind ``index.json`` records (one of :data:`FAISS_KINDS`).
            count: the rows the index holds.
            dim: their dimension.

        Returns:
            The searcher.

        Raises:
            AudioIndexError: faiss is missing (E612), the file is unreadable (E600); it is a
                FAISS index of another kind than `kind`, of another metric than the inner
                product, or of another count or dimension (E636).

        Example:
            >>> import pathlib, tempfile
            >>> rows = np.eye(8, dtype=np.float32)
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "faiss.index"
            >>> FaissSearcher.build(rows, kind="flat").write(path)
            >>> FaissSearcher.read(path, "flat", count=8, dim=8).kind
            'flat'
            >>> FaissSearcher.read(path, "hnsw", count=8, dim=8)
            Traceback (most recent call last):
            ...
            fortekit.errors.AudioIndexError: [E636] The ANN index ... does not hold this index's rows: it is a FAISS index of kind flat (IndexFlatIP), but ...
        """  # noqa: E501
        return cls._read_checked(path, kind, count=count, dim=dim, flags=0)

    @classmethod
    def read_settings(cls, path: str | os.PathLike[str], kind: str, *, count: int,
                      dim: int) -> dict[str, int]:
        """The settings of a FAISS file (:meth:`settings`), without reading its graph, rows or lists.

        For an index whose ``index.json`` does not record them (written before it did). The file
        is mapped, not read (FAISS's ``IO_FLAG_MMAP_IFC``): only the few pages of its header and
        settings are touched, so the 2.3 GB graph of a 1,000,000-item HNSW index costs about as
        much as a small one. A faiss older than that flag reads the whole file once. The file
        is checked as :meth:`read` checks it.

        Args:
            path: the ``faiss.index`` file.
            kind: the kind ``index.json`` records.
            count: the rows the index holds.
            dim: their dimension.

        Returns:
            The settings, as :meth:`settings` gives them.

        Raises:
            AudioIndexError: as :meth:`read`.

        Example:
            >>> import pathlib, tempfile
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "faiss.index"
            >>> FaissSearcher.build(np.eye(8, dtype=np.float32), kind="hnsw", ef_search=24).write(path)
            >>> FaissSearcher.read_settings(path, "hnsw", count=8, dim=8)
            {'ef_search': 24}
        """
        faiss = import_faiss()
        # A mapped index is a read-only view of the file (FAISS aborts the process on a change to
        # it): it is asked for its settings here and dropped, never searched, grown or cloned.
        mapped = getattr(faiss, "IO_FLAG_MMAP_IFC", 0)
        searcher = cls._read_checked(path, kind, count=count, dim=dim, flags=mapped)
        settings = searcher.settings()
        del searcher
        return settings

    @classmethod
    def read_trained(cls, path: str | os.PathLike[str], kind: str, *, count: int, dim: int) -> FaissSearcher:
        """An IVF kind's trained cells and codebooks from its file, with no rows: what :meth:`like` needs.

        The file's inverted lists (the rows' codes: 1.5 GB for IVF and 56 MB for IVF-PQ at
        1,000,000 MiniLM rows) are mapped, not read (FAISS's ``IO_FLAG_MMAP``), and replaced by empty
        lists; the coarse quantiser, the codebooks and ``nprobe`` are read. The file is checked as
        :meth:`read` checks it.

        Args:
            path: the ``faiss.index`` file of an IVF kind ("ivf" or "ivfpq").
            kind: the kind ``index.json`` records.
            count: the rows the file holds.
            dim: their dimension.

        Returns:
            A searcher of no rows, with the file's cells, codebooks and settings.

        Raises:
            AudioIndexError: as :meth:`read`; a kind that is not IVF (E613).

        Example:
            >>> import pathlib, tempfile
            >>> rows = np.random.default_rng(0).normal(size=(300, 8)).astype(np.float32)
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "faiss.index"
            >>> FaissSearcher.build(rows, kind="ivf", nlist=4, nprobe=2).write(path)
            >>> trained = FaissSearcher.read_trained(path, "ivf", count=300, dim=8)
            >>> trained.count, trained.settings(), trained.like(rows[:5]).count
            (0, {'nprobe': 2, 'nlist': 4}, 5)
        """
        if kind not in ("ivf", "ivfpq"):
            raise AudioIndexError(Errors.E613.format(name="kind", expected="'ivf' or 'ivfpq'", value=kind))
        faiss = import_faiss()
        mapped = getattr(faiss, "IO_FLAG_MMAP", 0)
        searcher = cls._read_checked(path, kind, count=count, dim=dim, flags=mapped)
        index = searcher.index
        empty = faiss.ArrayInvertedLists(int(index.nlist), int(index.code_size))
        index.replace_invlists(empty, True)  # the mapped lists are freed; the index owns the empty ones
        empty.this.disown()  # ... so Python must not free them too
        index.ntotal = 0
        return searcher

    @classmethod
    def _read_checked(cls, path: str | os.PathLike[str], kind: str, *, count: int, dim: int,
                      flags: int) -> FaissSearcher:
        """:meth:`read` with FAISS's read flags (0: read the whole file)."""
        faiss = import_faiss()
        try:
            index = faiss.read_index(os.fspath(path), flags)
        except RuntimeError as exc:
            raise AudioIndexError(Errors.E600.format(
                path=path, problem=f"not a FAISS index ({str(exc).splitlines()[0]})",
                fix="Rebuild it with index.build_faiss() and save the index again.",
            )) from exc
        if int(index.ntotal) != count or int(index.d) != dim:
            raise AudioIndexError(Errors.E636.format(
                path=path, problem=f"it holds {index.ntotal} rows of dimension {index.d}, "
                                   f"the index {count} of dimension {dim}",
            ))
        # Each kind is searched through its own attributes (hnsw.efSearch, nprobe, the HNSW
        # storage): a file of another kind would end in an AttributeError at the first search.
        found = _kind_of(faiss, index)
        if found != kind:
            what = f"of kind {found}" if found is not None else "of a kind fortekit does not build"
            raise AudioIndexError(Errors.E636.format(
                path=path,
                problem=f"it is a FAISS index {what} ({type(index).__name__}), but index.json says {kind}"))
        if int(getattr(index, "metric_type", -1)) != int(faiss.METRIC_INNER_PRODUCT):
            raise AudioIndexError(Errors.E636.format(
                path=path, problem="it ranks by another metric than the inner product (cosine) of unit rows"))
        return cls(index, kind)


def measure_recall(searcher: FaissSearcher, rows: np.ndarray, *, k: int = 10,
                   queries: int = _RECALL_QUERIES, seed: int = 0) -> float | None:
    """The searcher's recall@k against the exact search, with stored rows as queries.

    Each query is a stored row; both answers leave that row out (it is its own nearest
    neighbour, which would flatter the figure), so the figure is the share of the exact top k
    of the other rows that the searcher finds.

    Args:
        searcher: the FAISS searcher over `rows`.
        rows: the rows it holds, float32 (n, d).
        k: the cut-off.
        queries: rows drawn as queries.
        seed: seeds the draw.

    Returns:
        The mean recall@k, or None for an exact kind or fewer than k + 2 rows.

    Example:
        >>> import numpy as np
        >>> rows = np.random.default_rng(0).normal(size=(500, 16)).astype(np.float32)
        >>> measure_recall(FaissSearcher.build(rows, kind="hnsw"), rows) > 0.9
        True
    """
    n = int(rows.shape[0])
    if searcher.kind not in APPROXIMATE_KINDS or n < k + 2:
        return None
    chosen = np.sort(np.random.default_rng(seed).choice(n, size=min(n, queries), replace=False))
    asked = _unit_rows(rows[chosen])
    truth = _exact_top(rows, asked, k + 1)
    if searcher.kind in COMPRESSED_KINDS:  # as a search answers: a wider pool re-scored with the rows
        found = rescore(rows, asked, searcher.search(asked, rescored_pool(k + 1))[1], k + 1)[1]
    else:
        found = searcher.search(asked, k + 1)[1]
    shares = []
    for own, true_rows, found_rows in zip(chosen.tolist(), truth.tolist(), found.tolist(), strict=True):
        wanted = [row for row in true_rows if row != own][:k]
        got = {row for row in found_rows if row != own}
        shares.append(len(got.intersection(wanted)) / len(wanted))
    return round(float(np.mean(shares)), 4)


def _kind_of(faiss: Any, index: Any) -> str | None:
    """The kind of :data:`FAISS_KINDS` that a read index is, or None (another kind of FAISS index)."""
    # IndexIVFPQ and IndexIVFFlat are both IndexIVF: the narrower classes are asked first.
    for kind, name in (("ivfpq", "IndexIVFPQ"), ("ivf", "IndexIVFFlat"), ("hnsw", "IndexHNSWFlat"),
                       ("flat", "IndexFlat")):
        if isinstance(index, getattr(faiss, name)):
            return kind
    return None


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


def _exact_top(rows: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """The exact top-k rows per (unit) query, chunk by chunk (a mapped matrix is never copied whole)."""
    best_scores = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    best_rows = np.zeros((len(queries), 0), dtype=np.int64)
    for start in range(0, int(rows.shape[0]), _ADD_ROWS):
        scores = queries @ _unit_rows(rows[start:start + _ADD_ROWS]).T
        ids = np.broadcast_to(np.arange(start, start + scores.shape[1]), scores.shape)
        merged_scores = np.concatenate([best_scores, scores], axis=1)
        merged_rows = np.concatenate([best_rows, ids], axis=1)
        order = np.argsort(-merged_scores, axis=1, kind="stable")[:, :k]
        best_scores = np.take_along_axis(merged_scores, order, axis=1)
        best_rows = np.take_along_axis(merged_rows, order, axis=1)
    return best_rows


def rescored_pool(k: int) -> int:
    """How many hits a compressed kind is asked for, to re-score exactly and keep k.

    Example:
        >>> rescored_pool(10), rescored_pool(1000)
        (100, 4000)
    """
    return max(RESCORED_FACTOR * k, RESCORED_MIN)


def rescore(rows: np.ndarray, queries: np.ndarray, pool: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Re-score each query's pool of row numbers with the stored unit rows; keep the best k.

    Args:
        rows: the unit rows (n, d), in memory or memory-mapped.
        queries: (q, d), normalised here.
        pool: (q, p) row numbers; -1 pads.
        k: hits to keep per query.

    Returns:
        (scores (q, k) float32, rows (q, k) int64), best first, ties by row; -1 and -inf pad.

    Example:
        >>> rows = np.eye(3, dtype=np.float32)
        >>> rescore(rows, np.array([[0.1, 1.0, 0.0]]), np.array([[0, 1, -1]]), 2)[1].tolist()
        [[1, 0]]
    """
    unit = _unit_rows(queries)
    safe = np.maximum(pool, 0)
    gathered = _unit_rows(np.asarray(rows[safe.ravel()], dtype=np.float32)).reshape(*pool.shape, -1)
    scores = np.einsum("qpd,qd->qp", gathered, unit).astype(np.float32)
    scores = np.where(pool >= 0, scores, -np.inf).astype(np.float32)
    order = np.lexsort((np.where(pool >= 0, pool, np.iinfo(np.int64).max), -scores), axis=1)[:, :k]
    return np.take_along_axis(scores, order, axis=1), np.take_along_axis(pool, order, axis=1).astype(np.int64)
