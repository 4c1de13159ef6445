"""Multi-relevance collections in the BEIR layout: the loader behind ``fortekit eval --beir``.

A BEIR folder holds

* ``corpus.jsonl``: one item a line, ``{"_id", "text", "captions"?: [str], "audio"?: path}``
  (``audio`` relative to the folder; ``title`` and other fields are not embedded), read by
  :func:`fortekit.collection_reader.item_record` as ``fortekit index build`` reads it: a line
  with ``captions`` is one item, the mean of their embeddings, whose own text is ``text``
  (else its first caption);
* ``queries.jsonl``: ``{"_id", "text", "metadata"?: {field: value}}`` (``query`` is read where
  ``text`` is absent, as ``fortekit search --queries`` reads it);
* ``qrels/test.tsv``: an optional header ``query-id corpus-id score``, then one judgement a
  line, tab-separated (whitespace where a line has no tab); a score of 1 or more is relevant;
* ``item_concepts.jsonl`` (optional): ``{"_id", "concepts": {concept: captions mentioning it}}``,
  read for the violation@10 metric only, never to rank.

JSON Lines are split on ``"\\n"`` alone (``str.splitlines`` would also split inside a caption
at U+2028 or U+0085); a ``"\\r"`` before it and a BOM are dropped, blank lines skipped. A bad
line is an error naming the file and the line (E501), a repeated id E502, a bad qrels line E503,
an id in qrels or item_concepts.jsonl that the corpus or queries lack E504. Queries without a
relevant item are dropped (BEIR files often list queries of other splits) and counted.

Example:
    >>> import json, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "corpus.jsonl").write_text(
    ...     json.dumps({"_id": "d1", "text": "a dog barks"}) + "\\n"
    ...     + json.dumps({"_id": "d2", "text": "rain", "captions": ["rain falls", "rain"]}) + "\\n")
    >>> _ = (folder / "queries.jsonl").write_text(
    ...     json.dumps({"_id": "q1", "text": "a dog", "metadata": {"kind": "and"}}) + "\\n")
    >>> (folder / "qrels").mkdir()
    >>> _ = (folder / "qrels" / "test.tsv").write_text("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t1\\n")
    >>> collection = load_beir(folder)
    >>> [item.id for item in collection.items], collection.qrels
    (['d1', 'd2'], {'q1': {'d1': 1}})
    >>> collection.items[1].captions
    ('rain falls', 'rain')
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fortekit.collection_reader import RecordError, item_record, query_field
from fortekit.errors import Errors, EvaluationError
from fortekit.textio import BadLine
from fortekit.textio import read_jsonl as _read_json_lines

__all__ = [
    "BeirCollection",
    "BeirItem",
    "BeirQuery",
    "load_beir",
    "read_jsonl",
]

CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
QRELS = Path("qrels") / "test.tsv"
#: The largest relevance score (in absolute value) a qrels line may give: graded judgements are
#: small integers (0-4 in TREC), and the metric library (pytrec_eval) stores them as C ints.
MAX_RELEVANCE = 1_000_000
ITEM_CONCEPTS = "item_concepts.jsonl"


@dataclass(frozen=True, slots=True)
class BeirItem:
    """One corpus item.

    Attributes:
        id: its ``_id``.
        text: its ``text``: the item's own caption, which Stage 3 parses.
        captions: its ``captions`` (empty when the line has none): the caption-indexed item is
            the normalised mean of their embeddings.
        audio: its audio file (absolute), or None.
    """

    id: str
    text: str
    captions: tuple[str, ...] = ()
    audio: Path | None = None


@dataclass(frozen=True, slots=True)
class BeirQuery:
    """One query.

    Attributes:
        id: its ``_id``.
        text: the query text.
        metadata: its ``metadata`` (here ``kind``, ``a``, ``b``); empty when the line has none.
    """

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BeirCollection:
    """A BEIR folder, read and checked.

    Attributes:
        folder: the folder.
        items: the corpus, in file order.
        queries: the queries with at least one relevant item, in file order.
        qrels: query id -> {corpus id: score}, for the kept queries (scores 0 kept: not relevant).
        item_concepts: corpus id -> {concept: number of captions mentioning it}, or None
            without ``item_concepts.jsonl`` (for violation@10 only).
        dropped_queries: queries of ``queries.jsonl`` without a relevant item.
        files: the files read, by role ("corpus", "queries", "qrels", "item_concepts").
    """

    folder: Path
    items: list[BeirItem]
    queries: list[BeirQuery]
    qrels: dict[str, dict[str, int]]
    item_concepts: dict[str, dict[str, int]] | None = None
    dropped_queries: int = 0
    files: dict[str, Path] = field(default_factory=dict)

    def limit_queries(self, count: int | None) -> BeirCollection:
        """The collection with only its first ``count`` queries (None: all).

        Example:
            >>> queries = [BeirQuery("a", "x"), BeirQuery("b", "y")]
            >>> c = BeirCollection(Path("."), [BeirItem("d", "x")], queries, {"a": {"d": 1}, "b": {"d": 1}})
            >>> [q.id for q in c.limit_queries(1).queries], list(c.limit_queries(1).qrels)
            (['a'], ['a'])
        """
        if count is None or count >= len(self.queries):
            return self
        queries = self.queries[:count]
        return replace(self, queries=queries, qrels={q.id: self.qrels[q.id] for q in queries})

    def relevant(self, query_id: str) -> set[str]:
        """The ids of the items relevant to a query (score 1 or more)."""
        return {item for item, score in self.qrels.get(query_id, {}).items() if score >= 1}


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines file, split on "\\n" only.

    Raises:
        EvaluationError: a line that is not UTF-8, not JSON or not an object (E501).

    Example:
        >>> import tempfile
        >>> f = Path(tempfile.mkdtemp()) / "x.jsonl"
        >>> _ = f.write_bytes('{"_id": "a", "text": "x\\u2028y"}\\r\\n\\n{"_id": "b"}'.encode())
        >>> [(n, o["_id"]) for n, o in read_jsonl(f)]
        [(1, 'a'), (3, 'b')]
    """
    for number, value in _read_json_lines(path):  # fortekit.textio: "\n" only, strict UTF-8, BOM dropped

        def fail(problem: str, number: int = number) -> EvaluationError:
            return EvaluationError(Errors.E501.format(path=path, line=number, problem=problem,
                                                      fields='with a string "_id"'))

        if isinstance(value, BadLine):
            if value.kind == "undecodable":
                where = value.reason.removeprefix("not UTF-8: ")
                raise fail(f"not valid UTF-8 ({where}); re-save the file as UTF-8")
            raise fail(value.reason if value.kind == "too_long" else f"not JSON ({value.reason})")
        if not isinstance(value, dict):
            raise fail(f"a JSON {type(value).__name__}, not an object")
        yield number, value


