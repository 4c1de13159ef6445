"""A generated collection for training: clips, captions, tag targets, cached log-mels and text embeddings.

The log-mels of every clip are computed once with the model's own front end and kept as a
float16 ``.npy`` file in the cache folder, keyed by the front-end settings and the clip list;
the MiniLM embeddings of the captions likewise. A second run (another seed, more epochs)
reads both back in seconds.

Example:
    >>> layout = tag_layout()
    >>> len(layout.classes), [dim for dim, _ in layout.dimensions]
    (15, ['loudness', 'pitch', 'rate', 'distance'])
    >>> clip = Clip("c1", "train", Path("a.wav"), ("a dog barks",),
    ...             ({"class": "dog", "attributes": ["loud"], "onset": 1.0, "bed": False},), "single")
    >>> targets = tag_targets([clip], layout)
    >>> row = layout.classes.index("dog")
    >>> float(targets["presence"][0, row]), int(targets["attributes"][0, row, 0])
    (1.0, 1)
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fortekit.errors import Errors, SoundClapError
from fortekit.plugins.captioners.tagger import STRUCTURES, TagLayout

__all__ = ["Clip", "cached_log_mels", "cached_text_embeddings", "read_clips", "tag_layout", "tag_targets"]

#: The clip length the generator writes (s); events' onsets are fractions of it.
CLIP_SECONDS = 5.0


@dataclass(frozen=True)
class Clip:
    """One clip of the collection, as training needs it.

    Attributes:
        clip_id: its id.
        split: "train" or "test".
        audio: its WAV file.
        captions: its captions.
        events: its events as clips.jsonl gives them (class, attributes, onset, bed, ...).
        structure: "single", "while" or "then".
    """

    clip_id: str
    split: str
    audio: Path
    captions: tuple[str, ...]
    events: tuple[dict[str, Any], ...]
    structure: str


def read_clips(collection: str | os.PathLike[str]) -> list[Clip]:
    """Every clip of a generated collection (its clips.jsonl), in file order.

    Raises:
        SoundClapError: E574, no clips.jsonl, an unreadable line, or a clip without captions.
    """
    folder = Path(collection).expanduser()
    file = folder / "clips.jsonl"
    if not file.is_file():
        problem = "no such folder" if not folder.is_dir() else "it has no clips.jsonl"
        raise SoundClapError(Errors.E574.format(path=folder, problem=problem))
    clips = []
    with file.open("r", encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                clips.append(Clip(
                    str(record["_id"]), str(record["split"]), folder / str(record["audio"]),
                    tuple(str(c) for c in record["captions"]), tuple(record["events"]),
                    str(record.get("structure", "single")),
                ))
            except (ValueError, KeyError, TypeError) as exc:
                problem = f"clips.jsonl line {number} is not a clip record ({type(exc).__name__}: {exc})"
                raise SoundClapError(Errors.E574.format(path=folder, problem=problem)) from None
            if not clips[-1].captions:
                problem = f"clips.jsonl line {number} has no captions"
                raise SoundClapError(Errors.E574.format(path=folder, problem=problem))
    return clips


def tag_layout() -> TagLayout:
    """The tags of the generator's classes and attribute dimensions."""
    from fortekit.search.eval.bench.soundgen.classes import ATTRIBUTES, CLASSES, DIMENSIONS

    dims = tuple((dim, tuple(name for name, spec in ATTRIBUTES.items() if spec.dimension == dim))
                 for dim in DIMENSIONS)
    return TagLayout(tuple(CLASSES), dims)


