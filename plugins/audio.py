"""Reading audio for the encoders and captioners: any input form to a mono float32 waveform.

Files are read with soundfile (libsndfile: WAV, FLAC, OGG/Vorbis, MP3, ...), mixed down
to mono by averaging the channels, and resampled with a polyphase filter
(`scipy.signal.resample_poly`) to the rate the model wants. torchaudio is not used: its
wheels are tied to one torch release.

Example:
    >>> import numpy as np
    >>> from fortekit.plugins.audio import load_waveform
    >>> stereo = np.ones((8000, 2), dtype=np.float32)
    >>> load_waveform((stereo, 8000), target_rate=16000).shape
    (16000,)
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fortekit.errors import AudioReadError, EncoderInputError, Errors
from fortekit.plugins.items import EXPECTED, as_item, check_items
from fortekit.plugins.protocols import AudioInput, AudioItem

__all__ = ["as_item", "check_items", "load_waveform", "load_waveforms", "resample", "to_mono"]

def to_mono(samples: Any) -> np.ndarray:
    """A 1-D float32 array: 2-D input is averaged over its channel axis (the shorter one).

    Empty input (0 frames, any channel count) gives an empty array, never NaN.

    Example:
        >>> to_mono(np.array([[1.0, 3.0], [2.0, 4.0]])).tolist()
        [2.0, 3.0]
        >>> to_mono(np.zeros((0, 2))).shape
        (0,)
    """
    if hasattr(samples, "detach"):  # a torch tensor
        samples = samples.detach().cpu().numpy()
    array = np.asarray(samples, dtype=np.float32)
    if array.ndim == 2 and array.size == 0:
        # A 0-frame file: averaging an empty axis would give NaN and a RuntimeWarning.
        return np.zeros(0, dtype=np.float32)
    if array.ndim == 2:
        # soundfile gives (frames, channels), torch-style code (channels, frames); the
        # channel axis is the shorter one for any clip longer than its channel count.
        channel_axis = 1 if array.shape[1] <= array.shape[0] else 0
        array = array.mean(axis=channel_axis, dtype=np.float32)
    elif array.ndim != 1:
        raise AudioReadError(
            Errors.E215.format(
                source="<waveform>", problem=f"has {array.ndim} dimensions; give (n,) or (n, channels)",
            ),
            source="<waveform>",
        )
    return np.ascontiguousarray(array, dtype=np.float32)


def resample(samples: np.ndarray, rate: int, target_rate: int) -> np.ndarray:
    """Resample a mono waveform from `rate` to `target_rate` Hz (polyphase, anti-aliased).

    Example:
        >>> resample(np.zeros(441, dtype=np.float32), 44100, 48000).shape
        (480,)
    """
    if rate == target_rate:
        return samples
    from scipy.signal import resample_poly

    common = math.gcd(int(rate), int(target_rate))
    out = resample_poly(samples, target_rate // common, rate // common)
    return np.asarray(out, dtype=np.float32)


def _read_file(path: str | os.PathLike[str]) -> tuple[np.ndarray, int]:
    import soundfile

    name = os.fspath(path)
    if not Path(name).is_file():
        problem = "it is a directory" if Path(name).is_dir() else "no such file"
        raise AudioReadError(Errors.E214.format(source=name, problem=problem), source=name)
    try:
        data, rate = soundfile.read(name, dtype="float32", always_2d=True)
    except (RuntimeError, TypeError, ValueError, OSError) as exc:  # LibsndfileError is a RuntimeError
        problem = str(exc).rstrip(". ") or type(exc).__name__
        raise AudioReadError(Errors.E214.format(source=name, problem=problem), source=name) from exc
    return data, int(rate)


def load_waveform(item: AudioInput, target_rate: int, index: int = 0) -> np.ndarray:
    """Read one item as a mono float32 waveform at `target_rate` Hz.

    Args:
        item: a file path, an AudioItem (path or samples + sample_rate), or a
            ``(samples, sample_rate)`` pair; samples of shape (n,), (n, c) or (c, n).
        target_rate: the rate the model wants.
        index: the item's position, for messages.

    Returns:
        A 1-D float32 array.

    Raises:
        AudioReadError: the file cannot be read, or the audio is empty or not finite.
        EncoderInputError: a bad input type or sample rate.

    Example:
        >>> load_waveform((np.zeros(100), 100), target_rate=200).shape
        (200,)
    """
    audio = as_item(item, index)
    label = audio.label()
    if audio.samples is not None:
        rate = audio.sample_rate
        if isinstance(rate, bool) or not isinstance(rate, (int, np.integer)) or rate <= 0:
            raise EncoderInputError(Errors.E218.format(
                name=f"the sample_rate of item {index} ({label})", expected="a positive int (Hz)", value=rate,
            ))
        samples, rate = to_mono(audio.samples), int(rate)
    elif audio.path is not None:
        data, rate = _read_file(audio.path)
        # soundfile's layout is known, (frames, channels): average axis 1 even for a file
        # of fewer frames than channels, where to_mono's shorter-axis rule would guess wrong.
        samples = np.ascontiguousarray(data.mean(axis=1, dtype=np.float32)) if data.size else to_mono(data)
    else:
        raise EncoderInputError(Errors.E213.format(
            method="encode_audio", index=index, type_name="AudioItem without path or samples",
            expected=EXPECTED,
        ))
    if samples.size == 0:
        problem = "is empty: it has no samples (0 frames); record or export it again, or leave it out"
        raise AudioReadError(Errors.E215.format(source=label, problem=problem), source=label)
    if not np.isfinite(samples).all():
        problem = "contains NaN or infinite samples"
        raise AudioReadError(Errors.E215.format(source=label, problem=problem), source=label)
    return resample(samples, rate, target_rate)


def load_waveforms(items: Sequence[AudioItem], target_rate: int) -> list[np.ndarray]:
    """:func:`load_waveform` for each item, in order."""
    return [load_waveform(item, target_rate, index) for index, item in enumerate(items)]
