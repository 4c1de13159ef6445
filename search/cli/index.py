"""``fortekit index``: build, inspect and query audio indexes.

* ``fortekit index build --captions FILE --out DIR``: a caption-indexed collection
  (``minilm`` by default); ``--audio DIR_OR_LIST --backbone hf-clap --backbone-option
  model=PATH``: audio files through a backbone's audio tower; ``--captioner tagger
  --captioner-option model=PATH`` captions them (and keeps a tagger's label evidence); ``--ray
  [ADDRESS]`` runs the audio build as a Ray Data job, on a local Ray or a cluster (docs/scale.md).
* ``fortekit index info DIR``: count, dimension, backbone, the share of items with predicates,
  the captioner and the label evidence.
* ``fortekit index query DIR "a dog barking" -k 5``: deprecated (W800), ``fortekit search --index
  DIR`` under its old name: ranks through the same Retriever and prints the ids, scores and captions.

Handlers follow the CLI convention ``handler(args, out) -> exit code``. An error prints its
coded message to stderr and returns 1 (2 for a bad option), without a traceback. Heavy
modules are imported inside the handlers, so ``fortekit --help`` stays instant.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="fortekit")
    >>> add_index_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["index", "query", "--index", "idx", "rain", "-k", "3"])
    >>> args.texts, args.k
    (['rain'], 3)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from fortekit.search.cli.common import (
    add_column_options,
    add_index_option,
    add_json_option,
    add_output_option,
    add_quiet_option,
    add_top_k_option,
)
from fortekit.search.cli.options import option_type
from fortekit.search.index.ann import ANN_CHOICES, ANN_MIN_ITEMS

if TYPE_CHECKING:
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.sources import CaptionTable

__all__ = ["add_index_commands", "run_build", "run_info", "run_query"]


Handler = Callable[[argparse.Namespace, TextIO], int]


def _guarded(handler: Handler) -> Handler:
    """Run a handler; a fortekit error becomes its message on stderr and an exit code of the table.

    Bad input (a file, column, option or index that cannot be used) is 2, as in every command;
    a query the parser refuses (E300-E302) is 1, as in ``fortekit search``; an output another run
    holds (E742) or that could not be written (E743) is 1: the same command can be run again.
    """

    def run(args: argparse.Namespace, out: TextIO) -> int:
        from fortekit.errors import (
            CaptionError,
            CaptionTypeError,
            FortekitError,
            OutputLockedError,
            OutputWriteError,
        )

        try:
            return handler(args, out)
        except FortekitError as exc:
            print(f"fortekit index {args.index_command}: {exc}", file=sys.stderr)
            failed = (OutputLockedError, OutputWriteError, CaptionError, CaptionTypeError)
            return 1 if isinstance(exc, failed) else 2

    run.__doc__ = handler.__doc__
    return run


def _backbone_options(args: argparse.Namespace, recorded: dict[str, Any] | None = None) -> dict[str, Any]:
    """Recorded options, overridden by --backbone-option, plus --device when given."""
    options = {**(recorded or {}), **dict(args.backbone_option or [])}
    if args.device is not None:
        options["device"] = args.device
    return options


def _recordable(options: dict[str, Any]) -> dict[str, Any]:
    """Options worth recording in index.json: no device; existing paths made absolute."""
    recorded = {}
    for key, value in options.items():
        if key == "device":
            continue
        if isinstance(value, str) and value and Path(value).expanduser().exists():
            value = str(Path(value).expanduser().resolve())
        recorded[key] = value
    return recorded


_CAPTIONS_ONLY = ("id_column", "caption_column", "merge_duplicates")


def _check_build_options(args: argparse.Namespace) -> None:
    """The options of ``index build`` that do not go together (E620), before any model loads."""
    from fortekit.errors import AudioIndexError, Errors

    def fail(problem: str, fix: str) -> AudioIndexError:
        return AudioIndexError(Errors.E620.format(problem=problem, fix=fix))

    if args.faiss is not None and args.ann is not None:
        raise fail(f"--faiss {args.faiss} and --ann {args.ann} both name the FAISS index to build",
                   "Give one: --ann auto|hnsw|ivfpq|none (approximate search), or --faiss "
                   "flat|ivf|hnsw|ivfpq.")
    if args.captioner is not None and args.captions is not None:
        raise fail("--captioner captions audio, but --captions gives text items",
                   "Index the audio files with --audio, or leave out --captioner: the captions file "
                   "already holds the captions.")
    if args.captioner_option and args.captioner is None:
        raise fail("--captioner-option is given without --captioner", "Name the captioner with --captioner "
                   "NAME, or leave out --captioner-option.")
    if args.captioner is not None and not args.captioner.strip():
        raise fail("--captioner is empty", "Name a captioner, e.g. --captioner tagger.")
    if args.audio is not None:
        for name in _CAPTIONS_ONLY:
            if getattr(args, name) not in (None, False):
                flag = "--" + name.replace("_", "-")
                raise fail(f"{flag} applies to --captions, not to --audio",
                           f"Leave out {flag}: audio items are named by their paths and captioned by "
                           "their sidecar .txt files or by --captioner.")


def _build_inputs(args: argparse.Namespace) -> dict[str, Any]:
    """What ``index build`` reads that the output folder may not be or hold (E740): the captions
    file, the audio list file or folder. (An index inside the audio folder harms nothing: the
    save replaces the index folder alone.)"""
    inputs: dict[str, Any] = {"captions file": args.captions}
    if args.audio is not None:
        audio, out = Path(args.audio).expanduser(), Path(args.out).expanduser()
        try:
            inside = audio.is_dir() and audio.resolve() in out.resolve().parents
        except (OSError, RuntimeError):
            inside = False
        inputs["audio" if audio.is_file() else "audio folder"] = None if inside else audio
    return inputs


def ann_line(index: AudioIndex) -> str:
    """How an index is searched: exact, or its ANN kind with the recall measured at build.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> ann_line(AudioIndex.from_captions(["a"], [None], "enc", embeddings=np.eye(1),
        ...                                   parse_captions=False))
        'exact (no ANN index)'
    """
    kind = index.faiss_kind
    if kind is None:
        return "exact (no ANN index)"
    recall = index.meta.ann_recall
    measured = "" if recall is None else f", recall@10 against exact {recall:.3f} (measured at build)"
    return f"FAISS {kind}{measured}; {index.layout.describe()}"


def run_build(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index build``: check and lock the output, read the collection, embed it, caption
    and parse, save (all or nothing)."""
    from fortekit.search.index.ann import ann_kind
    from fortekit.search.index.writing import check_index_output, index_output_lock

    _check_build_options(args)
    options = _backbone_options(args)
    out_dir = Path(args.out)
    # Before any encoding work: an output that is a file, a link, an input, a user's folder or an
    # index without --overwrite is refused at once; the lock makes a second build fail at once too.
    check_index_output(out_dir, overwrite=args.overwrite, inputs=_build_inputs(args))
    # --ray: Ray is imported and reached (or started) before the lock, so that a missing Ray or an
    # unreachable cluster (E820, E821) leaves nothing behind.
    with _ray_session(args) as cluster, index_output_lock(out_dir):
        check_index_output(out_dir, overwrite=args.overwrite)  # as it is now that we hold the lock
        index = _build_index(args, options, cluster)
        kind = args.faiss if args.faiss is not None else ann_kind(args.ann or "auto", len(index))
        if kind is not None:
            index.build_faiss(kind)
        index.save(out_dir, overwrite=args.overwrite)
    summary = f"indexed {len(index)} items ({index.dim}-d, backbone {index.backbone_name}) into {out_dir}"
    print(summary, file=out)
    print(_predicate_line(index), file=out)
    print(f"search: {ann_line(index)}", file=out)
    if index.meta.captioner is not None:
        print(f"captions: written by the captioner {index.meta.captioner}; {_evidence_line(index)}", file=out)
    return 0


