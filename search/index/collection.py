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
    >>> hits = fortekit.Retriever(collection).search("a dog barking without people talking")[0].hits
    ... # doctest: +SKIP
    >>> hits[0]  # doctest: +SKIP
    Hit(1, 'd1', 0.7123, 'a dog barks')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from fortekit.search.index.audio_index import AudioIndex

if TYPE_CHECKING:
    from fortekit.fol.caption.parser import CaptionParser
    from fortekit.fol.predicates import PredicateSymbol
    from fortekit.plugins.protocols import Backbone

__all__ = ["DEFAULT_BACKBONE", "Collection"]

#: The text backbone a collection is embedded with when none is named (the bundled MiniLM).
DEFAULT_BACKBONE = "minilm"


class Collection(AudioIndex):
    """A caption-indexed collection held in memory: build it with :meth:`from_captions`.

    Everything an :class:`~fortekit.search.index.audio_index.AudioIndex` does, it does
    (:meth:`save` writes an index folder, :meth:`load` reads one back as a ``Collection``);
    the difference is the default backbone of :meth:`from_captions`, so that ids and captions
    are all it needs.

    Example:
        >>> import numpy as np
        >>> Collection.from_captions(["a", "b"], ["rain", "wind"], "demo", embeddings=np.eye(2),
        ...                          parse_captions=False)
        Collection(count=2, dim=2, backbone='demo')
    """

    @classmethod
    def from_captions(
        cls, ids: Sequence[str], captions: Sequence[str | None], backbone: Backbone | str = DEFAULT_BACKBONE,
        *, embeddings: Any = None, parse_captions: bool = True, batch_size: int = 64, progress: bool = False,
        normalise: bool = True, predicate_sets: Sequence[frozenset[PredicateSymbol]] | None = None,
        backbone_options: Mapping[str, Any] | None = None, caption_parser: CaptionParser | None = None,
    ) -> Self:
        """Embed and parse the captions into an in-memory collection that a Retriever searches.

        Args:
            ids: one unique id per item (converted with ``str``).
            captions: one caption per item.
            backbone: a registered backbone name (default ``"minilm"``) or a backbone object.
            embeddings: (n, d) rows to store instead of embedding the captions; `backbone` is
                then only recorded.
            parse_captions: parse the captions into predicate sets for Stage 3.
            batch_size: captions per encoder call.
            progress: tqdm progress bars on stderr.
            normalise: scale the rows to unit length (see ``AudioIndex.from_captions``).
            predicate_sets: precomputed predicate sets, one per item (skips parsing).
            backbone_options: the options a backbone name is built with (``{"device": "cpu"}``).
            caption_parser: a :class:`~fortekit.fol.caption.CaptionParser` to parse with.

        Returns:
            The collection: ``fortekit.Retriever(collection)`` searches it.

        Raises:
            AudioIndexError: no items (E606), lengths that differ (E610), duplicate ids (E605),
                an empty caption to embed (E617), a backbone name that is not registered (E613),
                and as :meth:`AudioIndex.from_captions`.
            FortekitError: from the backbone (a missing model or package).

        Example:
            >>> Collection.from_captions(["a", "b"], ["a dog barks", "rain"])  # doctest: +SKIP
            Collection(count=2, dim=384, backbone='minilm')
        """
        return super().from_captions(
            ids, captions, backbone, embeddings=embeddings, parse_captions=parse_captions,
            batch_size=batch_size, progress=progress, normalise=normalise, predicate_sets=predicate_sets,
            backbone_options=backbone_options, caption_parser=caption_parser,
        )
