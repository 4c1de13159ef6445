"""The ANN part over projected rows: what keeps the Stage 2 head on when the first pass is approximate.

The Stage 2 head projects the items once, ``h(e)`` (the query side is untouched), so a search
with the head ranks the cosine of the query and ``h(e)``. An index's ANN part
(``faiss.index``) holds the unprojected rows ``e``: searched with the head on, it would hand the
head candidates chosen in the other space. An index may therefore also hold, for one head,

* ``projected.npy``: the unit rows ``h(e)``, float32 (count, dim), in row order, and
* ``projected.index``: a FAISS index over them, of the kind and settings of ``faiss.index``
  (an IVF kind trained anew on the projected rows),

recorded in ``index.json`` as ``projected_ann``: the head's identity (the SHA-256 of its weights
and config, :func:`fortekit.search.projection.ann.head_identity`), where the head came from and
the part's recall@10 against the exact search of the projected rows. A search whose head has
another identity never uses them (it says so, :func:`fortekit.search.pipeline.assemble.first_pass_reason`).

The index room only stores and searches the part; the head is the projection room's, and it
reaches here as a :class:`ProjectedHead` (an identity and a function of rows): ``fortekit index
build`` builds the part for the head the index uses by default, ``fortekit index build-ann``
(re)builds it for a given head, ``index add`` projects the new items with the recorded head
(each shard holds its own part), ``index compact`` writes the parts back as one, and ``index
remove`` needs nothing (removed rows are skipped as in every part).

Example:
    >>> import numpy as np
    >>> head = ProjectedHead("0" * 64, "a test head", lambda rows: rows[:, ::-1])
    >>> project_rows(head, np.array([[3.0, 4.0]], dtype=np.float32)).tolist()
    [[0.800000011920929, 0.6000000238418579]]
    >>> record = ProjectedAnn(head="0" * 64, source="/heads/mine", recall=0.98)
    >>> projected_field({"faiss": "hnsw", "projected_ann": record.to_json()}, "index.json") == record
    True
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fortekit.errors import AudioIndexError, Errors

__all__ = [
    "PROJECTED_FAISS_FILE",
    "PROJECTED_ROWS_FILE",
    "SHIPPED_SOURCE",
    "ProjectedAnn",
    "ProjectedHead",
    "project_rows",
    "projected_field",
    "read_projected_rows",
]

#: The projected rows and their FAISS index, beside ``embeddings.npy`` and ``faiss.index``.
PROJECTED_ROWS_FILE = "projected.npy"
PROJECTED_FAISS_FILE = "projected.index"
#: How ``projected_ann.source`` names a head shipped with fortekit: ``shipped:<backbone>``.
SHIPPED_SOURCE = "shipped:"
_IDENTITY = re.compile(r"[0-9a-f]{64}")
_CHUNK = 65_536  # rows projected at a time: a mapped matrix is never copied whole


@dataclass(frozen=True, slots=True)
class ProjectedHead:
    """A Stage 2 head as an index sees it: who it is and how it projects rows.

    Built by :func:`fortekit.search.projection.ann.index_head` (the index room never loads a head).

    Attributes:
        identity: the head's identity, 64 hex characters (SHA-256 of its weights and config).
        source: where it came from, as ``index.json`` records it (``shipped:minilm`` or a path).
        project: (n, d) float32 rows to their projections ``h(e)``, (n, d) (normalised by the caller).
    """

    identity: str
    source: str
    project: Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, slots=True)
class ProjectedAnn:
    """What ``index.json`` records of the ANN part over projected rows (``projected_ann``).

    Attributes:
        head: the identity of the head that projected the rows (64 hex characters).
        source: where that head came from (``shipped:minilm`` or its path), to find it again
            (``index add`` projects the new items with it) and to name it in messages.
        recall: the part's recall@10 against the exact search of the projected rows, measured
            when it was built (None: not measured, e.g. a shard's part).

    Example:
        >>> ProjectedAnn("ab" * 32, "shipped:minilm").describe()
        'the head shipped for minilm (abababababab...)'
    """

    head: str
    source: str
    recall: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``projected_ann``."""
        data: dict[str, Any] = {"head": self.head, "source": self.source}
        if self.recall is not None:
            data["recall"] = self.recall
        return data

    def describe(self) -> str:
        """The head in words, with the start of its identity."""
        where = (f"the head shipped for {self.source.removeprefix(SHIPPED_SOURCE)}"
                 if self.source.startswith(SHIPPED_SOURCE) else self.source)
        return f"{where} ({self.head[:12]}...)"


def projected_field(data: Mapping[str, Any], path: str | os.PathLike[str]) -> ProjectedAnn | None:
    """The ``projected_ann`` field of ``index.json``, checked (None where absent: an older index).

    Raises:
        AudioIndexError: a field of the wrong type, or a projected part without an ANN part (E600).

    Example:
        >>> projected_field({}, "index.json") is None
        True
        >>> projected_field({"faiss": None, "projected_ann": {"head": "0" * 64, "source": "x"}}, "index.json")
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E600] The audio index file index.json is unusable: ...
    """
    value = data.get("projected_ann")
    if value is None:
        return None

    def fail(problem: str) -> AudioIndexError:
        return AudioIndexError(Errors.E600.format(
            path=path, problem=f"projected_ann {problem}",
            fix="Rebuild the part with `fortekit index build-ann --index DIR`, or drop it with "
                "`fortekit index build-ann --index DIR --projection none`."))

    if not isinstance(value, dict):
        raise fail(f"is {value!r}, not null or an object")
    head, source, recall = value.get("head"), value.get("source"), value.get("recall")
    if not isinstance(head, str) or not _IDENTITY.fullmatch(head):
        raise fail(f"names the head {head!r}, not a SHA-256 identity (64 hex characters)")
    if not isinstance(source, str) or not source.strip():
        raise fail(f"names the source {source!r}, not a head's path or shipped:<backbone>")
    if recall is not None and (not isinstance(recall, (int, float)) or isinstance(recall, bool)
                               or not 0.0 <= recall <= 1.0):
        raise fail(f"has the recall {recall!r}, not null or a number from 0 to 1")
    if data.get("faiss") is None:
        raise fail("is recorded, but the index has no ANN part (faiss is null)")
    return ProjectedAnn(head, source, None if recall is None else float(recall))


def project_rows(head: ProjectedHead, rows: np.ndarray, *, what: str = "the items") -> np.ndarray:
    """``h(e)`` of every row, at unit length, float32, chunk by chunk.

    Args:
        head: the head.
        rows: (n, d) rows (in memory or mapped); normalised here before projecting.
        what: the rows in words, for messages.

    Returns:
        (n, d) float32 unit rows.

    Raises:
        AudioIndexError: the head gave rows of another shape (E645), with NaN (E623) or all zeros (E625).

    Example:
        >>> head = ProjectedHead("0" * 64, "doubled", lambda rows: 2 * rows)
        >>> project_rows(head, np.eye(2, dtype=np.float32)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    from fortekit.search.index.format import check_embedding_rows

    count, dim = int(rows.shape[0]), int(rows.shape[1])
    out = np.empty((count, dim), dtype=np.float32)
    for start in range(0, count, _CHUNK):
        chunk = np.asarray(rows[start:start + _CHUNK], dtype=np.float32)
        chunk = chunk / np.maximum(np.linalg.norm(chunk, axis=1, keepdims=True), 1e-12)
        projected = np.asarray(head.project(chunk), dtype=np.float32)
        if projected.shape != chunk.shape:
            raise AudioIndexError(Errors.E645.format(
                where="given", action="built",
                problem=f"the head {head.source} projected {chunk.shape[0]} rows of {what} into an array "
                        f"of shape {projected.shape}, not one row of dimension {dim} each",
                fix="Pass the head trained for the index's backbone (`fortekit index info` names the "
                    "backbone), or train one with `fortekit train-projection`."))
        with np.errstate(invalid="ignore", over="ignore"):
            norms = np.linalg.norm(projected, axis=1, keepdims=True)
            out[start:start + len(chunk)] = projected / np.where(norms > 0, norms, 1.0)
    check_embedding_rows(f"the rows of {what} projected by {head.source}", out, normalised=True,
                         source=f" (projected by the head {head.source})")
    return out


def read_projected_rows(folder: str | os.PathLike[str], count: int, dim: int, *, mmap: bool,
                        ids: list[str] | None = None) -> np.ndarray:
    """Read and check ``projected.npy``: float32 (count, dim), every row finite and of length 1.

    Raises:
        AudioIndexError: the file is missing (E601), unreadable or pickled (E600), of another dtype
            or shape (E604) or row count (E603), with bad rows (E623-E625).
    """
    from fortekit.search.index.format import check_embedding_rows

    path = Path(folder) / PROJECTED_ROWS_FILE
    if not path.is_file():
        raise AudioIndexError(Errors.E601.format(directory=Path(folder),
                                                 missing=f"{PROJECTED_ROWS_FILE} (index.json names one)"))
    try:
        array = np.load(path, mmap_mode="c" if mmap else None, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise AudioIndexError(Errors.E600.format(
            path=path, problem=f"not a readable .npy array ({exc})",
            fix="Rebuild the part with `fortekit index build-ann --index DIR`.")) from exc
    shaped = isinstance(array, np.ndarray) and array.ndim == 2 and array.shape[1] == dim
    if not shaped or array.dtype != np.float32:
        raise AudioIndexError(Errors.E604.format(path=path, dtype=getattr(array, "dtype", None),
                                                 shape=getattr(array, "shape", None), count=count, dim=dim))
    if array.shape[0] != count:
        raise AudioIndexError(Errors.E603.format(path=path, found=array.shape[0], what="rows", count=count))
    check_embedding_rows(path, array, ids, normalised=True)
    rows: np.ndarray = array
    return rows