def _ray_session(args: argparse.Namespace) -> Any:
    """``--ray``: the Ray session of search/distributed (E822 for a --ray-* option without it); else none."""
    from contextlib import nullcontext

    from fortekit.search.distributed.options import settings_from_args

    settings = settings_from_args(args, command="fortekit index build")
    if settings is None:
        return nullcontext()
    if args.captions is not None:
        from fortekit.errors import DistributedError, Errors

        raise DistributedError(Errors.E822.format(
            option="--ray", problem="runs the build of audio files (--audio) on Ray, and a captions file "
            "is embedded in one process", fix="Leave it out, or index audio files with --audio DIR --ray.",
        ))
    from fortekit.search.distributed.cluster import ray_session

    return ray_session(settings, command="fortekit index build")


def _build_index(args: argparse.Namespace, options: dict[str, Any], cluster: Any = None) -> AudioIndex:
    """The index that ``index build``'s options describe, in memory (over Ray when `cluster` is given)."""
    from fortekit.plugins import get_backbone
    from fortekit.search.index.audio_index import AudioIndex

    progress = not args.quiet
    from fortekit.search.index.format import check_item_ids

    if args.captions is not None:
        from fortekit.search.index.format import check_unique_ids
        from fortekit.search.index.sources import read_caption_file

        # Read and check the file before the (slow) model load, so that its errors come at once.
        table = read_caption_file(args.captions, id_column=args.id_column, caption_column=args.caption_column)
        check_item_ids(table.ids, source=f" of the captions file {args.captions}")
        if not args.merge_duplicates:
            check_unique_ids(table.ids)
        backbone = get_backbone(args.backbone, **options)
        return _build_from_captions(args, table, backbone, _recordable(options), progress)
    from fortekit.search.index.build import item_id_of
    from fortekit.search.index.sources import find_audio_items

    items = find_audio_items(args.audio)
    # The id rule before any model loads, on every path (a Ray build assembles its index itself).
    check_item_ids([item_id_of(item, position) for position, item in enumerate(items)],
                   source=f" of {args.audio}")
    captioner, captioner_options = None, dict(args.captioner_option or [])
    if cluster is not None:
        from fortekit.search.distributed.index_build import build_index_with_ray
        from fortekit.search.distributed.options import settings_from_args

        return build_index_with_ray(
            items, args.backbone, options, settings=settings_from_args(args), cluster=cluster,
            parse_captions=not args.no_parse, batch_size=args.batch_size,
            recorded_options=_recordable(options), captioner=args.captioner,
            captioner_options=captioner_options,
            recorded_captioner_options=_recordable(captioner_options), progress=progress,
        )
    if args.captioner is not None:
        from fortekit.plugins import get_captioner

        captioner = get_captioner(args.captioner, **captioner_options)
    backbone = get_backbone(args.backbone, **options)
    return AudioIndex.build(
        items, backbone, parse_captions=not args.no_parse, batch_size=args.batch_size,
        progress=progress, backbone_options=_recordable(options),
        captioner=captioner, captioner_options=_recordable(captioner_options),
    )


