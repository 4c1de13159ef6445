"""``fortekit eval --run`` and ``--fuse``: score any system's TREC run against qrels, fuse runs.

The options join ``fortekit eval`` (:func:`add_run_options`); :func:`run_runs` handles a call
that gives any of them (:func:`wants_runs`). Heavy modules load inside the handler.

Example:
    $ fortekit eval --run bm25.trec --run fortekit.trec --qrels qrels.txt
    $ fortekit eval --run a.trec --qrels negation/audiocaps_val/qrels/test.tsv \\
        --beir negation/audiocaps_val -o runs/scored --json
    $ fortekit eval --fuse a.trec b.trec --fuse-k 60 -o fused.trec --qrels qrels.txt
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TextIO

__all__ = ["add_run_options", "format_table", "fused_output_kind", "run_runs", "wants_runs"]

_OWN = ("run", "qrels", "fuse", "fuse_k")


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--run``, ``--qrels``, ``--fuse``, ``--fuse-k`` and ``--json`` to ``fortekit eval``.

    Args:
        parser: the ``eval`` sub-parser.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit eval")
        >>> add_run_options(parser)
        >>> args = parser.parse_args(["--run", "a.trec", "--run", "b.trec", "--qrels", "q.txt", "--json"])
        >>> [str(p) for p in args.run], str(args.qrels), args.fuse, args.json, wants_runs(args)
        (['a.trec', 'b.trec'], 'q.txt', None, True, True)
        >>> [str(p) for p in parser.parse_args(["--fuse", "a.trec", "b.trec"]).fuse]
        ['a.trec', 'b.trec']
    """
    from fortekit.search.cli.common import add_json_option

    group = parser.add_argument_group(
        "runs and qrels (--run, --fuse): any system's TREC run file (docs/evaluation.md, 'Runs and qrels')")
    group.add_argument("--run", action="append", type=Path, metavar="RUN",
                       help="a TREC run file (qid Q0 docid rank score tag) to score against --qrels, "
                       "repeatable; the first is the baseline of the paired t-tests; -o DIR writes "
                       "metrics.json, results.md and per_query/ there")
    group.add_argument("--qrels", type=Path, metavar="QRELS",
                       help="relevance judgements: TREC qrels (qid iter docid rel) or a BEIR qrels TSV "
                       "(default with --beir: DIR/qrels/test.tsv); --beir DIR also gives violation@10")
    group.add_argument("--fuse", nargs="+", type=Path, metavar="RUN",
                       help="fuse these TREC runs by reciprocal rank fusion into the run file -o; with "
                       "--qrels (or --beir) also score them and the fused run")
    group.add_argument("--fuse-k", type=int, metavar="K", help="the RRF constant k (default 60)")
    group.add_argument("--overwrite", action="store_true",
                       help="with --fuse: replace an existing -o file (else E746; a FIFO or a device such as "
                       "/dev/null is written in place)")
    add_json_option(group, help="print the scores as JSON (metrics.json's document) instead of a table")


def wants_runs(args: argparse.Namespace) -> bool:
    """Whether a ``fortekit eval`` call gives an option of :func:`add_run_options` (then it is theirs)."""
    return any(getattr(args, name, None) is not None for name in _OWN) or any(
        bool(getattr(args, name, False)) for name in ("json", "overwrite"))


def fused_output_kind(args: argparse.Namespace) -> Literal["file", "folder"]:
    """What ``fortekit eval -o`` names: the fused run file with ``--fuse``, else the run folder.

    Example:
        >>> fused_output_kind(argparse.Namespace(fuse=["a.trec", "b.trec"]))
        'file'
        >>> fused_output_kind(argparse.Namespace())
        'folder'
    """
    return "file" if getattr(args, "fuse", None) else "folder"


def _fail(problem: str, fix: str) -> Exception:
    from fortekit.errors import Errors, EvaluationError

    return EvaluationError(Errors.E513.format(problem=problem, fix=fix))


