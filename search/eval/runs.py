"""Standard IR formats: TREC run files, TREC and BEIR qrels, reciprocal rank fusion, scoring any run.

A **run** is what a retrieval system returns, as ``query id -> {document id: score}`` (the
type :data:`Run`); a TREC run file holds it one ranked document a line, 6 fields separated by
spaces or tabs::

    q0001 Q0 uqFvD_nXw8I 1 0.8312 fortekit
    q0001 Q0 y4MY9mp8-TA 2 0.8107 fortekit

(query id, the literal ``Q0`` (any text is accepted), document id, rank, score, run tag). The
order of a query's documents is trec_eval's: score descending, ties broken by document id
descending; the rank column is checked to be an integer but, as in trec_eval, not used.
A (query, document) pair listed twice is refused (E512, naming both lines) rather than
resolved silently, since trec_eval and ranx resolve it differently. A line that is not
UTF-8, does not have 6 fields, or has a non-integer rank or a non-finite score is E512 with
its line number. The writer (:func:`format_run`, :func:`write_run`, ``fortekit search --format
trec``) never writes a line this reader refuses: an id or tag that is empty, holds white space
or is not valid text is refused (E750, :func:`check_trec_id`), not escaped, since every other
TREC tool would read an escape back as it stands.

**Qrels** are read in both layouts (:func:`read_qrels`): TREC's 4 columns
``query-id iteration doc-id relevance`` and BEIR's ``query-id corpus-id score`` TSV with its
header, through the reader ``fortekit eval --beir`` uses (E503 for a bad line).

:func:`score_runs` scores runs against qrels with the metrics of ``fortekit eval --beir``
(:mod:`fortekit.search.eval.beir_metrics`: trec_eval's nDCG@10, AP, P@10, R@1/5/10 through
ir-measures, and the same paired t-tests, against the first run). violation@10 needs a BEIR
collection's exclusion annotations (query metadata and ``item_concepts.jsonl``); without one
it is not computed. :func:`reciprocal_rank_fusion` combines runs by the reciprocal rank
fusion of Cormack, Clarke and Büttcher (SIGIR 2009): each document scores the sum over the
runs that rank it of ``1 / (k + rank)``, rank counted from 1.

Example:
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> b = {"q1": {"d3": 2.0, "d1": 1.0}}
    >>> fused = reciprocal_rank_fusion([a, b], k=60)
    >>> ranking(fused["q1"]), round(fused["q1"]["d1"], 6)
    (['d1', 'd3', 'd2'], 0.032522)
    >>> print(format_run({"q1": {"d1": 2.0, "d2": 1.0}}, tag="demo"), end="")
    q1 Q0 d1 1 2 demo
    q1 Q0 d2 2 1 demo
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, EvaluationError
from fortekit.search.eval.beir_metrics import (
    MEASURES,
    VIOLATION,
    breakdown_fields,
    group_summary,
    per_query_measures,
    query_groups,
    violation_at,
)

if TYPE_CHECKING:
    from fortekit.search.eval.beir import BeirCollection

__all__ = [
    "DEFAULT_RRF_K",
    "Run",
    "check_trec_id",
    "check_trec_ids",
    "format_run",
    "ranking",
    "read_qrels",
    "read_run",
    "reciprocal_rank_fusion",
    "run_from_rankings",
    "score_runs",
    "write_run",
]

#: query id -> {document id: score}: a run, as a TREC run file holds it.
Run = dict[str, dict[str, float]]
#: Cormack et al.'s k, also ranx's default.
DEFAULT_RRF_K = 60
TOP_STORED = 10


def ranking(scores: Mapping[str, float]) -> list[str]:
    """One query's documents in trec_eval's order: score descending, ties by document id descending.

    Args:
        scores: document id -> score.

    Returns:
        The document ids, best first.

    Example:
        >>> ranking({"a": 1.0, "b": 2.0, "c": 1.0})
        ['b', 'c', 'a']
    """
    return [doc for doc, _ in sorted(scores.items(), key=lambda pair: (pair[1], pair[0]), reverse=True)]


def run_from_rankings(rankings: Mapping[str, Sequence[str]]) -> Run:
    """A run from ordered rankings: scores ``n - position``, as ``fortekit eval --beir`` passes them.

    Args:
        rankings: query id -> document ids, best first (each once).

    Returns:
        The :data:`Run`, whose :func:`ranking` is each given order.

    Example:
        >>> run_from_rankings({"q": ["b", "a"]})
        {'q': {'b': 2.0, 'a': 1.0}}
    """
    return {query: {doc: float(len(docs) - position) for position, doc in enumerate(docs)}
            for query, docs in rankings.items()}


def _bad_run_line(path: Path, line: int, problem: str) -> EvaluationError:
    return EvaluationError(Errors.E512.format(path=path, line=line, problem=problem))


def read_run(path: str | os.PathLike[str]) -> Run:
    """Read a TREC run file (see the module docstring for the format).

    Args:
        path: the run file (UTF-8; a BOM, ``"\\r\\n"`` line ends and blank lines are accepted).

    Returns:
        The :data:`Run` (query ids in file order).

    Raises:
        EvaluationError: a line that is not UTF-8, has not 6 fields, a rank that is not an
            integer, a score that is not a finite number, or a (query, document) listed twice
            (E512, with the line); a file that cannot be read or ranks nothing (E513).

    Example:
        >>> import tempfile
        >>> f = Path(tempfile.mkdtemp()) / "a.trec"
        >>> _ = f.write_text("q1 Q0 d1 1 0.9 sys\\nq1\\tQ0\\td2\\t2\\t0.5\\tsys\\n")
        >>> read_run(f)
        {'q1': {'d1': 0.9, 'd2': 0.5}}
        >>> _ = f.write_text("q1 Q0 d1 1 0.9 sys\\nq1 Q0 d2 two 0.5 sys\\n")
        >>> read_run(f)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.EvaluationError: [E512] ...a.trec, line 2: the rank 'two' is not an integer. ...
    """
    source = Path(path)
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise EvaluationError(Errors.E513.format(
            problem=f"cannot read the run file {source} ({exc.strerror or exc})",
            fix="Pass an existing TREC run file.",
        )) from None
    run: Run = {}
    seen: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as exc:
            raise _bad_run_line(source, number, f"not valid UTF-8 (byte {exc.start + 1} of the line); "
                                "re-save the file as UTF-8") from None
        if number == 1:
            line = line.removeprefix("\ufeff")
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 6:
            raise _bad_run_line(source, number, f"{len(parts)} fields ({line[:80]!r}) instead of 6")
        query, _, doc, rank, score_text, _ = parts
        try:
            int(rank)
        except ValueError:
            raise _bad_run_line(source, number, f"the rank {rank!r} is not an integer") from None
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise _bad_run_line(source, number, f"the score {score_text!r} is not a finite number")
        if (query, doc) in seen:
            raise _bad_run_line(source, number, f"the document {doc!r} of the query {query!r} was ranked "
                                f"already on line {seen[query, doc]}")
        seen[query, doc] = number
        run.setdefault(query, {})[doc] = score
    if not run:
        raise EvaluationError(Errors.E513.format(
            problem=f"the run file {source} ranks no document (it is empty)",
            fix="Pass a TREC run file: one 'query-id Q0 doc-id rank score tag' line per ranked document.",
        ))
    return run


def read_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """Read relevance judgements: TREC qrels (4 columns) or a BEIR qrels TSV (3 columns, a header).

    The reader of ``fortekit eval --beir`` (``qrels/test.tsv``): tabs, or whitespace where a line
    has no tab; graded integer scores, 1 or more relevant.

    Args:
        path: the qrels file.

    Returns:
        query id -> {document id: relevance}, every judged pair (0 and negative kept).

    Raises:
        EvaluationError: a bad line (E503, with the line); a file that cannot be read or
            judges no document relevant (E513).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "q.txt").write_text("q1 0 d1 1\\nq1 0 d2 0\\n")
        >>> _ = (folder / "q.tsv").write_text("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t2\\n")
        >>> read_qrels(folder / "q.txt"), read_qrels(folder / "q.tsv")
        ({'q1': {'d1': 1, 'd2': 0}}, {'q1': {'d1': 2}})
    """
    from fortekit.search.eval.beir import _read_qrels

    source = Path(path)
    try:
        qrels, _ = _read_qrels(source)
    except OSError as exc:
        raise EvaluationError(Errors.E513.format(
            problem=f"cannot read the qrels {source} ({exc.strerror or exc})",
            fix="Pass a TREC qrels file or a BEIR qrels TSV (e.g. DIR/qrels/test.tsv).",
        )) from None
    if not any(score >= 1 for judged in qrels.values() for score in judged.values()):
        raise EvaluationError(Errors.E513.format(
            problem=f"the qrels {source} judge no document relevant (a score of 1 or more)",
            fix="Pass the qrels of the collection the runs searched.",
        ))
    return qrels


def check_trec_id(value: str, what: str = "document id") -> None:
    """Refuse an id (or run tag) that a TREC run file cannot hold: its reader would not give it back.

    :func:`read_run` splits a line on white space (``str.split``: spaces, tabs, and every other
    character ``str.isspace`` knows, U+2028 and U+0085 included) and drops a byte-order mark at
    the start of the file, so a field may hold none of them, nor be empty, and must be valid
    text (UTF-8). Such an id is refused, not escaped: an escape would be read back unchanged by
    trec_eval, ranx and every other TREC tool, whose qrels would then not match it.

    Args:
        value: the id as the run holds it.
        what: what it is, for the message ("query id", "document id", "run tag").

    Raises:
        OutputError: E750, naming the id, what is wrong with it and the way out.

    Example:
        >>> check_trec_id("clip_0001.wav")
        >>> check_trec_id("rain on a roof.wav")
        Traceback (most recent call last):
        ...
        fortekit.errors.OutputError: [E750] The document id 'rain on a roof.wav' cannot be written ... it holds white space (' ' at character 5), ...
    """  # noqa: E501
    from fortekit.errors import OutputError

    problem = None
    if not value:
        problem = "is empty"
    elif value.startswith("\ufeff"):
        problem = "starts with a byte-order mark (U+FEFF), which a reader drops"
    else:
        blank = next((i for i, character in enumerate(value) if character.isspace()), None)
        if blank is not None:
            problem = f"holds white space ({value[blank]!r} at character {blank + 1})"
        else:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                problem = f"is not valid text (a lone surrogate at character {exc.start + 1})"
    if problem is not None:
        raise OutputError(Errors.E750.format(what=what, value=value, problem=problem))


#: Anything :func:`check_trec_id` refuses (``\\s`` is ``str.isspace``, which ``str.split`` splits on).
_NOT_TREC = re.compile("\\s|[\ud800-\udfff]|^\ufeff|^$")


def check_trec_ids(ids: Iterable[str], what: str = "item id") -> None:
    """:func:`check_trec_id` of many ids at the speed of a regular expression (a whole index).

    Raises:
        OutputError: E750 for the first id a TREC run file cannot hold.

    Example:
        >>> check_trec_ids(["a.wav", "b.wav"])
        >>> check_trec_ids(["a.wav", "b\\u2028c.wav"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.OutputError: [E750] The item id 'b\\u2028c.wav' cannot be written ...
    """
    for value in ids:
        if _NOT_TREC.search(value):
            check_trec_id(value, what)


def format_run(run: Mapping[str, Mapping[str, float]], tag: str = "fortekit") -> str:
    """The text of a TREC run file: each query's documents in :func:`ranking` order, ranks from 1.

    Args:
        run: query id -> {document id: score} (finite scores).
        tag: the run tag (last column; no white space).

    Returns:
        The lines, each ending in ``"\\n"``; scores as Python's shortest round-trip ``repr``.

    Raises:
        OutputError: an id or tag that a TREC file cannot hold: empty, white space, not valid
            text (E750, from :func:`check_trec_id`).
        EvaluationError: a score that is not finite (E513).

    Example:
        >>> print(format_run({"q": {"a": 0.5, "b": 0.75}}, tag="x"), end="")
        q Q0 b 1 0.75 x
        q Q0 a 2 0.5 x
    """
    check_trec_id(tag, "run tag")
    lines: list[str] = []
    for query, scores in run.items():
        check_trec_id(query, "query id")
        for rank, doc in enumerate(ranking(scores), start=1):
            check_trec_id(doc, "document id")
            score = float(scores[doc])
            if not math.isfinite(score):
                raise EvaluationError(Errors.E513.format(
                    problem=f"the score of {doc!r} for the query {query!r} is {score}",
                    fix="Give every document a finite score.",
                ))
            text = repr(score)
            lines.append(f"{query} Q0 {doc} {rank} {text.removesuffix('.0')} {tag}\n")
    return "".join(lines)


def write_run(path: str | os.PathLike[str], run: Mapping[str, Mapping[str, float]],
              tag: str = "fortekit", *, overwrite: bool = True) -> Path:
    """Write a TREC run file atomically (:func:`fortekit.safe_write.atomic_write_text`).

    Every line is checked first (:func:`check_trec_id`): the file is one :func:`read_run` reads
    back as ``run``. A FIFO or a character device is written in place, never renamed over.

    Args:
        path: the file to write (its folder is created).
        run: query id -> {document id: score}.
        tag: the run tag.
        overwrite: replace an existing file (else E746).

    Returns:
        The path written.

    Raises:
        OutputError: an id or tag that cannot be written (E750); ``path`` is a link (E741), a
            folder (E745), another special file (E748) or exists without ``overwrite`` (E746).
        OutputWriteError: the write failed (E743).
        EvaluationError: a score that is not finite (E513).

    Example:
        >>> import tempfile
        >>> path = write_run(Path(tempfile.mkdtemp()) / "run.trec", {"q": {"a": 1.0}})
        >>> read_run(path)
        {'q': {'a': 1.0}}
    """
    from fortekit.safe_write import atomic_write_text, write_error

    target, text = Path(path), format_run(run, tag)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(target.parent, exc) from exc
    return atomic_write_text(target, text, overwrite=overwrite)


def reciprocal_rank_fusion(runs: Sequence[Mapping[str, Mapping[str, float]]],
                           k: float = DEFAULT_RRF_K) -> Run:
    """Reciprocal rank fusion (Cormack et al. 2009): score = sum over the runs of ``1 / (k + rank)``.

    Each run's ranks are its :func:`ranking` order, counted from 1; a document a run does not
    rank adds nothing from that run. The fused run holds every query and document of any run.

    Args:
        runs: the runs to combine.
        k: the constant (60 in the paper and in ranx); 0 or more.

    Returns:
        The fused :data:`Run`.

    Raises:
        EvaluationError: no run, or ``k`` negative or not finite (E513).

    Example:
        >>> fused = reciprocal_rank_fusion([{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 5.0}}], k=1)
        >>> fused["q"]["a"], fused["q"]["b"]
        (0.5, 0.8333333333333333)
    """
    if not runs:
        raise EvaluationError(Errors.E513.format(problem="reciprocal rank fusion got no run",
                                                 fix="Pass two runs or more to --fuse."))
    if not math.isfinite(k) or k < 0:
        raise EvaluationError(Errors.E513.format(problem=f"the RRF constant k is {k}",
                                                 fix="Pass --fuse-k 0 or more (default 60)."))
    fused: Run = {}
    for run in runs:
        for query, scores in run.items():
            target = fused.setdefault(query, {})
            for rank, doc in enumerate(ranking(scores), start=1):
                target[doc] = target.get(doc, 0.0) + 1.0 / (k + rank)
    return fused


def _query_order(judged: Mapping[str, Any], collection: BeirCollection | None) -> list[str]:
    if collection is None:
        return list(judged)
    first = [query.id for query in collection.queries if query.id in judged]
    known = set(first)
    return first + [query for query in judged if query not in known]


def score_runs(
    runs: Mapping[str, Mapping[str, Mapping[str, float]]],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    collection: BeirCollection | None = None,
    by: Sequence[str] | None = None,
    violation_kinds: Sequence[str] = ("without",),
) -> dict[str, Any]:
    """Score runs with ``fortekit eval --beir``'s metrics and paired t-tests against the first run.

    The queries are those of ``qrels`` with a relevant document (score 1 or more), as
    ``fortekit eval --beir`` keeps them; a query a run does not rank scores 0 (trec_eval's
    ``-c``), so every run is scored on the same queries and the paired tests pair them.
    Queries a run ranks but ``qrels`` does not judge are ignored (counted).

    Args:
        runs: name -> run; the first is the baseline of the paired tests.
        qrels: query id -> {document id: relevance}.
        collection: a BEIR collection whose query metadata and ``item_concepts.jsonl`` give
            violation@10 (exclusion queries: metadata ``b`` and a ``kind`` in
            ``violation_kinds`` or none) and the breakdowns; None: the standard metrics only.
        by: the metadata fields to break down by (None: every field with 2-10 values; only
            with ``collection``).
        violation_kinds: the query kinds whose ``b`` should be absent.

    Returns:
        ``{"queries": n, "baseline": first name, "violation": why it is or is not computed,
        "systems": {name: summary}, "breakdown": {field: {value: {name: summary}}},
        "per_query": {name: [record per query]}}``; a summary is
        :func:`~fortekit.search.eval.beir_metrics.group_summary`'s, plus ``queries_ranked`` and
        ``queries_unjudged``; a record holds ``query_id``, the measures, ``violation@10`` (None
        where it does not apply) and the top 10.

    Raises:
        EvaluationError: no run, or qrels without a relevant document (E513); ir-measures
            missing (E509); a ``by`` field no query has (E507).

    Example:
        >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
        >>> scores = score_runs({"a": {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d2": 1.0}},
        ...                      "b": {"q1": {"d2": 2.0, "d1": 1.0}, "q3": {"d1": 1.0}}}, qrels)
        >>> a, b = scores["systems"]["a"], scores["systems"]["b"]
        >>> a["AP"], b["AP"], round(b["p_AP"], 3)
        (1.0, 0.25, 0.205)
        >>> scores["systems"]["b"]["queries_ranked"], scores["systems"]["b"]["queries_unjudged"]
        (1, 1)
    """
    if not runs:
        raise EvaluationError(Errors.E513.format(problem="no run to score", fix="Pass --run RUN."))
    judged = {query: dict(docs) for query, docs in qrels.items() if any(s >= 1 for s in docs.values())}
    if not judged:
        raise EvaluationError(Errors.E513.format(
            problem="the qrels judge no document relevant (a score of 1 or more)",
            fix="Pass the qrels of the collection the runs searched.",
        ))
    order = _query_order(judged, collection)
    metadata: dict[str, Mapping[str, Any]] = {}
    concepts = None
    if collection is not None:
        metadata = {query.id: query.metadata for query in collection.queries}
        concepts = collection.item_concepts
    if concepts is not None:
        note = f"computed from {collection.files.get('item_concepts')}" if collection is not None else ""
    elif collection is not None:
        note = f"not computed: the BEIR folder {collection.folder} has no item_concepts.jsonl"
    else:
        note = "not computed: it needs a BEIR collection's exclusion annotations (pass --beir DIR)"
    per_query: dict[str, list[dict[str, Any]]] = {}
    systems: dict[str, dict[str, Any]] = {}
    baseline: list[dict[str, Any]] | None = None
    for name, run in runs.items():
        rankings = {query: ranking(run[query]) for query in order if query in run}
        values = per_query_measures(judged, rankings)
        records: list[dict[str, Any]] = []
        for query in order:
            top = rankings.get(query, [])
            info = metadata.get(query, {})
            b, kind = info.get("b"), info.get("kind")
            violation = None
            if concepts is not None and isinstance(b, str) and (kind is None or kind in violation_kinds):
                violation = violation_at(top, b, concepts, k=TOP_STORED)
            records.append({"query_id": query, "kind": kind, **values[query], VIOLATION: violation,
                            "top": top[:TOP_STORED]})
        per_query[name] = records
        summary = group_summary(records, baseline)
        summary.update(queries_ranked=len(rankings), queries_unjudged=sum(1 for q in run if q not in judged))
        systems[name] = summary
        if baseline is None:
            baseline = records
    breakdown: dict[str, Any] = {}
    if collection is not None:
        rows = [metadata.get(query, {}) for query in order]
        first = per_query[next(iter(runs))]
        for field in breakdown_fields(rows, by):
            breakdown[field] = {
                value: {name: group_summary([records[i] for i in members],
                                            None if records is first else [first[i] for i in members])
                        for name, records in per_query.items()}
                for value, members in query_groups(rows, field).items()
            }
    return {"queries": len(order), "baseline": next(iter(runs)), "measures": [*MEASURES, VIOLATION],
            "violation": note, "systems": systems, "breakdown": breakdown, "per_query": per_query}