def tag_targets(clips: Sequence[Clip], layout: TagLayout) -> dict[str, np.ndarray]:
    """Training targets of the tag head, per clip.

    Returns:
        ``presence``, ``bed``, ``onset`` (n_clips, n_classes) float32; ``structure``
        (n_clips,) int64; ``attributes`` (n_clips, n_classes, n_dims) int64, 0 none, 1 or 2
        the dimension's first or second value, -1 for classes not in the clip (ignored).
    """
    n, k, dims = len(clips), len(layout.classes), len(layout.dimensions)
    index = {name: i for i, name in enumerate(layout.classes)}
    value_of = {value: (d, j + 1) for d, (_, values) in enumerate(layout.dimensions)
                for j, value in enumerate(values)}
    presence = np.zeros((n, k), np.float32)
    bed = np.zeros((n, k), np.float32)
    onset = np.zeros((n, k), np.float32)
    attributes = np.full((n, k, dims), -1, np.int64)
    structure = np.array([STRUCTURES.index(c.structure) if c.structure in STRUCTURES else 0 for c in clips])
    for row, clip in enumerate(clips):
        for event in clip.events:
            cls = index.get(str(event.get("class")))
            if cls is None:
                continue
            presence[row, cls] = 1.0
            bed[row, cls] = float(bool(event.get("bed")))
            onset[row, cls] = min(max(float(event.get("onset", 0.0)) / CLIP_SECONDS, 0.0), 1.0)
            attributes[row, cls] = 0
            for value in event.get("attributes", []):
                if value in value_of:
                    d, choice = value_of[value]
                    attributes[row, cls, d] = choice
    return {"presence": presence, "bed": bed, "onset": onset, "structure": structure.astype(np.int64),
            "attributes": attributes}


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]


def cached_log_mels(clips: Sequence[Clip], front: Any, settings: dict[str, Any], cache: Path, *,
                    batch_size: int = 64, on_batch: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Log-mels (n_clips, n_mels, frames) as float16, computed once and kept in ``cache``.

    Args:
        clips: the clips (all as long as the first one: longer ones are cut, shorter ones padded).
        front: the model's log-mel module (waveforms -> log-mels).
        settings: the front end's settings (part of the cache key).
        cache: the cache folder (created).
        batch_size: clips per front-end call.
        on_batch: called with (clips done, clips) after each batch.

    Raises:
        AudioReadError: a clip's WAV cannot be read.
    """
    import torch

    from fortekit.plugins.audio import load_waveform

    rate = int(settings["sample_rate"])
    file = cache / f"mels-{_key(settings, [(c.clip_id, str(c.audio)) for c in clips])}.npy"
    if file.is_file():
        try:
            return np.load(file, mmap_mode="r")  # type: ignore[no-any-return]
        except (OSError, ValueError):
            file.unlink(missing_ok=True)
    length = round(CLIP_SECONDS * rate)
    out: np.ndarray | None = None
    with torch.inference_mode():
        for start in range(0, len(clips), batch_size):
            chunk = clips[start:start + batch_size]
            waves = np.zeros((len(chunk), length), np.float32)
            for row, clip in enumerate(chunk):
                wave = load_waveform(clip.audio, rate, start + row)[:length]
                waves[row, :len(wave)] = wave
            mels = front(torch.from_numpy(waves)).numpy().astype(np.float16)
            if out is None:
                out = np.empty((len(clips), *mels.shape[1:]), np.float16)
            out[start:start + len(chunk)] = mels
            if on_batch is not None:
                on_batch(start + len(chunk), len(clips))
    assert out is not None
    _save(file, out)
    return out


def cached_text_embeddings(texts: Sequence[str], encode: Callable[[list[str]], Any], cache: Path,
                           name: str) -> np.ndarray:
    """The frozen text encoder's embeddings of ``texts`` (n, dim) float32, kept in ``cache``.

    Args:
        texts: the texts (duplicates are embedded once).
        encode: texts -> a (n, dim) tensor or array.
        cache: the cache folder.
        name: the encoder's name (part of the cache key).
    """
    unique = sorted(set(texts))
    file = cache / f"text-{_key(name, unique)}.npy"
    table: np.ndarray | None = None
    if file.is_file():
        try:
            table = np.load(file)
        except (OSError, ValueError):
            table = None
    if table is None or len(table) != len(unique):
        embedded = encode(unique)
        table = np.asarray(embedded.cpu().numpy() if hasattr(embedded, "cpu") else embedded, np.float32)
        _save(file, table)
    position = {text: i for i, text in enumerate(unique)}
    return table[[position[text] for text in texts]]


def _save(file: Path, array: np.ndarray) -> None:
    from fortekit.errors import OutputError
    from fortekit.safe_write import atomic_write, create_output_directory

    def write(partial: Path) -> None:
        with partial.open("wb") as handle:
            np.save(handle, array)

    try:
        create_output_directory(file.parent)  # the cache folder, marked as fortekit's when new
        atomic_write(file, write)  # temporary file, fsync, rename: two runs never tear the cache
    except OutputError:
        raise
    except OSError as exc:
        raise SoundClapError(Errors.E576.format(path=file.parent, problem=exc.strerror or exc)) from None