def _evidence_line(index: AudioIndex) -> str:
    labels = index.meta.evidence_labels
    if labels is None:
        return "label evidence: none"
    shown = ", ".join(labels[:4]) + (", ..." if len(labels) > 4 else "")
    return f"label evidence: {len(labels)} labels ({shown})"


def _build_from_captions(
    args: argparse.Namespace, table: CaptionTable, backbone: Backbone, recorded: dict[str, Any],
    progress: bool,
) -> AudioIndex:
    import numpy as np

    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.build import caption_items, embed_items
    from fortekit.search.index.sources import group_duplicates

    common = {"parse_captions": not args.no_parse, "batch_size": args.batch_size, "progress": progress,
              "backbone_options": recorded}
    if not args.merge_duplicates:
        return AudioIndex.from_captions(table.ids, table.captions, backbone, **common)
    # One item per id: the mean of its captions' embeddings; its first caption is stored and parsed.
    unique, groups = group_duplicates(table.ids)
    items = caption_items(table.ids, table.captions)
    rows = embed_items(backbone, items, table.ids, args.batch_size, progress)
    means = np.stack([rows[positions].mean(axis=0) for positions in groups])
    firsts = [table.captions[positions[0]] for positions in groups]
    return AudioIndex.from_captions(unique, firsts, backbone, embeddings=means, **common)