def _id_of(path: Path, number: int, record: Mapping[str, Any], fields: str) -> str:
    value = record.get("_id")
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise EvaluationError(Errors.E501.format(
            path=path, line=number, problem=f'"_id" is {value!r}, not a non-empty string', fields=fields,
        ))
    return str(value)


def _text_of(
    path: Path, number: int, record: Mapping[str, Any], fields: str, *, required: bool, key: str = "text",
) -> str:
    value = record.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise EvaluationError(Errors.E501.format(
            path=path, line=number, problem=f'"{key}" is {value!r}, not a non-empty string', fields=fields,
        ))
    return value


def _check_unique(path: Path, number: int, item_id: str, seen: dict[str, int]) -> None:
    if item_id in seen:
        raise EvaluationError(Errors.E502.format(path=path, line=number, id=item_id, first=seen[item_id]))
    seen[item_id] = number


def _read_corpus(path: Path, folder: Path) -> list[BeirItem]:
    """The items, read by :func:`fortekit.collection_reader.item_record` as ``index build`` reads them."""
    fields = 'with "_id", "text" and optionally "captions" (a list of strings) and "audio" (a path)'
    items: list[BeirItem] = []
    seen: dict[str, int] = {}
    for number, record in read_jsonl(path):
        try:
            item = item_record(record, number, id_key="_id")
        except RecordError as exc:
            raise EvaluationError(Errors.E501.format(path=path, line=number, problem=exc.problem,
                                                     fields=fields)) from None
        _check_unique(path, number, item.id, seen)
        if item.text is None:
            _text_of(path, number, record, fields, required=True)  # E501, naming what "text" holds
        audio = record.get("audio")
        audio_path: Path | None = None
        if audio is not None:
            if not isinstance(audio, str) or not audio.strip():
                raise EvaluationError(Errors.E501.format(
                    path=path, line=number, problem=f'"audio" is {audio!r}, not a path', fields=fields,
                ))
            audio_path = (folder / audio).resolve()
            if not audio_path.is_file():
                raise EvaluationError(Errors.E510.format(
                    path=path, line=number, id=item.id, audio=audio_path, problem="does not exist",
                ))
        items.append(BeirItem(item.id, item.text or "", item.captions, audio_path))
    return items