def _check(args: argparse.Namespace) -> None:
    """The options go together: --run or --fuse (not both), no option of --test or of --beir's systems."""
    from fortekit.search.cli.eval import _BEIR_ONLY, _TEST_ONLY

    if args.run is None and args.fuse is None:
        given = "--qrels" if args.qrels is not None else "--fuse-k" if args.fuse_k is not None else (
            "--json" if args.json else "--overwrite")
        raise _fail(f"{given} needs --run RUN or --fuse RUN RUN", "Pass the run files to score or fuse.")
    if args.run is not None and args.fuse is not None:
        raise _fail("--run and --fuse are given together",
                    "Score runs with --run, or fuse them with --fuse (add --qrels to score the fused run).")
    if args.test is not None:
        raise _fail("--test does not apply to --run/--fuse", "Leave out --test, or leave out --run/--fuse.")
    for name in (*_TEST_ONLY, *_BEIR_ONLY):
        if name != "by" and getattr(args, name, None) not in (None, []):
            flag = "--" + name.replace("_", "-")
            raise _fail(f"{flag} does not apply to --run/--fuse (they score run files, running no system)",
                        f"Leave out {flag}.")
    if args.by is not None and args.beir is None:
        raise _fail("--by needs --beir DIR (the query metadata to break down by)",
                    "Pass --beir or leave out --by.")
    if args.fuse is not None:
        if len(args.fuse) < 2:
            raise _fail(f"--fuse got {len(args.fuse)} run file", "Pass two runs or more to --fuse.")
        if args.out is None:
            raise _fail("--fuse has no output", "Pass -o/--output FILE, the fused run file to write.")
    elif args.fuse_k is not None:
        raise _fail("--fuse-k applies to --fuse only", "Leave out --fuse-k.")
    elif getattr(args, "overwrite", False):
        raise _fail("--overwrite applies to --fuse's run file only (-o DIR of --run is a run folder, "
                    "rewritten in place)", "Leave out --overwrite.")
    if args.run is not None and args.qrels is None and args.beir is None:
        raise _fail("--run has no relevance judgements", "Pass --qrels QRELS, or --beir DIR (its qrels).")


def _names(paths: list[Path]) -> list[str]:
    """Each run's name: its file name without the suffix, made unique with -2, -3, ..."""
    names: list[str] = []
    for path in paths:
        name, count = path.stem or path.name, 1
        while name in names:
            count += 1
            name = f"{path.stem}-{count}"
        names.append(name)
    return names


def format_table(systems: Mapping[str, Mapping[str, Any]]) -> str:
    """The scores as an aligned text table, one row per run.

    Example:
        >>> print(format_table({"a": {"nDCG@10": 0.5, "AP": 0.25}}))  # doctest: +NORMALIZE_WHITESPACE
        run nDCG@10 AP P@10 R@1 R@5 R@10 violation@10 p nDCG@10 p AP
        a 0.500 0.250 – – – – – – –
    """
    from fortekit.search.eval.beir_metrics import MEASURES, VIOLATION

    def cell(value: object, p: bool = False) -> str:
        if not isinstance(value, (int, float)):
            return "–"
        return "<0.001" if p and value < 0.001 else f"{value:.3f}"

    header = ["run", *MEASURES, VIOLATION, "p nDCG@10", "p AP"]
    rows = [header] + [
        [name, *(cell(row.get(m)) for m in (*MEASURES, VIOLATION)), cell(row.get("p_nDCG@10"), True),
         cell(row.get("p_AP"), True)]
        for name, row in systems.items()
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)).rstrip()
                     for row in rows)


def _document(scores: Mapping[str, Any], names: list[str], paths: list[Path], qrels: Path | str,
              collection: Any) -> dict[str, Any]:
    """metrics.json: like ``eval --beir``'s (``systems``, ``breakdown``, a ``t2a`` block), plus the runs."""
    from fortekit import __version__

    items = len(collection.items) if collection is not None else len(
        {doc for row in scores["per_query"].values() for record in row for doc in record["top"]})
    systems = scores["systems"]
    runs = {name: {"path": str(path.resolve()), "queries_ranked": systems[name]["queries_ranked"],
                   "queries_unjudged": systems[name]["queries_unjudged"]}
            for name, path in zip(names, paths, strict=False)}
    return {
        "fortekit_version": __version__, "collection": str(collection.folder if collection else qrels),
        "qrels": str(qrels), "queries": scores["queries"], "items": items, "directions": ["t2a"],
        "baseline": scores["baseline"], "runs": runs, "violation@10": scores["violation"],
        "systems": systems, "breakdown": scores["breakdown"],
        "t2a": {"queries": scores["queries"], "items": items, "systems": systems,
                "breakdown": scores["breakdown"]},
    }


def _markdown(document: Mapping[str, Any]) -> str:
    from fortekit.search.eval.beir_report import results_markdown

    body = results_markdown(document).split("\n", 4)[4]  # after eval --beir's title and note
    return (f"# fortekit eval --run: {document['collection']}\n\n"
            f"{document['queries']} judged queries (qrels {document['qrels']}); runs: "
            + ", ".join(f"{name} ({row['path']})" for name, row in document["runs"].items())
            + ". Metrics by trec_eval (ir-measures), a query a run does not rank scoring 0; p: two-sided "
            f"paired t-test against the first run, {document['baseline']}, per query; violation@10: "
            f"{document['violation@10']}; ms / query: not known for a run file.\n\n" + body)


