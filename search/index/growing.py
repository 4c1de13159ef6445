"""An index that grows: add items as a new shard, remove items, compact the parts into one.

Each operation builds a whole new folder beside the index and swaps it in, under the index's
lock, like every save (:func:`~fortekit.search.index.writing.swap_in_folder`): the files that
stay the same are hard links to the old ones (nothing is copied or re-embedded; a filesystem
without hard links gets copies), and only the new shard, ``shards.json`` and ``index.json`` are
written. A crash or a kill at any moment leaves the last good index in place, loadable; two
runs at once never mix (the second gets E742). The layout is described in
:mod:`fortekit.search.index.shards`.

* :func:`add_to_index`: the new items (an :class:`~fortekit.search.index.audio_index.AudioIndex`
  built with the index's backbone) become a shard; when the index has an ANN part, the shard
  gets its own of the same kind and settings (an IVF kind reuses the trained cells), and with an
  ANN part over projected rows (:mod:`fortekit.search.index.projected`) the new items are
  projected with the head it records and get theirs too.
* :func:`remove_from_index`: tombstones in ``shards.json``; the rows stay on disk until
  :func:`compact_index` writes the live items back as one part (and one ANN index).

A new shard is named after every shard folder there is, listed in ``shards.json`` or not, so an
add never collides with a folder left in ``shards/``. Each shard folder holds the marker file
``.fortekit-output``: one that ``shards.json`` no longer lists (``shards.json`` restored or edited
by hand) is fortekit's and is left out of the next write; any other folder or file there that
the index does not list is never deleted: the write stops with E641, naming it. Every item id
follows one rule (:func:`~fortekit.search.index.format.check_item_ids`), checked when items are
built and added, so that every id can be written on one line of the ids file that
:func:`remove_from_index` takes.

Example:
    >>> import tempfile
    >>> import numpy as np
    >>> from fortekit.search.index import AudioIndex
    >>> folder = Path(tempfile.mkdtemp()) / "clips.index"
    >>> _ = AudioIndex.from_captions(["a", "b"], [None, None], "enc", embeddings=np.eye(3)[:2],
    ...                              parse_captions=False).save(folder)
    >>> new = AudioIndex.from_captions(["c"], [None], "enc", embeddings=np.eye(3)[2:], parse_captions=False)
    >>> add_to_index(folder, new).total
    3
    >>> remove_from_index(folder, ["a"]).total
    2
    >>> AudioIndex.load(folder).ids, AudioIndex.load(folder).layout.describe()
    (['b', 'c'], '2 parts (1 added by `fortekit index add`), 1 removed items')
    >>> AudioIndex.load(compact_index(folder)).layout.describe()
    '1 part'
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from fortekit import __version__
from fortekit.errors import AudioIndexError, Errors, OutputWriteError
from fortekit.safe_write import MARKER_FILE, adopt_directory, write_error
from fortekit.search.index.evidence_file import EVIDENCE_FILE, evidence_writer
from fortekit.search.index.faiss_search import FaissSearcher
from fortekit.search.index.format import (
    FAISS_FILE,
    META_FILE,
    SINGLE_PART_VERSION,
    IndexMeta,
    check_item_ids,
    read_items,
    read_meta,
)
from fortekit.search.index.projected import (
    PROJECTED_FAISS_FILE,
    PROJECTED_ROWS_FILE,
    ProjectedHead,
    project_rows,
)
from fortekit.search.index.shards import (
    BASE_PART,
    MANIFEST_FILE,
    SHARDED_FORMAT_VERSION,
    SHARDS_DIR,
    ShardManifest,
    read_manifest,
    write_manifest,
)
from fortekit.search.index.writing import (
    Writer,
    _absolute,
    array_writer,
    check_index_output,
    check_shards_folder,
    index_file_writers,
    index_output_lock,
    meta_writer,
    swap_in_folder,
    write_part_files,
)

if TYPE_CHECKING:
    from fortekit.search.index.audio_index import AudioIndex

__all__ = ["AddReport", "FolderLayout", "RemoveReport", "add_to_index", "check_projected_head",
           "compact_index", "read_layout", "refuse_known_ids", "remove_from_index", "set_projected_ann"]

#: The fields of ``index.json`` in which added items must agree with the index.
_MUST_AGREE = ("backbone", "backbone_options", "dim", "normalised", "parsed")


@dataclass(frozen=True, slots=True)
class AddReport:
    """What :func:`add_to_index` did: items added, the shard written, live items now."""

    added: int
    shard: str
    total: int


@dataclass(frozen=True, slots=True)
class RemoveReport:
    """What :func:`remove_from_index` did: items removed, ids skipped (not there), live items now."""

    removed: int
    skipped: tuple[str, ...]
    total: int


@dataclass(frozen=True, slots=True)
class FolderLayout:
    """An index folder's metadata, shards and live ids, read without its embeddings.

    Attributes:
        meta: the first part's ``index.json``.
        manifest: ``shards.json`` (one part and no removed rows for a folder without one).
        live: each live item's id -> (its part, its row in the part).
    """

    meta: IndexMeta
    manifest: ShardManifest
    live: dict[str, tuple[str, int]]


def read_layout(directory: str | os.PathLike[str]) -> FolderLayout:
    """Read an index folder's parts and live ids without its embeddings (``index info`` of an
    index that cannot be loaded, the writes of this module).

    Args:
        directory: the index folder.

    Returns:
        Its :class:`FolderLayout`.

    Raises:
        AudioIndexError: no index there (E601), a damaged ``index.json``, ``shards.json`` or
            ``items.jsonl`` (E600-E611), a missing shard (E632).

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> from fortekit.search.index import AudioIndex
        >>> folder = Path(tempfile.mkdtemp()) / "clips.index"
        >>> _ = AudioIndex.from_captions(["a", "b"], [None, None], "enc", embeddings=np.eye(2),
        ...                              parse_captions=False).save(folder)
        >>> sorted(read_layout(folder).live)
        ['a', 'b']
    """
    root = Path(directory)
    meta = read_meta(root)
    if meta.format_version >= SHARDED_FORMAT_VERSION:
        manifest = read_manifest(root)
    else:
        manifest = ShardManifest(meta.index_id or uuid.uuid4().hex)
    live: dict[str, tuple[str, int]] = {}
    for name in manifest.parts:
        folder = root if name == BASE_PART else root / SHARDS_DIR / name
        if name != BASE_PART and not (folder / META_FILE).is_file():
            problem = f"{folder} is missing"
            raise AudioIndexError(Errors.E632.format(directory=root, shard=name, problem=problem))
        part_meta = meta if name == BASE_PART else read_meta(folder)
        gone = set(manifest.removed.get(name, ()))
        for row, item_id in enumerate(read_items(folder, part_meta).ids):
            if row not in gone:
                live[item_id] = (name, row)
    return FolderLayout(meta, manifest, live)


def _link_file(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # no hard links here (a FAT disk, some network filesystems): copy
        shutil.copy2(source, target)


def _link_tree(source: Path, target: Path, *, skip: Iterable[str] = (), shards: Iterable[str] = ()) -> None:
    """Hard-link the index folder `source` into `target` (copies where links fail): its files but
    `skip` and the marker (`target` has its own), and the shard folders `shards`, whole.

    A shard folder not in `shards` is left out: :func:`check_shards_folder` found it to be a shard
    of ours that ``shards.json`` no longer lists (anything else there stopped the write).
    """
    left_out = {MARKER_FILE, *skip}
    for entry in sorted(source.iterdir()):
        if entry.name in left_out or entry.is_symlink() or entry.is_dir():
            continue
        _link_file(entry, target / entry.name)
    kept = list(shards)
    if kept:
        (target / SHARDS_DIR).mkdir()
    for name in kept:
        folder = source / SHARDS_DIR / name
        (target / SHARDS_DIR / name).mkdir()
        for entry in sorted(folder.iterdir()):  # a part's files and the marker, checked
            _link_file(entry, target / SHARDS_DIR / name / entry.name)


def _open_for_change(root: Path) -> FolderLayout:
    """Check the folder under the lock (an index of ours, nothing foreign among its shards) and read
    its layout."""
    state = check_index_output(root, overwrite=True)
    if state == "legacy":  # an older fortekit's index: ours, so mark it (replace_directory asks)
        adopt_directory(root)
    layout = read_layout(root)
    check_shards_folder(root, layout.manifest.shards)  # E641 before anything is written
    return layout


def _check_fits(root: Path, meta: IndexMeta, new: AudioIndex) -> None:
    for what in _MUST_AGREE:
        mine, theirs = getattr(meta, what), getattr(new.meta, what)
        if mine != theirs:
            raise AudioIndexError(Errors.E630.format(
                directory=root, problem=f"their {what} is {theirs!r}, the index's {mine!r}"))
    labels, their_labels = meta.evidence_labels, new.meta.evidence_labels
    if labels is not None and their_labels != labels:
        problem = ("the new items have none" if their_labels is None
                   else f"the new items have evidence for other labels ({len(their_labels)})")
        raise AudioIndexError(Errors.E635.format(directory=root, labels=len(labels), problem=problem))
    if labels is None and their_labels is not None:
        raise AudioIndexError(Errors.E630.format(
            directory=root, problem="the new items carry label evidence, the index has none"))


def _next_shard_name(root: Path, manifest: ShardManifest) -> str:
    """The name after every shard folder there is, listed or not: a folder left in ``shards/`` (by
    a hand edit of ``shards.json``, or a foreign one) never collides with the new shard."""
    used = [int(name) for name in manifest.shards]
    try:
        used += [int(entry.name) for entry in (root / SHARDS_DIR).iterdir() if entry.name.isdigit()]
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise write_error(root / SHARDS_DIR, exc) from exc
    return f"{max(used, default=0) + 1:04d}"


def refuse_known_ids(
    directory: str | os.PathLike[str], live: Mapping[str, object], ids: Iterable[str],
    source: str = "new items",
) -> None:
    """E644 when any of ``ids`` is a live item of the index: ``index add`` appends new items only.

    Args:
        directory: the index folder (for the message).
        live: the index's live ids (:attr:`FolderLayout.live`).
        ids: the ids of the items to add.
        source: where they come from, for the message ("captions file new.csv", "audio clips/").

    Raises:
        AudioIndexError: E644, naming a few of the ids and the command that replaces them.

    Example:
        >>> refuse_known_ids("clips.index", {"a": ("base", 0)}, ["b", "c"])
        >>> refuse_known_ids("clips.index", {"a": ("base", 0)}, ["b", "a"])
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E644] 1 of the new item id(s) are in the index clips.index ...
    """
    known = list(dict.fromkeys(item_id for item_id in ids if item_id in live))
    if known:
        examples = ", ".join(repr(item_id) for item_id in known[:5]) + (", ..." if len(known) > 5 else "")
        raise AudioIndexError(Errors.E644.format(count=len(known), directory=os.fspath(directory),
                                                 examples=examples, source=source))


def check_projected_head(
    directory: str | os.PathLike[str], meta: IndexMeta, head: ProjectedHead | None,
) -> None:
    """E645 unless `head` is the one whose projected rows the index holds (nothing to check without a part).

    Example:
        >>> from fortekit.search.index.format import IndexMeta
        >>> check_projected_head("clips.index", IndexMeta(backbone="enc", dim=2, count=1), None)
    """
    part = meta.projected_ann
    if part is None:
        return
    if head is None:
        problem = "no head was given to project the new items with (nor found where the index says it was)"
    elif head.identity != part.head:
        problem = f"the head given, {head.source} ({head.identity[:12]}...), is another one"
    else:
        return
    raise AudioIndexError(Errors.E645.format(
        where=f"at {os.fspath(directory)}", action="extended with the new items",
        problem=f"it holds the rows projected by {part.describe()}, and {problem}",
        fix=f"Give that head (`fortekit index add ... --projection PATH`; Python: add_to_index(..., "
            f"head=fortekit.search.projection.ann.index_head(PATH, backbone))), or drop the part first "
            f"(`fortekit index build-ann --index {os.fspath(directory)} --projection none`). Nothing was "
            f"embedded or written."))


def add_to_index(directory: str | os.PathLike[str], new: AudioIndex, *,
                 head: ProjectedHead | None = None) -> AddReport:
    """Append `new`'s items to the index in `directory` as a new shard, all or nothing.

    Args:
        directory: an index folder that fortekit wrote.
        new: the items to add, built with the index's backbone and options (and, for an index
            with label evidence, the same captioner's evidence).
        head: for an index with an ANN part over projected rows, the head that projected them
            (:func:`fortekit.search.projection.ann.recorded_head` finds it): the new items are
            projected with it, and the shard gets its own part of the same kind and settings.

    Returns:
        An :class:`AddReport`.

    Raises:
        AudioIndexError: no index there (E601), items that do not fit it (E630, E635), an index
            with an ANN part over projected rows and no `head`, or another one (E645), an id
            the index holds already (E644), one repeated among the new items (E605) or one that
            breaks the id rule (E640), a damaged
            index (E600-E632), a folder or file in ``shards/`` that the index does not list
            and fortekit did not write (E641).
        OutputError: another run is writing the index (E742); a link or a foreign folder (E741, E626).
        OutputWriteError: a write failed (E743); the index is unchanged.

    Example:
        >>> add_to_index("clips.index", AudioIndex.from_captions(ids, captions, "minilm"))  # doctest: +SKIP
        AddReport(added=120, shard='0003', total=10120)
    """
    from fortekit.search.index.format import check_unique_ids

    root = _absolute(directory)
    with index_output_lock(root):
        layout = _open_for_change(root)
        meta, manifest = layout.meta, layout.manifest
        _check_fits(root, meta, new)
        check_projected_head(root, meta, head)
        check_item_ids(new.ids)
        refuse_known_ids(root, layout.live, new.ids)
        check_unique_ids(new.ids)
        name = _next_shard_name(root, manifest)
        faiss_writer, settings = None, dict(meta.faiss_settings)
        if meta.faiss in ("flat", "hnsw"):
            # a graph or list is built anew for the shard: its settings are all it takes from the
            # index (reading the whole graph for them cost gigabytes at a million items); an index
            # written before index.json recorded them has them read from the file, mapped, once
            if meta.faiss == "hnsw" and not settings:
                settings = FaissSearcher.read_settings(root / FAISS_FILE, meta.faiss, count=meta.count,
                                                       dim=meta.dim)
            faiss_writer = FaissSearcher.build(new.embeddings, kind=meta.faiss, **settings).write
        elif meta.faiss is not None:  # IVF: the trained cells are in the file (its lists are not read)
            trained = FaissSearcher.read_trained(root / FAISS_FILE, meta.faiss, count=meta.count,
                                                 dim=meta.dim)
            settings = trained.settings()
            faiss_writer = trained.like(new.embeddings).write
        meta = replace(meta, faiss_settings=settings)  # recorded, for an index written before they were
        optional: dict[str, Writer | None] = {
            EVIDENCE_FILE: None if new.evidence is None else evidence_writer(new.evidence)}
        projected_part = None
        if meta.projected_ann is not None and head is not None:  # the head was checked above
            rows = project_rows(head, new.embeddings, what="the new items")
            if meta.faiss in ("flat", "hnsw"):
                projected = FaissSearcher.build(rows, kind=meta.faiss, **settings)
            else:  # the trained cells of the projected rows, from the index's part (its lists not read)
                projected = FaissSearcher.read_trained(root / PROJECTED_FAISS_FILE, str(meta.faiss),
                                                       count=meta.count, dim=meta.dim).like(rows)
            optional[PROJECTED_ROWS_FILE] = array_writer(rows)
            optional[PROJECTED_FAISS_FILE] = projected.write
            projected_part = replace(meta.projected_ann, recall=None)
        shard_meta = replace(new.meta, index_id=manifest.index_id, faiss=meta.faiss, ann_recall=None,
                             faiss_settings=meta.faiss_settings, projected_ann=projected_part,
                             format_version=SINGLE_PART_VERSION, fortekit_version=__version__)
        shard_writers = index_file_writers(
            shard_meta, new.embeddings, new._records, faiss_writer=faiss_writer, optional_files=optional)
        grown = replace(manifest, shards=(*manifest.shards, name))
        _swap(root, meta, grown, shard=(name, shard_writers))
    return AddReport(added=len(new), shard=name, total=len(layout.live) + len(new))


def _swap(root: Path, meta: IndexMeta, manifest: ShardManifest,
          shard: tuple[str, list[tuple[str, Writer]]] | None = None) -> None:
    """A new folder: the old files linked, a new shard if any, then ``shards.json`` and ``index.json``."""
    top = replace(meta, format_version=SHARDED_FORMAT_VERSION, index_id=manifest.index_id,
                  fortekit_version=__version__)
    failed: list[OutputWriteError] = []

    new_shard = None if shard is None else shard[0]
    kept = [name for name in manifest.shards if name != new_shard]

    def build(folder: Path) -> None:
        _link_tree(root, folder, skip=(META_FILE, MANIFEST_FILE), shards=kept)
        if shard is not None:
            name, writers = shard
            target = folder / SHARDS_DIR / name
            target.mkdir(parents=True)
            adopt_directory(target)  # the marker: a shard of ours, even if shards.json stops listing it
            write_part_files(target, writers, named=root / SHARDS_DIR / name, failed=failed)
        write_part_files(folder, [(MANIFEST_FILE, lambda path: write_manifest(path, manifest)),
                                  (META_FILE, meta_writer(top))], named=root, failed=failed)

    swap_in_folder(root, build, failed)


def remove_from_index(
    directory: str | os.PathLike[str], ids: Iterable[str], *, missing_ok: bool = False,
) -> RemoveReport:
    """Remove items by id (tombstones; :func:`compact_index` drops their rows), all or nothing.

    Args:
        directory: an index folder that fortekit wrote.
        ids: the ids to remove (repeats count once).
        missing_ok: skip ids the index does not hold instead of refusing them all.

    Returns:
        A :class:`RemoveReport` (nothing is written when there is nothing to remove).

    Raises:
        AudioIndexError: ids the index does not hold, without `missing_ok` (E633); removing
            every item (E634); no index there (E601); a folder or file in ``shards/`` that the
            index does not list and fortekit did not write (E641).
        OutputError: another run is writing the index (E742).
        OutputWriteError: a write failed (E743); the index is unchanged.

    Example:
        >>> remove_from_index("clips.index", ["clip_0001.wav"])  # doctest: +SKIP
        RemoveReport(removed=1, skipped=(), total=10119)
    """
    wanted = list(dict.fromkeys(ids))
    root = _absolute(directory)
    with index_output_lock(root):
        layout = _open_for_change(root)
        unknown = tuple(item_id for item_id in wanted if item_id not in layout.live)
        if unknown and not missing_ok:
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            examples = ", ".join(map(repr, unknown[:5])) + more
            raise AudioIndexError(Errors.E633.format(count=len(unknown), directory=root, examples=examples))
        known = [item_id for item_id in wanted if item_id in layout.live]
        if known and len(known) >= len(layout.live):
            raise AudioIndexError(Errors.E634.format(count=len(known), directory=root))
        if known:
            removed = {name: set(rows) for name, rows in layout.manifest.removed.items()}
            for item_id in known:
                part, row = layout.live[item_id]
                removed.setdefault(part, set()).add(row)
            manifest = replace(layout.manifest,
                               removed={name: tuple(sorted(rows)) for name, rows in removed.items()})
            _swap(root, layout.meta, manifest)
    return RemoveReport(removed=len(known), skipped=unknown, total=len(layout.live) - len(known))


def compact_index(directory: str | os.PathLike[str]) -> Path:
    """Write an index's live items back as one part (and one ANN index of the same kind and settings).

    Args:
        directory: an index folder that fortekit wrote.

    Returns:
        The directory.

    Raises:
        AudioIndexError: as :meth:`~fortekit.search.index.audio_index.AudioIndex.load` (an index
            whose every item is removed, E639, is refused: it would be written empty, and no load
            accepts that); a folder or file in ``shards/`` that the index does not list (E641).
        OutputError, OutputWriteError: as :meth:`~fortekit.search.index.audio_index.AudioIndex.save`.

    Example:
        >>> compact_index("clips.index")  # doctest: +SKIP
        PosixPath('clips.index')
    """
    from fortekit.search.index.audio_index import AudioIndex

    root = _absolute(directory)
    with index_output_lock(root):
        _open_for_change(root)
        index = AudioIndex.load(root)
        index.save(root, overwrite=True)
    return Path(directory)


def set_projected_ann(
    directory: str | os.PathLike[str],
    head: ProjectedHead | Callable[[AudioIndex], ProjectedHead | None] | None,
) -> AudioIndex:
    """Build an index's ANN part over the rows `head` projects (None: drop it), all or nothing.

    ``fortekit index build-ann``: the rows are projected once, stored (``projected.npy``) and
    given a FAISS index of the kind and settings of the index's own ANN part; ``index.json``
    records the head's identity. A part for another head is replaced. An index in parts is
    written back as one part, as :func:`compact_index` writes it.

    Args:
        directory: an index folder that fortekit wrote, with an ANN part.
        head: the head (:func:`fortekit.search.projection.ann.index_head`), a function that gives
            it for the loaded index (``fortekit index build-ann --projection auto``), or None to drop
            the part.

    Returns:
        The index, as written.

    Raises:
        AudioIndexError: the index has no ANN part, or the head's rows are of another shape (E645);
            the head's rows are unusable (E623,
            E623, E625); and as :func:`compact_index`.
        OutputError, OutputWriteError: as :meth:`~fortekit.search.index.audio_index.AudioIndex.save`.

    Example:
        >>> set_projected_ann("clips.index", index_head("runs/head", "minilm"))  # doctest: +SKIP
    """
    from fortekit.search.index.audio_index import AudioIndex

    root = _absolute(directory)
    with index_output_lock(root):
        _open_for_change(root)
        index = AudioIndex.load(root)
        if head is not None and not isinstance(head, ProjectedHead):
            head = head(index)
        if head is None:
            index.drop_projected_ann()
        elif index.meta.faiss is None:
            raise AudioIndexError(Errors.E645.format(
                where=f"at {root}", action="built",
                problem="the index has no ANN part (faiss.index) to take its kind and settings from",
                fix="Build the index with one (`fortekit index build ... --ann hnsw`, or "
                    "index.build_faiss('hnsw') and save), then build this part again "
                    "(`fortekit index build-ann --index DIR`)."))
        else:
            index.build_projected_ann(head)
        index.save(root, overwrite=True)
    return index
