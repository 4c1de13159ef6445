"""hf-clap: a tiny randomly initialised ClapModel saved to disk, loaded by the real plug-in code,
fed real WAV files at several rates, stereo, very short and 30 s long."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("soundfile")

import torch
from plugin_fixtures import save_tiny_clap, tone, write_wav

from fortekit.errors import AudioReadError, EncoderInputError, ModelLoadError, ModelNotFoundError
from fortekit.plugins import AudioItem, Backbone, get_backbone


@pytest.fixture(scope="module")
def clap_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_clap(tmp_path_factory.mktemp("clap"))


@pytest.fixture(scope="module")
def fused_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_clap(tmp_path_factory.mktemp("clap-fused"), fusion=True)


@pytest.fixture(scope="module")
def clap(clap_dir: Path):
    return get_backbone("hf-clap", model=str(clap_dir), device="cpu", batch_size=4)


@pytest.fixture(scope="module")
def wavs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("wavs")
    return [
        write_wav(folder / "native.wav", 3.0, 48_000),
        write_wav(folder / "cd_stereo.wav", 2.0, 44_100, channels=2, freq=660.0),
        write_wav(folder / "speech_rate.wav", 4.0, 16_000, freq=220.0),
        write_wav(folder / "blip.wav", 0.01, 8_000, freq=1000.0),  # 80 samples
        write_wav(folder / "long.wav", 30.0, 22_050, freq=330.0),
    ]


def test_is_a_backbone_with_the_processor_rate(clap) -> None:
    assert isinstance(clap, Backbone)
    assert (clap.name, clap.dim, clap.sample_rate, clap.device) == ("hf-clap", 8, 48_000, "cpu")
    assert not clap.fusion


def test_text_embeddings_have_the_shape_and_unit_norm(clap) -> None:
    out = clap.encode_text(["a dog barks", "rain falls on the roof loudly", "", "birds"])
    assert out.shape == (4, 8) and out.dtype == torch.float32
    assert torch.allclose(out.norm(dim=1), torch.ones(4), atol=1e-5)
    assert clap.encode_text([]).shape == (0, 8)


def test_audio_of_every_rate_and_length_is_embedded(clap, wavs: list[Path]) -> None:
    out = clap.encode_audio([str(path) for path in wavs])
    assert out.shape == (len(wavs), 8)
    assert torch.isfinite(out).all()
    assert torch.allclose(out.norm(dim=1), torch.ones(len(wavs)), atol=1e-5)
    assert clap.encode_audio([]).shape == (0, 8)


def test_batch_equals_one_by_one(clap, wavs: list[Path]) -> None:
    batched = clap.encode_audio(wavs)  # batch_size 4: one batch of 4 and one of 1
    single = torch.cat([clap.encode_audio([path]) for path in wavs])
    assert torch.allclose(batched, single, atol=1e-5)
    texts = ["a dog barks", "soft rain falling on a car roof at night", "birds"]
    one_by_one = torch.cat([clap.encode_text([t]) for t in texts])
    assert torch.allclose(clap.encode_text(texts), one_by_one, atol=1e-5)


def test_encoding_is_deterministic_even_for_long_clips(clap_dir: Path, wavs: list[Path]) -> None:
    first = get_backbone("hf-clap", model=clap_dir, device="cpu").encode_audio([wavs[-1], wavs[0]])
    np.random.seed(12345)  # the caller's global numpy state must not matter
    second = get_backbone("hf-clap", model=clap_dir, device="cpu").encode_audio([wavs[-1], wavs[0]])
    assert torch.equal(first, second)


def test_resampled_file_matches_the_waveform_at_the_model_rate(clap, tmp_path: Path) -> None:
    samples = tone(2.0, 48_000)
    write_wav(tmp_path / "t.wav", 2.0, 48_000)
    from_file = clap.encode_audio([tmp_path / "t.wav"])
    from_array = clap.encode_audio([(samples, 48_000)])
    # the file went through 16-bit PCM, so the two agree closely but not bit for bit
    assert float(from_file[0] @ from_array[0]) > 0.999


def test_stereo_is_mixed_to_mono(clap) -> None:
    mono = tone(1.0, 48_000)
    stereo = np.stack([mono, mono], axis=1)
    channels_first = stereo.T.copy()
    third = AudioItem(samples=channels_first, sample_rate=48_000)
    out = clap.encode_audio([(mono, 48_000), (stereo, 48_000), third])
    assert torch.allclose(out[0], out[1], atol=1e-6) and torch.allclose(out[0], out[2], atol=1e-6)


def test_fused_model_is_batch_independent_and_deterministic(fused_dir: Path, wavs: list[Path]) -> None:
    fused = get_backbone("hf-clap", model=str(fused_dir), device="cpu", batch_size=8)
    assert fused.fusion
    short = [wavs[0], wavs[1], wavs[3]]  # all shorter than 10 s
    together = fused.encode_audio(short)
    alone = torch.cat([fused.encode_audio([path]) for path in short])
    assert torch.allclose(together, alone, atol=1e-5)
    long_twice = fused.encode_audio([wavs[-1], wavs[-1]])
    assert torch.equal(long_twice[0], long_twice[1])
    assert torch.allclose(long_twice.norm(dim=1), torch.ones(2), atol=1e-5)


def test_unreadable_audio_names_the_file(clap, tmp_path: Path) -> None:
    bad = tmp_path / "notes.wav"
    bad.write_text("this is not audio")
    with pytest.raises(AudioReadError, match=r"E214.*notes\.wav") as caught:
        clap.encode_audio([bad])
    assert caught.value.source == str(bad)
    with pytest.raises(AudioReadError, match="no such file"):
        clap.encode_audio([tmp_path / "missing.flac"])
    with pytest.raises(AudioReadError, match="no samples"):
        clap.encode_audio([(np.zeros(0, dtype=np.float32), 48_000)])
    with pytest.raises(AudioReadError, match="NaN"):
        clap.encode_audio([(np.full(100, np.nan, dtype=np.float32), 48_000)])


def test_bad_inputs_are_typed_errors(clap) -> None:
    one = clap.encode_text("a dog barks")  # one str: one vector (sentence-transformers' convention)
    assert tuple(one.shape) == (clap.dim,)
    torch.testing.assert_close(one, clap.encode_text(["a dog barks"])[0])
    with pytest.raises(EncoderInputError, match=r"E212.*bytes.*decode"):
        clap.encode_text(b"a dog barks")
    with pytest.raises(EncoderInputError, match="item 1 is a int"):
        clap.encode_text(["a dog", 3])
    with pytest.raises(EncoderInputError, match="E212"):
        clap.encode_audio("dog.wav")
    with pytest.raises(EncoderInputError, match="item 0 is a dict"):
        clap.encode_audio([{"path": "dog.wav"}])
    with pytest.raises(EncoderInputError, match="sample_rate"):
        clap.encode_audio([(np.zeros(10), 0)])


def test_missing_or_broken_model_is_explained(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="E206"):
        get_backbone("hf-clap", model=str(tmp_path / "nowhere" / "clap"), device="cpu")
    # a hub id that is not cached: no download unless asked
    with pytest.raises(ModelNotFoundError, match=r"E207.*allow_download=True"):
        get_backbone("hf-clap", model="fortekit-tests/no-such-clap", device="cpu")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises((ModelLoadError, ModelNotFoundError)):
        get_backbone("hf-clap", model=str(tmp_path), device="cpu")
