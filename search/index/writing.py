"""Writing an index directory, all or nothing, through the shared safe writer.

The layout and its readers are in :mod:`fortekit.search.index.format`; this module writes it
(``AudioIndex.save``, ``fortekit index build``):

* **All or nothing.** The files are written into a new folder beside the target, each forced
  to disk, and the folder is renamed into place (:func:`fortekit.safe_write.replace_directory`):
  a save that fails (a full disk, ``ulimit -f``) or is killed at any point leaves the previous
  index as it was, loadable, never a mix of two builds.
* **One writer.** A save holds an exclusive lock on the folder (``.NAME.lock`` beside it); a
  second save or build of the same folder gets E742 with the holder's pid.
  ``fortekit index build`` takes the lock before it embeds anything (:func:`index_output_lock`),
  so a second build fails at once, not after the encoding work.
* **Nothing of the user's is replaced.** Every index folder holds the marker file
  ``.fortekit-output``. A folder is replaced only when it holds nothing but index files and
  is fortekit's: marked, or an index an older fortekit wrote (an ``index.json`` with its
  ``format_version`` and ``fortekit_version``, the rest index files only), which is adopted
  (marked) first. A folder with any other file, or with index file names but no index of
  ours (a user's own ``embeddings.npy``), is refused (E626) with or without ``--overwrite``;
  an existing index is replaced only with ``overwrite`` (E614). Inside its ``shards`` folder,
  anything but shard folders of index files is refused too (E641, :func:`check_shards_folder`).
* **Never empty.** An index of no items is refused (E639): no load would accept it.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "embeddings.npy").write_bytes(b"mine")
    4
    >>> check_index_output(folder, overwrite=True)
    Traceback (most recent call last):
    ...
    fortekit.errors.AudioIndexError: [E626] The output folder ... holds embeddings.npy, which is not ...
    >>> check_index_output(folder / "new.index", overwrite=False)
    'new'
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from fortekit.errors import AudioIndexError, Errors, OutputError, OutputWriteError
from fortekit.safe_write import (
    MARKER_FILE,
    OutputLock,
    adopt_directory,
    check_not_input,
    check_not_symlink,
    is_fortekit_directory,
    replace_directory,
    write_error,
)
from fortekit.search.index.evidence_file import EVIDENCE_FILE
from fortekit.search.index.format import (
    EMBEDDINGS_FILE,
    FAISS_FILE,
    ITEMS_FILE,
    META_FILE,
    IndexMeta,
    IndexRecords,
    format_predicate_symbol,
)
from fortekit.search.index.projected import PROJECTED_FAISS_FILE, PROJECTED_ROWS_FILE

__all__ = [
    "INDEX_FILES",
    "PART_FILES",
    "array_writer",
    "check_index_output",
    "check_shards_folder",
    "index_file_writers",
    "index_output_lock",
    "meta_writer",
    "swap_in_folder",
    "write_index_files",
    "write_part_files",
]

#: The files an index folder may hold (besides the marker): what ``save`` writes, and the shards
#: folder and its list that ``index add`` writes (:mod:`fortekit.search.index.shards`).
INDEX_FILES = (META_FILE, EMBEDDINGS_FILE, ITEMS_FILE, FAISS_FILE, EVIDENCE_FILE, PROJECTED_ROWS_FILE,
               PROJECTED_FAISS_FILE, "shards.json", "shards")
#: The files one part (the first part, or a shard folder) may hold, besides the marker.
PART_FILES = (META_FILE, EMBEDDINGS_FILE, ITEMS_FILE, FAISS_FILE, EVIDENCE_FILE, PROJECTED_ROWS_FILE,
              PROJECTED_FAISS_FILE)
_SHARDS_DIR = "shards"  # shards.SHARDS_DIR (shards.py imports this module's neighbours, not this one)
# Temporary names that older fortekit versions (".embeddings.npy.tmp") and tempfile
# (".embeddings.npy.k3j_x.tmp") leave beside an index file when killed.
_LEFTOVER = re.compile(r"\.(?:" + "|".join(re.escape(name) for name in INDEX_FILES) + r")(?:\.[^/]*)?\.tmp")

_held = threading.local()  # the folders whose lock this thread holds (index_output_lock)


def _held_folders() -> set[Path]:
    folders: set[Path] | None = getattr(_held, "folders", None)
    if folders is None:
        folders = _held.folders = set()
    return folders


def _absolute(directory: str | os.PathLike[str]) -> Path:
    # abspath, not resolve: "." and ".." get a name (the lock is ".NAME.lock"), but a link is
    # kept as a link, so that the safe writer can refuse it.
    return Path(os.path.abspath(Path(directory).expanduser()))


@contextmanager
def index_output_lock(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the exclusive lock of an index folder for a block (re-entrant within one thread).

    ``fortekit index build`` holds it from before the encoding work to the end of the save,
    which then does not lock again; another thread or process gets E742.

    Args:
        directory: the index folder (its parent folders are created, for the lock file).

    Yields:
        The folder as an absolute path.

    Raises:
        OutputLockedError: another run holds the lock (E742, with its pid).
        OutputWriteError: the lock file cannot be created (E743).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp()) / "clips.index"
        >>> with index_output_lock(folder):
        ...     with index_output_lock(folder) as again:  # the same thread: no second lock
        ...         again.name
        'clips.index'
    """
    root = _absolute(directory)
    held = _held_folders()
    if root in held:
        yield root
        return
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(root.parent, exc) from exc
    with OutputLock(root):
        held.add(root)
        try:
            yield root
        finally:
            held.discard(root)