def _predicate_line(index: AudioIndex) -> str:
    with_predicates = sum(1 for symbols in index.predicate_sets if symbols)
    share = 100.0 * with_predicates / max(len(index), 1)
    if not index.meta.parsed:
        return "predicates: captions not parsed (--no-parse)"
    return (f"predicates: {with_predicates} of {len(index)} items ({share:.1f}%); "
            f"{index.unparsed_count} caption(s) missing or unparsable")


def _empty_info(args: argparse.Namespace, out: TextIO, error: Exception) -> int | None:
    """``index info`` of an index whose every item is removed: 0 items (and E639, why and the fix, on
    stderr), exit 0; None when the folder is not such an index (the caller raises `error`)."""
    from fortekit.errors import FortekitError
    from fortekit.search.index.growing import read_layout

    try:
        layout = read_layout(args.directory)
    except FortekitError:
        return None
    if layout.live:
        return None
    meta, manifest = layout.meta, layout.manifest
    facts: dict[str, Any] = {
        "directory": str(args.directory), "count": 0, "dim": meta.dim, "backbone": meta.backbone,
        "parts": len(manifest.parts), "removed": manifest.removed_count, "problem": str(error),
    }
    if args.json:
        print(json.dumps(facts, ensure_ascii=False), file=out)
    else:
        rows = [("index", facts["directory"]), ("items", "0 (every item is removed)"), ("dim", meta.dim),
                ("backbone", meta.backbone),
                ("parts", f"{facts['parts']}, {facts['removed']} removed items")]
        for label, value in rows:
            print(f"{label:<11} {value}", file=out)
    print(f"fortekit index info: {error}", file=sys.stderr)
    return 0


