"""The search side of :class:`~fortekit.search.index.audio_index.AudioIndex`, as a mixin.

:class:`IndexSearchMixin` holds what an index does once built: its rows as torch tensors on a
device (cached per device, at unit length whatever the index stores, so that every path ranks by
cosine), the exact cosine top-K and the full score matrix, the check that a backbone is the
index's own, and the optional FAISS index. ``AudioIndex`` adds the columns,
building, and the files.

Example:
    >>> import numpy as np
    >>> from fortekit.search.index import AudioIndex
    >>> index = AudioIndex.from_captions(["a", "b"], [None, None], "enc", embeddings=np.eye(2),
    ...                                  parse_captions=False)
    >>> isinstance(index, IndexSearchMixin), index.search(np.array([1.0, 0.0]), k=1)[1].tolist()
    (True, [[0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fortekit.errors import AudioIndexError, Errors
from fortekit.plugins.protocols import Backbone
from fortekit.search.index.faiss_search import (
    COMPRESSED_KINDS,
    FaissSearcher,
    measure_recall,
    rescore,
    rescored_pool,
)
from fortekit.search.index.format import IndexMeta
from fortekit.search.index.projected import ProjectedAnn, ProjectedHead, project_rows
from fortekit.search.index.search import as_query_matrix, check_k, exact_top_k

if TYPE_CHECKING:
    import torch

    from fortekit.search.index.shards import ShardedSearcher

__all__ = ["IndexSearchMixin"]


class IndexSearchMixin:
    """Search over an index's rows; the class that mixes it in sets the attributes below.

    Attributes:
        meta: what ``index.json`` records (dim, count, backbone, normalised, faiss).
    """

    meta: IndexMeta
    _array: np.ndarray
    _embeddings_file: Path | None
    _tensors: dict[str, torch.Tensor]
    _faiss: FaissSearcher | ShardedSearcher | None
    _faiss_file: Path | None
    _faiss_identity: tuple[int, int] | None
    _projected: np.ndarray | None
    _projected_faiss: FaissSearcher | ShardedSearcher | None
    _projected_file: Path | None
    _projected_identity: tuple[int, int] | None

    def embedding_tensor(self, device: str = "cpu") -> torch.Tensor:
        """The rows every search compares queries with: float32, unit length, on `device`, cached.

        For an index whose rows are stored normalised (the default) these are the stored rows;
        on the CPU a mapped index is wrapped, not copied (its map is private, copy-on-write, so
        the file is never written). For an index saved with ``normalise=False`` they are the
        stored rows scaled to length 1, so that every path (``fortekit search``,
        :class:`~fortekit.search.retriever.Retriever`, Stage 1's anchors, formula
        scoring) ranks by cosine, as :meth:`search` does. Treat the tensor as read-only: it is
        shared by every search on that device.

        Example:
            >>> import numpy as np
            >>> from fortekit.search.index import AudioIndex
            >>> index = AudioIndex.from_captions(["a"], [None], "enc", embeddings=[[3.0, 4.0]],
            ...                                  parse_captions=False, normalise=False)
            >>> index.embedding_tensor().tolist(), index.embeddings.tolist()
            ([[0.6000000238418579, 0.800000011920929]], [[3.0, 4.0]])
        """
        import torch

        from fortekit.plugins._runtime import resolve_device

        device = resolve_device(device)
        if device not in self._tensors:
            if device != "cpu":
                self._tensors[device] = self.embedding_tensor("cpu").to(device)
            elif self.meta.normalised:
                # The array itself (a private map after load): never re-opened by path, so a save
                # that replaced the folder since cannot hand us another build's rows.
                self._tensors[device] = torch.from_numpy(self._writable_rows())
            else:
                rows = torch.from_numpy(np.array(self._array, dtype=np.float32))
                self._tensors[device] = torch.nn.functional.normalize(rows, dim=1)
        return self._tensors[device]

    def _writable_rows(self) -> np.ndarray:
        """The rows as an array torch may wrap (it warns on a read-only one): a map is copy-on-write."""
        if self._array.flags.writeable:
            return self._array
        return np.array(self._array, dtype=np.float32)

    # -- search -------------------------------------------------------------------------------
    def search(
        self, queries: Any, k: int = 10, *, device: str = "auto", use_faiss: bool = False,
        chunk_rows: int | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The k items most similar (cosine) to each query.

        Args:
            queries: (q, d) or (d,) numpy array or torch tensor (normalised here).
            k: results per query; more than the index holds is clipped to len(index).
            device: where to compute ("auto": CUDA when present).
            use_faiss: search the FAISS index (:meth:`build_faiss`) instead, on the CPU.
            chunk_rows: queries per matrix product (default: keeps each (chunk, n) block
                of scores within 256 MiB).

        Returns:
            (scores (q, k) float32, rows (q, k) int64), on the CPU, best first; equal scores
            in row order. ``index.ids[row]`` is the item.

        Raises:
            AudioIndexError: bad queries (E618), the wrong dimension (E608), a bad k (E613),
                no FAISS index (E616), faiss missing (E612).

        Example:
            >>> import numpy as np
            >>> from fortekit.search.index import AudioIndex
            >>> index = AudioIndex.from_captions(["a", "b", "c"], [None] * 3, "enc",
            ...                                  embeddings=np.eye(3), parse_captions=False)
            >>> scores, rows = index.search(np.array([[0.0, 1.0, 1.0]]), k=5)
            >>> rows.tolist()
            [[1, 2, 0]]
        """
        import torch

        k = check_k(k)
        matrix = as_query_matrix(queries, self.meta.dim, self.meta.backbone)
        if use_faiss:
            searcher = self._faiss_searcher()
            asked = matrix.cpu().numpy()
            if searcher.kind not in COMPRESSED_KINDS:
                scores, rows = searcher.search(asked, k)
                return torch.from_numpy(scores), torch.from_numpy(rows)
            # Codes only approximate the scores: a wider pool is re-scored with the stored rows (mapped
            # from disk, not held in memory), so the order within it is exact.
            _, pool = searcher.search(asked, min(self.meta.count, rescored_pool(k)))
            scores, rows = rescore(self.embedding_tensor("cpu").numpy(), asked, pool, k)
            return torch.from_numpy(scores), torch.from_numpy(rows)
        from fortekit.plugins._runtime import resolve_device

        unit = self.embedding_tensor(resolve_device(device))
        queries_unit = torch.nn.functional.normalize(matrix, dim=1)
        return exact_top_k(unit, queries_unit, k, chunk_rows=chunk_rows)

    def scores(self, queries: Any, device: str = "auto") -> torch.Tensor:
        """The full cosine similarity matrix (q, n), on `device` (for evaluation).

        Raises:
            AudioIndexError: bad queries (E618), the wrong dimension (E608).

        Example:
            >>> import numpy as np
            >>> from fortekit.search.index import AudioIndex
            >>> index = AudioIndex.from_captions(["a", "b"], [None] * 2, "enc",
            ...                                  embeddings=np.eye(2), parse_captions=False)
            >>> index.scores(np.array([1.0, 0.0]), device="cpu").tolist()
            [[1.0, 0.0]]
        """
        import torch

        from fortekit.plugins._runtime import resolve_device

        unit = self.embedding_tensor(resolve_device(device))
        matrix = as_query_matrix(queries, self.meta.dim, self.meta.backbone).to(unit.device)
        with torch.inference_mode():
            return torch.nn.functional.normalize(matrix, dim=1) @ unit.T

    def check_backbone(self, backbone: Backbone) -> None:
        """Raise E609 unless `backbone` has the index's backbone name and dimension.

        Example:
            >>> import numpy as np
            >>> from fortekit.search.index import AudioIndex
            >>> index = AudioIndex.from_captions(["a"], [None], "minilm", embeddings=np.ones((1, 3)),
            ...                                  parse_captions=False)
            >>> index.check_backbone(type("B", (), {"name": "hf-clap", "dim": 512})())
            Traceback (most recent call last):
            ...
            fortekit.errors.AudioIndexError: [E609] The index was built with the backbone 'minilm' (3-d), ...
        """
        if backbone.name != self.meta.backbone or int(backbone.dim) != self.meta.dim:
            raise AudioIndexError(Errors.E609.format(
                expected=self.meta.backbone, expected_dim=self.meta.dim,
                found=backbone.name, found_dim=backbone.dim,
            ))

    def search_text(
        self, texts: Sequence[str], backbone: Backbone, k: int = 10, *, device: str = "auto",
        use_faiss: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode `texts` with `backbone` (checked against the index) and :meth:`search`.

        Raises:
            AudioIndexError: another backbone or dimension (E609), and as :meth:`search`.

        Example:
            >>> index.search_text(["a dog barking"], get_backbone("minilm"), k=5)  # doctest: +SKIP
        """
        self.check_backbone(backbone)
        return self.search(backbone.encode_text(texts), k, device=device, use_faiss=use_faiss)

    # -- FAISS --------------------------------------------------------------------------------
    def build_faiss(self, kind: str = "flat", *, nlist: int | None = None, nprobe: int | None = None,
                    ef_search: int | None = None, pq_bytes: int | None = None) -> None:
        """Build a FAISS index over the rows (saved with the index by :meth:`save`).

        Args:
            kind: "flat" (exact inner product on the CPU), "ivf" (inverted file), "hnsw" (graph)
                or "ivfpq" (inverted file over product-quantised codes): the last three approximate.
            nlist: IVF cells (default about 4 sqrt(n)).
            nprobe: IVF cells searched per query (default min(nlist, 16)).
            ef_search: HNSW's candidates kept while searching (default 128, chosen on development
                captions: docs/scale.md).
            pq_bytes: IVF-PQ's sub-quantisers (default dim / 8).

        Raises:
            AudioIndexError: faiss is missing (E612), bad options (E613).

        Example:
            >>> index.build_faiss("ivf")  # doctest: +SKIP
            >>> index.search(queries, k=10, use_faiss=True)  # doctest: +SKIP
        """
        searcher = FaissSearcher.build(self._array, kind=kind, nlist=nlist, nprobe=nprobe,
                                       ef_search=ef_search, pq_bytes=pq_bytes)
        self._use_faiss(searcher)
        self.drop_projected_ann()  # of the old kind and settings: build_projected_ann makes it again

    def _use_faiss(self, searcher: FaissSearcher) -> None:
        """Keep `searcher` as the index's FAISS part, with its recall against exact measured now."""
        self._faiss = searcher
        self._faiss_file, self._faiss_identity = None, None
        self.meta = replace(self.meta, faiss=searcher.kind, ann_recall=measure_recall(searcher, self._array),
                            faiss_settings=searcher.settings())

    def _rebuilt_faiss(self, parts: ShardedSearcher) -> FaissSearcher:
        """One FAISS index over all rows, of the kind and settings of `parts` (compacting a grown index).

        A flat list or an HNSW graph is built from the settings ``index.json`` records, without
        reading the first part's file; an IVF kind reuses that file's trained cells (its lists unread).
        """
        settings = dict(self.meta.faiss_settings)
        if parts.kind == "flat" or (parts.kind == "hnsw" and settings):
            self._use_faiss(FaissSearcher.build(self._array, kind=parts.kind, **settings))
        else:
            self._use_faiss(parts.first_searcher(trained_only=parts.kind != "hnsw").like(self._array))
        assert isinstance(self._faiss, FaissSearcher)
        return self._faiss

    # -- the ANN part over projected rows (fortekit.search.index.projected) -----------------------
    def build_projected_ann(self, head: ProjectedHead) -> None:
        """Project the rows with a Stage 2 head and build an ANN part over them (saved by :meth:`save`).

        The part is of the kind and settings of the index's own ANN part (an IVF kind is trained
        anew on the projected rows); its recall@10 against the exact search of the projected rows
        is measured now. It replaces a part built for another head.

        Args:
            head: the head (:func:`fortekit.search.projection.ann.index_head` makes one).

        Raises:
            AudioIndexError: the index has no ANN part, or the head's rows are of another shape (E645);
            the head's rows are unusable (E623,
                E623, E625); faiss is missing (E612).

        Example:
            >>> index.build_faiss("hnsw")  # doctest: +SKIP
            >>> index.build_projected_ann(index_head(shipped_head("minilm"), "minilm"))  # doctest: +SKIP
            >>> index.search_projected(queries, k=10)  # doctest: +SKIP
        """
        if self.meta.faiss is None:
            raise AudioIndexError(Errors.E645.format(
                where="given", action="built",
                problem="the index has no ANN part (faiss.index) to take its kind and settings from",
                fix="Build the index with one (`fortekit index build ... --ann hnsw`, or "
                    "index.build_faiss('hnsw') and save), then build this part again "
                    "(`fortekit index build-ann --index DIR`)."))
        rows = project_rows(head, self._array)
        searcher = FaissSearcher.build(rows, kind=self.meta.faiss, **self._ann_settings())
        self._use_projected(rows, searcher, ProjectedAnn(head.identity, head.source))

    def drop_projected_ann(self) -> None:
        """Forget the ANN part over projected rows (a save then writes none).

        Example:
            >>> import numpy as np
            >>> from fortekit.search.index import AudioIndex
            >>> index = AudioIndex.from_captions(["a"], [None], "enc", embeddings=np.eye(1),
            ...                                  parse_captions=False)
            >>> index.drop_projected_ann(); index.projected_ann is None
            True
        """
        self._projected, self._projected_faiss = None, None
        self._projected_file, self._projected_identity = None, None
        if self.meta.projected_ann is not None:
            self.meta = replace(self.meta, projected_ann=None)

    def _use_projected(self, rows: np.ndarray, searcher: FaissSearcher, record: ProjectedAnn) -> None:
        """Keep projected `rows` and `searcher` as the part of `record`'s head, its recall measured now."""
        self._projected, self._projected_faiss = rows, searcher
        self._projected_file, self._projected_identity = None, None
        self.meta = replace(self.meta, projected_ann=replace(record, recall=measure_recall(searcher, rows)))

    def _ann_settings(self) -> dict[str, int]:
        """The ANN part's settings: as ``index.json`` records them, else from the searcher or its file."""
        settings = dict(self.meta.faiss_settings)
        if settings or self.meta.faiss in (None, "flat"):
            return settings
        if isinstance(self._faiss, FaissSearcher):
            return self._faiss.settings()
        if self._faiss_file is not None:
            return FaissSearcher.read_settings(self._faiss_file, str(self.meta.faiss), count=self.meta.count,
                                               dim=self.meta.dim)
        searcher = self._faiss_searcher() if self._faiss is not None else None
        if isinstance(searcher, FaissSearcher):
            return searcher.settings()
        return searcher.first_searcher().settings() if searcher is not None else {}

    @property
    def projected_ann(self) -> ProjectedAnn | None:
        """What ``index.json`` records of the ANN part over projected rows (its head), or None.

        Example:
            >>> import numpy as np
            >>> from fortekit.search.index import AudioIndex
            >>> AudioIndex.from_captions(["a"], [None], "enc", embeddings=np.eye(1),
            ...                          parse_captions=False).projected_ann is None
            True
        """
        return self.meta.projected_ann

    @property
    def projected_rows(self) -> np.ndarray | None:
        """The unit rows ``h(e)`` of the head :attr:`projected_ann` names (mapped after a load), or None."""
        return self._projected if self.meta.projected_ann is not None else None

    def search_projected(self, queries: Any, k: int = 10) -> tuple[torch.Tensor, torch.Tensor]:
        """The k items whose projected rows are nearest (cosine) each query, by the ANN part over them.

        The query side is untouched: the scores are cosines of the queries and ``h(e)``, as an
        exact search of the projected rows gives them (up to the ANN's error); a compressed kind's
        pool is re-scored with the stored projected rows.

        Args:
            queries: (q, d) or (d,) numpy array or torch tensor (normalised here).
            k: results per query (clipped to the count).

        Returns:
            (scores (q, k) float32, rows (q, k) int64), on the CPU, best first.

        Raises:
            AudioIndexError: no part over projected rows (E616), bad queries (E618, E608), a bad k
                (E613), a FAISS file replaced or of other rows (E628, E636).

        Example:
            >>> index.search_projected(backbone.encode_text(["rain"]), k=5)  # doctest: +SKIP
        """
        import torch

        k = check_k(k)
        matrix = as_query_matrix(queries, self.meta.dim, self.meta.backbone)
        searcher = self._projected_searcher()
        asked = matrix.cpu().numpy()
        if searcher.kind not in COMPRESSED_KINDS:
            scores, rows = searcher.search(asked, k)
        else:
            _, pool = searcher.search(asked, min(self.meta.count, rescored_pool(k)))
            assert self._projected is not None  # a part is never without its rows
            scores, rows = rescore(self._projected, asked, pool, k)
        return torch.from_numpy(scores), torch.from_numpy(rows)

    def _projected_searcher(self) -> FaissSearcher | ShardedSearcher:
        if self.meta.projected_ann is None or self._projected is None:
            raise AudioIndexError(Errors.E616)
        if self._projected_faiss is None and self._projected_file is not None:
            from fortekit.search.index.format import folder_identity

            if (self._projected_identity is not None
                    and folder_identity(self._projected_file) != self._projected_identity):
                raise AudioIndexError(Errors.E628.format(path=self._projected_file))
            searcher = FaissSearcher.read(self._projected_file, str(self.meta.faiss), count=self.meta.count,
                                          dim=self.meta.dim)
            searcher.check_rows(self._projected, self._projected_file)
            self._projected_faiss = searcher
        if self._projected_faiss is None:
            raise AudioIndexError(Errors.E616)
        return self._projected_faiss

    def _rebuilt_projected(self, parts: ShardedSearcher) -> FaissSearcher:
        """One FAISS index over all projected rows, of the kind and settings of `parts` (compacting)."""
        assert self._projected is not None and self.meta.projected_ann is not None
        settings = dict(self.meta.faiss_settings)
        if parts.kind == "flat" or (parts.kind == "hnsw" and settings):
            searcher = FaissSearcher.build(self._projected, kind=parts.kind, **settings)
        else:
            searcher = parts.first_searcher(trained_only=parts.kind != "hnsw").like(self._projected)
        self._use_projected(self._projected, searcher, self.meta.projected_ann)
        return searcher

    @property
    def faiss_kind(self) -> str | None:
        """The kind of FAISS index built or saved ("flat", "ivf", "hnsw", "ivfpq"), or None."""
        return self.meta.faiss

    def _faiss_searcher(self) -> FaissSearcher | ShardedSearcher:
        if self._faiss is None and self._faiss_file is not None and self.meta.faiss is not None:
            from fortekit.search.index.format import folder_identity

            if self._faiss_identity is not None and folder_identity(self._faiss_file) != self._faiss_identity:
                raise AudioIndexError(Errors.E628.format(path=self._faiss_file))
            searcher = FaissSearcher.read(self._faiss_file, self.meta.faiss, count=self.meta.count,
                                          dim=self.meta.dim)
            searcher.check_rows(self._array, self._faiss_file)
            self._faiss = searcher
        if self._faiss is None:
            raise AudioIndexError(Errors.E616)
        return self._faiss