def run_runs(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``fortekit eval --run/--fuse``: 0 on success, 2 on bad input (one coded line on stderr).

    Args:
        args: the parsed ``fortekit eval`` options.
        out: where the table (or the JSON document) goes.

    Returns:
        The exit code.
    """
    from fortekit.errors import FortekitError

    try:
        return _run(args, out)
    except FortekitError as exc:
        print(f"fortekit: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, out: TextIO) -> int:
    from fortekit.safe_write import check_not_input
    from fortekit.search.eval.runs import (
        DEFAULT_RRF_K,
        Run,
        read_qrels,
        read_run,
        reciprocal_rank_fusion,
        score_runs,
    )

    _check(args)
    log_to = sys.stderr if args.json else out

    def log(line: str) -> None:
        print(line, file=log_to, flush=True)

    paths: list[Path] = list(args.run or args.fuse)
    inputs: list[tuple[str, Path | None]] = [("run file", path) for path in paths]
    inputs += [("qrels", args.qrels), ("BEIR folder", args.beir)]
    if args.out is not None:
        check_not_input(args.out, inputs)
    collection = None
    if args.beir is not None:
        from fortekit.search.eval.beir import load_beir

        collection = load_beir(args.beir)
    qrels_path: Path | None = args.qrels or (collection.files["qrels"] if collection is not None else None)
    qrels = read_qrels(args.qrels) if args.qrels is not None else (
        collection.qrels if collection is not None else None)
    names = _names(paths)
    runs: dict[str, Run] = {name: read_run(path) for name, path in zip(names, paths, strict=True)}
    if args.fuse is not None:
        k = DEFAULT_RRF_K if args.fuse_k is None else args.fuse_k
        fused = reciprocal_rank_fusion(list(runs.values()), k=k)
        _write_fused(Path(args.out), fused, f"rrf-k{k}", overwrite=bool(getattr(args, "overwrite", False)))
        log(f"wrote {args.out}: reciprocal rank fusion (k={k}) of {', '.join(str(p) for p in paths)}, "
            f"{len(fused)} queries")
        if qrels is None:
            return 0
        name = "fused" if "fused" not in runs else "fused-rrf"
        runs[name] = fused
        names.append(name)
        paths.append(Path(args.out))
    assert qrels is not None and qrels_path is not None  # _check: --run needs --qrels or --beir
    scores = score_runs(runs, qrels, collection=collection,
                        by=[f.strip() for f in args.by.split(",") if f.strip()] if args.by else None)
    document = _document(scores, names, paths, qrels_path, collection)
    if args.json:
        print(json.dumps(document, indent=2, ensure_ascii=False), file=out)
    else:
        print(format_table(document["systems"]), file=out)
        log(f"{document['queries']} judged queries; p: paired t-test against {document['baseline']}; "
            f"violation@10: {document['violation@10']}")
    if args.run is not None and args.out is not None:
        _write_folder(args.out, document, scores["per_query"], log)
    return 0


def _write_fused(path: Path, fused: Mapping[str, Mapping[str, float]], tag: str, *, overwrite: bool) -> None:
    """The fused run file, by the one output rule: a FIFO or a device in place, a file atomically.

    A regular file is written under the output's lock (E742) to a temporary file renamed over
    it, so a kill leaves the old file or the new one; a temporary file an earlier killed run
    left is removed first. A FIFO or a character device (``/dev/null``) is never renamed over.
    """
    from fortekit.safe_write import (
        OutputTarget,
        check_output_target,
        output_lock,
        remove_stale_temporaries,
        write_error,
    )
    from fortekit.search.eval.runs import format_run, write_run

    if check_output_target(path, overwrite=overwrite, links=True) is OutputTarget.STREAM:
        text = format_run(fused, tag)  # every line checked (E750) before the stream is opened
        try:  # in place, through a link such as /dev/stdout too: nothing there to rename over
            with path.open("w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise write_error(path, exc) from exc
        return
    with output_lock(path):
        remove_stale_temporaries(path)
        write_run(path, fused, tag=tag, overwrite=overwrite)


def _write_folder(folder: Path, document: Mapping[str, Any], per_query: Mapping[str, Any],
                  log: Callable[[str], None]) -> None:
    """metrics.json, results.md and per_query/<run>.jsonl in ``folder`` (marked, locked, atomic writes)."""
    from fortekit.search.eval.beir_eval import _write
    from fortekit.search.eval.report import open_output_folder, write_json, write_text

    lock = open_output_folder(folder)
    try:
        for name, records in per_query.items():
            _write(folder / "per_query" / f"{name}.jsonl", records)
        write_json(folder / "metrics.json", document)
        write_text(folder / "results.md", _markdown(document))
    finally:
        lock.release()
    log(f"wrote {folder / 'metrics.json'}, {folder / 'results.md'} and per_query/ ({len(per_query)} runs)")