def run_info(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index info``: what an index holds (an index of no items: 0 items, and E639 on stderr)."""
    from fortekit.errors import AudioIndexError
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.stages import default_pipeline

    try:
        index = AudioIndex.load(args.directory)
    except AudioIndexError as exc:  # every item removed: say so, with its numbers, instead of failing
        status = _empty_info(args, out, exc)
        if status is None:
            raise
        return status
    pipeline = default_pipeline(index)
    with_captions = sum(1 for caption in index.captions if caption is not None)
    with_predicates = sum(1 for symbols in index.predicate_sets if symbols)
    facts: dict[str, Any] = {
        "directory": str(args.directory), "count": len(index), "dim": index.dim,
        "backbone": index.backbone_name, "backbone_options": dict(index.meta.backbone_options),
        "normalised": index.meta.normalised, "with_captions": with_captions,
        "parsed": index.meta.parsed, "with_predicates": with_predicates,
        "predicate_share": with_predicates / len(index), "unparsed": index.unparsed_count,
        "faiss": index.faiss_kind, "ann_recall": index.meta.ann_recall,
        "parts": index.layout.shards + 1, "removed": index.layout.removed, "captioner": index.meta.captioner,
        "captioner_options": dict(index.meta.captioner_options),
        "evidence_labels": None if index.evidence is None else list(index.evidence.labels),
        # A grown folder is written as version 2; loaded, its parts are one index of version 1's shape.
        "format_version": 2 if index.layout.shards or index.layout.removed else index.meta.format_version,
        "fortekit_version": index.meta.fortekit_version,
        "pipeline": pipeline.to_dict(),
    }
    if args.json:
        print(json.dumps(facts, ensure_ascii=False), file=out)
        return 0
    options = ", ".join(f"{key}={value}" for key, value in facts["backbone_options"].items())
    captioner_options = ", ".join(f"{key}={value}" for key, value in facts["captioner_options"].items())
    captioner = facts["captioner"] or "none (the captions came with the items)"
    rows = [
        ("index", facts["directory"]), ("items", facts["count"]), ("dim", facts["dim"]),
        ("backbone", facts["backbone"] + (f" ({options})" if options else "")),
        ("normalised", "yes" if facts["normalised"] else "no"),
        ("captions", f"{with_captions} ({100.0 * with_captions / len(index):.1f}%)"),
        ("predicates", _predicate_line(index).removeprefix("predicates: ")),
        ("captioner", captioner + (f" ({captioner_options})" if captioner_options else "")),
        ("evidence", _evidence_line(index).removeprefix("label evidence: ")),
        ("search", ann_line(index)),
        ("format", f"{facts['format_version']} (written by fortekit {facts['fortekit_version']})"),
    ]
    for label, value in rows:
        print(f"{label:<11} {value}", file=out)
    print("default pipeline (fortekit search without stage flags; docs/defaults.md):", file=out)
    for line in pipeline.lines():
        print(f"  {line}", file=out)
    return 0


def run_query(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index query``, deprecated (W800 on stderr): ``fortekit search``'s Retriever under its
    old name and output, so both give the same ranking and scores (formula scoring, Stage 3)."""
    from fortekit.errors import AudioIndexError, Errors
    from fortekit.search.cli.main import echo_text

    if isinstance(args.k, bool) or not isinstance(args.k, int) or args.k < 1:
        raise AudioIndexError(Errors.E613.format(name="-k", expected="a whole number >= 1", value=args.k))
    # `fortekit search` under its old name: the same Retriever (formula scoring, Stage 3's default).
    note = Errors.W800.format(old="fortekit index query DIR", new="fortekit search --index DIR")
    print(f"fortekit index query: {note}", file=sys.stderr)
    from fortekit.search.retriever import build_retriever

    # The index's recorded options (a recorded "device" is where it was built, not where it is
    # queried), under --backbone-option and --device: the Retriever merges them.
    options = _backbone_options(args)
    retriever = build_retriever(
        args.directory, backbone_options=options,
        formula_scoring=None if args.formula_scoring == "auto" else args.formula_scoring == "on",
        use_faiss=args.faiss, device=options.get("device", "auto"),
    )
    for text, result in zip(args.texts, retriever.search(args.texts, k=args.k), strict=True):
        hits = [
            {"rank": hit.rank, "id": hit.item_id, "score": round(hit.score, 6), "caption": hit.caption,
             "path": hit.path}
            for hit in result.hits
        ]
        if args.json:
            print(json.dumps({"query": text, "results": hits}, ensure_ascii=False), file=out)
            continue
        print(f"query: {echo_text(text)}", file=out)  # cut and escaped, as fortekit search
        for hit in hits:
            caption = f"  {hit['caption']}" if hit["caption"] is not None else ""
            print(f"  {hit['rank']:>3}. {hit['score']:.4f}  {hit['id']}{caption}", file=out)
    return 0


def _add_backbone_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backbone-option", action="append", metavar="KEY=VALUE", type=option_type("--backbone-option"),
        help="an option of the backbone plug-in, repeatable (e.g. model=/models/clap, batch_size=8); "
             "values: int, float, true/false, none, else text (docs/audio_index.md)",
    )
    parser.add_argument("--device", help="where the backbone runs: auto, cpu, cuda, cuda:N (default: auto)")


