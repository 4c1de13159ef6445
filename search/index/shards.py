"""An index in parts: the shards that ``fortekit index add`` appends and the items it removes.

A folder that ``index add`` or ``index remove`` changed holds, besides the first part's files
(``index.json``, ``embeddings.npy``, ``items.jsonl``, ``faiss.index``, ...):

* ``shards/NNNN/``: one folder per ``index add``, itself a one-part index folder (its own
  ``index.json`` naming the index's identity, ``embeddings.npy``, ``items.jsonl`` and, when
  the index has an ANN part, its own ``faiss.index`` of the same kind and settings, and with a
  part over projected rows its own ``projected.npy`` and ``projected.index``);
* ``shards.json``: the index's identity, the shards in row order, and the rows removed from
  each part (tombstones, by part and row: an id removed and added again is a new row).

``index.json`` then says ``"format_version": 2`` (an older fortekit refuses it, E602, instead of
loading the first part alone). Loading merges the parts into one index in memory (the rows of
the live items, in part order); the exact search ranks them as one matrix, and the ANN search
asks every part's FAISS index and merges their answers exactly (:class:`ShardedSearcher`).
``fortekit index compact`` writes the live items back as one part. The writing side is
:mod:`fortekit.search.index.growing`.

Example:
    >>> manifest = ShardManifest("3f2a", ("0001",), {"base": (4, 7)})
    >>> ShardManifest.from_json(manifest.to_json(), "shards.json") == manifest
    True
    >>> manifest.removed_count
    2
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fortekit.errors import AudioIndexError, Errors
from fortekit.search.index.evidence_file import read_evidence
from fortekit.search.index.faiss_search import FaissSearcher
from fortekit.search.index.format import (
    EMBEDDINGS_FILE,
    FAISS_FILE,
    SINGLE_PART_VERSION,
    IndexMeta,
    IndexRecords,
    check_embedding_rows,
    check_unique_ids,
    folder_identity,
    read_embeddings,
    read_items,
    read_meta,
)
from fortekit.search.index.projected import PROJECTED_FAISS_FILE, read_projected_rows
from fortekit.textio import BadLine, json_value

if TYPE_CHECKING:
    from fortekit.plugins.evidence import LabelEvidence

__all__ = [
    "BASE_PART",
    "MANIFEST_FILE",
    "SHARDED_FORMAT_VERSION",
    "SHARDS_DIR",
    "IndexPart",
    "ShardManifest",
    "ShardedSearcher",
    "merge_parts",
    "read_manifest",
    "read_part",
    "read_parts",
]

SHARDS_DIR = "shards"
MANIFEST_FILE = "shards.json"
SHARDED_FORMAT_VERSION = 2
#: The name the first part (the files at the top of the folder) goes by in ``shards.json``.
BASE_PART = "base"
_SHARD_NAME = re.compile(r"\d{4,9}")


@dataclass(frozen=True, slots=True)
class ShardManifest:
    """What ``shards.json`` records.

    Attributes:
        index_id: the index's identity; each shard's ``index.json`` names it.
        shards: the shard folders under ``shards/``, in row order after the first part.
        removed: part name (:data:`BASE_PART` or a shard) -> its removed rows (0-based, sorted).
    """

    index_id: str
    shards: tuple[str, ...] = ()
    removed: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def removed_count(self) -> int:
        """How many rows are removed, over all parts."""
        return sum(len(rows) for rows in self.removed.values())

    @property
    def parts(self) -> tuple[str, ...]:
        """Every part's name, the first part first."""
        return (BASE_PART, *self.shards)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``shards.json``."""
        return {"index_id": self.index_id, "shards": list(self.shards),
                "removed": {name: list(rows) for name, rows in sorted(self.removed.items()) if rows}}

    @classmethod
    def from_json(cls, data: object, path: str | os.PathLike[str]) -> ShardManifest:
        """Check and read the JSON object of ``shards.json``.

        Raises:
            AudioIndexError: a field of the wrong type, a shard named twice or oddly, removed rows
                of a part that is not there (E600).
        """
        def fail(problem: str) -> AudioIndexError:
            return AudioIndexError(Errors.E600.format(
                path=path, problem=problem, fix="Restore the index folder from a copy, or rebuild it with "
                "`fortekit index build ... --overwrite`."))

        if not isinstance(data, dict):
            raise fail(f"a JSON {type(data).__name__}, not an object")
        index_id, shards, removed = data.get("index_id"), data.get("shards"), data.get("removed", {})
        if not isinstance(index_id, str) or not index_id.isalnum():
            raise fail(f"index_id is {index_id!r}, not a hexadecimal identity")
        if not isinstance(shards, list) or not all(isinstance(name, str) and _SHARD_NAME.fullmatch(name)
                                                   for name in shards):
            raise fail(f"shards is {shards!r}, not a list of shard folder names (0001, 0002, ...)")
        if len(set(shards)) != len(shards):
            raise fail("a shard is named twice")
        if not isinstance(removed, dict):
            raise fail(f"removed is {removed!r}, not an object")
        rows: dict[str, tuple[int, ...]] = {}
        for name, entries in removed.items():
            if name != BASE_PART and name not in shards:
                raise fail(f"removed names the part {name!r}, which is not {BASE_PART!r} or a listed shard")
            good = isinstance(entries, list) and all(
                isinstance(row, int) and not isinstance(row, bool) and row >= 0 for row in entries)
            if not good or sorted(set(entries)) != entries:
                raise fail(f"removed[{name!r}] is not a sorted list of distinct row numbers")
            if entries:
                rows[name] = tuple(entries)
        return cls(index_id, tuple(shards), rows)


def read_manifest(root: str | os.PathLike[str]) -> ShardManifest:
    """Read ``shards.json`` of a version-2 index folder.

    Raises:
        AudioIndexError: the file is missing (E601) or unusable (E600).

    Example:
        >>> read_manifest("/nonexistent/index")
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E601] The audio index at /nonexistent/index lacks shards.json ...
    """
    path = Path(root) / MANIFEST_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        version = SHARDED_FORMAT_VERSION
        missing = f"{MANIFEST_FILE} (index.json says format_version {version}: an index in parts)"
        raise AudioIndexError(Errors.E601.format(directory=Path(root), missing=missing)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AudioIndexError(Errors.E600.format(path=path, problem=f"unreadable ({exc})",
                                                 fix="Restore the index folder from a copy.")) from exc
    data = json_value(1, text)
    if isinstance(data, BadLine):
        raise AudioIndexError(Errors.E600.format(path=path, problem=f"not valid JSON ({data.reason})",
                                                 fix="Restore the index folder from a copy."))
    return ShardManifest.from_json(data, path)


@dataclass(frozen=True, slots=True)
class IndexPart:
    """One part of an index as read from its folder: the first part or a shard."""

    name: str
    folder: Path
    meta: IndexMeta
    embeddings: np.ndarray
    records: IndexRecords
    evidence: LabelEvidence | None
    projected: np.ndarray | None = None


def read_part(folder: Path, *, mmap: bool, name: str = BASE_PART, meta: IndexMeta | None = None) -> IndexPart:
    """Read and check one part's files (every row, every item line, the label evidence).

    Raises:
        AudioIndexError: as :meth:`~fortekit.search.index.audio_index.AudioIndex.load`.
    """
    meta = read_meta(folder) if meta is None else meta
    embeddings = read_embeddings(folder, meta, mmap=mmap)
    records = read_items(folder, meta)
    check_embedding_rows(folder / EMBEDDINGS_FILE, embeddings, records.ids, normalised=meta.normalised)
    for needed, file in ((meta.faiss, FAISS_FILE), (meta.projected_ann, PROJECTED_FAISS_FILE)):
        if needed is not None and not (folder / file).is_file():
            raise AudioIndexError(Errors.E601.format(directory=folder,
                                                     missing=f"{file} (index.json names one)"))
    projected = None if meta.projected_ann is None else read_projected_rows(
        folder, meta.count, meta.dim, mmap=mmap, ids=records.ids)
    return IndexPart(name, folder, meta, embeddings, records, read_evidence(folder, meta), projected)


#: The fields in which a shard must agree with the first part.
_SAME = ("backbone", "backbone_options", "dim", "normalised", "parsed", "faiss", "evidence_labels")


def read_parts(root: Path, base: IndexPart, manifest: ShardManifest, *, mmap: bool) -> list[IndexPart]:
    """The first part and every shard of a version-2 folder, each checked against the first.

    Raises:
        AudioIndexError: a missing shard (E632), a shard of another index (E631), and what
            :func:`read_part` raises.
    """
    parts = [base]
    for name in manifest.shards:
        folder = root / SHARDS_DIR / name
        if not folder.is_dir() or folder.is_symlink():
            problem = "that folder is a link" if folder.is_symlink() else f"{folder} is missing"
            raise AudioIndexError(Errors.E632.format(directory=root, shard=name, problem=problem))
        part = read_part(folder, mmap=mmap, name=name)
        if part.meta.index_id != manifest.index_id:
            raise AudioIndexError(Errors.E631.format(
                shard=folder, directory=root,
                problem=f"it names the index {part.meta.index_id!r}, this index is {manifest.index_id!r}"))
        for what in _SAME:
            mine, theirs = getattr(base.meta, what), getattr(part.meta, what)
            if mine != theirs:
                raise AudioIndexError(Errors.E631.format(
                    shard=folder, directory=root, problem=f"its {what} is {theirs!r}, the index's {mine!r}"))
        parts.append(part)
    for name, rows in manifest.removed.items():
        count = next(part.meta.count for part in parts if part.name == name)
        if rows and rows[-1] >= count:
            raise AudioIndexError(Errors.E600.format(
                path=root / MANIFEST_FILE, problem=f"it removes row {rows[-1]} of the part {name!r}, "
                f"which holds {count} rows", fix="Restore the index folder from a copy."))
    return parts


@dataclass(frozen=True, slots=True)
class _LivePart:
    """One part's FAISS file and where its rows went in the merged index (-1: removed)."""

    path: Path
    identity: tuple[int, int] | None
    global_rows: np.ndarray
    removed: int
    rows: np.ndarray


