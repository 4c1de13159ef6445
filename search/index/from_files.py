"""An index folder from files: what ``fortekit index build``, ``add`` and ``remove`` do.

The commands only read their options and forward here, as spaCy's ``evaluate_cli`` forwards to
``evaluate``:

* :func:`build_index_folder`: a captions file or audio files (:class:`IndexSource`) embedded
  by a backbone, captioned and parsed, then saved as an index folder, all or nothing; the output
  is checked and locked before any model loads;
* :func:`add_files_to_index`: new items embedded the way the index records (backbone, options,
  parsing, captioner) and appended as a shard;
* :func:`read_ids_file`: the ids file of ``fortekit index remove``.

The Ray build of audio files (``--ray``) is
:func:`fortekit.search.distributed.index_build.build_index_folder_with_ray`, over the same steps.

Example:
    >>> check_build_options(IndexSource(audio="clips/", text_column="caption"))
    Traceback (most recent call last):
    ...
    fortekit.errors.AudioIndexError: [E620] `fortekit index build`: --text-column applies to --captions, ...
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import AudioIndexError, Errors

if TYPE_CHECKING:
    from collections.abc import Callable

    from fortekit.plugins.protocols import AudioItem, Backbone
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.growing import AddReport
    from fortekit.search.index.projected import ProjectedHead
    from fortekit.search.index.sources import CaptionTable

__all__ = [
    "IndexSource",
    "add_files_to_index",
    "backbone_options",
    "build_index",
    "build_index_folder",
    "build_inputs",
    "check_build_options",
    "read_audio_source",
    "read_ids_file",
    "recordable_options",
    "save_index_folder",
    "source_ids",
]

StrPath = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class IndexSource:
    """What an index is built from: a captions file or audio files (one of the two).

    Attributes:
        captions: a .csv/.tsv, .jsonl or .txt file of captions (a caption-indexed collection): a
            BEIR ``corpus.jsonl`` as it is, a Clotho or AudioCaps CSV one item per clip (read by
            :func:`fortekit.collection_reader.read_items`).
        audio: a folder of audio files (searched recursively) or a text file listing their paths.
        id_column: the captions file's id column or key (default: a caption CSV's clip id, else
            ``_id``, ``id`` or ``file_name``).
        text_column: its caption column or key (default: a caption CSV's captions, else ``text``
            or ``caption``, with a BEIR ``captions`` list); a key holding a list is one item's captions.
        merge_duplicates: one item per repeated id, the mean of its captions' embeddings.

    Example:
        >>> IndexSource(captions="clotho.csv").describe()
        'captions file clotho.csv'
    """

    captions: StrPath | None = None
    audio: StrPath | None = None
    id_column: str | None = None
    text_column: str | None = None
    merge_duplicates: bool = False

    def describe(self) -> str:
        """The source in words, for messages."""
        if self.captions is not None:
            return f"captions file {os.fspath(self.captions)}"
        return f"audio {os.fspath(self.audio)}" if self.audio is not None else "no source"


_CAPTIONS_ONLY = (("id_column", "--id-column"), ("text_column", "--text-column"),
                  ("merge_duplicates", "--merge-duplicates"))


def check_build_options(
    source: IndexSource, *, captioner: str | None = None, captioner_options: Mapping[str, Any] | None = None,
    ann: str | None = None, faiss: str | None = None,
) -> None:
    """The settings of an index build that do not go together (E620), checked before any model loads.

    Args:
        source: what is indexed.
        captioner: a captioner plug-in's name (audio only).
        captioner_options: its options (only with a captioner).
        ann: the approximate index to build (``auto``, ``hnsw``, ``ivfpq``, ``none``).
        faiss: a FAISS index of any kind instead (``flat``, ``ivf``, ``hnsw``, ``ivfpq``).

    Raises:
        AudioIndexError: settings that do not go together (E620).

    Example:
        >>> check_build_options(IndexSource(captions="c.csv"), ann="hnsw")
    """

    def fail(problem: str, fix: str) -> AudioIndexError:
        return AudioIndexError(Errors.E620.format(problem=problem, fix=fix))

    if (source.captions is None) == (source.audio is None):
        raise fail("give a captions file or audio files, one of the two",
                   "Give --captions FILE (IndexSource(captions=...)) or --audio DIR_OR_LIST (audio=...).")
    if faiss is not None and ann is not None:
        raise fail(f"--faiss {faiss} and --ann {ann} both name the FAISS index to build",
                   "Give one: --ann auto|hnsw|ivfpq|none (approximate search), or --faiss "
                   "flat|ivf|hnsw|ivfpq.")
    if captioner is not None and source.captions is not None:
        raise fail("--captioner captions audio, but --captions gives text items",
                   "Index the audio files with --audio, or leave out --captioner: the captions file "
                   "already holds the captions.")
    if captioner_options and captioner is None:
        raise fail("--captioner-option is given without --captioner", "Name the captioner with --captioner "
                   "NAME, or leave out --captioner-option.")
    if captioner is not None and not captioner.strip():
        raise fail("--captioner is empty", "Name a captioner, e.g. --captioner tagger.")
    if source.audio is not None:
        for name, flag in _CAPTIONS_ONLY:
            if getattr(source, name) not in (None, False):
                raise fail(f"{flag} applies to --captions, not to --audio",
                           f"Leave out {flag}: audio items are named by their paths and captioned by "
                           "their sidecar .txt files or by --captioner.")


def backbone_options(
    given: Mapping[str, Any] | None = None, device: str | None = None,
    recorded: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A backbone's options: the `recorded` ones, overridden by the `given` ones, plus `device` when given.

    Example:
        >>> backbone_options({"batch_size": 4}, "cpu", recorded={"batch_size": 16, "model": "/m"})
        {'batch_size': 4, 'model': '/m', 'device': 'cpu'}
    """
    options = {**(recorded or {}), **(given or {})}
    if device is not None:
        options["device"] = device
    return options


