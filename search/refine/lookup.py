"""The offline regime of ``fol-refine``: queries refined once, looked up later.

A lookup table is the output of an earlier ``fol-refine`` run (JSONL, or TSV by its
extension), read as query -> refined text. Known queries skip the search; their q*
is the refined text encoded (one batched, cached encoder call per batch), so
retrieval for a known query costs one index scan.

Example:
    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "refined.jsonl"
    >>> _ = path.write_text(json.dumps({"line": 1, "query": "Rain", "refined_text": "steady rain"}) + "\\n")
    >>> LookupTable.load(path).refined_text("rain ")
    'steady rain'
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from fortekit.errors import Errors, QueryFileError
from fortekit.search.refine.output import tsv_unescape
from fortekit.textio import BadLine, json_value, read_lines

if TYPE_CHECKING:
    import torch

__all__ = ["LookupTable", "lookup_key"]


def lookup_key(query: str) -> str:
    """How a lookup table matches queries: case-folded, runs of white space collapsed.

    The same rule as the ``file`` elaborator's, so one query log serves both.

    Example:
        >>> lookup_key("  A Dog   barks ")
        'a dog barks'
    """
    return " ".join(query.split()).casefold()


class LookupTable:
    """The offline regime: queries refined once, looked up later (query -> refined text).

    Loaded from the output of an earlier ``fol-refine`` run (JSONL, or TSV by its
    extension). Queries match by :func:`lookup_key`; when a query occurs twice, the
    later record wins (a resumed or repeated run appends). q* is not stored: it is
    ``f_T(refined_text)``, computed for a batch of hits in one encoder call
    (:meth:`q_stars`), through the refiner's text-embedding cache.

    Args:
        records: lookup key -> the stored record (at least "query" and "refined_text").
        path: where the records came from (for messages).

    Example:
        >>> table = LookupTable({"rain": {"query": "rain", "refined_text": "steady rain"}})
        >>> table.refined_text("Rain "), "dog" in table
        ('steady rain', False)
    """

    def __init__(self, records: Mapping[str, Mapping[str, Any]], path: Path | None = None) -> None:
        self._records = dict(records)
        self.path = path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> LookupTable:
        """Read a ``fol-refine`` output file.

        Raises:
            QueryFileError: the file is missing, or a line other than a torn last one is
                not a record with "query" and "refined_text" (E665, with the line number).
        """
        source = Path(path).expanduser()
        if not source.is_file():
            problem = "it is a directory" if source.is_dir() else "no such file"
            raise QueryFileError(Errors.E665.format(path=source, problem=problem))
        records: dict[str, dict[str, Any]] = {}
        parse = _tsv_records if source.suffix.lower() == ".tsv" else _jsonl_records
        try:
            with source.open("rb") as handle:
                for record in parse(source, handle):
                    records[lookup_key(record["query"])] = record
        except OSError as exc:
            raise QueryFileError(Errors.E665.format(path=source, problem=exc.strerror or exc)) from None
        return cls(records, source)

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, query: object) -> bool:
        return isinstance(query, str) and lookup_key(query) in self._records

    def __repr__(self) -> str:
        return f"LookupTable(path={str(self.path)!r}, queries={len(self)})"

    def get(self, query: str) -> dict[str, Any] | None:
        """The stored record of `query` (a copy), or None."""
        record = self._records.get(lookup_key(query))
        return None if record is None else dict(record)

    def refined_text(self, query: str) -> str | None:
        """The stored refined text of `query`, or None."""
        record = self._records.get(lookup_key(query))
        return None if record is None else str(record["refined_text"])

    def q_stars(self, queries: Sequence[str], encode: Callable[[list[str]], torch.Tensor]) -> torch.Tensor:
        """q* of known queries: their refined texts encoded in one call.

        Args:
            queries: queries the table holds.
            encode: text encoder, e.g. ``refiner.encode_texts`` (cached, batched).

        Returns:
            A (len(queries), d) tensor, in the order of `queries`.

        Raises:
            KeyError: a query the table does not hold.
        """
        return encode([str(self._records[lookup_key(query)]["refined_text"]) for query in queries])


#: (line number, whether it ends in a line break, the record or what is wrong with it)
_Row = tuple[int, bool, dict[str, Any] | str]


def _records_of(source: Path, rows: Iterable[_Row]) -> Iterator[dict[str, Any]]:
    """Valid records; a bad line is an error unless it is the torn last line of a crash."""
    pending: QueryFileError | None = None
    for number, complete, row in rows:
        if pending is not None:
            raise pending
        problem = row if isinstance(row, str) else _lookup_problem(row)
        if problem is None and isinstance(row, dict):
            yield row
        elif complete:
            raise QueryFileError(Errors.E665.format(path=source, problem=f"line {number}: {problem}"))
        else:
            pending = QueryFileError(Errors.E665.format(path=source, problem=f"line {number}: {problem}"))


def _lookup_problem(record: Mapping[str, Any]) -> str | None:
    for name in ("query", "refined_text"):
        if not isinstance(record.get(name), str):
            return f"no text field {name!r}"
    return None


def _jsonl_records(source: Path, handle: BinaryIO) -> Iterator[dict[str, Any]]:
    def rows() -> Iterator[_Row]:
        for number, text, ending, *_ in read_lines(handle):  # lines end at "\n" only
            if isinstance(text, BadLine):
                yield number, bool(ending), text.reason
                continue
            if not text.strip():
                continue
            record = json_value(number, text)
            if isinstance(record, BadLine):
                yield number, bool(ending), f"not JSON ({record.reason})"
                continue
            yield number, bool(ending), record if isinstance(record, dict) else "not a JSON object"

    return _records_of(source, rows())


def _tsv_records(source: Path, handle: BinaryIO) -> Iterator[dict[str, Any]]:
    def rows() -> Iterator[_Row]:
        header: list[str] | None = None
        for number, text, ending, *_ in read_lines(handle):
            if isinstance(text, BadLine):
                yield number, bool(ending), text.reason
                continue
            cells = text.split("\t")
            if header is None:
                header = cells
                continue
            if len(cells) != len(header):
                yield number, bool(ending), f"{len(cells)} columns, the header has {len(header)}"
                continue
            yield number, bool(ending), dict(zip(header, map(tsv_unescape, cells), strict=True))

    return _records_of(source, rows())