class ShardedSearcher:
    """Every part's FAISS index, asked in turn and merged exactly into one top k.

    Each part is asked for k more hits than it has removed rows, so that the k best live rows
    of each part are always among its answers; the merged list is ordered by score (ties by row).
    The parts' files are read when first searched, and must then still be the files that were
    loaded (E628).

    Example:
        >>> searcher.search(queries, k=10)  # doctest: +SKIP
        (array([[0.91, ...]], dtype=float32), array([[1041, ...]]))
    """

    def __init__(self, kind: str, parts: Sequence[_LivePart], dim: int) -> None:
        self.kind = kind
        self._parts = list(parts)
        self._dim = dim
        self._searchers: dict[Path, FaissSearcher] = {}

    def __repr__(self) -> str:
        return f"ShardedSearcher(kind={self.kind!r}, parts={len(self._parts)})"

    @property
    def count(self) -> int:
        """The live rows, over all parts."""
        return sum(int((part.global_rows >= 0).sum()) for part in self._parts)

    def _searcher(self, part: _LivePart) -> FaissSearcher:
        if part.path not in self._searchers:
            if part.identity is not None and folder_identity(part.path) != part.identity:
                raise AudioIndexError(Errors.E628.format(path=part.path))
            searcher = FaissSearcher.read(part.path, self.kind, count=len(part.global_rows), dim=self._dim)
            searcher.check_rows(part.rows, part.path)
            self._searchers[part.path] = searcher
        return self._searchers[part.path]

    def first_searcher(self, *, trained_only: bool = False) -> FaissSearcher:
        """The first part's searcher (its kind and settings are every part's).

        Args:
            trained_only: an IVF kind's trained cells and settings alone, its lists left unread
                (:meth:`FaissSearcher.read_trained`): enough for :meth:`FaissSearcher.like`.
        """
        if trained_only:
            part = self._parts[0]
            if part.identity is not None and folder_identity(part.path) != part.identity:
                raise AudioIndexError(Errors.E628.format(path=part.path))
            return FaissSearcher.read_trained(part.path, self.kind, count=len(part.global_rows),
                                              dim=self._dim)
        return self._searcher(self._parts[0])

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best live rows per query over every part: (scores (q, k) float32, rows (q, k) int64)."""
        all_scores, all_rows = [], []
        for part in self._parts:
            wanted = min(k + part.removed, len(part.global_rows))
            scores, local = self._searcher(part).search(queries, wanted)
            rows = np.where(local >= 0, part.global_rows[np.maximum(local, 0)], -1)
            all_scores.append(np.where(rows >= 0, scores, -np.inf).astype(np.float32))
            all_rows.append(rows)
        scores, rows = np.concatenate(all_scores, axis=1), np.concatenate(all_rows, axis=1)
        keep = min(k, self.count)
        order = np.lexsort((np.where(rows >= 0, rows, np.iinfo(np.int64).max), -scores), axis=1)[:, :keep]
        return np.take_along_axis(scores, order, axis=1), np.take_along_axis(rows, order, axis=1)


@dataclass(frozen=True, slots=True)
class MergedParts:
    """The live items of every part as one index's columns, and their FAISS parts."""

    meta: IndexMeta
    embeddings: np.ndarray
    records: IndexRecords
    evidence: LabelEvidence | None
    searcher: ShardedSearcher | None
    layout: ShardLayout
    projected: np.ndarray | None = None
    projected_searcher: ShardedSearcher | None = None


