"""``Collection``: a list of captions as a searchable collection, in memory, in one call.

Like ``BM25Okapi(corpus)``: no files and no ``fortekit index build``. The collection is an
:class:`~fortekit.search.index.audio_index.AudioIndex` (the captions embedded by a text backbone,
``minilm`` by default, and parsed into predicate sets for Stage 3), so a
:class:`~fortekit.search.retriever.Retriever` searches it exactly as it searches the same
captions built into an index folder, formula scoring and Stage 3 included; :meth:`save` writes
it as such a folder.

Example:
    >>> import fortekit
    >>> captions = ["a dog barks", "people talk while a dog barks", "rain on a roof"]
    >>> collection = fortekit.Collection.from_captions(["d1", "d2", "r1"], captions)  # doctest: +SKIP
    >>> hits = fortekit.Retriever(collection).search("a dog barking without people talking").hits
    ... # doctest: +SKIP
    >>> hits[0]  # doctest: +SKIP
    Hit(1, 'd1', 0.7123, 'a dog barks')
"""

from __future__ import annotations

from fortekit.search.index.audio_index import AudioIndex

__all__ = ["Collection"]


class Collection(AudioIndex):
    """A caption-indexed collection held in memory: ``Collection.from_captions(ids, captions)``.

    An :class:`~fortekit.search.index.audio_index.AudioIndex` under the name a user looks for:
    :meth:`from_captions` embeds with the bundled ``minilm`` unless another backbone is named,
    :meth:`save` writes an index folder and :meth:`load` reads one back as a ``Collection``.

    Example:
        >>> import numpy as np
        >>> Collection.from_captions(["a", "b"], ["rain", "wind"], "demo", embeddings=np.eye(2),
        ...                          parse_captions=False)
        Collection(count=2, dim=2, backbone='demo')
        >>> Collection.from_captions(["a", "b"], ["a dog barks", "rain"])  # doctest: +SKIP
        Collection(count=2, dim=384, backbone='minilm')
    """
