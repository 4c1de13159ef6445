"""fortekit convert laion-clap without laion_clap: a LAION-layout state dict synthesised from a tiny
transformers ClapModel (the inverse key mapping), converted back and loaded by hf-clap; and every
error the converter gives (pickles refused without --trust-pickle, missing files, foreign state dicts)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("soundfile")

import torch
from plugin_fixtures import save_tiny_clap

from fortekit.errors import ModelLoadError, ModelNotFoundError, PluginOptionError
from fortekit.plugins import get_backbone
from fortekit.plugins.backbones.laion_convert import convert_laion_clap, read_laion_checkpoint
from fortekit.plugins.backbones.laion_keys import from_laion, to_laion
from fortekit.search.cli.main import main

#: LAION-CLAP weights that ClapModel has no place for (the converter drops them).
EXTRAS = {
    "audio_branch.spectrogram_extractor.stft.conv_real.weight": torch.zeros(513, 1, 8),
    "audio_branch.logmel_extractor.melW": torch.zeros(513, 64),
    "audio_branch.tscam_conv.weight": torch.zeros(527, 16, 8, 3),
    "audio_branch.tscam_conv.bias": torch.zeros(527),
    "audio_branch.head.weight": torch.zeros(527, 527),
    "text_transform.sequential.0.weight": torch.zeros(8, 8),
    "audio_transform.sequential.3.bias": torch.zeros(8),
    "text_branch.embeddings.position_ids": torch.arange(100)[None],
    "audio_branch.layers.0.blocks.1.attn_mask": torch.zeros(64, 64, 64),  # shifted windows' mask buffer
}


def _laion_state(hf_dir: Path) -> dict[str, torch.Tensor]:
    from transformers import ClapModel

    model = ClapModel.from_pretrained(hf_dir)
    return {**to_laion(model.state_dict()), **EXTRAS}


def _tokenizer(hf_dir: Path, folder: Path) -> Path:
    """The tiny tokenizer, with a RoBERTa-style config.json giving the text tower's heads."""
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(hf_dir).save_pretrained(folder)
    (folder / "config.json").write_text(
        json.dumps({"model_type": "roberta", "num_attention_heads": 2, "layer_norm_eps": 1e-12}),
        encoding="utf-8",
    )
    return folder