def _read_queries(path: Path) -> list[BeirQuery]:
    """The queries: ``_id`` and the text in :func:`fortekit.collection_reader.query_field` (``text``,
    or ``query`` as ``fortekit search --queries`` reads it)."""
    fields = 'with "_id", "text" and optionally "metadata" (an object)'
    queries: list[BeirQuery] = []
    seen: dict[str, int] = {}
    for number, record in read_jsonl(path):
        query_id = _id_of(path, number, record, fields)
        _check_unique(path, number, query_id, seen)
        text = _text_of(path, number, record, fields, required=True, key=query_field(record))
        metadata = record.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise EvaluationError(Errors.E501.format(
                path=path, line=number, problem=f'"metadata" is {metadata!r}, not an object', fields=fields,
            ))
        queries.append(BeirQuery(query_id, text, metadata))
    return queries


def _read_qrels(path: Path) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], int]]:
    """(query id -> {corpus id: score}, (query id, corpus id) -> line number)."""
    qrels: dict[str, dict[str, int]] = {}
    lines: dict[tuple[str, str], int] = {}
    data = path.read_bytes()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8").removeprefix("\ufeff").rstrip("\r")
        except UnicodeDecodeError:
            problem = "not valid UTF-8"
            raise EvaluationError(Errors.E503.format(path=path, line=number, problem=problem)) from None
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("\t")] if "\t" in line else line.split()
        if number == 1 and parts[:2] == ["query-id", "corpus-id"]:
            continue
        if len(parts) == 4:  # TREC qrels: query, iteration, document, relevance
            parts = [parts[0], parts[2], parts[3]]
        if len(parts) != 3 or not parts[0] or not parts[1]:
            raise EvaluationError(Errors.E503.format(
                path=path, line=number, problem=f"{len(parts)} fields ({line[:80]!r}) instead of 3",
            ))
        query_id, item_id, text = parts
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value != int(value):
            raise EvaluationError(Errors.E503.format(
                path=path, line=number, problem=f"the score {text!r} is not an integer",
            ))
        if abs(value) > MAX_RELEVANCE:  # 1e300 is an integer too, but no metric library takes it
            raise EvaluationError(Errors.E503.format(
                path=path, line=number,
                problem=f"the score {text!r} is outside -{MAX_RELEVANCE:,} to {MAX_RELEVANCE:,}",
            ))
        if (query_id, item_id) in lines:
            raise EvaluationError(Errors.E503.format(
                path=path, line=number,
                problem=f"({query_id}, {item_id}) was judged already on line {lines[query_id, item_id]}",
            ))
        lines[query_id, item_id] = number
        qrels.setdefault(query_id, {})[item_id] = int(value)
    return qrels, lines


