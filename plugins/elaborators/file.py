"""``file``: precomputed elaborations from a JSONL file, for the offline regime with any LLM.

One JSON object per line::

    {"query": "birds chirping in the morning",
     "positives": ["small birds softly chirping outdoors at dawn", "..."],
     "negatives": ["birds shrieking loudly with a harsh distress call", "...", "..."]}

Queries are matched ignoring case and runs of white space. Blank lines and lines
starting with ``#`` are skipped; any other malformed line, or a query given twice, is
an error that names the line, since silently skipping it would lose elaborations.

Example:
    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "e.jsonl"
    >>> _ = path.write_text(json.dumps({"query": "Rain", "positives": ["heavy rain"],
    ...                                 "negatives": ["light rain"]}) + "\\n")
    >>> FileElaborator(path).elaborate("rain ").negatives
    ('light rain',)
"""

from __future__ import annotations

import os
from pathlib import Path

from fortekit.errors import ElaborationError, Errors, ModelNotFoundError
from fortekit.plugins._runtime import check_count, check_query
from fortekit.plugins.protocols import Elaboration
from fortekit.textio import BadLine, json_value

__all__ = ["FileElaborator", "query_key"]


def query_key(query: str) -> str:
    """How queries are matched: case-folded, white space collapsed.

    Example:
        >>> query_key("  Birds   Chirping ")
        'birds chirping'
    """
    return " ".join(query.split()).casefold()


def _strings(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(item, str) and item.strip() for item in value):
        return None
    return tuple(item.strip() for item in value)


class FileElaborator:
    """Elaborations read from a JSONL file (query, positives, negatives).

    Args:
        path: the JSONL file.
        n_pos: keep at most this many positives per query (None: all).
        n_neg: keep at most this many negatives per query (None: all).

    Raises:
        ModelNotFoundError: the file does not exist.
        ElaborationError: a malformed line or a repeated query (with its line number).
    """

    name = "file"

    def __init__(
        self, path: str | os.PathLike[str], *, n_pos: int | None = None, n_neg: int | None = None,
    ) -> None:
        self.path = Path(path).expanduser()
        self.n_pos = None if n_pos is None else check_count("n_pos", n_pos)
        self.n_neg = None if n_neg is None else check_count("n_neg", n_neg)
        if not self.path.is_file():
            raise ModelNotFoundError(Errors.E206.format(
                what="elaborations file", path=self.path,
                hint="Write one JSON object per line with query, positives and negatives.",
            ))
        self._entries: dict[str, Elaboration] = {}
        first_line: dict[str, int] = {}
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                text = raw.decode("utf-8", errors="replace").strip()
                if not text or text.startswith("#"):
                    continue
                entry = self._parse(text, number)
                key = query_key(entry.query)
                if key in first_line:
                    raise ElaborationError(Errors.E232.format(
                        path=self.path, line=number, query=entry.query, first=first_line[key],
                    ))
                first_line[key] = number
                self._entries[key] = entry

    def _parse(self, text: str, number: int) -> Elaboration:
        def bad(problem: str) -> ElaborationError:
            return ElaborationError(Errors.E230.format(path=self.path, line=number, problem=problem))

        record = json_value(number, text)  # fortekit.textio: no RecursionError on deep JSON
        if isinstance(record, BadLine):
            raise bad(f"not JSON ({record.reason})")
        if not isinstance(record, dict):
            raise bad(f"a JSON {type(record).__name__}, not an object")
        query = record.get("query")
        if not isinstance(query, str) or not query.strip():
            raise bad("\"query\" is missing or empty")
        positives, negatives = _strings(record.get("positives")), _strings(record.get("negatives"))
        if positives is None:
            raise bad("\"positives\" is missing, empty, or not a list of non-empty strings")
        if negatives is None:
            raise bad("\"negatives\" is missing, empty, or not a list of non-empty strings")
        return Elaboration(query.strip(), positives[: self.n_pos], negatives[: self.n_neg])

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, query: object) -> bool:
        return isinstance(query, str) and query_key(query) in self._entries

    def __repr__(self) -> str:
        return f"FileElaborator(path={str(self.path)!r}, queries={len(self)})"

    def elaborate(self, query: str) -> Elaboration:
        """The stored elaboration of `query` (its `query` field is the query as asked).

        Raises:
            ElaborationError: an empty query, or one the file does not have.
        """
        entry = self._entries.get(query_key(check_query(query)))
        if entry is None:
            raise ElaborationError(Errors.E231.format(query=query, path=self.path, count=len(self)))
        return Elaboration(query, entry.positives, entry.negatives)
