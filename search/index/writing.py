"""Writing an index directory: embeddings and items first, ``index.json`` last, each file atomically.

The layout and its readers are in :mod:`fortekit.search.index.format`; this module writes it
(``AudioIndex.save``). A writer that stops half-way leaves a directory without ``index.json``,
which every reader refuses (E601), never a mix of two builds.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _replace_atomically(Path(folder) / "a.txt", lambda path: path.write_text("x"))
    ...     sorted(p.name for p in Path(folder).iterdir())
    ['a.txt']
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from fortekit.errors import AudioIndexError, Errors
from fortekit.search.index.format import (
    EMBEDDINGS_FILE,
    FAISS_FILE,
    ITEMS_FILE,
    META_FILE,
    IndexMeta,
    IndexRecords,
    format_predicate_symbol,
)

__all__ = ["write_index_files"]


def _replace_atomically(path: Path, write: Any) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_index_files(
    directory: str | os.PathLike[str], meta: IndexMeta, embeddings: np.ndarray, records: IndexRecords,
    *, overwrite: bool = False, faiss_writer: Any = None, optional_files: Mapping[str, Any] | None = None,
) -> Path:
    """Write an index directory: embeddings and items first, ``index.json`` last.

    Args:
        directory: where to write (created with its parents).
        meta: the metadata.
        embeddings: float32 (count, dim).
        records: the per-item columns.
        overwrite: replace an index already in `directory`.
        faiss_writer: a callable that writes the FAISS index to a given path, or None
            (a stale ``faiss.index`` is then removed).
        optional_files: more files, name -> a callable that writes it to a given path, or
            None to remove a stale one (``evidence.safetensors``).

    Returns:
        The directory.

    Raises:
        AudioIndexError: `directory` holds an index and `overwrite` is False (E614).
        OSError: the files cannot be written.
    """
    root = Path(directory)
    if (root / META_FILE).exists() and not overwrite:
        raise AudioIndexError(Errors.E614.format(directory=root))
    root.mkdir(parents=True, exist_ok=True)
    # An interrupted overwrite then reads as "lacks index.json", never as a mix of two builds.
    (root / META_FILE).unlink(missing_ok=True)

    def write_array(target: Path) -> None:
        with target.open("wb") as handle:
            np.save(handle, np.ascontiguousarray(embeddings, dtype=np.float32), allow_pickle=False)

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

    def write_meta(target: Path) -> None:
        target.write_text(json.dumps(meta.to_json(), indent=2) + "\n", encoding="utf-8")

    _replace_atomically(root / EMBEDDINGS_FILE, write_array)
    _replace_atomically(root / ITEMS_FILE, write_items)
    if faiss_writer is not None:
        _replace_atomically(root / FAISS_FILE, faiss_writer)
    else:
        (root / FAISS_FILE).unlink(missing_ok=True)
    for name, writer in (optional_files or {}).items():
        if writer is None:
            (root / name).unlink(missing_ok=True)
        else:
            _replace_atomically(root / name, writer)
    _replace_atomically(root / META_FILE, write_meta)
    return root