def _read_item_concepts(path: Path) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    fields = 'with "_id" and "concepts" (an object of concept: number of captions mentioning it)'
    concepts: dict[str, dict[str, int]] = {}
    seen: dict[str, int] = {}
    for number, record in read_jsonl(path):
        item_id = _id_of(path, number, record, fields)
        _check_unique(path, number, item_id, seen)
        counts = record.get("concepts")
        good = isinstance(counts, dict) and all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in counts.items()
        )
        if not good:
            raise EvaluationError(Errors.E501.format(
                path=path, line=number, problem=f'"concepts" is {counts!r}', fields=fields,
            ))
        concepts[item_id] = dict(counts)  # type: ignore[arg-type]
    return concepts, seen


def _unknown(path: Path, what: str, source: str, ids: Mapping[str, int], known: set[str]) -> None:
    missing = [(line, key) for key, line in ids.items() if key not in known]
    if missing:
        line, example = min(missing)
        raise EvaluationError(Errors.E504.format(
            path=path, count=len(missing), what=what, source=source, line=line, example=example,
        ))


def load_beir(folder: str | os.PathLike[str]) -> BeirCollection:
    """Read and check a BEIR folder (see the module docstring for the layout).

    Args:
        folder: the folder holding corpus.jsonl, queries.jsonl and qrels/test.tsv.

    Returns:
        The :class:`BeirCollection`: every item, the queries with a relevant item.

    Raises:
        EvaluationError: a missing file (E500), a bad line (E501, E503), a repeated id (E502),
            an id in qrels or item_concepts.jsonl that is not in the corpus or queries (E504),
            an audio file that does not exist (E510), or nothing left to evaluate (E505).

    Example:
        >>> load_beir("/nonexistent")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.EvaluationError: [E500] The BEIR folder /nonexistent has no corpus ...
    """
    root = Path(folder)
    files = {"corpus": root / CORPUS, "queries": root / QUERIES, "qrels": root / QRELS}
    for role, path in files.items():
        if not path.is_file():
            what = {"corpus": "corpus", "queries": "queries", "qrels": "relevance judgements"}[role]
            raise EvaluationError(Errors.E500.format(folder=root, what=what, path=path))
    items = _read_corpus(files["corpus"], root)
    queries = _read_queries(files["queries"])
    qrels, lines = _read_qrels(files["qrels"])
    query_lines: dict[str, int] = {}
    item_lines: dict[str, int] = {}
    for (query_id, item_id), line in lines.items():
        query_lines.setdefault(query_id, line)
        item_lines.setdefault(item_id, line)
    _unknown(files["qrels"], "query", QUERIES, query_lines, {q.id for q in queries})
    item_ids = {item.id for item in items}
    _unknown(files["qrels"], "corpus", CORPUS, item_lines, item_ids)
    concepts: dict[str, dict[str, int]] | None = None
    if (root / ITEM_CONCEPTS).is_file():
        files["item_concepts"] = root / ITEM_CONCEPTS
        concepts, concept_lines = _read_item_concepts(files["item_concepts"])
        _unknown(files["item_concepts"], "corpus", CORPUS, concept_lines, item_ids)
    kept = [q for q in queries if any(score >= 1 for score in qrels.get(q.id, {}).values())]
    if not items or not kept:
        problem = "the corpus is empty" if not items else (
            f"none of its {len(queries)} queries has a relevant item in {QRELS}")
        raise EvaluationError(Errors.E505.format(folder=root, problem=problem))
    return BeirCollection(
        folder=root, items=items, queries=kept, qrels={q.id: qrels[q.id] for q in kept},
        item_concepts=concepts, dropped_queries=len(queries) - len(kept), files=files,
    )