def _entries(root: Path) -> list[str]:
    try:
        return sorted(entry.name for entry in root.iterdir())
    except OSError as exc:
        raise write_error(root, exc) from exc


def _written_by_fortekit(meta: Path) -> bool:
    """Whether ``index.json`` is one that fortekit wrote (an older one, without the marker)."""
    try:
        if meta.is_symlink() or meta.stat().st_size > 1_000_000:
            return False
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and {"format_version", "fortekit_version", "backbone"} <= set(data)


def check_index_output(
    directory: str | os.PathLike[str], *, overwrite: bool,
    inputs: Mapping[str, str | os.PathLike[str] | None] | None = None,
) -> str:
    """Whether an index may be written to `directory`, and how; checked before any work.

    Args:
        directory: the index folder.
        overwrite: whether an existing index may be replaced.
        inputs: what the run reads (``{"captions file": path}``): the folder may not be,
            hold or lie inside any of them (E740).

    Returns:
        ``"new"`` (no such folder), ``"empty"`` (an empty folder), ``"ours"`` (a marked folder
        holding index files only) or ``"legacy"`` (an index an older fortekit wrote, without
        the marker: :func:`write_index_files` marks it before replacing it).

    Raises:
        OutputError: the folder is a link (E741), a file (E745), or is/holds an input (E740).
        AudioIndexError: an index is there and `overwrite` is False (E614); the folder holds
            files that are not an index fortekit wrote (E626).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> check_index_output(folder, overwrite=False)
        'empty'
    """
    root = _absolute(directory)
    check_not_symlink(root)
    if not root.name:  # "/": no folder beside which to build, and never ours to replace
        raise OutputError(Errors.E745.format(path=root, kind="the root folder", what="an index folder"))
    if root.exists() and not root.is_dir():
        raise OutputError(Errors.E745.format(path=root, kind="a file", what="a folder"))
    if inputs:
        check_not_input(root, inputs)
    if not root.exists():
        return "new"
    names = [name for name in _entries(root) if name != MARKER_FILE]
    marked = is_fortekit_directory(root)
    if not names:
        return "ours" if marked else "empty"
    foreign = [name for name in names if name not in INDEX_FILES and not _LEFTOVER.fullmatch(name)]
    links = [name for name in names if name not in foreign and (root / name).is_symlink()]
    has_index = META_FILE in names and (marked or _written_by_fortekit(root / META_FILE))
    if foreign or links:
        shown = foreign + links
        holding = ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")
        why = " (a link among index files)" if links and not foreign else ""
        raise AudioIndexError(Errors.E626.format(path=root, holding=holding, why=why))
    if not marked and not has_index:
        holding = ", ".join(names)
        why = f" (no marker file {MARKER_FILE}, no index.json of fortekit's)"
        raise AudioIndexError(Errors.E626.format(path=root, holding=holding, why=why))
    if has_index and not overwrite:
        raise AudioIndexError(Errors.E614.format(directory=root))
    if _SHARDS_DIR in names:  # replaced whole: only shard folders of index files, never a user's file
        check_shards_folder(root)
    # Marked without index.json: an earlier save of ours stopped before the swap; nothing loads.
    return "ours" if marked else "legacy"