def recordable_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options worth recording in ``index.json``: no device; existing paths made absolute.

    Example:
        >>> recordable_options({"device": "cpu", "batch_size": 8})
        {'batch_size': 8}
    """
    recorded = {}
    for key, value in options.items():
        if key == "device":
            continue
        if isinstance(value, str) and value and Path(value).expanduser().exists():
            value = str(Path(value).expanduser().resolve())
        recorded[key] = value
    return recorded


def build_inputs(out: StrPath, source: IndexSource) -> dict[str, Any]:
    """What a build reads that its output folder may not be or hold (E740): the captions file, the
    audio list file or folder. (An index inside the audio folder harms nothing: the save replaces
    the index folder alone.)

    Example:
        >>> build_inputs("clotho.index", IndexSource(captions="clotho.csv"))
        {'captions file': 'clotho.csv'}
    """
    inputs: dict[str, Any] = {"captions file": source.captions}
    if source.audio is not None:
        audio, folder = Path(source.audio).expanduser(), Path(out).expanduser()
        try:
            inside = audio.is_dir() and audio.resolve() in folder.resolve().parents
        except (OSError, RuntimeError):
            inside = False
        inputs["audio" if audio.is_file() else "audio folder"] = None if inside else audio
    return inputs


def read_audio_source(audio: StrPath) -> list[AudioItem]:
    """The audio items of a folder or a list file, their ids checked by the id rule (before any model loads).

    Raises:
        AudioIndexError: a missing source or listed file (E615), no audio files (E606), an id the
            id rule refuses (E640).

    Example:
        >>> [item.item_id for item in read_audio_source("clips/")]  # doctest: +SKIP
        ['dog/bark.wav', 'rain.flac']
    """
    from fortekit.search.index.build import item_id_of
    from fortekit.search.index.format import check_item_ids
    from fortekit.search.index.sources import find_audio_items

    items = find_audio_items(audio)
    check_item_ids([item_id_of(item, position) for position, item in enumerate(items)],
                   source=f" of {os.fspath(audio)}")
    return items


def source_ids(source: IndexSource) -> list[str]:
    """The ids of the items `source` makes, read and checked without any model (E605, E606, E615, E640).

    One per item: a captions file's ids (one per repeated id with ``merge_duplicates``), or the
    ids of the audio files.

    Example:
        >>> source_ids(IndexSource(captions="new.csv"))  # doctest: +SKIP
        ['clip7', 'clip8']
    """
    if source.audio is not None:
        from fortekit.search.index.build import item_id_of

        return [item_id_of(item, position) for position, item in enumerate(read_audio_source(source.audio))]
    return list(dict.fromkeys(_read_captions(source).ids))


def _read_captions(source: IndexSource) -> CaptionTable:
    """The captions file, read and checked before the (slow) model load, so that its errors come at once."""
    from fortekit.search.index.format import check_item_ids, check_unique_ids
    from fortekit.search.index.sources import read_caption_file

    if source.captions is None:  # check_build_options refuses a source without either
        raise TypeError("IndexSource has no captions file")
    table = read_caption_file(source.captions, id_column=source.id_column, caption_column=source.text_column)
    check_item_ids(table.ids, source=f" of the captions file {os.fspath(source.captions)}")
    if not source.merge_duplicates:
        check_unique_ids(table.ids)
    return table


def _index_from_captions(
    table: CaptionTable, backbone: Backbone, *, merge_duplicates: bool, parse: bool, batch_size: int,
    progress: bool, recorded: dict[str, Any],
) -> AudioIndex:
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.build import caption_means
    from fortekit.search.index.sources import group_duplicates

    common: dict[str, Any] = {"parse_captions": parse, "batch_size": batch_size, "progress": progress,
              "backbone_options": recorded}
    if not merge_duplicates and all(len(texts) <= 1 for texts in table.texts):
        return AudioIndex.from_captions(table.ids, table.captions, backbone, **common)
    # One item per clip (and per id, with merge_duplicates): the mean of its captions' embeddings,
    # as `fortekit eval` makes it (caption_means); its own caption is stored and parsed.
    unique, groups = group_duplicates(table.ids) if merge_duplicates else (
        table.ids, [[position] for position in range(len(table.ids))])
    texts = [tuple(text for position in positions for text in table.texts[position]) for positions in groups]
    means = caption_means(backbone, texts, unique, batch_size=batch_size, progress=progress)
    firsts = [table.captions[positions[0]] for positions in groups]
    return AudioIndex.from_captions(unique, firsts, backbone, embeddings=means, **common)


def build_index(
    source: IndexSource, *, backbone: str = "minilm", options: Mapping[str, Any] | None = None,
    captioner: str | None = None, captioner_options: Mapping[str, Any] | None = None, parse: bool = True,
    batch_size: int = 64, progress: bool = False,
) -> AudioIndex:
    """The index of `source`, in memory (:func:`build_index_folder` saves it).

    Args:
        source: what is indexed.
        backbone: the registered backbone name.
        options: the backbone's options (``device`` included); the others are recorded.
        captioner: with audio, a captioner plug-in whose captions are stored.
        captioner_options: its options.
        parse: parse the captions into predicate sets.
        batch_size: items per encoder call.
        progress: progress bars on stderr.

    Returns:
        The :class:`~fortekit.search.index.audio_index.AudioIndex`.

    Raises:
        AudioIndexError: an unreadable source, a bad id (E615, E605, E606, E640), and what
            :meth:`AudioIndex.build <fortekit.search.index.audio_index.AudioIndex.build>` raises.

    Example:
        >>> source = IndexSource(captions="clotho.csv")
        >>> index = build_index(source, options={"device": "cpu"})  # doctest: +SKIP
        >>> len(index)  # doctest: +SKIP
        3839
    """
    from fortekit.plugins import get_backbone
    from fortekit.search.index.audio_index import AudioIndex

    check_build_options(source, captioner=captioner, captioner_options=captioner_options)
    options = dict(options or {})
    if source.audio is not None:
        items = read_audio_source(source.audio)
        chosen_options = dict(captioner_options or {})
        chosen = None
        if captioner is not None:
            from fortekit.plugins import get_captioner

            chosen = get_captioner(captioner, **chosen_options)
        model = get_backbone(backbone, **options)
        return AudioIndex.build(
            items, model, parse_captions=parse, batch_size=batch_size, progress=progress,
            backbone_options=recordable_options(options), captioner=chosen,
            captioner_options=recordable_options(chosen_options),
        )
    table = _read_captions(source)
    model = get_backbone(backbone, **options)
    return _index_from_captions(table, model, merge_duplicates=source.merge_duplicates, parse=parse,
                                batch_size=batch_size, progress=progress,
                                recorded=recordable_options(options))


def save_index_folder(
    index: AudioIndex, out: StrPath, *, ann: str | None = None, faiss: str | None = None,
    overwrite: bool = False, projection: Callable[[AudioIndex], ProjectedHead | None] | None = None,
) -> AudioIndex:
    """Give `index` its approximate part (``ann``, default auto; or ``faiss``) and save it into `out`.

    Called under :func:`~fortekit.search.index.writing.index_output_lock` by
    :func:`build_index_folder` and the Ray build. With an approximate part and a `projection`
    that names a Stage 2 head for the index, the index also gets an ANN part over the rows that
    head projects (:meth:`~fortekit.search.index.audio_index.AudioIndex.build_projected_ann`).

    Example:
        >>> save_index_folder(index, "clotho.index", ann="none")  # doctest: +SKIP
    """
    from fortekit.search.index.ann import ann_kind

    kind = faiss if faiss is not None else ann_kind(ann or "auto", len(index))
    if kind is not None:
        index.build_faiss(kind)
        head = None if projection is None else projection(index)
        if head is not None:
            index.build_projected_ann(head)
    index.save(out, overwrite=overwrite)
    return index


def build_index_folder(
    out: StrPath, source: IndexSource, *, backbone: str = "minilm", options: Mapping[str, Any] | None = None,
    captioner: str | None = None, captioner_options: Mapping[str, Any] | None = None, parse: bool = True,
    batch_size: int = 64, ann: str | None = None, faiss: str | None = None, overwrite: bool = False,
    progress: bool = False, projection: Callable[[AudioIndex], ProjectedHead | None] | None = None,
) -> AudioIndex:
    """Build the index of `source` and save it into the folder `out`, all or nothing (``index build``).

    Before any encoding work, an output that is a file, a link, an input, a user's folder or an
    index without `overwrite` is refused, and the folder is locked, so a second build fails at once.

    Args:
        out: the index folder to write.
        source: what is indexed.
        backbone, options, captioner, captioner_options, parse, batch_size, progress: as
            :func:`build_index`.
        ann: the approximate index (``auto``: HNSW from ``ANN_MIN_ITEMS`` items on; ``hnsw``,
            ``ivfpq``, ``none``).
        faiss: a FAISS index of any kind instead (``flat``, ``ivf``, ``hnsw``, ``ivfpq``).
        overwrite: replace an index fortekit wrote in `out` (never a folder of other files).
        projection: given the built index, the Stage 2 head whose projected rows get an ANN part
            of their own (None: none); ``fortekit index build`` passes
            :func:`fortekit.search.pipeline.projected.default_head` (the head the index uses by default).

    Returns:
        The index, as saved.

    Raises:
        AudioIndexError: settings that do not go together (E620), an unreadable source, and what
            :func:`build_index` raises.
        OutputError: an output that may not be written (E614, E740-E744).

    Example:
        >>> index = build_index_folder("clotho.index", IndexSource(captions="clotho.csv"))  # doctest: +SKIP
    """
    from fortekit.search.index.writing import check_index_output, index_output_lock

    check_build_options(source, captioner=captioner, captioner_options=captioner_options, ann=ann,
                        faiss=faiss)
    check_index_output(out, overwrite=overwrite, inputs=build_inputs(out, source))
    with index_output_lock(out):
        check_index_output(out, overwrite=overwrite)  # as it is now that we hold the lock
        index = build_index(source, backbone=backbone, options=options, captioner=captioner,
                            captioner_options=captioner_options, parse=parse, batch_size=batch_size,
                            progress=progress)
        return save_index_folder(index, out, ann=ann, faiss=faiss, overwrite=overwrite, projection=projection)


def add_files_to_index(
    directory: StrPath, source: IndexSource, *, options: Mapping[str, Any] | None = None,
    device: str | None = None, batch_size: int = 64, progress: bool = False,
    head: ProjectedHead | None = None,
) -> AddReport:
    """Embed the items of `source` as the index was built and append them as a shard (``index add``).

    The backbone, its recorded options (under `options` and `device`), the parsing and, for
    audio, the captioner are those ``index.json`` records.

    Args:
        directory: the index folder.
        source: the new items.
        options: backbone options over the recorded ones.
        device: where the backbone runs (default: its options' or auto).
        batch_size: items per encoder call.
        progress: progress bars on stderr.
        head: for an index with an ANN part over projected rows, the head that projected them
            (:func:`fortekit.search.projection.ann.recorded_head`).

    Returns:
        The :class:`~fortekit.search.index.growing.AddReport`.

    Raises:
        AudioIndexError: a missing or damaged index (E601), an id the index holds already (E644) or
            repeated in `source` (E605), a part over projected rows without its head (E645), all said
            before any item is embedded; items that do not fit it, and what :func:`build_index` raises.
        OutputLockedError: another run holds the index (E742).

    Example:
        >>> add_files_to_index("clotho.index", IndexSource(captions="new.csv")).added  # doctest: +SKIP
        12
    """
    from fortekit.search.index.format import read_meta
    from fortekit.search.index.growing import (
        add_to_index,
        check_projected_head,
        read_layout,
        refuse_known_ids,
    )
    from fortekit.search.index.writing import index_output_lock

    root = Path(directory)
    meta = read_meta(root)  # before any model loads: a missing or damaged index is said at once
    check_projected_head(root, meta, head)
    with index_output_lock(root):  # a second add fails at once, not after the encoding work
        captioner = meta.captioner if source.audio is not None else None
        captioner_options = dict(meta.captioner_options) if captioner is not None else None
        check_build_options(source, captioner=captioner, captioner_options=captioner_options)
        # the new ids against the index's before any model loads or any item is embedded (E605, E644)
        refuse_known_ids(root, read_layout(root).live, source_ids(source), source=source.describe())
        new = build_index(source, backbone=meta.backbone,
                          options=backbone_options(options, device, recorded=dict(meta.backbone_options)),
                          captioner=captioner, captioner_options=captioner_options, parse=meta.parsed,
                          batch_size=batch_size, progress=progress)
        return add_to_index(root, new, head=head)


def read_ids_file(path: StrPath) -> list[str]:
    """The ids of an ids file: one a line, blank lines and surrounding spaces and tabs left out.

    Lines end at ``\\n`` alone (a ``\\r`` before it dropped), never at U+2028, U+0085 or a lone
    ``\\r`` in the middle of a line (:func:`fortekit.textio.read_text_lines`, the one line rule):
    an id the index holds is read back whole (the id rule, E640, keeps line breaks out of new ids).

    Raises:
        AudioIndexError: the file cannot be read, or a line is not UTF-8 (E615, with its number).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "gone.txt"
        >>> _ = path.write_bytes("a\\u2028b\\r\\n\\n  c \\nd\\x85e\\n".encode())
        >>> read_ids_file(path)
        ['a\\u2028b', 'c', 'd\\x85e']
    """
    from fortekit.textio import BadLine, read_text_lines

    hint = "Give a UTF-8 text file with one item id a line."
    ids: list[str] = []
    try:
        for number, text in read_text_lines(path):
            if isinstance(text, BadLine):
                raise AudioIndexError(Errors.E615.format(
                    what="ids file", path=path, problem=f"line {number} is {text.reason}", hint=hint))
            item_id = text.strip(" \t")  # the id rule keeps spaces and tabs off an id's ends
            if item_id:
                ids.append(item_id)
    except OSError as exc:
        raise AudioIndexError(Errors.E615.format(
            what="ids file", path=path, problem=f"{type(exc).__name__}: {exc}", hint=hint)) from None
    return ids
