"""Captioners: `stored` (mappings and files) and `hf-captioner` with a tiny randomly
initialised SpeechEncoderDecoderModel (wav2vec2 + BERT decoder) saved to disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fortekit.errors import CaptionFileError, CaptionNotFoundError, ModelNotFoundError, PluginOptionError
from fortekit.plugins import AudioItem, Captioner, get_captioner


def test_stored_captions_from_items_and_mapping() -> None:
    captions = {"dog.wav": "a dog barks", "r1": "rain", "birds": "birds sing"}
    captioner = get_captioner("stored", captions=captions)
    assert isinstance(captioner, Captioner)
    items = [
        "clips/dog.wav",                                   # by file name
        AudioItem(path="x/unknown.wav", item_id="r1"),     # by id
        AudioItem(path="elsewhere/birds.flac"),            # by stem
        AudioItem(path="x.wav", text="own caption wins"),  # the item's own text
    ]
    assert captioner.caption(items) == ["a dog barks", "rain", "birds sing", "own caption wins"]
    with pytest.raises(CaptionNotFoundError, match=r"E240.*nothing\.wav.*3 entries"):
        captioner.caption(["nothing.wav"])
    lenient = get_captioner("stored", captions={}, on_missing="empty")
    assert lenient.caption(["nothing.wav"]) == [""]
    with pytest.raises(PluginOptionError):
        get_captioner("stored", on_missing="ignore")


def test_stored_captions_from_files(tmp_path: Path) -> None:
    jsonl = tmp_path / "captions.jsonl"
    jsonl.write_text(
        json.dumps({"id": "a1", "caption": "a car passes"}) + "\n\n"
        + json.dumps({"path": "b.wav", "caption": "wind howls"}) + "\n"
    )
    assert get_captioner("stored", captions=jsonl).caption([AudioItem(item_id="a1"), "b.wav"]) == [
        "a car passes", "wind howls"]
    tsv = tmp_path / "captions.tsv"
    tsv.write_text("c.wav\ta bell rings\n# comment\n")
    assert get_captioner("stored", captions=str(tsv)).caption(["c.wav"]) == ["a bell rings"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "a"}) + "\n")
    with pytest.raises(CaptionFileError, match=r"E241.*line 1"):
        get_captioner("stored", captions=bad)
    bad_tsv = tmp_path / "bad.tsv"
    bad_tsv.write_text("no tab here\n")
    with pytest.raises(CaptionFileError, match="line 1"):
        get_captioner("stored", captions=bad_tsv)
    with pytest.raises(ModelNotFoundError):
        get_captioner("stored", captions=tmp_path / "none.jsonl")


@pytest.fixture(scope="module")
def captioner_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("soundfile")
    from plugin_fixtures import save_tiny_speech_captioner

    return save_tiny_speech_captioner(tmp_path_factory.mktemp("captioner"))


def test_hf_captioner_loads_and_captions_real_audio(captioner_dir: Path, tmp_path: Path) -> None:
    from plugin_fixtures import write_wav

    files = [
        write_wav(tmp_path / "a.wav", 1.0, 16_000),
        write_wav(tmp_path / "b.wav", 0.5, 44_100, channels=2, freq=880.0),
        write_wav(tmp_path / "c.wav", 0.02, 8_000),
    ]
    captioner = get_captioner("hf-captioner", model=str(captioner_dir), device="cpu", batch_size=2,
                              max_new_tokens=6, generation_options={"min_new_tokens": 3})
    assert isinstance(captioner, Captioner) and captioner.sample_rate == 16_000
    captions = captioner.caption(files)
    assert len(captions) == 3 and all(isinstance(c, str) and c for c in captions)
    assert captioner.caption(files) == captions  # greedy: reproducible
    assert captioner.caption([]) == []


def test_hf_captioner_errors(captioner_dir: Path, tmp_path: Path) -> None:
    from fortekit.errors import AudioReadError

    captioner = get_captioner("hf-captioner", model=captioner_dir, device="cpu")
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF0000WAVE")
    with pytest.raises(AudioReadError, match=r"bad\.wav"):
        captioner.caption([bad])
    with pytest.raises(ModelNotFoundError, match="E207"):
        get_captioner("hf-captioner", model="fortekit-tests/no-such-captioner", device="cpu")