def _part_leftovers(folder: Path) -> list[str]:
    """The entries of a shard folder that are not a part's files (a link counts as not)."""
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        raise write_error(folder, exc) from exc
    return [entry.name for entry in entries
            if entry.name not in (*PART_FILES, MARKER_FILE) or entry.is_symlink() or not entry.is_file()]


def check_shards_folder(
    directory: str | os.PathLike[str], listed: Collection[str] | None = None,
) -> list[str]:
    """Refuse (E641) anything in an index's ``shards`` folder that fortekit would drop but did not write.

    Every write of an index builds a new folder (:func:`swap_in_folder`); what the old ``shards``
    folder holds must therefore be the index's own, or it would be lost. A shard folder is the
    index's own when it holds only a part's files (and the marker) and, for `listed` (``index
    add|remove|compact``, which keep the index's shards), when ``shards.json`` lists it or it holds
    the marker file (a shard of ours that is no longer listed: nothing loads it, so it is dropped).

    Args:
        directory: the index folder.
        listed: the shards ``shards.json`` lists; None when the whole index is replaced (a save
            over it), where any shard folder of a part's files is the old index's.

    Returns:
        The shard folders of ours that ``shards.json`` does not list (their names), which a write
        leaves out; empty without `listed`.

    Raises:
        AudioIndexError: E641, naming the entries and the fix.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> (folder / "shards" / "0002").mkdir(parents=True)
        >>> _ = (folder / "shards" / "0002" / "notes.txt").write_text("mine")
        >>> check_shards_folder(folder, listed=())
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E641] The index folder ... holds shards/0002/notes.txt: it is ...
    """
    root = _absolute(directory)
    shards = root / _SHARDS_DIR
    if not shards.exists() and not shards.is_symlink():
        return []
    if shards.is_symlink() or not shards.is_dir():
        raise AudioIndexError(Errors.E641.format(directory=root, entries=_SHARDS_DIR,
                                                 why="it is a file or a link, not the index's shards folder"))
    foreign: list[str] = []
    unlisted_ours: list[str] = []
    for entry in sorted(shards.iterdir()):
        name = f"{_SHARDS_DIR}/{entry.name}"
        if entry.is_symlink() or not entry.is_dir():
            foreign.append(name)
            continue
        leftovers = _part_leftovers(entry)
        if leftovers:
            foreign.extend(f"{name}/{child}" for child in leftovers)
        elif listed is not None and entry.name not in listed:
            if is_fortekit_directory(entry):
                unlisted_ours.append(entry.name)
            else:
                foreign.append(name)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        unlisted = listed is not None and all(entry.count("/") == 1 for entry in foreign)
        why = (f"{'it is' if len(foreign) == 1 else 'they are'} not a shard that shards.json lists, nor "
               f"left by fortekit (no marker file {MARKER_FILE})") if unlisted else (
            f"{'it is' if len(foreign) == 1 else 'they are'} not a file of the index")
        raise AudioIndexError(Errors.E641.format(directory=root, entries=shown, why=why))
    return unlisted_ours


def _fsync(path: Path) -> None:
    with path.open("rb+") as handle:
        os.fsync(handle.fileno())


