"""``fortekit index add|remove|compact``: an index that grows without being rebuilt.

* ``fortekit index add --index DIR --captions FILE`` (or ``--audio DIR_OR_LIST``): embeds only
  the new items, with the backbone, options, parsing and captioner the index records, and
  appends them as a shard (with its own ANN part when the index has one, and its own part over
  projected rows, projected with the head the index records or ``--projection FILE``);
* ``fortekit index remove --index DIR --ids FILE [--missing-ok]``: removes items by id (one id
  a line); their rows stay on disk until ``compact``;
* ``fortekit index compact --index DIR``: writes the live items back as one part.

Each writes a new folder and swaps it in under the index's lock: a kill leaves the last good
index (:mod:`fortekit.search.index.growing`). The handlers only read the options and forward to
:func:`fortekit.search.index.from_files.add_files_to_index` and the functions of
:mod:`fortekit.search.index.growing`.

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
from pathlib import Path
from typing import Any, TextIO

from fortekit.search.cli.common import add_index_option, add_quiet_option, add_threads_option
from fortekit.search.cli.index import (
    add_backbone_arguments,
    add_source_arguments,
    guarded,
    index_source,
)

__all__ = ["add_grow_commands", "run_add", "run_compact", "run_remove"]


def run_add(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index add``: forwards to ``add_files_to_index``."""
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.describe import ann_line
    from fortekit.search.index.format import read_meta
    from fortekit.search.index.from_files import add_files_to_index
    from fortekit.search.projection.ann import recorded_head

    root = Path(args.directory)
    meta = read_meta(root)
    head = recorded_head(meta.projected_ann, meta.backbone, args.projection) \
        if meta.projected_ann is not None else None
    report = add_files_to_index(root, index_source(args), options=dict(args.backbone_option or []),
                                device=args.device, batch_size=args.batch_size, progress=not args.quiet,
                                head=head)
    index = AudioIndex.load(root)
    print(f"added {report.added} items to {root} as shard {report.shard}; {report.total} items now", file=out)
    print(f"search: {ann_line(index)}", file=out)
    return 0


def run_remove(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index remove``: forwards to ``remove_from_index``."""
    from fortekit.search.index.from_files import read_ids_file
    from fortekit.search.index.growing import remove_from_index

    report = remove_from_index(args.directory, read_ids_file(args.ids), missing_ok=args.missing_ok)
    skipped = f"; {len(report.skipped)} id(s) not in the index skipped" if report.skipped else ""
    now = f"{report.total} items now"
    print(f"removed {report.removed} items from {args.directory}{skipped}; {now}", file=out)
    return 0


def run_compact(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``index compact``: forwards to ``compact_index``."""
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.describe import ann_line
    from fortekit.search.index.growing import compact_index

    before = AudioIndex.load(args.directory).layout.describe()
    index = AudioIndex.load(compact_index(args.directory))
    print(f"compacted {args.directory} ({before}) into 1 part of {len(index)} items", file=out)
    print(f"search: {ann_line(index)}", file=out)
    return 0


def add_grow_commands(actions: Any) -> None:
    """Register ``index add``, ``index remove`` and ``index compact`` on ``fortekit index``'s actions.

    Args:
        actions: the ``index`` parser's sub-parsers.
    """
    add = actions.add_parser(
        "add", help="append items to an index (only the new items are embedded)",
        description="Embed new items with the backbone, options, parsing and captioner the index records, "
                    "and append them as a shard (with its own ANN part when the index has one).",
    )
    add_index_option(add, dest="directory", required=True)
    add_source_arguments(add, "one item per repeated id: the mean of its captions' embeddings")
    add.add_argument("--batch-size", type=int, default=64, help="items per encoder call (default: 64)")
    add.add_argument("--projection", metavar="FILE",
                     help="for an index with an ANN part over projected rows: the Stage 2 head that made "
                     "them (default: the one index.json records, where it still is)")
    add_backbone_arguments(add)
    add_threads_option(add)
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
