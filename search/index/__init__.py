"""The item index: build, file format, shards, exact and ANN (FAISS) search, sources.

``from fortekit.search.index import AudioIndex`` is the usual entry point; ``build_index_folder``
(with an ``IndexSource``) builds and saves an index folder as ``fortekit index build`` does;
``index_state`` tells whether an index changed (a resumed output and a server compare it).

Example:
    >>> import numpy as np
    >>> from fortekit.search.index import AudioIndex
    >>> index = AudioIndex.from_captions(["a", "b"], [None, None], "demo",
    ...                                  embeddings=np.eye(2, dtype="float32"), parse_captions=False)
    >>> index.search(np.array([0.0, 1.0]), k=1)[1].tolist()
    [[1]]
"""

from typing import TYPE_CHECKING

from fortekit._lazy import lazy_exports

if TYPE_CHECKING:
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.from_files import IndexSource, build_index_folder
    from fortekit.search.index.state import index_state

__all__ = ["AudioIndex", "IndexSource", "build_index_folder", "index_state"]

# Lazy, so that the command line's parsers can read small modules here (ann) without numpy or torch.
__getattr__, __dir__ = lazy_exports(__name__, {"AudioIndex": "fortekit.search.index.audio_index",
                                               "IndexSource": "fortekit.search.index.from_files",
                                               "build_index_folder": "fortekit.search.index.from_files",
                                               "index_state": "fortekit.search.index.state"},
                                    names=globals())
