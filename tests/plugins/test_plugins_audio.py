"""Reading audio: every input form to mono float32 at the model's rate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("soundfile")
pytest.importorskip("scipy")

from plugin_fixtures import tone, write_wav

from fortekit.errors import AudioReadError, EncoderInputError
from fortekit.plugins import AudioItem
from fortekit.plugins.audio import load_waveform, resample, to_mono


@pytest.mark.parametrize(("rate", "target"), [(8_000, 48_000), (22_050, 48_000), (44_100, 48_000),
                                              (48_000, 44_100), (16_000, 16_000)])
def test_resampling_keeps_duration_and_pitch(rate: int, target: int) -> None:
    wave = tone(0.5, rate, freq=440.0)
    out = resample(wave, rate, target)
    assert out.dtype == np.float32 and abs(len(out) - 0.5 * target) <= 1
    spectrum = np.abs(np.fft.rfft(out))
    peak_hz = spectrum.argmax() * target / len(out)
    assert abs(peak_hz - 440.0) < 5.0


def test_files_of_any_rate_and_channels(tmp_path: Path) -> None:
    stereo = write_wav(tmp_path / "s.wav", 1.0, 44_100, channels=2)
    out = load_waveform(str(stereo), 48_000)
    assert out.ndim == 1 and out.dtype == np.float32 and len(out) == 48_000
    flac = tmp_path / "m.flac"
    import soundfile

    soundfile.write(str(flac), tone(0.25, 32_000), 32_000)
    assert len(load_waveform(AudioItem(path=flac), 16_000)) == 4_000


def test_waveform_forms() -> None:
    mono = tone(0.1, 1_000)
    assert np.array_equal(to_mono(np.stack([mono, mono], axis=1)), mono)
    assert np.array_equal(to_mono(np.stack([mono, mono])), mono)
    torch = pytest.importorskip("torch")
    assert np.allclose(load_waveform((torch.from_numpy(mono), 1_000), 1_000), mono)


def test_errors_name_the_source(tmp_path: Path) -> None:
    with pytest.raises(AudioReadError, match="it is a directory"):
        load_waveform(tmp_path, 16_000)
    with pytest.raises(AudioReadError, match=r"clip-7.*no samples"):
        load_waveform(AudioItem(samples=np.zeros(0), sample_rate=16_000, item_id="clip-7"), 16_000)
    with pytest.raises(AudioReadError, match="3 dimensions"):
        load_waveform((np.zeros((2, 2, 2)), 16_000), 16_000)
    with pytest.raises(EncoderInputError, match="sample_rate"):
        load_waveform(AudioItem(samples=np.zeros(4)), 16_000)
    with pytest.raises(EncoderInputError, match="without path or samples"):
        load_waveform(AudioItem(text="just text"), 16_000)
