"""``fortekit index add|remove|compact``: an index that grows without being rebuilt.

* ``fortekit index add --index DIR --captions FILE`` (or ``--audio DIR_OR_LIST``): embeds only
  the new items, with the backbone, options, parsing and captioner the index records, and
  appends them as a shard (with its own ANN part when the index has one);
* ``fortekit index remove --index DIR --ids FILE [--missing-ok]``: removes items by id (one id
  a line); their rows stay on disk until ``compact``;
* ``fortekit index compact --index DIR``: writes the live items back as one part.

Each writes a new folder and swaps it in under the index's lock: a kill leaves the last good
index (:mod:`fortekit.search.index.growing`).

Example:
    >>> import argparse
    >>> from fortekit.search.cli.index import add_index_commands
    >>> parser = argparse.ArgumentParser(prog="fortekit")
    >>> add_index_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["index", "remove", "--index", "idx", "--ids", "gone.txt"])
    >>> args.directory, args.ids, args.missing_ok
    ('idx', 'gone.txt', False)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from fortekit.search.cli.common import add_column_options, add_index_option, add_quiet_option

__all__ = ["add_grow_commands", "run_add", "run_compact", "run_remove"]

Handler = Callable[[argparse.Namespace, TextIO], int]


def run_add(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index add``: embed the new items the way the index was built, append them as a shard."""
    from fortekit.search.cli.index import _backbone_options, _build_index, _check_build_options, ann_line
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.format import read_meta
    from fortekit.search.index.growing import add_to_index
    from fortekit.search.index.writing import index_output_lock

    root = Path(args.directory)
    meta = read_meta(root)  # before any model loads: a missing or damaged index is said at once
    with index_output_lock(root):  # a second add fails at once, not after the encoding work
        build_args = argparse.Namespace(**vars(args))
        build_args.backbone, build_args.no_parse = meta.backbone, not meta.parsed
        build_args.captioner = meta.captioner if args.audio is not None else None
        build_args.captioner_option = list(meta.captioner_options.items()) if build_args.captioner else None
        build_args.faiss, build_args.ann, build_args.out = None, None, args.directory
        _check_build_options(build_args)
        new = _build_index(build_args, _backbone_options(args, dict(meta.backbone_options)))
        report = add_to_index(root, new)
        index = AudioIndex.load(root)
    print(f"added {report.added} items to {root} as shard {report.shard}; {report.total} items now", file=out)
    print(f"search: {ann_line(index)}", file=out)
    return 0


def _read_ids(path: str) -> list[str]:
    """The ids of an ids file: one a line, blank lines and surrounding spaces and tabs left out.

    Lines end at ``\\n`` alone (a ``\\r`` before it dropped), never at U+2028, U+0085 or a lone
    ``\\r`` in the middle of a line (:func:`fortekit.textio.read_text_lines`, the one line rule):
    an id the index holds is read back whole (the id rule, E640, keeps line breaks out of new ids).

    Raises:
        AudioIndexError: the file cannot be read, or a line is not UTF-8 (E615, with its number).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "gone.txt"
        >>> _ = path.write_bytes("a\\u2028b\\r\\n\\n  c \\nd\\x85e\\n".encode())
        >>> _read_ids(str(path))
        ['a\\u2028b', 'c', 'd\\x85e']
    """
    from fortekit.errors import AudioIndexError, Errors
    from fortekit.textio import BadLine, read_text_lines

    hint = "Give a UTF-8 text file with one item id a line."
    ids: list[str] = []
    try:
        for number, text in read_text_lines(path):
            if isinstance(text, BadLine):
                raise AudioIndexError(Errors.E615.format(
                    what="ids file", path=path, problem=f"line {number} is {text.reason}", hint=hint))
            item_id = text.strip(" \t")  # the id rule keeps spaces and tabs off an id's ends
            if item_id:
                ids.append(item_id)
    except OSError as exc:
        raise AudioIndexError(Errors.E615.format(
            what="ids file", path=path, problem=f"{type(exc).__name__}: {exc}", hint=hint)) from None
    return ids


def run_remove(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index remove``: tombstone the items of an ids file."""
    from fortekit.search.index.growing import remove_from_index

    report = remove_from_index(args.directory, _read_ids(args.ids), missing_ok=args.missing_ok)
    skipped = f"; {len(report.skipped)} id(s) not in the index skipped" if report.skipped else ""
    now = f"{report.total} items now"
    print(f"removed {report.removed} items from {args.directory}{skipped}; {now}", file=out)
    return 0


def run_compact(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index compact``: the live items written back as one part."""
    from fortekit.search.cli.index import ann_line
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.growing import compact_index

    before = AudioIndex.load(args.directory).layout.describe()
    index = AudioIndex.load(compact_index(args.directory))
    print(f"compacted {args.directory} ({before}) into 1 part of {len(index)} items", file=out)
    print(f"search: {ann_line(index)}", file=out)
    return 0


def add_grow_commands(actions: Any, guarded: Callable[[Handler], Handler],
                      add_backbone_arguments: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register ``index add``, ``index remove`` and ``index compact`` on ``fortekit index``'s actions.

    Args:
        actions: the ``index`` parser's sub-parsers.
        guarded: wraps a handler so that a fortekit error is its coded message and an exit code.
        add_backbone_arguments: adds ``--backbone-option`` and ``--device``.
    """
    add = actions.add_parser(
        "add", help="append items to an index (only the new items are embedded)",
        description="Embed new items with the backbone, options, parsing and captioner the index records, "
                    "and append them as a shard (with its own ANN part when the index has one).",
    )
    add_index_option(add, dest="directory", required=True)
    source = add.add_mutually_exclusive_group(required=True)
    source.add_argument("--captions", metavar="FILE", help="a .csv/.tsv, .jsonl or .txt file of captions")
    source.add_argument("--audio", metavar="DIR_OR_LIST",
                        help="a folder of audio files (searched recursively) or a text file listing paths")
    add_column_options(add, text_dest="caption_column", old_text=("--caption-column",),
                       id_help="the id column or key of --captions (default: file_name, else id)",
                       text_help="the caption column or key of --captions (default: caption_1, else caption)")
    add.add_argument("--merge-duplicates", action="store_true",
                     help="one item per repeated id: the mean of its captions' embeddings")
    add.add_argument("--batch-size", type=int, default=64, help="items per encoder call (default: 64)")
    add_backbone_arguments(add)
    add_quiet_option(add, help="no progress bars", bars=True)
    add.set_defaults(handler=guarded(run_add))

    remove = actions.add_parser("remove", help="remove items from an index by id",
                                description="Remove items by id; `fortekit index compact` drops their rows.")
    add_index_option(remove, dest="directory", required=True)
    remove.add_argument("--ids", required=True, metavar="FILE",
                        help="the ids to remove: a UTF-8 text file with one id a line")
    remove.add_argument("--missing-ok", action="store_true",
                        help="skip ids the index does not hold (default: refuse them all, remove nothing)")
    remove.set_defaults(handler=guarded(run_remove))

    compact = actions.add_parser("compact", help="write an index's parts back as one",
                                 description="Write the live items back as one part (and one ANN index).")
    add_index_option(compact, dest="directory", required=True)
    compact.set_defaults(handler=guarded(run_compact))
