"""An index's state: one short text that changes whenever what a search of the index can return changes.

A resumable output (``fortekit search -o``, ``fol-refine --index -o``) records the state of the
index it was ranked against in its settings sidecar, and a resume against another state is
refused (E638); a server compares it to know when to load the index again. The state is

* the index's identity (``index_id``, given by the first ``fortekit index add``; ``none`` before),
* and a digest of its parts and tombstones: ``shards.json`` (the shards in order and the removed
  rows), each part's ``index.json``, and the identity of each part's files (inode, size and
  modification time of ``embeddings.npy``, ``items.jsonl``, ``faiss.index``,
  ``evidence.safetensors``).

It is cheap: a few ``stat`` calls and the small JSON files, never the embeddings. Every write of
an index (``index build``, ``save``, ``index add``, ``remove``, ``compact``) swaps in a new folder
whose new or rewritten files have new inodes, so each gives a new state; the files a write carries
over unchanged are hard links, which keep theirs. Moving the folder keeps the state; a copy
(``cp -r``, to another disk or machine) gets a new one, so a resume there is refused rather than
trusted (``--overwrite`` starts it over).

Example:
    >>> import tempfile
    >>> import numpy as np
    >>> from fortekit.search.index.audio_index import AudioIndex
    >>> from fortekit.search.index.growing import remove_from_index
    >>> folder = Path(tempfile.mkdtemp()) / "clips.index"
    >>> _ = AudioIndex.from_captions(["a", "b"], [None, None], "enc", embeddings=np.eye(2),
    ...                              parse_captions=False).save(folder)
    >>> before = index_state(folder)
    >>> before == index_state(AudioIndex.load(folder))
    True
    >>> _ = remove_from_index(folder, ["a"])
    >>> index_state(folder) == before
    False
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from fortekit.errors import AudioIndexError, Errors
from fortekit.search.index.format import (
    EMBEDDINGS_FILE,
    FAISS_FILE,
    ITEMS_FILE,
    META_FILE,
    folder_identity,
    read_meta,
)

if TYPE_CHECKING:
    from fortekit.search.index.audio_index import AudioIndex

__all__ = ["index_state", "read_folder_state"]

#: A folder replaced this many times while its state is read is read as the last try finds it.
_READ_ATTEMPTS = 10
_VERSION = b"fortekit index state 1\n"


def index_state(index: str | os.PathLike[str] | AudioIndex) -> str:
    """The state of an index: ``IDENTITY-DIGEST``, equal exactly when the index is the same.

    Use it to tell whether an index changed (``index add``, ``remove``, ``compact``, a rebuild)
    since a result was ranked against it: a resumed output and a server that loads the index
    again when it changes both compare it. It reads a few small files and ``stat``\\ s the rest
    (no embedding is read), so it may be called often.

    Args:
        index: an index folder, or an :class:`~fortekit.search.index.audio_index.AudioIndex`
            loaded from one (its state as it was loaded, even if the folder changed since).

    Returns:
        The first 8 characters of the index's identity (``none`` for an index never grown),
        a hyphen and a 16-character hexadecimal digest of its parts and tombstones.

    Raises:
        AudioIndexError: no index in the folder or a damaged one (E600-E632, as
            :meth:`AudioIndex.load <fortekit.search.index.audio_index.AudioIndex.load>`); an
            index built in memory and never loaded, which has no state (E643).

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> folder = Path(tempfile.mkdtemp()) / "clips.index"
        >>> _ = AudioIndex.from_captions(["a"], [None], "enc", embeddings=np.eye(1),
        ...                              parse_captions=False).save(folder)
        >>> state = index_state(folder)
        >>> state.startswith("none-"), len(state)
        (True, 21)
    """
    if isinstance(index, (str, os.PathLike)):
        return read_folder_state(index)
    state = getattr(index, "state", None)
    if not isinstance(state, str):
        what = f"{type(index).__name__} of {len(index)} items" if hasattr(index, "__len__") else repr(index)
        raise AudioIndexError(Errors.E643.format(what=what))
    return state


def read_folder_state(directory: str | os.PathLike[str]) -> str:
    """The state of the index in `directory` (:func:`index_state` of a folder), read consistently.

    The files are read again when the folder was swapped for a new one meanwhile (a write of
    the index), so the state is never that of half of one write and half of another.

    Raises:
        AudioIndexError: as :func:`index_state`.

    Example:
        >>> read_folder_state("/nonexistent/index")
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E601] The audio index at /nonexistent/index lacks ...
    """
    root = Path(directory)
    state = ""
    for attempt in range(_READ_ATTEMPTS):
        before = folder_identity(root)
        try:
            state = _state_of_files(root)
        except AudioIndexError:
            if attempt + 1 < _READ_ATTEMPTS and folder_identity(root) != before:
                continue
            raise
        if folder_identity(root) == before:
            break
    return state


def _state_of_files(root: Path) -> str:
    """The state from the files as they are now (the caller checks that the folder stayed the same)."""
    from fortekit.search.index.evidence_file import EVIDENCE_FILE
    from fortekit.search.index.projected import PROJECTED_FAISS_FILE, PROJECTED_ROWS_FILE
    from fortekit.search.index.shards import (
        BASE_PART,
        MANIFEST_FILE,
        SHARDED_FORMAT_VERSION,
        SHARDS_DIR,
        ShardManifest,
        read_manifest,
    )

    meta = read_meta(root)
    sharded = meta.format_version >= SHARDED_FORMAT_VERSION
    manifest = read_manifest(root) if sharded else ShardManifest(meta.index_id or "")
    digest = hashlib.blake2b(_VERSION, digest_size=8)
    # The manifest as data, not as bytes: only what it says counts (shards in order, removed rows).
    digest.update(json.dumps([MANIFEST_FILE, manifest.to_json()], sort_keys=True).encode())
    for name in manifest.parts:
        folder = root if name == BASE_PART else root / SHARDS_DIR / name
        digest.update(f"\npart {name}\n".encode())
        digest.update(_read_small(folder / META_FILE))
        for file_name in (EMBEDDINGS_FILE, ITEMS_FILE, FAISS_FILE, EVIDENCE_FILE):
            digest.update(_file_identity(folder / file_name, file_name))
        for file_name in (PROJECTED_ROWS_FILE, PROJECTED_FAISS_FILE):  # only where there: older states hold
            if (folder / file_name).exists():
                digest.update(_file_identity(folder / file_name, file_name))
    identity = (manifest.index_id or meta.index_id or "none")[:8]
    return f"{identity}-{digest.hexdigest()}"


def _read_small(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:  # read_meta read it a moment ago: the folder is being replaced
        missing = f"{path.name} ({exc})"
        raise AudioIndexError(Errors.E601.format(directory=path.parent, missing=missing)) from exc


def _file_identity(path: Path, name: str) -> bytes:
    """A file's name, inode, size and modification time (not its change time: hard-linking a file,
    as ``index add`` does with the files it keeps, changes that but not the file)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return f"{name}:absent\n".encode()
    except OSError as exc:
        raise AudioIndexError(Errors.E601.format(directory=path.parent, missing=f"{name} ({exc})")) from exc
    return f"{name}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}\n".encode()
