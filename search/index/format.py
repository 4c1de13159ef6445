"""The on-disk format of an audio index: three plain files, no pickle, checked on load.

A directory holds

* ``index.json``: the format version, the backbone's name (and recorded options), the
  dimension, the item count, whether rows are L2-normalised, whether captions were parsed,
  and the fortekit version that wrote it;
* ``embeddings.npy``: float32 (count, dim), read with ``np.load(mmap_mode="c",
  allow_pickle=False)`` (a private map: the file is never written);
* ``items.jsonl``: one object per item, in row order: ``id``, ``caption``, ``predicates``
  (strings such as ``"¬Rain/1"``) and, for audio files, ``path``;
* ``faiss.index`` (optional): a FAISS index over the same rows;
* ``evidence.safetensors`` (optional): a tagger's label evidence
  (:mod:`fortekit.search.index.evidence_file`);
* ``projected.npy`` and ``projected.index`` (optional): the rows projected by a Stage 2 head and a
  FAISS index over them (:mod:`fortekit.search.index.projected`);
* ``.fortekit-output``: the marker of a folder fortekit wrote.

A save writes a whole new folder and swaps it in (:mod:`fortekit.search.index.writing`).
Everything read back is validated: the type of every ``index.json`` field, every row of
``embeddings.npy`` (finite, not all zeros, of length 1 when ``normalised`` is true:
:func:`check_embedding_rows`); a problem raises :class:`~fortekit.errors.AudioIndexError`
naming the file and the fix. This module imports numpy but not torch.

Example:
    >>> from fortekit.search.index.format import format_predicate_symbol, parse_predicate_symbol
    >>> symbol = parse_predicate_symbol("¬Rain/1")
    >>> symbol.negated, symbol.name, symbol.arity
    (True, 'Rain', 1)
    >>> format_predicate_symbol(symbol)
    '¬Rain/1'
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from fortekit import __version__
from fortekit.errors import AudioIndexError, Errors, FortekitError
from fortekit.fol.predicates import Polarity, PredicateSymbol
from fortekit.search.index.faiss_search import FAISS_KINDS
from fortekit.textio import BadLine, json_value, read_jsonl

if TYPE_CHECKING:
    from fortekit.search.index.projected import ProjectedAnn

__all__ = [
    "EMBEDDINGS_FILE",
    "FAISS_FILE",
    "FORMAT_VERSION",
    "ITEMS_FILE",
    "META_FILE",
    "NORM_TOLERANCE",
    "SINGLE_PART_VERSION",
    "ZERO_NORM",
    "IndexMeta",
    "IndexRecords",
    "check_embedding_rows",
    "check_item_ids",
    "check_options",
    "folder_identity",
    "format_predicate_symbol",
    "parse_predicate_symbol",
    "read_embeddings",
    "read_items",
    "read_meta",
]

#: The newest layout version this fortekit reads; newer ones are refused on load (E602).
FORMAT_VERSION = 2
#: The version a folder of one part is written with (every fortekit reads it); a folder with
#: shards or removed items is version 2 (:mod:`fortekit.search.index.shards`), which an older
#: fortekit refuses (E602) instead of loading the first part alone.
SINGLE_PART_VERSION = 1
META_FILE = "index.json"
EMBEDDINGS_FILE = "embeddings.npy"
ITEMS_FILE = "items.jsonl"
FAISS_FILE = "faiss.index"
#: How far a row's length may be from 1 in an index that says ``normalised: true``: float32 rounding
#: stays below 1e-6, a row stored as float16 below 1e-3; a row scaled by a user or a bug is far outside.
NORM_TOLERANCE = 1e-3
#: A row at most this long is "all zeros" (the epsilon torch's ``normalize`` divides by).
ZERO_NORM = 1e-12
_NEGATION = "¬"
_REBUILD = "Rebuild the index with `fortekit index build` (or AudioIndex.build(...).save(...))."


def parse_predicate_symbol(text: str) -> PredicateSymbol:
    """A predicate symbol from its string form, the inverse of ``str(symbol)``.

    Args:
        text: ``Name/arity`` or ``¬Name/arity``.

    Returns:
        The :class:`~fortekit.fol.predicates.PredicateSymbol`.

    Raises:
        AudioIndexError: the text is not of that form (E613).

    Example:
        >>> parse_predicate_symbol("Barking/1")
        PredicateSymbol(name='Barking', arity=1, polarity=<Polarity.POSITIVE: '+'>)
        >>> parse_predicate_symbol("Barking")
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E613] a predicate symbol must be ...
    """
    if isinstance(text, str):
        negated = text.startswith(_NEGATION)
        name, slash, arity = text[len(_NEGATION) if negated else 0:].rpartition("/")
        if slash and name and not any(ch.isspace() or ch in "¬()/," for ch in name) and arity.isdecimal():
            polarity = Polarity.NEGATIVE if negated else Polarity.POSITIVE
            return PredicateSymbol(name, int(arity), polarity)
    raise AudioIndexError(Errors.E613.format(
        name="a predicate symbol", expected="'Name/arity' or '¬Name/arity' (e.g. '¬Rain/1')", value=text,
    ))


def format_predicate_symbol(symbol: PredicateSymbol) -> str:
    """The string form of a predicate symbol (``str(symbol)``), as items.jsonl stores it.

    Example:
        >>> format_predicate_symbol(PredicateSymbol("Dog", 1))
        'Dog/1'
    """
    return str(symbol)


#: The FAISS settings ``index.json`` may record (:meth:`FaissSearcher.settings`).
FAISS_SETTINGS: tuple[str, ...] = ("ef_search", "nprobe", "nlist", "pq_bytes")


@dataclass(frozen=True, slots=True)
class IndexMeta:
    """What ``index.json`` records about an index.

    Attributes:
        backbone: the backbone plug-in's name.
        dim: the embedding dimension.
        count: the number of items.
        normalised: whether the stored rows have unit L2 norm.
        parsed: whether the captions were parsed into predicate sets.
        unparsed: how many captions could not be parsed (their predicate sets are empty).
        backbone_options: the options the backbone was built with (JSON values), so that
            ``fortekit search`` can rebuild it.
        faiss: the kind of the saved FAISS index ("flat", "ivf"), or None.
        captioner, captioner_options: the captioner plug-in that wrote the captions, and its
            recorded options (None and {} when the captions came with the items).
        evidence_labels: the label phrases of ``evidence.safetensors``, or None without one.
        index_id: the index's identity, which its shards record (given by the first ``index add``).
        ann_recall: the FAISS index's recall@10 against the exact search, measured when it was
            built (:func:`~fortekit.search.index.faiss_search.measure_recall`), or None.
        faiss_settings: the FAISS index's settings (``ef_search`` of HNSW; ``nprobe``, ``nlist``
            and, for IVF-PQ, ``pq_bytes`` of an IVF kind), so that ``index add`` builds a
            shard's graph without reading the file (an IVF kind's trained cells are read from
            it, its lists are not); empty for a flat index and for one written before them
            (``index add`` then reads them from the file, mapped, and records them).
        projected_ann: the ANN part over the rows projected by a Stage 2 head
            (:class:`~fortekit.search.index.projected.ProjectedAnn`: the head's identity, its
            source, the part's recall), or None.
        format_version: the layout version.
        fortekit_version: the fortekit version that wrote the index.
    """

    backbone: str
    dim: int
    count: int
    normalised: bool = True
    parsed: bool = True
    unparsed: int = 0
    backbone_options: Mapping[str, Any] = field(default_factory=dict)
    faiss: str | None = None
    captioner: str | None = None
    captioner_options: Mapping[str, Any] = field(default_factory=dict)
    evidence_labels: tuple[str, ...] | None = None
    index_id: str | None = None
    ann_recall: float | None = None
    faiss_settings: Mapping[str, int] = field(default_factory=dict)
    projected_ann: ProjectedAnn | None = None
    format_version: int = SINGLE_PART_VERSION
    fortekit_version: str = __version__

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``index.json`` (``index_id``, ``ann_recall``, ``faiss_settings`` and
        ``projected_ann`` only when set)."""
        data: dict[str, Any] = {
            "format_version": self.format_version, "fortekit_version": self.fortekit_version,
            "backbone": self.backbone, "backbone_options": dict(self.backbone_options),
            "dim": self.dim, "count": self.count, "normalised": self.normalised,
            "parsed": self.parsed, "unparsed": self.unparsed, "faiss": self.faiss,
            "captioner": self.captioner, "captioner_options": dict(self.captioner_options),
            "evidence_labels": None if self.evidence_labels is None else list(self.evidence_labels),
        }
        if self.index_id is not None:
            data["index_id"] = self.index_id
        if self.ann_recall is not None:
            data["ann_recall"] = self.ann_recall
        if self.faiss_settings:
            data["faiss_settings"] = dict(self.faiss_settings)
        if self.projected_ann is not None:
            data["projected_ann"] = self.projected_ann.to_json()
        return data


@dataclass(frozen=True, slots=True)
class IndexRecords:
    """The per-item columns of ``items.jsonl``, in row order."""

    ids: list[str]
    captions: list[str | None]
    paths: list[str | None]
    predicate_sets: list[frozenset[PredicateSymbol]]


def _fail(path: Path, problem: str, fix: str = _REBUILD) -> AudioIndexError:
    return AudioIndexError(Errors.E600.format(path=path, problem=problem, fix=fix))


def _interrupted_previous(directory: Path) -> Path | None:
    """The previous index an interrupted save left beside a missing `directory`, if any.

    A save swaps the new folder in with two renames (the old one aside, the new one in); a
    process killed between them leaves ``.NAME.*.old/previous`` and no ``NAME``.
    """
    try:
        parent = directory.absolute().parent
        for stale in sorted(parent.glob(f".{directory.name}.*.old")):
            if (stale / "previous" / META_FILE).is_file():
                return stale / "previous"
    except OSError:
        pass
    return None


def _require_files(directory: Path, names: Iterable[str]) -> None:
    if not directory.exists() and directory.name:
        previous = _interrupted_previous(directory)
        if previous is not None:
            raise AudioIndexError(Errors.E627.format(directory=directory, previous=previous))
    if not directory.is_dir():
        what = "a directory (it is a file)" if directory.exists() else "the directory (it does not exist)"
        raise AudioIndexError(Errors.E601.format(directory=directory, missing=what))
    missing = [name for name in names if not (directory / name).is_file()]
    if missing:
        raise AudioIndexError(Errors.E601.format(directory=directory, missing=", ".join(missing)))


def folder_identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """A file's or folder's (device, inode), None when it is missing: a save gives the index folder
    (and each of its files) a new one.

    Example:
        >>> folder_identity("/nonexistent/index") is None
        True
    """
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def read_meta(directory: str | os.PathLike[str]) -> IndexMeta:
    """Read and check ``index.json`` (and that the other files exist).

    Args:
        directory: the index directory.

    Returns:
        The :class:`IndexMeta`.

    Raises:
        AudioIndexError: a missing file (E601), corrupt JSON or a bad field (E600), a format
            version from the future (E602).

    Example:
        >>> read_meta("/nonexistent/index")
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E601] The audio index at /nonexistent/index lacks ...
    """
    root = Path(directory)
    _require_files(root, (META_FILE, EMBEDDINGS_FILE, ITEMS_FILE))
    path = root / META_FILE
    try:
        data = json_value(1, path.read_text(encoding="utf-8"))  # no RecursionError on deep JSON
    except UnicodeDecodeError as exc:
        raise _fail(path, f"not valid JSON ({exc})") from exc
    if isinstance(data, BadLine):
        raise _fail(path, f"not valid JSON ({data.reason})")
    if not isinstance(data, dict):
        raise _fail(path, f"a JSON {type(data).__name__}, not an object")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _fail(path, f"format_version is {version!r}, not a positive integer")
    if version > FORMAT_VERSION:
        raise AudioIndexError(Errors.E602.format(
            path=path, found=version, supported=FORMAT_VERSION, version=__version__,
            writer=data.get("fortekit_version", "?"),
        ))
    backbone, dim, count = data.get("backbone"), data.get("dim"), data.get("count")
    if not isinstance(backbone, str) or not backbone.strip():
        raise _fail(path, f"backbone is {backbone!r}, not a backbone name")
    if not _is_int(dim) or dim < 1:
        raise _fail(path, f"dim is {dim!r}, not a positive integer")
    if not _is_int(count) or count < 1:
        raise _fail(path, f"count is {count!r}, not a positive integer")
    normalised = data.get("normalised")
    if not isinstance(normalised, bool):
        raise _fail(path, f"normalised is {normalised!r}, not true or false")
    parsed, unparsed = data.get("parsed", False), data.get("unparsed", 0)
    if not isinstance(parsed, bool):
        raise _fail(path, f"parsed is {parsed!r}, not true or false")
    if not _is_int(unparsed) or not 0 <= unparsed <= count:
        raise _fail(path, f"unparsed is {unparsed!r}, not a whole number from 0 to the count {count}")
    writer = data.get("fortekit_version", "?")
    if not isinstance(writer, str):
        raise _fail(path, f"fortekit_version is {writer!r}, not a version string")
    faiss = data.get("faiss")
    if faiss is not None and faiss not in FAISS_KINDS:
        raise _fail(path, f"faiss is {faiss!r}, not null or one of {', '.join(map(repr, FAISS_KINDS))}")
    options = check_options(data.get("backbone_options", {}), "backbone_options",
                            lambda problem: _fail(path, problem))
    index_id, recall = data.get("index_id"), data.get("ann_recall")
    if index_id is not None and (not isinstance(index_id, str) or not index_id.isalnum()):
        raise _fail(path, f"index_id is {index_id!r}, not null or a hexadecimal identity")
    if recall is not None and (not isinstance(recall, (int, float)) or isinstance(recall, bool)
                               or not 0.0 <= recall <= 1.0):
        raise _fail(path, f"ann_recall is {recall!r}, not null or a number from 0 to 1")
    settings = data.get("faiss_settings", {})
    if not isinstance(settings, dict) or not all(
        key in FAISS_SETTINGS and _is_int(value) and value >= 1 for key, value in settings.items()
    ):
        raise _fail(path, f"faiss_settings is {settings!r}, not an object of positive integers named "
                    f"{', '.join(FAISS_SETTINGS)}")
    from fortekit.search.index.evidence_file import captioning_fields  # it imports this module
    from fortekit.search.index.projected import projected_field

    return IndexMeta(
        backbone=backbone, dim=dim, count=count, normalised=normalised, parsed=parsed, unparsed=unparsed,
        backbone_options=options, faiss=faiss, **captioning_fields(data, path), index_id=index_id,
        ann_recall=None if recall is None else float(recall), faiss_settings=settings,
        projected_ann=projected_field(data, path), format_version=version,
        fortekit_version=writer,
    )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_option_value(value: object) -> bool:
    if value is None or isinstance(value, (str, bool, int)):
        return True
    return isinstance(value, float) and math.isfinite(value)


def check_options(
    options: object, what: str, fail: Callable[[str], FortekitError] | None = None,
) -> dict[str, Any]:
    """Plug-in options as ``index.json`` records them: an object of text keys and JSON values.

    A value is a text, a whole or finite number, true/false, null, or a list of those; the
    options become keyword arguments of ``get_backbone``/``get_captioner``, so anything else
    (a nested object, NaN) is refused here rather than deep inside a plug-in.

    Args:
        options: the value to check.
        what: its name, for messages ("backbone_options").
        fail: makes the error from a problem text (default: E613).

    Returns:
        The options, as a new dict.

    Raises:
        FortekitError: what `fail` makes; by default AudioIndexError E613.

    Example:
        >>> check_options({"model": "/m", "batch_size": 8}, "backbone_options")
        {'model': '/m', 'batch_size': 8}
        >>> check_options({"model": {"path": "/m"}}, "backbone_options")
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E613] backbone_options must be ...
    """

    def refuse(problem: str) -> FortekitError:
        if fail is not None:
            return fail(problem)
        return AudioIndexError(Errors.E613.format(
            name=what, expected=f"an object of option names and JSON values ({problem})", value=options,
        ))

    if not isinstance(options, Mapping):
        raise refuse(f"{what} is {options!r}, not an object")
    for key, value in options.items():
        if not isinstance(key, str) or not key:
            raise refuse(f"{what} has the key {key!r}, not an option name")
        good = _is_option_value(value) or (
            isinstance(value, list) and all(_is_option_value(entry) for entry in value))
        if not good:
            raise refuse(f"{what}.{key} is {value!r}, not a text, a number, true/false, null or a list "
                         "of those")
    return dict(options)


def read_embeddings(directory: str | os.PathLike[str], meta: IndexMeta, *, mmap: bool = True) -> np.ndarray:
    """Read ``embeddings.npy`` without pickle, memory-mapped by default, and check its dtype and shape.

    The map is private (copy-on-write): nothing done to the array reaches the file, and the
    search wraps this very map (it never opens the file again by its path).

    Args:
        directory: the index directory.
        meta: what ``index.json`` says (dim and count).
        mmap: map the file instead of reading it into memory.

    Returns:
        The float32 (count, dim) array (a copy-on-write ``np.memmap`` when `mmap`); its values
        are checked by :func:`check_embedding_rows`.

    Raises:
        AudioIndexError: an unreadable or pickled file (E600), a wrong dtype or shape (E604),
            a wrong row count (E603).
    """
    path = Path(directory) / EMBEDDINGS_FILE
    try:
        array = np.load(path, mmap_mode="c" if mmap else None, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise _fail(path, f"not a readable .npy array ({exc})") from exc
    if not isinstance(array, np.ndarray):
        raise _fail(path, f"a {type(array).__name__}, not a single .npy array")
    if array.dtype != np.float32 or array.ndim != 2 or array.shape[1] != meta.dim:
        raise AudioIndexError(Errors.E604.format(
            path=path, dtype=array.dtype, shape=array.shape, count=meta.count, dim=meta.dim,
        ))
    if array.shape[0] != meta.count:
        found = array.shape[0]
        raise AudioIndexError(Errors.E603.format(path=path, found=found, what="rows", count=meta.count))
    return array


def _examples(ids: Sequence[str] | None, rows: np.ndarray) -> str:
    shown = ", ".join(repr(ids[row]) if ids is not None else f"row {row}" for row in rows[:5])
    return shown + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")


def check_embedding_rows(
    path: str | os.PathLike[str], array: np.ndarray, ids: Sequence[str] | None = None, *,
    normalised: bool = True, source: str = "",
) -> None:
    """Check an index's rows: finite (E623), none all zeros (E625), of length 1 when `normalised` (E624).

    A NaN row would rank first for every query and a row scaled by 100 would win every
    cosine, so a loaded index is checked in full, in chunks (a mapped matrix is never
    copied whole; about a second per 2 GB).

    Args:
        path: the ``embeddings.npy`` file (or what to name in messages).
        array: float32 (count, dim), possibly memory-mapped.
        ids: the item ids, to name the bad rows (None: by row number).
        normalised: whether ``index.json`` promises unit rows (within :data:`NORM_TOLERANCE`).
        source: where the rows came from, for E625 (" (from the backbone 'minilm')"; default: in `path`).

    Raises:
        AudioIndexError: E623, E625 or E624, naming the first few items.

    Example:
        >>> check_embedding_rows("e.npy", np.array([[0.6, 0.8], [3.0, 4.0]], dtype=np.float32), ["a", "b"])
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E624] e.npy holds 1 row(s) whose length is not 1 (items 'b'; ...
        >>> check_embedding_rows("e.npy", np.array([[3.0, 4.0]], dtype=np.float32), normalised=False)
    """
    count, dim = array.shape
    step = max(1, (1 << 22) // max(dim, 1))  # 4M values (16 MB) per chunk
    not_finite: list[np.ndarray] = []
    zero: list[np.ndarray] = []
    off: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    for start in range(0, count, step):
        chunk = np.asarray(array[start:start + step])
        finite = np.isfinite(chunk).all(axis=1)
        with np.errstate(over="ignore", invalid="ignore"):
            norms = np.sqrt(np.einsum("ij,ij->i", chunk, chunk, dtype=np.float64))
        not_finite.append(start + np.flatnonzero(~finite))
        zero.append(start + np.flatnonzero(finite & (norms <= ZERO_NORM)))
        if normalised:
            bad = finite & (norms > ZERO_NORM) & ~(np.abs(norms - 1.0) <= NORM_TOLERANCE)
            off.append(start + np.flatnonzero(bad))
            lengths.append(norms[bad])
    rows = np.concatenate(not_finite) if not_finite else np.empty(0, dtype=np.int64)
    if len(rows):
        raise AudioIndexError(Errors.E623.format(path=path, count=len(rows), examples=_examples(ids, rows)))
    rows = np.concatenate(zero) if zero else np.empty(0, dtype=np.int64)
    if len(rows):
        raise AudioIndexError(Errors.E625.format(count=len(rows), examples=_examples(ids, rows),
                                                 source=source or f" in {path}"))
    rows = np.concatenate(off) if off else np.empty(0, dtype=np.int64)
    if len(rows):
        shown = ", ".join(f"{length:.4g}" for length in np.concatenate(lengths)[:5])
        raise AudioIndexError(Errors.E624.format(
            path=path, count=len(rows), examples=_examples(ids, rows), lengths=shown,
            tolerance=NORM_TOLERANCE,
        ))


def read_items(directory: str | os.PathLike[str], meta: IndexMeta) -> IndexRecords:
    """Read and check ``items.jsonl``.

    Args:
        directory: the index directory.
        meta: what ``index.json`` says (the count).

    Returns:
        The :class:`IndexRecords`.

    Raises:
        AudioIndexError: a line that is no JSON object with a string id (E600), a bad
            predicate symbol (E611), a wrong number of lines (E603), duplicate ids (E605).
    """
    path = Path(directory) / ITEMS_FILE
    records = IndexRecords([], [], [], [])
    for number, item in read_jsonl(path):  # lines end at "\n" only: captions may hold U+2028
        if isinstance(item, BadLine):
            raise _fail(path, f"line {number}: {item.reason}")
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise _fail(path, f"line {number} is not an object with a string \"id\"")
        caption, where = item.get("caption"), item.get("path")
        symbols = item.get("predicates", [])
        if not isinstance(caption, (str, type(None))) or not isinstance(where, (str, type(None))):
            raise _fail(path, f"line {number}: \"caption\" and \"path\" must be strings or null")
        if not isinstance(symbols, list):
            raise _fail(path, f"line {number}: \"predicates\" must be a list of strings")
        records.ids.append(item["id"])
        records.captions.append(caption)
        records.paths.append(where)
        records.predicate_sets.append(_symbols_of_line(symbols, path, number))
    if len(records.ids) != meta.count:
        found = len(records.ids)
        raise AudioIndexError(Errors.E603.format(path=path, found=found, what="items", count=meta.count))
    check_unique_ids(records.ids)
    return records


def _symbols_of_line(symbols: list[Any], path: Path, number: int) -> frozenset[PredicateSymbol]:
    parsed = []
    for value in symbols:
        try:
            parsed.append(parse_predicate_symbol(value))
        except AudioIndexError:
            raise AudioIndexError(Errors.E611.format(path=path, line=number, value=value)) from None
    return frozenset(parsed)


#: What no item id may hold: control characters (Cc, which holds every line break of
#: :meth:`str.splitlines` but two), U+2028 and U+2029 (the other two), and lone surrogates (no
#: UTF-8 file can hold them).
_BAD_ID_CHARACTER = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _describe_character(character: str) -> str:
    name = unicodedata.name(character, "")
    if not name and unicodedata.category(character) == "Cs":
        name = "a lone surrogate"
    elif not name:
        names = {"\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\t": "TAB", "\x85": "NEXT LINE"}
        name = names.get(character, "a control character")
    return f"U+{ord(character):04X} ({name})"


def check_item_ids(ids: Sequence[str], *, source: str = "") -> None:
    """The one id rule, for items built or added: every id fits on one line, and reads back the same.

    An id may not be empty, begin or end with a space, or hold a control character (a line
    break of :meth:`str.splitlines` among them: ``\\n``, ``\\r``, U+0085, U+2028, U+2029 ...) or
    a lone surrogate: the ids file of ``fortekit index remove --ids`` (one id a line, lines
    ending at ``\\n`` only, surrounding spaces left out), a TSV row and a TREC run could not
    hold it, so such an item could never be removed or evaluated. Indexes written before the
    rule still load (the rule is not checked on load).

    Args:
        ids: the ids, in item order.
        source: where they come from, for the message (" of the captions file clips.csv").

    Raises:
        AudioIndexError: E640, naming the first bad item (its 1-based position), the character
            and the fix.

    Example:
        >>> check_item_ids(["clip_1.wav", "a dog, barking"])
        >>> check_item_ids(["clip_1.wav", "clip\u20282.wav"])
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E640] Item 2 has the id 'clip\u20282.wav', which holds U+2028 ...
    """
    for position, item_id in enumerate(ids, start=1):
        match = _BAD_ID_CHARACTER.search(item_id)
        if match is not None:
            character = _describe_character(match.group())
        elif not item_id:
            character = "nothing (it is empty)"
        elif item_id[0] == " " or item_id[-1] == " ":
            character = "a space at its start or end"
        else:
            continue
        raise AudioIndexError(Errors.E640.format(
            position=position, source=source, item_id=item_id, character=character))


def check_unique_ids(ids: Sequence[str]) -> None:
    """Raise E605 when an id occurs twice (the message shows a few of them).

    Example:
        >>> check_unique_ids(["a", "b", "a"])
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E605] 1 item id(s) occur more than once in the collection ('a')...
    """
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for item_id in ids:
        if item_id in seen:
            repeated[item_id] = None
        seen.add(item_id)
    if repeated:
        examples = ", ".join(repr(item_id) for item_id in list(repeated)[:5])
        raise AudioIndexError(Errors.E605.format(count=len(repeated), examples=examples))
