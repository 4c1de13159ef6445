"""``fortekit index``: build and inspect audio indexes (``add``, ``remove``, ``compact``: :mod:`.index_grow`).

* ``fortekit index build --captions FILE -o DIR``: a caption-indexed collection
  (``minilm`` by default); ``--audio DIR_OR_LIST --backbone hf-clap --backbone-option
  model=PATH``: audio files through a backbone's audio tower; ``--captioner tagger
  --captioner-option model=PATH`` captions them (and keeps a tagger's label evidence); ``--ray
  [ADDRESS]`` runs the audio build as a Ray Data job, on a local Ray or a cluster (docs/scale.md).
* ``fortekit index info --index DIR``: count, dimension, backbone, the share of items with
  predicates, the captioner, the label evidence and the default pipeline.
* ``fortekit index build-ann --index DIR [--projection auto|none|FILE]``: (re)builds the ANN part
  over the rows a Stage 2 head projects, so that a search with that head keeps it on with ANN
  candidates (``index build`` builds it for the head the index uses by default).

Searching an index is ``fortekit search --index DIR``. The handlers only read the options and
forward to :func:`fortekit.search.index.from_files.build_index_folder` (on Ray:
:func:`fortekit.search.distributed.index_build.build_index_folder_with_ray`) and
:mod:`fortekit.search.index.describe`. Handlers follow the CLI convention ``handler(args, out) ->
exit code``. An error prints its coded message to stderr and returns 1 (2 for a bad option),
without a traceback. Heavy modules are imported inside the handlers, so ``fortekit --help`` stays
instant.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="fortekit")
    >>> add_index_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["index", "build", "--captions", "c.csv", "-o", "idx", "--ann", "none"])
    >>> args.captions, args.out, args.ann
    ('c.csv', 'idx', 'none')
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from fortekit.search.cli.common import (
    add_column_options,
    add_index_option,
    add_json_option,
    add_output_option,
    add_quiet_option,
    add_threads_option,
)
from fortekit.search.cli.options import option_type
from fortekit.search.index.ann import ANN_CHOICES, ANN_MIN_ITEMS

if TYPE_CHECKING:
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.from_files import IndexSource
    from fortekit.search.index.projected import ProjectedHead

__all__ = ["add_index_commands", "backbone_options", "index_source", "projection_heads", "run_build",
           "run_build_ann", "run_info"]


Handler = Callable[[argparse.Namespace, TextIO], int]


def guarded(handler: Handler) -> Handler:
    """Run a handler; a fortekit error becomes its message on stderr and an exit code of the table.

    Bad input (a file, column, option or index that cannot be used) is 2, as in every command;
    an output another run holds (E742) or that could not be written (E743) is 1: the same command
    can be run again.
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


def backbone_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backbone options that ``--backbone-option`` and ``--device`` give (``index build``, ``add``).

    Example:
        >>> args = argparse.Namespace(backbone_option=[("batch_size", 8)], device="cpu")
        >>> backbone_options(args)
        {'batch_size': 8, 'device': 'cpu'}
    """
    from fortekit.search.index.from_files import backbone_options as merged

    return merged(dict(args.backbone_option or []), args.device)


def index_source(args: argparse.Namespace) -> IndexSource:
    """The :class:`~fortekit.search.index.from_files.IndexSource` of ``--captions``/``--audio`` and
    the column options.

    Example:
        >>> args = argparse.Namespace(captions="c.csv", audio=None, id_column=None, text_column="text",
        ...                           merge_duplicates=False)
        >>> index_source(args).text_column
        'text'
    """
    from fortekit.search.index.from_files import IndexSource

    return IndexSource(captions=args.captions, audio=args.audio, id_column=args.id_column,
                       text_column=args.text_column, merge_duplicates=args.merge_duplicates)


def projection_heads(value: str) -> Callable[[AudioIndex], ProjectedHead | None] | None:
    """Given an index, the Stage 2 head ``--projection auto|none|FILE`` names for it (``index build``).

    ``auto``: the head the index uses by default (:func:`fortekit.search.pipeline.assemble.default_head`);
    ``none``: none; a file or folder: that head (checked now, before any encoding work).

    Example:
        >>> projection_heads("none") is None, projection_heads("auto").__name__
        (True, 'default_head')
    """
    if value in ("none", "off"):
        return None
    if value == "auto":
        from fortekit.search.pipeline.assemble import default_head

        return default_head
    from fortekit.search.projection.ann import head_identity, index_head

    head_identity(value)  # a missing or damaged head is said before the encoding work (E462, E465)
    return lambda index: index_head(value, index.backbone_name)


def run_build(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index build``: forwards to ``build_index_folder`` (``--ray``: its Ray twin)."""
    from fortekit.search.cli.ray_options import settings_from_args
    from fortekit.search.index.describe import build_summary

    settings = settings_from_args(args, command="fortekit index build")
    given: dict[str, Any] = {
        "backbone": args.backbone, "options": backbone_options(args), "captioner": args.captioner,
        "captioner_options": dict(args.captioner_option or []), "parse": not args.no_parse,
        "batch_size": args.batch_size, "ann": args.ann, "faiss": args.faiss, "overwrite": args.overwrite,
        "progress": not args.quiet, "projection": projection_heads(args.projection),
    }
    if settings is None:
        from fortekit.search.index.from_files import build_index_folder

        index = build_index_folder(args.out, index_source(args), **given)
    else:
        from fortekit.search.distributed.index_build import build_index_folder_with_ray

        index = build_index_folder_with_ray(args.out, index_source(args), settings, **given)
    for line in build_summary(index, args.out):
        print(line, file=out)
    return 0