class _Stream:
    """A file as a plain object with ``write``: numpy then writes through Python in chunks,
    and a full disk or ``ulimit -f`` raises OSError with its errno (``tofile`` says only
    "19200 requested and 10208 written")."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def write(self, data: Any) -> int:
        return int(self._handle.write(data))


def write_index_files(
    directory: str | os.PathLike[str], meta: IndexMeta, embeddings: np.ndarray, records: IndexRecords,
    *, overwrite: bool = False, faiss_writer: Any = None, optional_files: Mapping[str, Any] | None = None,
) -> Path:
    """Write an index directory all at once: a new folder beside it, swapped into place.

    Args:
        directory: where to write (its parents are created).
        meta: the metadata.
        embeddings: float32 (count, dim).
        records: the per-item columns.
        overwrite: replace an index already in `directory`.
        faiss_writer: a callable that writes the FAISS index to a given path, or None.
        optional_files: more files, name -> a callable that writes it to a given path, or
            None to leave it out (``evidence.safetensors``).

    Returns:
        The directory, as given.

    Raises:
        AudioIndexError: `directory` holds an index and `overwrite` is False (E614), or holds
            files that are not an index fortekit wrote (E626, E641); no items (E639).
        OutputError: a link (E741), a file (E745), another run writing it (E742).
        OutputWriteError: a file cannot be written (E743, naming it); the previous index is
            unchanged.
    """
    root = _absolute(directory)
    if meta.count < 1 or len(records.ids) < 1:  # no load would accept it: refused, never written
        raise AudioIndexError(Errors.E639.format(where=f"to be written to {root}", why=""))
    writers = index_file_writers(meta, embeddings, records, faiss_writer=faiss_writer,
                                 optional_files=optional_files)
    failed: list[OutputWriteError] = []

    def build(folder: Path) -> None:
        write_part_files(folder, writers, named=root, failed=failed)

    check_index_output(root, overwrite=overwrite)  # before the lock file is made: a clear refusal
    with index_output_lock(root):
        state = check_index_output(root, overwrite=overwrite)  # as it is now that we hold the lock
        if state == "legacy":  # an older fortekit's index: ours, so mark it (replace_directory asks)
            adopt_directory(root)
        swap_in_folder(root, build, failed)  # the state was checked above, under the lock
    return Path(directory)


def swap_in_folder(root: Path, build: Writer, failed: list[OutputWriteError]) -> None:
    """Build a new index folder with `build` beside `root` and swap it in (the caller holds the lock).

    What a killed earlier run left (``.NAME.*.tmp``, ``.NAME.*.old``) is removed, fortekit's own only.

    Raises:
        OutputWriteError: a write failed (E743; the file in `failed` when ``build`` recorded one);
            `root` is unchanged.
    """
    try:
        _remove_stale(root, ".tmp")
        replace_directory(root, build, overwrite=True)
    except OutputWriteError:
        if failed:  # name the file that failed, not the folder
            raise failed[-1] from failed[-1].__cause__
        raise
    _remove_interrupted(root)


Writer = Callable[[Path], Any]


def index_file_writers(
    meta: IndexMeta, embeddings: np.ndarray, records: IndexRecords, *, faiss_writer: Writer | None = None,
    optional_files: Mapping[str, Writer | None] | None = None,
) -> list[tuple[str, Writer]]:
    """The files of one index part, each as (name, a callable that writes it to a given path).

    ``index.json`` comes last, so that a folder holding it holds every other file.

    Example:
        >>> from fortekit.search.index.format import IndexMeta, IndexRecords
        >>> meta = IndexMeta(backbone="enc", dim=2, count=1)
        >>> records = IndexRecords(["a"], [None], [None], [frozenset()])
        >>> [name for name, _ in index_file_writers(meta, np.eye(1, 2), records)]
        ['embeddings.npy', 'items.jsonl', 'index.json']
    """
    write_array = array_writer(embeddings)

    def write_items(target: Path) -> None:
        with target.open("w", encoding="utf-8") as handle:
            for item_id, caption, where, symbols in zip(
                records.ids, records.captions, records.paths, records.predicate_sets, strict=True,
            ):
                line: dict[str, Any] = {
                    "id": item_id, "caption": caption,
                    "predicates": sorted(format_predicate_symbol(symbol) for symbol in symbols),
                }
                if where is not None:
                    line["path"] = where
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")

    writers: list[tuple[str, Writer]] = [(EMBEDDINGS_FILE, write_array), (ITEMS_FILE, write_items)]
    if faiss_writer is not None:
        writers.append((FAISS_FILE, faiss_writer))
    writers += [(name, writer) for name, writer in (optional_files or {}).items() if writer is not None]
    writers.append((META_FILE, meta_writer(meta)))
    return writers


def array_writer(rows: np.ndarray) -> Writer:
    """A callable that writes `rows` as a float32 ``.npy`` file (no pickle) to a given path.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "rows.npy"
        >>> array_writer(np.eye(2))(path)
        >>> np.load(path, allow_pickle=False).dtype
        dtype('float32')
    """
    arrays = np.ascontiguousarray(rows, dtype=np.float32)

    def write_array(target: Path) -> None:
        with target.open("wb") as handle:
            np.lib.format.write_array(_Stream(handle), arrays, allow_pickle=False)

    return write_array


def meta_writer(meta: IndexMeta) -> Writer:
    """A callable that writes ``index.json`` for `meta` to a given path."""

    def write_meta(target: Path) -> None:
        target.write_text(json.dumps(meta.to_json(), indent=2) + "\n", encoding="utf-8")

    return write_meta


def write_part_files(
    folder: Path, writers: list[tuple[str, Writer]], *, named: Path, failed: list[OutputWriteError],
) -> None:
    """Write and force to disk each file into `folder` (a folder being built, not yet in place).

    Args:
        folder: where to write.
        writers: (name, writer) pairs, as :func:`index_file_writers` makes them.
        named: the folder the user knows (messages name ``named / name``).
        failed: collects the error of the file that failed, so that the caller names it.

    Raises:
        OutputWriteError: a file cannot be written (E743).
    """
    for name, writer in writers:
        try:
            writer(folder / name)
            _fsync(folder / name)
        except (OSError, RuntimeError) as exc:  # faiss reports a failed write as RuntimeError
            cause = exc if isinstance(exc, OSError) else OSError(0, f"{type(exc).__name__}: {exc}")
            failed.append(write_error(named / name, cause))
            raise failed[-1] from exc


def _remove_stale(root: Path, suffix: str) -> None:
    """Remove ``.NAME.*<suffix>`` folders that a killed save left: only fortekit's own (marked, or
    holding nothing but index files). The caller holds the lock, so none is in use."""
    for stale in root.parent.glob(f".{root.name}.*{suffix}"):
        if stale.is_symlink() or not stale.is_dir():
            continue
        if is_fortekit_directory(stale) or _only_index_files(stale):
            shutil.rmtree(stale, ignore_errors=True)


def _remove_interrupted(root: Path) -> None:
    """Remove what a save killed between its two renames left (``.NAME.*.old/previous``): a
    newer index is now in place. Only fortekit's own folders are removed."""
    for stale in root.parent.glob(f".{root.name}.*.old"):
        if stale.is_symlink() or not stale.is_dir():
            continue
        try:
            inside = [entry.name for entry in stale.iterdir()]
        except OSError:
            continue
        previous = stale / "previous"
        ours = inside == ["previous"] and (is_fortekit_directory(previous) or _only_index_files(previous))
        if ours or not inside:
            shutil.rmtree(stale, ignore_errors=True)


def _only_index_files(folder: Path) -> bool:
    try:
        names = [entry.name for entry in folder.iterdir()]
    except OSError:
        return False
    return all(name in INDEX_FILES or _LEFTOVER.fullmatch(name) for name in names)
