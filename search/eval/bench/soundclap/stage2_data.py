"""Stage 2 training data from a generated collection: caption embeddings and audio embeddings.

Stage 2 (:mod:`fortekit.search.projection`) trains its head h_psi on pairs (query vector,
audio embedding) from training clips. On the generated collection the pairs are the
captions of the TRAINING clips (their split ``train``), each encoded by the backbone's text
encoder, against the backbone's embedding of the clip's WAV file. The test clips are never
read. The query vector is f_T(caption), not Stage 1's q* (searching Stage 1 for thousands of
training captions costs more than the whole benchmark), and there is no negative
f_T(G(phi-)), so the head trains with L_align alone (mu L_logic needs negatives).

Example:
    >>> from fortekit.plugins import get_backbone
    >>> clap = get_backbone("small-clap", model="runs/clap")  # doctest: +SKIP
    >>> data = stage2_data("runs/gen2000", clap, captions_per_clip=2)  # doctest: +SKIP
    >>> data.size  # 2 captions for each of the 1,600 training clips  # doctest: +SKIP
    3200
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from fortekit.errors import Errors, SoundClapError

if TYPE_CHECKING:
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.projection.data import ProjectionData

__all__ = ["stage2_data"]


def stage2_data(collection: str | os.PathLike[str], backbone: Backbone, *, split: str = "train",
                captions_per_clip: int = 2, batch_size: int = 256) -> ProjectionData:
    """The (f_T(caption), f_A(clip)) pairs of one split of a generated collection.

    Args:
        collection: the folder ``fortekit bench generate`` wrote.
        backbone: an audio-text backbone (``encode_audio`` and ``encode_text``).
        split: which clips ("train": the only fair choice for a head evaluated on ``test``).
        captions_per_clip: how many of each clip's captions become rows (1-5); clip i starts at
            caption i mod 5, as ``train-clap`` does, so every template style is seen.
        batch_size: clips or captions per encoder call.

    Returns:
        A :class:`~fortekit.search.projection.data.ProjectionData` with ``query`` (rows of
        f_T(caption)) and ``audio`` (the clip's embedding repeated per caption), no negatives.

    Raises:
        SoundClapError: not a generated collection (E574), no clip of ``split`` or a bad
            ``captions_per_clip`` (E591).

    Example:
        >>> stage2_data("runs/gen2000", get_backbone("small-clap", model="runs/clap"))  # doctest: +SKIP
    """
    import torch

    from fortekit.search.eval.bench.soundclap.data import read_clips
    from fortekit.search.projection.data import ProjectionData

    if not 1 <= captions_per_clip <= 5:
        raise SoundClapError(Errors.E591.format(
            path=collection, problem=f"captions_per_clip is {captions_per_clip}", fix="Pass 1 to 5."))
    clips = [clip for clip in read_clips(collection) if clip.split == split]
    if len(clips) < 2:
        raise SoundClapError(Errors.E591.format(
            path=collection, problem=f"it has {len(clips)} clips of the split {split!r}",
            fix="Generate a collection with more clips (--n), or pass the split that has them."))
    audio_rows: list[torch.Tensor] = []
    for start in range(0, len(clips), batch_size):
        batch = [str(clip.audio) for clip in clips[start:start + batch_size]]
        audio_rows.append(backbone.encode_audio(batch).detach().to("cpu", torch.float32))
    audio = torch.cat(audio_rows)
    texts: list[str] = []
    owners: list[int] = []
    for row, clip in enumerate(clips):
        count = min(captions_per_clip, len(clip.captions))
        for k in range(count):
            texts.append(clip.captions[(row + k) % len(clip.captions)])
            owners.append(row)
    text_rows = [backbone.encode_text(texts[start:start + batch_size]).detach().to("cpu", torch.float32)
                 for start in range(0, len(texts), batch_size)]
    query = torch.nn.functional.normalize(torch.cat(text_rows), dim=1)
    audio = torch.nn.functional.normalize(audio, dim=1)[torch.tensor(owners)]
    return ProjectionData(query=query.contiguous(), audio=audio.contiguous())
