"""The audio index: embeddings, ids, captions and caption predicate sets of a collection.

Build it from audio files through a backbone's audio tower (:meth:`AudioIndex.build`), or,
for a caption-indexed collection (the ``minilm`` default), from the captions
(:meth:`AudioIndex.from_captions`). The captions are parsed once, at build time, into
``Pred(Pi(caption))`` for Stage 3. Search is an exact cosine top-K by matrix product on the
device (:meth:`AudioIndex.search`), with an optional FAISS index for very large
collections. An index is saved as plain files, without pickle, and loaded memory-mapped
(see :mod:`fortekit.search.index.format` for the layout). A captioner plug-in may write the
captions of audio items at build time (``captioner=``); a tagger's label evidence is then kept
as :attr:`AudioIndex.evidence` and saved beside the index
(:mod:`fortekit.search.index.evidence_file`).

Example:
    >>> from fortekit.plugins import get_backbone
    >>> from fortekit.search.index.audio_index import AudioIndex
    >>> backbone = get_backbone("minilm", device="cpu")  # doctest: +SKIP
    >>> captions = ["a dog barks", "rain on a roof"]
    >>> index = AudioIndex.from_captions(["a", "b"], captions, "minilm")  # doctest: +SKIP
    >>> scores, rows = index.search(backbone.encode_text(["dog barking"]), k=1)  # doctest: +SKIP
    >>> index.ids[int(rows[0, 0])]  # doctest: +SKIP
    'a'
    >>> AudioIndex.load(index.save("dogs.index")).ids  # doctest: +SKIP
    ['a', 'b']
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from fortekit.errors import AudioIndexError, Errors
from fortekit.fol.predicates import PredicateSymbol
from fortekit.plugins.protocols import AudioItem, Backbone, Captioner
from fortekit.search.index.build import (
    assemble_parts,
    caption_items,
    embed_items,
    item_id_of,
    rows_from_embeddings,
)
from fortekit.search.index.evidence_file import EVIDENCE_FILE, evidence_writer
from fortekit.search.index.faiss_search import FaissSearcher
from fortekit.search.index.format import (
    EMBEDDINGS_FILE,
    FAISS_FILE,
    IndexMeta,
    IndexRecords,
    check_item_ids,
    check_options,
    check_unique_ids,
    folder_identity,
)
from fortekit.search.index.projected import PROJECTED_FAISS_FILE, PROJECTED_ROWS_FILE
from fortekit.search.index.querying import IndexSearchMixin
from fortekit.search.index.shards import ShardedSearcher, ShardLayout
from fortekit.search.index.writing import write_index_files

if TYPE_CHECKING:
    import torch

    from fortekit.fol.caption.parser import CaptionParser
    from fortekit.plugins.evidence import LabelEvidence

__all__ = ["AudioIndex", "backbone_named"]

_READ_ATTEMPTS = 10  # a folder replaced 10 times while it is read is read as the last try finds it


class AudioIndex(IndexSearchMixin):
    """A collection's embeddings (n, d), ids, captions, paths and caption predicate sets.

    Build one with :meth:`build`, :meth:`from_captions` or :meth:`load`; the constructor
    takes parts that are already checked. Search, the backbone check and FAISS come from
    :class:`~fortekit.search.index.querying.IndexSearchMixin`.

    Args:
        embeddings: float32 (n, d).
        records: the per-item columns (ids, captions, paths, predicate sets).
        meta: what ``index.json`` records (backbone, dim, count, ...).
        embeddings_file: the ``.npy`` file `embeddings` maps, when it was loaded mapped.
        evidence: a tagger's label evidence, one row per item (see :attr:`evidence`).
        projected: the unit rows projected by the head ``meta.projected_ann`` names (its ANN part
            is read from the folder, or built by :meth:`build_projected_ann`); without them the
            record is dropped.

    Raises:
        AudioIndexError: `evidence` with another number of rows than items (E610); no items
            (E639: no index is ever empty, so none is searched, saved or written empty).

    Example:
        >>> import numpy as np
        >>> index = AudioIndex.from_captions(["a", "b"], ["rain", None], "my-encoder",
        ...                                  embeddings=np.eye(2), parse_captions=False)
        >>> len(index), index.dim, index.backbone_name
        (2, 2, 'my-encoder')
        >>> index.search(np.array([0.0, 1.0]), k=1)[1].tolist()
        [[1]]
    """

    def __init__(
        self, embeddings: np.ndarray, records: IndexRecords, meta: IndexMeta,
        *, embeddings_file: Path | None = None, evidence: LabelEvidence | None = None,
        projected: np.ndarray | None = None,
    ) -> None:
        if meta.count < 1 or len(embeddings) < 1:
            raise AudioIndexError(Errors.E639.format(where="given", why=f" (count {meta.count})"))
        if evidence is not None and len(evidence) != meta.count:
            raise AudioIndexError(Errors.E610.format(what="the label evidence", found=len(evidence),
                                                     count=meta.count))
        labels = None if evidence is None else evidence.labels
        self._array = embeddings
        self._records = records
        self.meta = meta if meta.evidence_labels == labels else replace(meta, evidence_labels=labels)
        if projected is None and self.meta.projected_ann is not None:
            self.meta = replace(self.meta, projected_ann=None)
        self._projected: np.ndarray | None = projected if self.meta.projected_ann is not None else None
        self._projected_faiss: FaissSearcher | ShardedSearcher | None = None
        self._projected_file: Path | None = None
        self._projected_identity: tuple[int, int] | None = None
        self._evidence = evidence
        self._embeddings_file = embeddings_file
        self._tensors: dict[str, torch.Tensor] = {}
        self._faiss: FaissSearcher | ShardedSearcher | None = None
        self._faiss_file: Path | None = None
        self._faiss_identity: tuple[int, int] | None = None
        #: How the folder it was loaded from is split (shards, removed items); one part otherwise.
        self.layout = ShardLayout()
        #: The state of the folder it was loaded from (:func:`~fortekit.search.index.state.index_state`),
        #: None for an index built or changed in memory.
        self.state: str | None = None

    def __len__(self) -> int:
        return self.meta.count

    def __repr__(self) -> str:
        mapped = ", memory-mapped" if self._embeddings_file is not None else ""
        return (f"{type(self).__name__}(count={len(self)}, dim={self.dim}, "
                f"backbone={self.backbone_name!r}{mapped})")

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def build(
        cls, items: Sequence[AudioItem], backbone: Backbone | str, *, parse_captions: bool = True,
        batch_size: int = 64, progress: bool = False,
        predicate_sets: Sequence[frozenset[PredicateSymbol]] | None = None,
        backbone_options: Mapping[str, Any] | None = None, caption_parser: CaptionParser | None = None,
        captioner: Captioner | str | None = None, captioner_options: Mapping[str, Any] | None = None,
    ) -> AudioIndex:
        """Index audio items through the backbone's audio tower (``encode_audio``).

        Args:
            items: the items; each needs an ``item_id`` (else its ``path`` is the id); its
                ``text`` is the stored caption.
            backbone: the encoder, or a registered backbone name (built with `backbone_options`,
                as :class:`~fortekit.search.retriever.Retriever` builds one) (``minilm``
                embeds each item's text instead of audio).
            parse_captions: parse the captions into predicate sets for Stage 3.
            batch_size: items per ``encode_audio`` call.
            progress: tqdm progress bars on stderr.
            predicate_sets: precomputed predicate sets, one per item (skips parsing).
            backbone_options: the options the backbone was built with (or, for a name, is built
                with), recorded so that ``fortekit search`` can rebuild it (JSON values).
            caption_parser: a :class:`fortekit.fol.caption.CaptionParser` to parse with.
            captioner: a captioner plug-in (or its registered name, built with
                `captioner_options`) whose captions of the audio replace the items' ``text``
                (before embedding); a :class:`~fortekit.plugins.LabelTagger`'s label
                evidence is kept too.
            captioner_options: the captioner's options, recorded in ``index.json`` (JSON values).

        Returns:
            The index (in memory; :meth:`save` writes it).

        Raises:
            AudioIndexError: no items (E606), an item without id (E617), an id that breaks the
                id rule (E640, :func:`~fortekit.search.index.format.check_item_ids`), duplicate ids
                (E605), a bad batch size (E613), encoder output of the wrong shape (E619),
                with NaN (E607) or a row of zeros (E625), `predicate_sets` of the wrong length
                (E610), unusable label evidence (E622), options that are not JSON values or a
                backbone name that is not registered (E613).
            EvaluationError: the captioner failed or returned no str per item (E482, E483).
            AudioReadError, EncoderInputError: from the backbone, for an unreadable item.

        Example:
            >>> items = [AudioItem(path="rain.wav", text="rain on a roof", item_id="rain")]
            >>> AudioIndex.build(items, get_backbone("hf-clap", model="clap/"))  # doctest: +SKIP
            AudioIndex(count=1, dim=512, backbone='hf-clap')
        """
        items = list(items)
        if not items:
            raise AudioIndexError(Errors.E606.format(what="no items were given"))
        ids = [item_id_of(item, position) for position, item in enumerate(items)]
        check_item_ids(ids)  # before any model runs
        check_unique_ids(ids)
        evidence: LabelEvidence | None = None
        name, options = None, check_options(captioner_options or {}, "captioner_options")
        if captioner is not None:  # caption first: a text backbone (minilm) then embeds the captions
            from fortekit.search.index.captioning import caption_audio, captioner_name

            if isinstance(captioner, str):
                from fortekit.plugins import get_captioner

                captioner = get_captioner(captioner, **options)
            name = captioner_name(captioner)
            captioned, evidence = caption_audio(captioner, items, progress=progress)
            items = [replace(item, text=text) for item, text in zip(items, captioned, strict=True)]
        if isinstance(backbone, str):
            backbone = backbone_named(backbone, backbone_options)
        embeddings = embed_items(backbone, items, ids, batch_size, progress)
        captions = [item.text if item.text is not None and item.text.strip() else None for item in items]
        paths = [os.fspath(item.path) if item.path is not None else None for item in items]
        index = cls._assemble(
            embeddings, ids, captions, paths, backbone.name, normalise=True, parse=parse_captions,
            predicate_sets=predicate_sets, progress=progress, options=backbone_options, parser=caption_parser,
        )
        if name is not None:
            index.meta = replace(index.meta, captioner=name, captioner_options=options)
        return index if evidence is None else index.with_evidence(evidence)

    @classmethod
    def from_captions(
        cls, ids: Sequence[str], captions: Sequence[str | None], backbone: Backbone | str = "minilm", *,
        embeddings: Any = None, parse_captions: bool = True, batch_size: int = 64, progress: bool = False,
        normalise: bool = True, predicate_sets: Sequence[frozenset[PredicateSymbol]] | None = None,
        backbone_options: Mapping[str, Any] | None = None, caption_parser: CaptionParser | None = None,
    ) -> Self:
        """Index a caption-indexed collection: each item stands for its caption's embedding.

        Args:
            ids: one unique id per item.
            captions: one caption per item (None: no caption; only with `embeddings`).
            backbone: the encoder, or a registered backbone name (default "minilm"), built with
                `backbone_options` as :class:`~fortekit.search.retriever.Retriever` builds one;
                with `embeddings`, the name is only recorded (no model is loaded).
            embeddings: (n, d) numpy or torch rows to store instead of embedding the
                captions (e.g. the mean of several caption embeddings per clip).
            parse_captions: parse the captions into predicate sets for Stage 3.
            batch_size: captions per ``encode_audio`` call.
            progress: tqdm progress bars on stderr.
            normalise: scale the rows to unit L2 norm before storing them. False stores the
                rows as given (``"normalised": false``); every search path
                (``fortekit search``, :class:`~fortekit.search.retriever.Retriever`, FAISS) still
                ranks by cosine, scaling the rows when it reads them.
            predicate_sets: precomputed predicate sets, one per item (skips parsing).
            backbone_options: the backbone's options, recorded (see :meth:`build`).
            caption_parser: a :class:`fortekit.fol.caption.CaptionParser` to parse with.

        Returns:
            The index.

        Raises:
            AudioIndexError: no items (E606), lengths that differ (E610), duplicate ids (E605), an
                id that breaks the id rule (E640, :func:`~fortekit.search.index.format.check_item_ids`),
                a missing caption to embed (E617), embeddings of the wrong dimension (E608),
                shape or type (E618), with NaN (E607) or a row of zeros (E625), a backbone name
                that is not registered (E613).
            FortekitError: from the backbone a name builds (a missing model or package).

        Example:
            >>> AudioIndex.from_captions(["x"], ["wind"], "enc", embeddings=[[3.0, 4.0]],
            ...                          parse_captions=False).embeddings.tolist()
            [[0.6000000238418579, 0.800000011920929]]
        """
        ids, captions = [str(item_id) for item_id in ids], list(captions)
        if not ids:
            raise AudioIndexError(Errors.E606.format(what="no ids were given"))
        if len(captions) != len(ids):
            raise AudioIndexError(Errors.E610.format(what="captions", found=len(captions), count=len(ids)))
        check_item_ids(ids)
        check_unique_ids(ids)
        name = backbone if isinstance(backbone, str) else backbone.name
        if embeddings is not None:
            dim = None if isinstance(backbone, str) else int(backbone.dim)
            array = rows_from_embeddings(embeddings, len(ids), dim, name)
        else:
            if isinstance(backbone, str):
                backbone = backbone_named(backbone, backbone_options)
            array = embed_items(backbone, caption_items(ids, captions), ids, batch_size, progress)
        clean = [caption if caption is not None and caption.strip() else None for caption in captions]
        return cls._assemble(
            array, ids, clean, [None] * len(ids), name, normalise=normalise, parse=parse_captions,
            predicate_sets=predicate_sets, progress=progress, options=backbone_options, parser=caption_parser,
        )

    @classmethod
    def _assemble(
        cls, embeddings: np.ndarray, ids: list[str], captions: list[str | None], paths: list[str | None],
        backbone: str, **options: Any,
    ) -> Self:
        array, records, meta = assemble_parts(embeddings, ids, captions, paths, backbone, **options)
        return cls(array, records, meta)

    # -- the columns ---------------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        """The item ids, in row order."""
        return self._records.ids

    @property
    def captions(self) -> list[str | None]:
        """The stored captions (None where an item has none)."""
        return self._records.captions

    @property
    def paths(self) -> list[str | None]:
        """The audio file of each item (None for caption-indexed items)."""
        return self._records.paths

    @property
    def predicate_sets(self) -> list[frozenset[PredicateSymbol]]:
        """``Pred(Pi(caption))`` per item; an empty frozenset when there is no (parsable) caption."""
        return self._records.predicate_sets

    @property
    def dim(self) -> int:
        """The embedding dimension d."""
        return self.meta.dim

    @property
    def backbone_name(self) -> str:
        """The name of the backbone that made the embeddings."""
        return self.meta.backbone

    @property
    def unparsed_count(self) -> int:
        """How many items have no predicate set because their caption is missing or unparsable."""
        return self.meta.unparsed

    @property
    def evidence(self) -> LabelEvidence | None:
        """A tagger's label evidence for the items (one row per item), or None.

        Formula scoring reads it (``Retriever`` takes it from the index); it is saved as
        ``evidence.safetensors`` and its label phrases in ``index.json``.
        """
        return self._evidence

    def with_evidence(self, evidence: LabelEvidence | None) -> AudioIndex:
        """This index with other label evidence (None: none), sharing the rows and columns.

        Raises:
            AudioIndexError: evidence with another number of rows than items (E610).

        Example:
            >>> from fortekit.plugins.evidence import LabelEvidence
            >>> index = AudioIndex.from_captions(["a"], ["rain"], "enc", embeddings=[[1.0]],
            ...                                  parse_captions=False)
            >>> index.with_evidence(LabelEvidence(("rain falling",), [[0.9]])).meta.evidence_labels
            ('rain falling',)
        """
        other = type(self)(self._array, self._records, self.meta, embeddings_file=self._embeddings_file,
                           evidence=evidence, projected=self._projected)
        other._faiss, other._faiss_file = self._faiss, self._faiss_file
        other._faiss_identity = self._faiss_identity
        other._projected_faiss, other._projected_file = self._projected_faiss, self._projected_file
        other._projected_identity = self._projected_identity
        return other

    @property
    def embeddings(self) -> np.ndarray:
        """The float32 (n, d) rows, read-only (memory-mapped after :meth:`load`)."""
        view = self._array.view()
        view.flags.writeable = False
        return view

    # -- files --------------------------------------------------------------------------------
    def save(self, directory: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the index to a directory (index.json, embeddings.npy, items.jsonl[, faiss.index,
        evidence.safetensors, projected.npy, projected.index]), all or nothing.

        The files are written into a new folder beside `directory`, forced to disk, and the
        folder is then renamed into place, under an exclusive lock (``.NAME.lock`` beside it):
        a save that fails or is killed leaves the previous index as it was, and two saves at
        once never mix (the second gets E742). The folder holds the marker file
        ``.fortekit-output``; only such a folder (or an index an older fortekit wrote, holding
        index files only) is ever replaced, and only with `overwrite`.

        Args:
            directory: the index folder (its parents are created when missing).
            overwrite: replace an index already there.

        Returns:
            The directory.

        Raises:
            AudioIndexError: an index is already there and `overwrite` is False (E614); the
                folder holds files that are not an index fortekit wrote (E626).
            OutputError: the folder is a link (E741) or a file (E745); another run is writing
                it (E742).
            OutputWriteError: a write failed (a full disk, ``ulimit -f``): E743, naming the file;
                the previous index is unchanged.

        Example:
            >>> index.save("clotho.index")  # doctest: +SKIP
            PosixPath('clotho.index')
        """
        writer = None
        if self.meta.faiss is not None:
            searcher = self._faiss_searcher()
            if not isinstance(searcher, FaissSearcher):  # parts of a grown index: one part again
                searcher = self._rebuilt_faiss(searcher)
            writer = searcher.write
        evidence = None if self._evidence is None else evidence_writer(self._evidence)
        optional: dict[str, Any] = {EVIDENCE_FILE: evidence}
        if self.meta.projected_ann is not None and self._projected is not None:
            from fortekit.search.index.writing import array_writer

            projected = self._projected_searcher()
            if not isinstance(projected, FaissSearcher):  # parts of a grown index: one part again
                projected = self._rebuilt_projected(projected)
            optional[PROJECTED_ROWS_FILE] = array_writer(self._projected)
            optional[PROJECTED_FAISS_FILE] = projected.write
        return write_index_files(directory, self.meta, self._array, self._records, overwrite=overwrite,
                                 faiss_writer=writer, optional_files=optional)

    @classmethod
    def load(
        cls, directory: str | os.PathLike[str], *, mmap: bool = True, backbone: Backbone | None = None,
    ) -> AudioIndex:
        """Read an index that :meth:`save` wrote, checking every file and every row.

        Every field of ``index.json`` is type-checked; every row of ``embeddings.npy`` must be
        finite and not all zeros, and of length 1 (within
        :data:`~fortekit.search.index.format.NORM_TOLERANCE`) when the index says
        ``"normalised": true``. An index that says ``"normalised": false`` is scaled to unit
        rows when searched, on every path.

        Args:
            directory: the index directory.
            mmap: map embeddings.npy read-only instead of reading it into memory.
            backbone: when given, check that it is the index's backbone (E609).

        Returns:
            The index (a FAISS index, if saved, is read when first used).

        Raises:
            AudioIndexError: a missing file (E601; E627 when an interrupted save left the
                previous index aside), every item removed (E639), corrupt JSON, an array or a
                field of the wrong type (E600), a format from the future (E602), counts that
                disagree (E603), a bad dtype or shape (E604), duplicate ids (E605), a bad
                predicate symbol (E611), rows with NaN or infinity (E623), rows of another
                length than 1 in a normalised index (E624), rows of zeros (E625), another
                backbone (E609), damaged label evidence (E621).

        Example:
            >>> AudioIndex.load("clotho.index", backbone=get_backbone("minilm"))  # doctest: +SKIP
            AudioIndex(count=3839, dim=384, backbone='minilm', memory-mapped)
        """
        root = Path(directory)
        from fortekit.search.index.state import _state_of_files

        # A save swaps in a whole new folder: files read while the folder stayed the same come
        # from one build. A read that a swap overtook is done again (never a mix of two builds).
        for attempt in range(_READ_ATTEMPTS):
            before = folder_identity(root)
            try:
                index = cls._read(root, mmap=mmap)
                index.state = _state_of_files(root)  # of the files just read: checked with them below
            except AudioIndexError:
                if attempt + 1 < _READ_ATTEMPTS and folder_identity(root) != before:
                    continue
                raise
            if folder_identity(root) == before:
                break
        if backbone is not None:
            index.check_backbone(backbone)
        return index

    @classmethod
    def _read(cls, root: Path, *, mmap: bool) -> AudioIndex:
        from fortekit.search.index.shards import (
            SHARDED_FORMAT_VERSION,
            merge_parts,
            read_manifest,
            read_part,
            read_parts,
        )

        base = read_part(root, mmap=mmap)
        if base.meta.format_version >= SHARDED_FORMAT_VERSION:  # shards or removed items: merged here
            manifest = read_manifest(root)
            merged = merge_parts(read_parts(root, base, manifest, mmap=mmap), manifest)
            index = cls(merged.embeddings, merged.records, merged.meta, evidence=merged.evidence,
                        projected=merged.projected)
            index._faiss, index.layout = merged.searcher, merged.layout
            index._projected_faiss = merged.projected_searcher
            return index
        meta = base.meta
        index = cls(base.embeddings, base.records, meta,
                    embeddings_file=root / EMBEDDINGS_FILE if mmap else None, evidence=base.evidence,
                    projected=base.projected)
        if meta.faiss is not None:  # read when first used: it must then still be this build's file
            index._faiss_file = root / FAISS_FILE
            index._faiss_identity = folder_identity(index._faiss_file)
        if index.meta.projected_ann is not None:  # likewise
            index._projected_file = root / PROJECTED_FAISS_FILE
            index._projected_identity = folder_identity(index._projected_file)
        return index


def backbone_named(name: str, options: Mapping[str, Any] | None = None) -> Backbone:
    """The backbone a registered name stands for, built with `options` (what a Retriever does).

    Args:
        name: a name from :func:`fortekit.plugins.available_backbones` ("minilm", "hf-clap", ...).
        options: the plug-in's options (``device``, ``model``, ...).

    Returns:
        The backbone.

    Raises:
        AudioIndexError: no backbone has that name (E613, listing the names there are).
        FortekitError: from the plug-in (a missing model or package).

    Example:
        >>> backbone_named("no-such-encoder")
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E613] backbone must be a Backbone object or a registered ...
    """
    from fortekit.errors import UnknownPluginError
    from fortekit.plugins import available_backbones, get_backbone

    try:
        return get_backbone(name, **dict(options or {}))
    except UnknownPluginError:
        expected = f"a Backbone object or a registered backbone name ({', '.join(available_backbones())})"
        raise AudioIndexError(Errors.E613.format(name="backbone", expected=expected, value=name)) from None