@dataclass(frozen=True, slots=True)
class ShardLayout:
    """How an index folder is split: shard count and removed rows (for ``index info``).

    Example:
        >>> ShardLayout(shards=2, removed=3).describe()
        '3 parts (2 added by `fortekit index add`), 3 removed items'
    """

    shards: int = 0
    removed: int = 0

    def describe(self) -> str:
        """A line for ``fortekit index info``."""
        if not self.shards and not self.removed:
            return "1 part"
        return (f"{self.shards + 1} parts ({self.shards} added by `fortekit index add`), "
                f"{self.removed} removed items")


def merge_parts(parts: Sequence[IndexPart], manifest: ShardManifest) -> MergedParts:
    """The live rows of `parts`, in part order, as one index (the rows are copied into memory).

    The parts over projected rows are kept when every part has one, for the same head (a shard
    written by an older fortekit has none: the index is then searched without it).

    Raises:
        AudioIndexError: an id live in two parts (E605); every row removed (E639: an index of no
            items is refused when loaded, as it is when saved).
    """
    keeps, global_rows, start = [], [], 0
    for part in parts:
        keep = np.ones(part.meta.count, dtype=bool)
        keep[list(manifest.removed.get(part.name, ()))] = False
        mapping = np.full(part.meta.count, -1, dtype=np.int64)
        mapping[keep] = np.arange(start, start + int(keep.sum()))
        start += int(keep.sum())
        keeps.append(keep)
        global_rows.append(mapping)
    if start == 0:  # shards.json edited by hand (`index remove` refuses to remove the last item, E634)
        written = sum(part.meta.count for part in parts)
        raise AudioIndexError(Errors.E639.format(
            where=f"at {parts[0].folder}",
            why=f": its {MANIFEST_FILE} removes all {written} rows of its {len(parts)} part(s)"))
    embeddings = np.concatenate([part.embeddings[keep] for part, keep in zip(parts, keeps, strict=True)])
    records = IndexRecords([], [], [], [])
    for part, keep in zip(parts, keeps, strict=True):
        rows = np.flatnonzero(keep).tolist()
        records.ids.extend(part.records.ids[row] for row in rows)
        records.captions.extend(part.records.captions[row] for row in rows)
        records.paths.extend(part.records.paths[row] for row in rows)
        records.predicate_sets.extend(part.records.predicate_sets[row] for row in rows)
    check_unique_ids(records.ids)
    evidence = _merged_evidence(parts, keeps)
    base = parts[0].meta
    unparsed = min(len(records.ids), sum(part.meta.unparsed for part in parts))
    meta = replace(base, count=len(records.ids), unparsed=unparsed, format_version=SINGLE_PART_VERSION,
                   index_id=manifest.index_id)
    searcher = None
    if base.faiss is not None:
        live = [_LivePart(part.folder / FAISS_FILE, folder_identity(part.folder / FAISS_FILE), mapping,
                          int((mapping < 0).sum()), part.embeddings)
                for part, mapping in zip(parts, global_rows, strict=True)]
        searcher = ShardedSearcher(base.faiss, live, base.dim)
    projected, projected_searcher = None, None
    head = None if base.projected_ann is None else base.projected_ann.head
    if head is not None and all(part.projected is not None and part.meta.projected_ann is not None
                                and part.meta.projected_ann.head == head for part in parts):
        projected = np.ascontiguousarray(np.concatenate(
            [np.asarray(part.projected)[keep] for part, keep in zip(parts, keeps, strict=True)]),
            dtype=np.float32)
        live = [_LivePart(part.folder / PROJECTED_FAISS_FILE,
                          folder_identity(part.folder / PROJECTED_FAISS_FILE), mapping,
                          int((mapping < 0).sum()), np.asarray(part.projected))
                for part, mapping in zip(parts, global_rows, strict=True)]
        projected_searcher = ShardedSearcher(str(base.faiss), live, base.dim)
    else:
        meta = replace(meta, projected_ann=None)
    layout = ShardLayout(shards=len(parts) - 1, removed=manifest.removed_count)
    return MergedParts(meta, np.ascontiguousarray(embeddings, dtype=np.float32), records, evidence,
                       searcher, layout, projected, projected_searcher)


def _merged_evidence(parts: Sequence[IndexPart], keeps: Sequence[np.ndarray]) -> LabelEvidence | None:
    if parts[0].evidence is None:
        return None
    import torch

    from fortekit.plugins.evidence import LabelEvidence

    matrices = []
    for part, keep in zip(parts, keeps, strict=True):
        if part.evidence is None:  # read_parts compared the labels: every part has evidence
            raise AudioIndexError(Errors.E601.format(directory=part.folder, missing="evidence.safetensors"))
        matrices.append(part.evidence.matrix[torch.from_numpy(keep)])
    return LabelEvidence(parts[0].evidence.labels, torch.cat(matrices))


def write_manifest(path: Path, manifest: ShardManifest) -> None:
    """Write ``shards.json`` (the caller forces it to disk and swaps the folder in)."""
    path.write_text(json.dumps(manifest.to_json(), indent=2) + "\n", encoding="utf-8")