def add_index_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit index build|info|query`` on the ``fortekit`` sub-parsers.

    Args:
        commands: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser()
        >>> add_index_commands(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["index", "info", "--index", "clotho.index"]).directory
        'clotho.index'
    """
    index = commands.add_parser(
        "index", help="build, inspect and query audio indexes",
        description="Build an audio index (embeddings, ids, captions and caption predicate sets), "
                    "show what it holds, or search it with a text query.",
    )
    actions = index.add_subparsers(dest="index_command", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build", help="index a captions file or a folder/list of audio files",
        description="Index a caption-indexed collection (--captions, embedded with the minilm text "
                    "encoder by default) or audio files (--audio, through a backbone's audio tower).",
    )
    source = build.add_mutually_exclusive_group(required=True)
    source.add_argument("--captions", metavar="FILE", help="a .csv/.tsv, .jsonl or .txt file of captions")
    source.add_argument("--audio", metavar="DIR_OR_LIST",
                        help="a folder of audio files (searched recursively) or a text file listing paths")
    add_output_option(build, dest="out", required=True, metavar="DIR", old=("--out",), kind="folder",
                      help="the index directory to write")
    build.add_argument("--backbone", default="minilm", help="the backbone plug-in (default: minilm)")
    _add_backbone_arguments(build)
    add_column_options(build, text_dest="caption_column", old_text=("--caption-column",),
                       id_help="the id column or key of --captions (default: file_name, else id)",
                       text_help="the caption column or key of --captions (default: caption_1, else caption)")
    build.add_argument("--merge-duplicates", action="store_true",
                       help="one item per repeated id (AudioCaps): the mean of its captions' embeddings")
    build.add_argument("--captioner", metavar="NAME",
                       help="with --audio: a captioner plug-in (e.g. tagger) whose captions of the audio "
                       "are stored (instead of sidecar .txt files); a tagger's label evidence is kept too")
    build.add_argument("--captioner-option", action="append", metavar="KEY=VALUE",
                       type=option_type("--captioner-option"),
                       help="an option of --captioner, repeatable (e.g. model=runs/clap, device=cpu)")
    build.add_argument("--no-parse", action="store_true", help="do not parse captions into predicate sets")
    build.add_argument("--batch-size", type=int, default=64, help="items per encoder call (default: 64)")
    build.add_argument("--ann", choices=ANN_CHOICES, default=None,
                       help="approximate search for large collections: hnsw (graph, close to exact), ivfpq "
                       "(compressed, about 100 bytes an item), none; default auto: hnsw from "
                       f"{ANN_MIN_ITEMS:,} items on (docs/scale.md)")
    build.add_argument("--faiss", choices=("flat", "ivf", "hnsw", "ivfpq"),
                       help="a FAISS index of any kind instead: flat (exact), ivf, hnsw or ivfpq")
    build.add_argument("--overwrite", action="store_true",
                       help="replace an index that fortekit wrote in --out (never a folder of other files)")
    add_quiet_option(build, help="no progress bars", bars=True)
    from fortekit.search.distributed.options import add_ray_options

    add_ray_options(build, what="encoders and captioners")
    build.set_defaults(handler=_guarded(run_build))

    info = actions.add_parser("info", help="show what an index holds")
    info.add_argument("old_index", nargs="?", metavar="DIR", help=argparse.SUPPRESS)  # before --index
    add_index_option(info, dest="directory", required=True, positional="old_index")
    add_json_option(info, help="one JSON object")
    info.set_defaults(handler=_guarded(run_info))

    from fortekit.search.cli.index_grow import add_grow_commands

    add_grow_commands(actions, _guarded, _add_backbone_arguments)

    query = actions.add_parser("query", help="search an index with text queries")
    query.add_argument("texts", nargs="+", metavar="TEXT", help="the queries")
    add_index_option(query, dest="directory", required=True, positional="texts")
    add_top_k_option(query, dest="k", default=10, help="results per query (default: 10)")
    query.add_argument("--faiss", action="store_true", help="search the saved FAISS index instead of exactly")
    add_json_option(query, help="one JSON object per query")
    query.add_argument(
        "--formula-scoring", choices=["auto", "on", "off"], default="auto",
        help="re-score the first 1,000 items by the query's formula "
        "(default auto: the index kind's default; see docs/formula_scoring.md)",
    )
    _add_backbone_arguments(query)
    query.set_defaults(handler=_guarded(run_query))
