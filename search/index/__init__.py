"""The item index: build, file format, exact and FAISS search, sources.

``from fortekit.search.index import AudioIndex`` is the usual entry point.

Example:
    >>> import numpy as np
    >>> index = AudioIndex.from_captions(["a", "b"], [None, None], "demo",
    ...                                  embeddings=np.eye(2, dtype="float32"), parse_captions=False)
    >>> index.search(np.array([0.0, 1.0]), k=1)[1].tolist()
    [[1]]
"""

from fortekit.search.index.audio_index import AudioIndex

__all__ = ["AudioIndex"]
