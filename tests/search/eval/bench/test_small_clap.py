"""The small CLAP and its tagger: files that reload exactly, coded errors, a trained model that beats chance.

A 200-clip collection (no speech) is generated once for the session and trained on through the
CLI handler of ``fortekit bench train-clap`` (about 30 s of CPU on the shared 2-core machine;
tests/soundclap_fixtures.py, shared with tests/search/eval/bench/test_audio_bench.py).
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fortekit.errors import ModelLoadError, ModelNotFoundError, SoundClapError  # noqa: E402
from fortekit.plugins import get_backbone, get_captioner  # noqa: E402
from fortekit.plugins.backbones.small_clap import (  # noqa: E402
    SmallClapConfig,
    load_small_clap,
    save_small_clap,
)

TINY = SmallClapConfig(channels=(8, 16), embed_dim=16, audio_hidden=16, text_hidden=16, time_steps=4,
                       profile_channels=4)


def _tiny_model() -> Any:
    from fortekit.plugins.backbones._small_clap_nets import SmallClap

    torch.manual_seed(3)
    model = SmallClap(TINY)
    with torch.no_grad():  # running statistics that differ from the defaults, so that they must be saved
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm1d):
                module.running_mean.uniform_(-1, 1)
                module.running_var.uniform_(0.5, 2)
    return model.eval()


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    model = _tiny_model()
    folder = tmp_path_factory.mktemp("tiny-clap")
    save_small_clap(model, folder)
    return model, folder


def test_a_saved_model_reloads_through_the_backbone_with_equal_embeddings(saved: tuple[Any, Path]) -> None:
    model, folder = saved
    clap = get_backbone("small-clap", model=folder, device="cpu", batch_size=2)
    assert (clap.dim, clap.sample_rate) == (16, 16000)
    rng = np.random.default_rng(0)
    waves = [rng.standard_normal(16000).astype(np.float32) * 0.1 for _ in range(3)]
    got = clap.encode_audio([(wave, 16000) for wave in waves])
    with torch.inference_mode():
        want = model.embed_audio(torch.from_numpy(np.stack(waves)))
    assert torch.allclose(got, want, atol=1e-5)
    assert torch.allclose(got.norm(dim=1), torch.ones(3), atol=1e-5)
    texts = ["a dog barks", "rain falls and then thunder rumbles"]
    from fortekit.plugins.backbones.minilm import MiniLMBackbone

    with torch.inference_mode():
        want_text = model.embed_text_features(MiniLMBackbone(device="cpu").encode_text(texts))
    assert torch.allclose(clap.encode_text(texts), want_text, atol=1e-5)
    # another rate is resampled to 16 kHz, not refused; a short clip is padded
    assert clap.encode_audio([(waves[0][::2], 8000), (waves[1][:800], 16000)]).shape == (2, 16)
    assert load_small_clap(folder / "small_clap.safetensors").config == TINY  # the weights file names it too


def _copy(folder: Path, target: Path) -> Path:
    target.mkdir()
    for name in ("small_clap.json", "small_clap.safetensors"):
        (target / name).write_bytes((folder / name).read_bytes())
    return target


def _edit_config(folder: Path, edit: Any) -> None:
    path = folder / "small_clap.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(("damage", "error", "code"), [
    (lambda f: (f / "small_clap.safetensors").unlink(), ModelNotFoundError, "E571"),
    (lambda f: (f / "small_clap.json").write_text("{not json", encoding="utf-8"), ModelLoadError, "E570"),
    (lambda f: _edit_config(f, lambda d: d.update(format="laion")), ModelLoadError, "E570"),
    (lambda f: _edit_config(f, lambda d: d.update(version=2)), ModelLoadError, "E570"),
    (lambda f: _edit_config(f, lambda d: d["model"].update(sample_rate="16k")), ModelLoadError, "E570"),
    (lambda f: _edit_config(f, lambda d: d["model"].pop("n_mels")), ModelLoadError, "E570"),
    (lambda f: _edit_config(f, lambda d: d["model"].update(fmax=9000.0)), ModelLoadError, "E570"),
    (lambda f: _edit_config(f, lambda d: d["model"].update(embed_dim=32)), ModelLoadError, "E572"),
    (lambda f: (f / "small_clap.safetensors").write_bytes(b"\x80\x04not it"), ModelLoadError, "E208"),
], ids=["no-weights", "not-json", "format", "version", "rate-type", "missing-field", "fmax", "shapes",
        "corrupt"])
def test_a_bad_checkpoint_or_config_gives_a_coded_error(
    saved: tuple[Any, Path], tmp_path: Path, damage: Any, error: type[Exception], code: str,
) -> None:
    folder = _copy(saved[1], tmp_path / "run")
    damage(folder)
    with pytest.raises(error, match=rf"\[{code}\]"):
        load_small_clap(folder)


def test_a_missing_model_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match=r"\[E571\].*small_clap.json"):
        get_backbone("small-clap", model=tmp_path / "nothing", device="cpu")
    with pytest.raises(ModelNotFoundError, match=r"\[E571\].*tagger"):
        get_captioner("tagger", model=tmp_path / "nothing", device="cpu")


def test_the_plugin_modules_import_without_torch() -> None:
    code = ("import sys, fortekit.plugins.backbones.small_clap, fortekit.plugins.captioners.tagger, "
            "fortekit.search.cli.bench_clap; print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"


# -- training on a generated collection ---------------------------------------------------------


@pytest.fixture(scope="module")
def trained(trained_clap: tuple[Path, Path, dict[str, Any], str]) -> tuple[Path, Path, dict[str, Any], str]:
    return trained_clap  # tests/soundclap_fixtures.py: trained once per session


def test_training_beats_chance_by_a_wide_margin(trained: tuple[Path, Path, dict[str, Any], str]) -> None:
    _, folder, result, printed = trained
    recall, chance = result["val_recall"], result["chance"]
    assert result["n_validation"] == 40 and chance["1"] == pytest.approx(1 / 40)
    assert recall["1"] >= 5 * chance["1"] and recall["5"] >= 3 * chance["5"], result
    assert result["losses"][-1] < result["losses"][0]
    assert "validation clips: R@1" in printed and (folder / "tagger.safetensors").is_file()


Trained = tuple[Path, Path, dict[str, Any], str]


def test_the_trained_backbone_retrieves_its_own_clips(trained: Trained) -> None:
    collection, folder, result, _ = trained
    clap = get_backbone("small-clap", model=folder, device="cpu")
    lines = (collection / "clips.jsonl").read_text(encoding="utf-8").splitlines()
    clips = [json.loads(line) for line in lines]
    test = [clip for clip in clips if clip["split"] == "test"]
    audio = clap.encode_audio([str(collection / clip["audio"]) for clip in test])
    text = clap.encode_text([clip["captions"][0] for clip in test])
    scores = text @ audio.T
    rank = (scores > scores.diagonal().unsqueeze(1)).sum(dim=1)
    # the files give what training measured on the cached log-mels (float16), to rounding
    assert abs(float((rank < 1).float().mean()) - result["val_recall"]["1"]) <= 2 / len(test)


def test_the_tagger_captions_audio_alone_and_the_parser_reads_its_captions(
    trained: tuple[Path, Path, dict[str, Any], str],
) -> None:
    import soundfile

    from fortekit import parse_caption

    collection, folder, result, _ = trained
    captioner = get_captioner("tagger", model=folder, device="cpu")
    paths = sorted((collection / "audio").glob("*.wav"))[:6]
    waveforms = [soundfile.read(str(path), dtype="float32") for path in paths]  # no path, no text: audio only
    captions = captioner.caption([(samples, rate) for samples, rate in waveforms])
    assert captions == captioner.caption([str(path) for path in paths])
    assert len(captions) == 6 and all(isinstance(c, str) and c.strip() for c in captions)
    for caption in captions:
        assert parse_caption(caption).formula is not None
    assert result["tag_f1"] > 0.25


def test_training_is_deterministic_for_a_seed(trained: Trained, tmp_path: Path) -> None:
    from fortekit.search.eval.bench.soundclap.train import train_small_clap

    collection, folder, _, _ = trained
    runs = [train_small_clap(collection, tmp_path / name, epochs=1, batch_size=32, seed=5, device="cpu",
                             cache_dir=folder / "cache") for name in ("a", "b")]
    assert runs[0].losses == runs[1].losses and runs[0].val_recall == runs[1].val_recall


@pytest.mark.parametrize(("kwargs", "code"), [
    ({"epochs": 0}, "E573"), ({"batch_size": 1}, "E573"), ({"seed": -1}, "E573"),
    ({"batch_size": 500}, "E575"),
])
def test_bad_training_settings_give_coded_errors(
    trained: tuple[Path, Path, dict[str, Any], str], tmp_path: Path, kwargs: dict[str, Any], code: str,
) -> None:
    from fortekit.search.eval.bench.soundclap.train import train_small_clap

    with pytest.raises(SoundClapError, match=rf"\[{code}\]"):
        train_small_clap(trained[0], tmp_path / "out", device="cpu", **kwargs)


def test_the_cli_reports_a_folder_that_is_no_collection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from fortekit.search.cli.bench_clap import add_train_clap_action

    parser = argparse.ArgumentParser(prog="fortekit bench")
    add_train_clap_action(parser.add_subparsers(dest="action"))
    args = parser.parse_args(["train-clap", "--data", str(tmp_path), "-o", str(tmp_path / "out")])
    assert args.handler(args, io.StringIO()) == 1
    assert "[E574]" in capsys.readouterr().err


def test_a_holdout_of_the_training_clips_can_validate_instead(trained: Trained, tmp_path: Path) -> None:
    from fortekit.search.eval.bench.soundclap.config import TrainClapConfig
    from fortekit.search.eval.bench.soundclap.train import train_small_clap

    collection, folder, _, _ = trained
    result = train_small_clap(collection, tmp_path / "holdout", epochs=1, batch_size=32, device="cpu",
                              config=TrainClapConfig(validation_split="holdout", tag_weight=0.0),
                              cache_dir=folder / "cache")
    assert (result.n_train, result.n_validation, result.tagger_config) == (144, 16, None)
    assert not (tmp_path / "holdout" / "tagger.json").exists()
