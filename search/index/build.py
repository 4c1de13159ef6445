"""The steps of building an audio index: ids, batched encoding, checks, normalising, parsing.

:class:`fortekit.search.index.audio_index.AudioIndex` calls these; they are separate so that each
stays small and testable on its own.

Example:
    >>> import numpy as np
    >>> from fortekit.search.index.build import assemble_parts
    >>> rows, records, meta = assemble_parts(np.array([[3.0, 4.0]], dtype=np.float32), ["a"], [None],
    ...                                      [None], "enc", normalise=True, parse=False)
    >>> rows.tolist(), meta.count, records.predicate_sets
    ([[0.6000000238418579, 0.800000011920929]], 1, [frozenset()])
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fortekit._checks import check_int
from fortekit.errors import AudioIndexError, Errors
from fortekit.fol.predicates import PredicateSymbol
from fortekit.plugins.protocols import AudioItem, Backbone
from fortekit.search.index.format import ZERO_NORM, IndexMeta, IndexRecords, check_options
from fortekit.search.index.parse import caption_predicate_sets

__all__ = [
    "assemble_parts",
    "caption_items",
    "caption_means",
    "check_finite",
    "embed_items",
    "encode_in_batches",
    "item_id_of",
    "rows_from_embeddings",
]


def item_id_of(item: AudioItem, position: int) -> str:
    """An item's id: its ``item_id``, else its path.

    Raises:
        AudioIndexError: not an AudioItem, or neither id nor path (E617).

    Example:
        >>> item_id_of(AudioItem(path="clips/rain.wav"), 0)
        'clips/rain.wav'
    """
    if not isinstance(item, AudioItem):
        raise AudioIndexError(Errors.E617.format(
            index=position, label=type(item).__name__, problem="is not a fortekit.plugins.AudioItem",
            hint="Wrap each file as AudioItem(path=..., item_id=..., text=...).",
        ))
    if item.item_id is not None:
        return str(item.item_id)
    if item.path is not None:
        return os.fspath(item.path)
    raise AudioIndexError(Errors.E617.format(
        index=position, label=item.label(), problem="has neither an item_id nor a path",
        hint="Give every item an item_id (or a path, which then serves as its id).",
    ))


def caption_items(ids: Sequence[str], captions: Sequence[str | None]) -> list[AudioItem]:
    """One text-only AudioItem per caption, for a caption-indexed collection.

    Raises:
        AudioIndexError: a missing or blank caption (E617).

    Example:
        >>> caption_items(["a"], ["rain"])[0].text
        'rain'
    """
    for position, caption in enumerate(captions):
        if caption is None or not caption.strip():
            raise AudioIndexError(Errors.E617.format(
                index=position, label=ids[position], problem="has no caption to embed",
                hint="Give every item a caption, or pass embeddings=.",
            ))
    return [AudioItem(text=caption, item_id=item_id) for item_id, caption in zip(ids, captions, strict=True)]


def caption_means(
    backbone: Backbone, groups: Sequence[Sequence[str]], ids: Sequence[str] | None = None, *,
    batch_size: int = 64, progress: bool = False,
) -> np.ndarray:
    """Each item's vector from its captions: their text embeddings summed, scaled to unit length.

    The one definition of a clip's item (the direction of the mean of its captions' embeddings)
    that ``fortekit index build`` and ``fortekit eval`` share, so the same clip is the same item
    in both. Every caption is encoded with ``encode_text``, `batch_size` captions a call, in order.

    Args:
        backbone: the text encoder.
        groups: per item, its captions (one for an item of one caption).
        ids: the items' ids, for messages (default: their positions).
        batch_size: captions per encoder call.
        progress: a tqdm progress bar on stderr.

    Returns:
        float32 (items, d), unit rows (a row of zeros stays zero), on the CPU.

    Raises:
        AudioIndexError: an item without a caption (E617), a bad batch size (E613), a batch of the
            wrong shape (E619), NaN (E607).

    Example:
        >>> from fortekit.plugins import get_backbone
        >>> caption_means(get_backbone("minilm", device="cpu"), [["rain", "rain falls"], ["wind"]]).shape
        ... # doctest: +SKIP
        (2, 384)
    """
    check_int(batch_size, name="batch_size", error=AudioIndexError, message=Errors.E613)
    names = [str(item_id) for item_id in ids] if ids is not None else [str(n) for n in range(len(groups))]
    for position, captions in enumerate(groups):
        if not captions or not all(isinstance(c, str) and c.strip() for c in captions):
            raise AudioIndexError(Errors.E617.format(
                index=position, label=names[position], problem="has no caption to embed",
                hint="Give every item a caption (a text, or a list of captions).",
            ))
    flat = [caption for captions in groups for caption in captions]
    owners = np.repeat(np.arange(len(groups)), [len(captions) for captions in groups])
    name, dim = str(getattr(backbone, "name", type(backbone).__name__)), getattr(backbone, "dim", None)
    rows = encode_in_batches(backbone.encode_text, flat, name=name, dim=None if dim is None else int(dim),
                             batch_size=batch_size, progress=progress, unit="caption")
    sums = np.zeros((len(groups), rows.shape[1]), dtype=np.float32)
    np.add.at(sums, owners, rows)
    check_finite(sums, names, f"The backbone {name!r} produced them.")
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return np.ascontiguousarray(sums / np.maximum(norms, 1e-12), dtype=np.float32)


def encode_in_batches(
    encode: Any, inputs: Sequence[Any], *, name: str, dim: int | None, batch_size: int, progress: bool,
    unit: str = "item",
) -> np.ndarray:
    """``encode`` over ``inputs``, ``batch_size`` a call, into one float32 (n, d) array on the CPU.

    The one batching loop of the index's encoders (:func:`embed_items` for items,
    :func:`caption_means` for captions): each batch must come back as (len(batch), d).

    Args:
        encode: the encoder call (``backbone.encode_audio`` or ``backbone.encode_text``).
        inputs: what it is given, in order.
        name: the backbone's name, for messages and the progress bar.
        dim: the width each row must have, or None to take the first batch's.
        batch_size: inputs per call.
        progress: a tqdm progress bar on stderr.
        unit: the progress bar's unit.

    Returns:
        The rows, in input order ((0, dim or 0) for no inputs).

    Raises:
        AudioIndexError: a batch of the wrong shape (E619).

    Example:
        >>> encode_in_batches(lambda batch: np.ones((len(batch), 2)), ["a", "b", "c"], name="ones", dim=2,
        ...                   batch_size=2, progress=False).shape
        (3, 2)
    """
    from tqdm import tqdm

    out: np.ndarray | None = None
    with tqdm(total=len(inputs), desc=f"embedding ({name})", unit=unit, file=sys.stderr,
              disable=not progress) as bar:
        for start in range(0, len(inputs), batch_size):
            chunk = inputs[start:start + batch_size]
            rows: Any = encode(chunk)
            if hasattr(rows, "detach"):
                rows = rows.detach().float().cpu().numpy()
            shape = tuple(getattr(rows, "shape", ()))
            if len(shape) != 2 or shape[0] != len(chunk) or (dim is not None and shape[1] != dim):
                raise AudioIndexError(Errors.E619.format(
                    name=name, description=f"an array of shape {shape}", count=len(chunk), dim=dim or "d",
                ))
            if out is None:
                out = np.empty((len(inputs), shape[1]), dtype=np.float32)
            out[start:start + len(chunk)] = np.asarray(rows, dtype=np.float32)
            bar.update(len(chunk))
    return out if out is not None else np.zeros((0, dim or 0), dtype=np.float32)


def embed_items(
    backbone: Backbone, items: list[AudioItem], ids: list[str], batch_size: int, progress: bool,
) -> np.ndarray:
    """``encode_audio`` in batches into one float32 (n, dim) array.

    Args:
        backbone: the encoder.
        items: the items, in order.
        ids: their ids (for messages).
        batch_size: items per call.
        progress: a tqdm progress bar on stderr.

    Returns:
        The embeddings, on the CPU.

    Raises:
        AudioIndexError: a bad batch size (E613), a batch of the wrong shape (E619), NaN (E607).
    """
    check_int(batch_size, name="batch_size", error=AudioIndexError, message=Errors.E613)
    out = encode_in_batches(backbone.encode_audio, items, name=backbone.name, dim=int(backbone.dim),
                            batch_size=batch_size, progress=progress)
    check_finite(out, ids, f"The backbone {backbone.name!r} produced them.")
    return out


def rows_from_embeddings(embeddings: Any, count: int, dim: int | None, backbone: str) -> np.ndarray:
    """Caller-given embeddings (numpy, torch, nested lists) as float32 (count, d).

    Raises:
        AudioIndexError: not numeric or not 2-D (E618), the wrong count (E610), the wrong
            dimension for the backbone (E608). NaN is checked later (E607).

    Example:
        >>> rows_from_embeddings([[1, 2]], 1, None, "enc").dtype
        dtype('float32')
    """
    if hasattr(embeddings, "detach"):
        embeddings = embeddings.detach().float().cpu().numpy()
    try:
        array = np.asarray(embeddings, dtype=np.float32)
    except (ValueError, TypeError) as exc:
        raise AudioIndexError(Errors.E618.format(
            what="embeddings", dim=dim or "d", description=f"a {type(embeddings).__name__} ({exc})",
        )) from exc
    if array.ndim != 2 or array.shape[1] == 0:
        raise AudioIndexError(Errors.E618.format(
            what="embeddings", dim=dim or "d", description=f"an array of shape {array.shape}",
        ))
    if array.shape[0] != count:
        raise AudioIndexError(Errors.E610.format(what="embeddings", found=array.shape[0], count=count))
    if dim is not None and array.shape[1] != dim:
        raise AudioIndexError(Errors.E608.format(
            what="embeddings", found=array.shape[1], dim=dim, backbone=backbone,
        ))
    return np.ascontiguousarray(array)


def check_finite(array: np.ndarray, ids: Sequence[str], source: str = "") -> None:
    """Raise E607 naming the first items whose rows hold NaN or infinity.

    Example:
        >>> check_finite(np.array([[1.0], [np.nan]]), ["a", "b"])
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E607] 1 embedding(s) hold NaN or infinite values (items 'b'). ...
    """
    bad = ~np.isfinite(array).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        examples = ", ".join(repr(ids[row]) for row in rows[:5])
        raise AudioIndexError(Errors.E607.format(count=len(rows), examples=examples, source=source))


def assemble_parts(
    embeddings: np.ndarray, ids: list[str], captions: list[str | None], paths: list[str | None],
    backbone: str, *, normalise: bool = True, parse: bool = True,
    predicate_sets: Sequence[frozenset[PredicateSymbol]] | None = None, progress: bool = False,
    options: Mapping[str, Any] | None = None, parser: Any = None,
) -> tuple[np.ndarray, IndexRecords, IndexMeta]:
    """Check and normalise the rows, compute the predicate sets, and write the metadata.

    Args:
        embeddings: float32 (n, d).
        ids, captions, paths: the per-item columns.
        backbone: the backbone's name.
        normalise: scale rows to unit norm.
        parse: parse the captions (ignored when `predicate_sets` is given).
        predicate_sets: precomputed sets, one per item.
        progress: a progress bar for parsing.
        options: the backbone options to record.
        parser: the caption parser to use.

    Returns:
        (rows, records, meta).

    Raises:
        AudioIndexError: NaN (E607), a row of zeros (E625), `predicate_sets` of the wrong length
            (E610), options that are not JSON values (E613).
    """
    check_finite(embeddings, ids)
    recorded = check_options(options or {}, "backbone_options")  # JSON values: the index must load again
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    zero = np.flatnonzero(norms[:, 0] <= ZERO_NORM)
    if len(zero):  # no direction: a cosine of 0 with every query, whatever the query says
        examples = ", ".join(repr(ids[row]) for row in zero[:5])
        raise AudioIndexError(Errors.E625.format(count=len(zero), examples=examples,
                                                 source=f" (backbone {backbone!r})"))
    if normalise:
        embeddings = embeddings / norms
    unparsed = 0
    if predicate_sets is not None:
        sets = [frozenset(symbols) for symbols in predicate_sets]
        if len(sets) != len(ids):
            raise AudioIndexError(Errors.E610.format(what="predicate_sets", found=len(sets), count=len(ids)))
        parse = True
    elif parse:
        report = caption_predicate_sets(captions, parser=parser, progress=progress)
        sets, unparsed = report.sets, report.unparsed
    else:
        sets = [frozenset()] * len(ids)
    meta = IndexMeta(
        backbone=backbone, dim=int(embeddings.shape[1]), count=len(ids), normalised=normalise,
        parsed=parse, unparsed=unparsed, backbone_options=recorded,
    )
    rows = np.ascontiguousarray(embeddings, dtype=np.float32)
    return rows, IndexRecords(list(ids), list(captions), list(paths), sets), meta