def run_info(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index info``: what an index holds (an index of no items: 0 items, and E639 on stderr)."""
    from fortekit.errors import AudioIndexError
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.describe import empty_index_facts, empty_info_rows, index_facts, info_rows
    from fortekit.search.pipeline import PipelineSpec
    from fortekit.search.pipeline.assemble import default_pipeline, first_pass_reason

    try:
        index = AudioIndex.load(args.directory)
    except AudioIndexError as exc:  # every item removed: say so, with its numbers, instead of failing
        empty = empty_index_facts(args.directory, str(exc))
        if empty is None:
            raise
        _print_info(empty, empty_info_rows(empty), args.json, out)
        print(f"fortekit index info: {exc}", file=sys.stderr)
        return 0
    pipeline = default_pipeline(index)
    first_pass = first_pass_reason(PipelineSpec(), index)
    facts = {**index_facts(index, args.directory), "pipeline": pipeline.to_dict(), "first_pass": first_pass}
    _print_info(facts, info_rows(index, facts), args.json, out)
    if not args.json:
        print("default pipeline (fortekit search without stage flags; docs/defaults.md):", file=out)
        for line in pipeline.lines():
            print(f"  {line}", file=out)
        print(f"  first pass   {first_pass}", file=out)
    return 0


def run_build_ann(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index build-ann``: forwards to ``set_projected_ann`` with the head of ``--projection``."""
    from fortekit.search.index.describe import projected_line
    from fortekit.search.index.growing import set_projected_ann

    index = set_projected_ann(args.directory, _build_ann_head(args.projection))
    if index.projected_ann is None:
        print(f"dropped the ANN part over projected rows of {args.directory}", file=out)
    else:
        print(f"built the ANN part over projected rows of {args.directory} ({len(index)} items): "
              f"{projected_line(index)}", file=out)
    return 0


def _build_ann_head(value: str) -> Callable[[AudioIndex], ProjectedHead | None]:
    """``index build-ann --projection``: the head, given the loaded index (auto: its default or shipped)."""
    if value in ("none", "off"):
        return lambda index: None
    if value != "auto":
        from fortekit.search.projection.ann import head_identity, index_head

        head_identity(value)  # a missing or damaged head is said before the index is read (E462, E465)
        return lambda index: index_head(value, index.backbone_name)

    def chosen(index: AudioIndex) -> ProjectedHead:
        from fortekit.errors import Errors, ProjectionError
        from fortekit.search.pipeline.assemble import default_head
        from fortekit.search.projection.ann import index_head
        from fortekit.search.projection.shipped import SHIPPED_HEADS, shipped_head

        head = default_head(index)  # the head a search uses by default; else the one shipped, if any
        shipped = shipped_head(index.backbone_name, index.dim)
        if head is None and shipped is None:
            raise ProjectionError(Errors.E472.format(backbone=index.backbone_name,
                                                     options=", ".join(sorted(SHIPPED_HEADS))))
        return head if head is not None else index_head(shipped, index.backbone_name)  # type: ignore[arg-type]

    return chosen


def _print_info(facts: dict[str, Any], rows: list[tuple[str, Any]], as_json: bool, out: TextIO) -> None:
    if as_json:
        print(json.dumps(facts, ensure_ascii=False), file=out)
        return
    for label, value in rows:
        print(f"{label:<11} {value}", file=out)


def add_backbone_arguments(parser: argparse.ArgumentParser) -> None:
    """``--backbone-option KEY=VALUE`` (repeatable) and ``--device``."""
    parser.add_argument(
        "--backbone-option", action="append", metavar="KEY=VALUE", type=option_type("--backbone-option"),
        help="an option of the backbone plug-in, repeatable (e.g. model=/models/clap, batch_size=8); "
             "values: int, float, true/false, none, else text (docs/audio_index.md)",
    )
    parser.add_argument("--device", help="where the backbone runs: auto, cpu, cuda, cuda:N (default: auto)")


def add_source_arguments(parser: argparse.ArgumentParser, merge_help: str) -> None:
    """``--captions FILE`` or ``--audio DIR_OR_LIST``, the column options and ``--merge-duplicates``."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--captions", metavar="FILE", help="a .csv/.tsv, .jsonl or .txt file of captions "
                        "(a BEIR corpus.jsonl, a Clotho or AudioCaps CSV: one item per clip, the mean of its "
                        "captions)")
    source.add_argument("--audio", metavar="DIR_OR_LIST",
                        help="a folder of audio files (searched recursively) or a text file listing paths")
    add_column_options(parser, id_help="the id column or key of --captions (default: a caption CSV's clip "
                       "id, else _id, id or file_name)", text_help="the caption column or key of --captions "
                       "(default: a caption CSV's captions, else text or caption, with BEIR's captions list)")
    parser.add_argument("--merge-duplicates", action="store_true", help=merge_help)


def add_index_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit index build|info|add|remove|compact`` on the ``fortekit`` sub-parsers.

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
        "index", help="build, inspect and grow audio indexes",
        description="Build an audio index (embeddings, ids, captions and caption predicate sets), "
                    "show what it holds, add or remove items. Search it with `fortekit search --index DIR`.",
    )
    actions = index.add_subparsers(dest="index_command", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build", help="index a captions file or a folder/list of audio files",
        description="Index a caption-indexed collection (--captions, embedded with the minilm text "
                    "encoder by default) or audio files (--audio, through a backbone's audio tower).",
    )
    add_source_arguments(build, "one item per repeated id (AudioCaps): the mean of its captions' embeddings")
    add_output_option(build, dest="out", required=True, metavar="DIR", kind="folder",
                      help="the index directory to write")
    build.add_argument("--backbone", default="minilm", help="the backbone plug-in (default: minilm)")
    add_backbone_arguments(build)
    add_threads_option(build)
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
    build.add_argument("--projection", metavar="auto|none|FILE", default="auto",
                       help="with an ANN part, the Stage 2 head whose projected rows get one too, so that a "
                       "search keeps the head on with ANN candidates: auto (the head the index uses by "
                       "default, the one shipped for the backbone), none, or a trained head (default: auto)")
    build.add_argument("--overwrite", action="store_true",
                       help="replace an index that fortekit wrote in -o (never a folder of other files)")
    add_quiet_option(build, help="no progress bars", bars=True)
    from fortekit.search.cli.ray_options import add_ray_options

    add_ray_options(build, what="encoders and captioners")
    build.set_defaults(handler=guarded(run_build))

    info = actions.add_parser("info", help="show what an index holds")
    add_index_option(info, dest="directory", required=True)
    add_json_option(info, help="one JSON object")
    info.set_defaults(handler=guarded(run_info))

    build_ann = actions.add_parser(
        "build-ann", help="(re)build the ANN part over the rows a Stage 2 head projects",
        description="Project the items once with a Stage 2 head, store the rows and build an ANN part over "
                    "them of the kind and settings of the index's own, so that a search with that head keeps "
                    "it on with ANN candidates (docs/scale.md). An index in parts is written back as one.",
    )
    add_index_option(build_ann, dest="directory", required=True)
    build_ann.add_argument("--projection", metavar="auto|none|FILE", default="auto",
                           help="the head: auto (the one shipped for the index's backbone), none (drop the "
                           "part), or a trained head (.safetensors or directory) (default: auto)")
    add_threads_option(build_ann)
    build_ann.set_defaults(handler=guarded(run_build_ann))

    from fortekit.search.cli.index_grow import add_grow_commands

    add_grow_commands(actions)
