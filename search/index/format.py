"""The on-disk format of an audio index: three plain files, no pickle, checked on load.

A directory holds

* ``index.json``: the format version, the backbone's name (and recorded options), the
  dimension, the item count, whether rows are L2-normalised, whether captions were parsed,
  and the fortekit version that wrote it;
* ``embeddings.npy``: float32 (count, dim), read with ``np.load(mmap_mode="r",
  allow_pickle=False)``;
* ``items.jsonl``: one object per item, in row order: ``id``, ``caption``, ``predicates``
  (strings such as ``"¬Rain/1"``) and, for audio files, ``path``;
* ``faiss.index`` (optional): a FAISS index over the same rows;
* ``evidence.safetensors`` (optional): a tagger's label evidence
  (:mod:`fortekit.search.index.evidence_file`).

Files are written under temporary names and renamed, so an interrupted save leaves no
half-written file behind, and ``index.json`` is written last. Everything read back is
validated; a problem raises :class:`~fortekit.errors.AudioIndexError` naming the file
and the fix. This module imports numpy but not torch.

Example:
    >>> from fortekit.search.index.format import format_predicate_symbol, parse_predicate_symbol
    >>> symbol = parse_predicate_symbol("¬Rain/1")
    >>> symbol.negated, symbol.name, symbol.arity
    (True, 'Rain', 1)
    >>> format_predicate_symbol(symbol)
    '¬Rain/1'
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fortekit import __version__
from fortekit.errors import AudioIndexError, Errors
from fortekit.fol.predicates import Polarity, PredicateSymbol
from fortekit.textio import BadLine, json_value, read_jsonl

__all__ = [
    "EMBEDDINGS_FILE",
    "FAISS_FILE",
    "FORMAT_VERSION",
    "ITEMS_FILE",
    "META_FILE",
    "IndexMeta",
    "IndexRecords",
    "format_predicate_symbol",
    "parse_predicate_symbol",
    "read_embeddings",
    "read_items",
    "read_meta",
]

#: The version of the directory layout this module writes; newer ones are refused on load.
FORMAT_VERSION = 1
META_FILE = "index.json"
EMBEDDINGS_FILE = "embeddings.npy"
ITEMS_FILE = "items.jsonl"
FAISS_FILE = "faiss.index"
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
            ``fortekit index query`` can rebuild it.
        faiss: the kind of the saved FAISS index ("flat", "ivf"), or None.
        captioner, captioner_options: the captioner plug-in that wrote the captions, and its
            recorded options (None and {} when the captions came with the items).
        evidence_labels: the label phrases of ``evidence.safetensors``, or None without one.
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
    format_version: int = FORMAT_VERSION
    fortekit_version: str = __version__

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``index.json``."""
        return {
            "format_version": self.format_version, "fortekit_version": self.fortekit_version,
            "backbone": self.backbone, "backbone_options": dict(self.backbone_options),
            "dim": self.dim, "count": self.count, "normalised": self.normalised,
            "parsed": self.parsed, "unparsed": self.unparsed, "faiss": self.faiss,
            "captioner": self.captioner, "captioner_options": dict(self.captioner_options),
            "evidence_labels": None if self.evidence_labels is None else list(self.evidence_labels),
        }


@dataclass(frozen=True, slots=True)
class IndexRecords:
    """The per-item columns of ``items.jsonl``, in row order."""

    ids: list[str]
    captions: list[str | None]
    paths: list[str | None]
    predicate_sets: list[frozenset[PredicateSymbol]]


def _fail(path: Path, problem: str, fix: str = _REBUILD) -> AudioIndexError:
    return AudioIndexError(Errors.E600.format(path=path, problem=problem, fix=fix))


def _require_files(directory: Path, names: Iterable[str]) -> None:
    if not directory.is_dir():
        what = "a directory (it is a file)" if directory.exists() else "the directory (it does not exist)"
        raise AudioIndexError(Errors.E601.format(directory=directory, missing=what))
    missing = [name for name in names if not (directory / name).is_file()]
    if missing:
        raise AudioIndexError(Errors.E601.format(directory=directory, missing=", ".join(missing)))


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
    checks: dict[str, tuple[type, str]] = {
        "backbone": (str, "a backbone name"), "dim": (int, "a positive integer"),
        "count": (int, "a positive integer"), "normalised": (bool, "true or false"),
    }
    for key, (kind, expected) in checks.items():
        value = data.get(key)
        bad_int = kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 0)
        if bad_int or not isinstance(value, kind) or (kind is int and value == 0):
            raise _fail(path, f"{key} is {value!r}, not {expected}")
    options = data.get("backbone_options", {})
    if not isinstance(options, dict):
        raise _fail(path, f"backbone_options is {options!r}, not an object")
    faiss = data.get("faiss")
    from fortekit.search.index.evidence_file import captioning_fields  # it imports this module

    return IndexMeta(
        backbone=data["backbone"], dim=data["dim"], count=data["count"], normalised=data["normalised"],
        parsed=bool(data.get("parsed", False)), unparsed=int(data.get("unparsed", 0)),
        backbone_options=options, faiss=faiss if isinstance(faiss, str) else None,
        **captioning_fields(data, path), format_version=version,
        fortekit_version=str(data.get("fortekit_version", "?")),
    )


def read_embeddings(directory: str | os.PathLike[str], meta: IndexMeta, *, mmap: bool = True) -> np.ndarray:
    """Read ``embeddings.npy`` without pickle, memory-mapped read-only by default, and check it.

    Args:
        directory: the index directory.
        meta: what ``index.json`` says (dim and count).
        mmap: map the file instead of reading it into memory.

    Returns:
        The float32 (count, dim) array (a read-only ``np.memmap`` when `mmap`).

    Raises:
        AudioIndexError: an unreadable or pickled file (E600), a wrong dtype or shape (E604),
            a wrong row count (E603).
    """
    path = Path(directory) / EMBEDDINGS_FILE
    try:
        array = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
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