@pytest.fixture(scope="module", params=[False, True], ids=["unfused", "fused"])
def converted(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("convert")
    hf_dir = save_tiny_clap(root / "hf", fusion=request.param)
    checkpoint = root / "laion.pt"
    state = {"module." + key: value for key, value in _laion_state(hf_dir).items()}
    torch.save({"epoch": 7, "name": "tiny", "state_dict": state}, checkpoint)  # tensors and ints only
    tokenizer = _tokenizer(hf_dir, root / "tokenizer")
    report = convert_laion_clap(checkpoint, root / "out", tokenizer=tokenizer)
    return hf_dir, root / "out", report


def test_conversion_restores_every_weight(converted) -> None:
    from transformers import ClapModel

    hf_dir, out, report = converted
    assert (out / "model.safetensors").is_file() and (out / "config.json").is_file()
    assert not report.unpickled and len(report.dropped) == len(EXTRAS)
    original, back = (
        ClapModel.from_pretrained(hf_dir).state_dict(),
        ClapModel.from_pretrained(out).state_dict(),
    )
    assert set(original) == set(back)
    for key, value in original.items():
        assert torch.equal(value, back[key]), key
    config = json.loads((out / "config.json").read_text())
    assert config["audio_config"]["enable_fusion"] is report.fusion
    assert config["text_config"]["num_attention_heads"] == 2


def test_converted_folder_runs_through_hf_clap(converted) -> None:
    hf_dir, out, report = converted
    clap = get_backbone("hf-clap", model=str(out), device="cpu")
    original = get_backbone("hf-clap", model=str(hf_dir), device="cpu")
    texts = ["a dog barks", "soft rain falling on a car roof at night"]
    assert torch.allclose(clap.encode_text(texts), original.encode_text(texts), atol=1e-6)
    assert clap.fusion is report.fusion and clap.sample_rate == 48_000
    extractor = json.loads((out / "processor_config.json").read_text())["feature_extractor"]
    assert (extractor["frequency_min"], extractor["frequency_max"], extractor["hop_length"]) == (
        50,
        14_000,
        480,
    )
    wave = np.sin(np.arange(48_000 * 3) / 7.0).astype(np.float32)
    audio = clap.encode_audio([(wave, 48_000)])
    assert audio.shape == (1, 8) and torch.isfinite(audio).all()


def test_long_clip_embeds_to_the_same_vector_twice(converted) -> None:
    _, out, _ = converted
    long_clip = (np.random.default_rng(0).standard_normal(48_000 * 25) * 0.2).astype(np.float32)
    first = get_backbone("hf-clap", model=str(out), device="cpu").encode_audio([(long_clip, 48_000)])
    np.random.seed(99)  # the caller's global numpy state does not matter
    second = get_backbone("hf-clap", model=str(out), device="cpu").encode_audio([(long_clip, 48_000)])
    assert torch.equal(first, second)
    other_seed = get_backbone("hf-clap", model=str(out), device="cpu", seed=1).encode_audio(
        [(long_clip, 48_000)]
    )
    assert other_seed.shape == first.shape  # another seed may pick another crop


def test_key_mapping_round_trips_and_names_unknown_keys() -> None:
    state = {
        "audio_branch.layers.0.blocks.0.attn.qkv.weight": torch.arange(12.0).reshape(6, 2),
        "audio_branch.bn0.running_mean": torch.zeros(4),
        "text_branch.pooler.dense.bias": torch.ones(3),
        "audio_branch.tscam_conv.bias": torch.zeros(2),
        "vision_branch.x": torch.zeros(1),
    }
    renamed, dropped, unknown = from_laion(state)
    assert dropped == ["audio_branch.tscam_conv.bias"] and unknown == ["vision_branch.x"]
    prefix = "audio_model.audio_encoder.layers.0.blocks.0.attention.self."
    assert torch.equal(renamed[prefix + "key.weight"], torch.arange(4.0, 8.0).reshape(2, 2))
    back = to_laion(renamed)
    assert set(back) == {
        "audio_branch.layers.0.blocks.0.attn.qkv.weight",
        "audio_branch.bn0.running_mean",
        "text_branch.pooler.dense.bias",
    }
    assert torch.equal(
        back["audio_branch.layers.0.blocks.0.attn.qkv.weight"],
        state["audio_branch.layers.0.blocks.0.attn.qkv.weight"],
    )


class _Marker:
    """Unpickling this creates a file: the proof that a refused checkpoint was never unpickled."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.fixture(scope="module")
def pickled(converted, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    hf_dir, _, _ = converted
    folder = tmp_path_factory.mktemp("pickled")
    marker = folder / "unpickled.txt"
    torch.save(
        {"state_dict": _laion_state(hf_dir), "best": np.float64(0.5), "hook": _Marker(str(marker))},
        folder / "laion.pt",
    )
    return folder / "laion.pt", marker


def test_pickles_are_refused_without_the_flag(pickled: tuple[Path, Path], converted, tmp_path: Path) -> None:
    checkpoint, marker = pickled
    with pytest.raises(
        ModelLoadError, match=r"\[E701\].*can run any code.*--trust-pickle.*safetensors"
    ) as info:
        convert_laion_clap(checkpoint, tmp_path / "out")
    assert "laion.pt" in str(info.value)
    assert not marker.exists() and not (tmp_path / "out").exists()
    hf_dir, _, _ = converted
    report = convert_laion_clap(
        checkpoint, tmp_path / "out", tokenizer=_tokenizer(hf_dir, tmp_path / "tok"), trust_pickle=True
    )
    assert report.unpickled and marker.exists()  # with the user's say-so, the file's code did run


def test_missing_foreign_and_broken_checkpoints(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match=r"\[E700\].*nope\.pt was not found.*downloads no weights"):
        convert_laion_clap(tmp_path / "nope.pt", tmp_path / "out")
    torch.save({"state_dict": {"encoder.weight": torch.zeros(2)}}, tmp_path / "other.pt")
    with pytest.raises(ModelLoadError, match=r"\[E703\].*not a LAION-CLAP state dict.*encoder\.weight"):
        convert_laion_clap(tmp_path / "other.pt", tmp_path / "out")
    torch.save([1, 2, 3], tmp_path / "list.pt")
    with pytest.raises(ModelLoadError, match=r"\[E703\].*holds a list"):
        convert_laion_clap(tmp_path / "list.pt", tmp_path / "out")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all")
    with pytest.raises(ModelLoadError, match=r"\[E70[12]\]"):
        convert_laion_clap(tmp_path / "junk.pt", tmp_path / "out")
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(ModelLoadError, match=r"\[E702\].*empty\.pt: the file is empty"):
        convert_laion_clap(tmp_path / "empty.pt", tmp_path / "out")
    (tmp_path / "junk.safetensors").write_bytes(b"\x00" * 16)
    with pytest.raises(ModelLoadError, match=r"\[E702\].*junk\.safetensors"):
        convert_laion_clap(tmp_path / "junk.safetensors", tmp_path / "out")


def test_unknown_keys_are_listed(converted, tmp_path: Path) -> None:
    from safetensors.torch import save_file

    hf_dir, _, _ = converted
    state = _laion_state(hf_dir)
    state["audio_branch.mel_conv1d.weight"] = torch.zeros(2)
    state["bert_pooler.weight"] = torch.zeros(2)
    save_file({key: value.contiguous() for key, value in state.items()}, str(tmp_path / "laion.safetensors"))
    with pytest.raises(
        ModelLoadError, match=r"\[E704\].*2 weights.*audio_branch\.mel_conv1d\.weight.*bert_pooler"
    ):
        convert_laion_clap(tmp_path / "laion.safetensors", tmp_path / "out")


def test_truncated_state_dict_does_not_fit(converted, tmp_path: Path) -> None:
    hf_dir, _, _ = converted
    state = _laion_state(hf_dir)
    del state["audio_projection.2.weight"]
    torch.save(state, tmp_path / "cut.pt")
    with pytest.raises(
        ModelLoadError, match=r"\[E705\].*1 weights missing.*audio_projection\.linear2\.weight"
    ):
        convert_laion_clap(
            tmp_path / "cut.pt", tmp_path / "out", tokenizer=_tokenizer(hf_dir, tmp_path / "tok")
        )


def test_output_folder_tokenizer_and_options(converted, tmp_path: Path) -> None:
    hf_dir, out, _ = converted
    state = _laion_state(hf_dir)
    torch.save(state, tmp_path / "laion.pt")
    with pytest.raises(ModelLoadError, match=r"\[E707\].*already holds a model.*--overwrite"):
        convert_laion_clap(tmp_path / "laion.pt", out)
    with pytest.raises(
        ModelNotFoundError, match=r"\[E706\].*tokenizer.*missing-tok does not exist.*--tokenizer"
    ):
        convert_laion_clap(tmp_path / "laion.pt", tmp_path / "out", tokenizer=tmp_path / "missing-tok")
    (tmp_path / "empty-tok").mkdir()
    with pytest.raises(ModelNotFoundError, match=r"\[E706\].*neither tokenizer\.json"):
        convert_laion_clap(tmp_path / "laion.pt", tmp_path / "out", tokenizer=tmp_path / "empty-tok")
    with pytest.raises(PluginOptionError, match=r"\[E709\] text_heads must be a positive int"):
        convert_laion_clap(tmp_path / "laion.pt", tmp_path / "out", text_heads=0)
    tokenizer = _tokenizer(hf_dir, tmp_path / "tok")
    small = {key: value for key, value in state.items()}
    small["text_branch.embeddings.word_embeddings.weight"] = small[
        "text_branch.embeddings.word_embeddings.weight"
    ][:5]
    torch.save(small, tmp_path / "small-vocab.pt")
    with pytest.raises(ModelNotFoundError, match=r"\[E706\].*tokens, more than the 5 of the checkpoint"):
        convert_laion_clap(tmp_path / "small-vocab.pt", tmp_path / "out", tokenizer=tokenizer)
    with pytest.raises(ModelLoadError, match=r"\[E705\].*not a multiple of 3 heads.*--text-heads"):
        convert_laion_clap(tmp_path / "laion.pt", tmp_path / "out", tokenizer=tokenizer, text_heads=3)
    report = convert_laion_clap(tmp_path / "laion.pt", out, tokenizer=tokenizer, overwrite=True)
    assert report.out_dir == out


def test_cli_converts_and_reports_coded_errors(pickled, converted, tmp_path: Path, capsys) -> None:
    checkpoint, _ = pickled
    hf_dir, _, _ = converted
    tokenizer = str(_tokenizer(hf_dir, tmp_path / "tok"))
    assert (
        main(["convert", "laion-clap", str(checkpoint), str(tmp_path / "out"), "--tokenizer", tokenizer]) == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("fortekit convert: [E701]") and "Traceback" not in err
    code = main(
        [
            "convert",
            "laion-clap",
            str(checkpoint),
            str(tmp_path / "out"),
            "--tokenizer",
            tokenizer,
            "--trust-pickle",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "converted" in captured.out and "hf-clap" in captured.out
    assert (tmp_path / "out" / "model.safetensors").is_file()
    assert main(["convert", "laion-clap", str(tmp_path / "none.pt"), str(tmp_path / "o2")]) == 1
    assert "[E700]" in capsys.readouterr().err


def test_cli_ctrl_c_exits_130(monkeypatch, tmp_path: Path, capsys) -> None:
    import fortekit.plugins.backbones.laion_convert as module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "convert_laion_clap", interrupted)
    assert main(["convert", "laion-clap", str(tmp_path / "a.pt"), str(tmp_path / "out")]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_help_says_what_trusting_a_pickle_means(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["convert", "laion-clap", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--trust-pickle" in text and "CAN RUN ANY CODE" in text


def test_reading_keeps_tensors_and_strips_the_prefix(tmp_path: Path) -> None:
    state = {
        "module.audio_branch.patch_embed.proj.weight": torch.zeros(2),
        "module.text_branch.embeddings.word_embeddings.weight": torch.zeros(3),
    }
    torch.save({"state_dict": state, "epoch": 1}, tmp_path / "ok.pt")
    loaded, unpickled = read_laion_checkpoint(os.fspath(tmp_path / "ok.pt"))
    assert sorted(loaded) == [
        "audio_branch.patch_embed.proj.weight",
        "text_branch.embeddings.word_embeddings.weight",
    ]
    assert not unpickled


@pytest.mark.parametrize(
    "name",
    [
        "fortekit.plugins.backbones.laion_keys",
        "fortekit.plugins.backbones.laion_convert",
        "fortekit.search.cli.convert",
    ],
)
def test_docstring_examples(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(
        importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
