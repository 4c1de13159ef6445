"""Bad WAV files (issue 15, item 13): each one is a coded error that names the file.

The files are written with the standard library's `wave` module, so they are real WAV
files of the kind any recorder produces, not arrays built in memory.
"""

from __future__ import annotations

import struct
import warnings
import wave
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("soundfile")
pytest.importorskip("scipy")

from fortekit.errors import AudioReadError
from fortekit.plugins.audio import load_waveform, to_mono


def write_pcm_wav(path: Path, frames: list[int], rate: int, channels: int = 1) -> Path:
    """A 16-bit PCM WAV holding `frames` (interleaved when channels > 1), via stdlib wave."""
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(channels)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(struct.pack(f"<{len(frames)}h", *frames))
    return path


@pytest.mark.parametrize("channels", [1, 2])
def test_a_zero_sample_wav_is_empty_not_nan(tmp_path: Path, channels: int) -> None:
    path = write_pcm_wav(tmp_path / "silence.wav", [], 16_000, channels=channels)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would fail the test
        with pytest.raises(AudioReadError) as caught:
            load_waveform(path, 16_000)
    message = str(caught.value)
    assert message.startswith("[E215]")
    assert str(path) in message and "is empty" in message
    assert "NaN" not in message and "infinite" not in message
    assert caught.value.source == str(path)


@pytest.mark.parametrize("shape", [(0, 1), (0, 2), (2, 0), (1, 0), (0,)])
def test_empty_arrays_of_any_shape_are_empty_without_warnings(shape: tuple[int, ...]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert to_mono(np.zeros(shape)).shape == (0,)
        with pytest.raises(AudioReadError, match=r"\[E215\] The audio <waveform> is empty"):
            load_waveform((np.zeros(shape), 16_000), 16_000)


def test_a_wav_at_another_rate_is_resampled(tmp_path: Path) -> None:
    rate = 8_000
    tone = (np.sin(2 * np.pi * 440.0 * np.arange(rate // 2) / rate) * 10_000).astype(int)
    path = write_pcm_wav(tmp_path / "tone.wav", tone.tolist(), rate)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = load_waveform(path, 16_000)
    assert out.dtype == np.float32 and out.ndim == 1 and len(out) == 8_000
    peak_hz = np.abs(np.fft.rfft(out)).argmax() * 16_000 / len(out)
    assert abs(peak_hz - 440.0) < 5.0


def test_a_one_sample_wav_still_loads(tmp_path: Path) -> None:
    path = write_pcm_wav(tmp_path / "tick.wav", [1_000, -1_000], 16_000, channels=2)
    assert load_waveform(path, 16_000).tolist() == [0.0]


def test_a_truncated_or_foreign_file_is_unreadable(tmp_path: Path) -> None:
    good = write_pcm_wav(tmp_path / "good.wav", [0] * 100, 16_000).read_bytes()
    truncated = tmp_path / "truncated.wav"
    truncated.write_bytes(good[:20])
    text = tmp_path / "notes.wav"
    text.write_text("not audio at all\n", encoding="utf-8")
    for path in (truncated, text):
        with pytest.raises(AudioReadError, match=r"\[E214\] Cannot read audio from") as caught:
            load_waveform(path, 16_000)
        assert str(path) in str(caught.value)


def test_a_missing_file_and_non_finite_samples_keep_their_messages(tmp_path: Path) -> None:
    with pytest.raises(AudioReadError, match=r"\[E214\].*no such file"):
        load_waveform(tmp_path / "absent.wav", 16_000)
    import soundfile

    nan_wav = tmp_path / "nan.wav"
    soundfile.write(str(nan_wav), np.array([0.0, np.nan, 0.5], dtype=np.float32), 16_000, subtype="FLOAT")
    with pytest.raises(AudioReadError, match=r"\[E215\].*nan\.wav contains NaN or infinite"):
        load_waveform(nan_wav, 16_000)
