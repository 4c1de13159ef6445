"""laion-clap and msclap: safe checkpoint reading, the position_ids pitfall, architecture
detection, deterministic windows; each package's end-to-end test skips with its reason
when the package (or its weights) is absent."""

from __future__ import annotations

import importlib.util
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fortekit.errors import MissingDependencyError, ModelLoadError, ModelNotFoundError, PluginOptionError  # noqa: E402
from fortekit.plugins import get_backbone  # noqa: E402
from fortekit.plugins.backbones._checkpoint import fit_state_dict, read_state_dict  # noqa: E402
from fortekit.plugins.backbones.laion_clap import detect_architecture  # noqa: E402
from fortekit.plugins.backbones.msclap import fit_window  # noqa: E402


class TextBranch(torch.nn.Module):
    """Mimics a transformers text tower whose position_ids buffer moved in and out of state dicts."""

    def __init__(self, persistent: bool) -> None:
        super().__init__()
        self.embeddings = torch.nn.Module()
        self.embeddings.register_buffer("position_ids", torch.arange(4), persistent=persistent)
        self.proj = torch.nn.Linear(3, 2)


def test_checkpoint_formats_and_the_module_prefix(tmp_path: Path) -> None:
    layer = torch.nn.Linear(3, 2)
    state = {f"module.{key}": value for key, value in layer.state_dict().items()}
    torch.save({"epoch": 3, "state_dict": state}, tmp_path / "ckpt.pt")
    loaded = read_state_dict(tmp_path / "ckpt.pt", what="checkpoint", hint="")
    assert set(loaded) == {"weight", "bias"}
    from safetensors.torch import save_file

    save_file(layer.state_dict(), str(tmp_path / "w.safetensors"))
    assert set(read_state_dict(tmp_path / "w.safetensors", what="w", hint="")) == {"weight", "bias"}
    torch.save({"model": layer.state_dict()}, tmp_path / "ms.pth")
    nested = read_state_dict(tmp_path / "ms.pth", what="w", hint="", nested=("model",))
    assert set(nested) == {"weight", "bias"}


def test_pickled_objects_are_refused(tmp_path: Path) -> None:
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    path = tmp_path / "evil.pt"
    with path.open("wb") as handle:
        pickle.dump({"state_dict": {"w": torch.zeros(1)}, "hook": Evil()}, handle, protocol=2)
    with pytest.raises(ModelLoadError, match=r"E209.*weights_only=True"):
        read_state_dict(path, what="checkpoint", hint="")
    with pytest.raises(ModelNotFoundError, match=r"E206.*get it here"):
        read_state_dict(tmp_path / "absent.pt", what="checkpoint", hint="get it here")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ModelLoadError):
        read_state_dict(tmp_path / "junk.pt", what="checkpoint", hint="")


@pytest.mark.parametrize(("saved", "loading"), [(True, False), (False, True)])
def test_position_ids_mismatch_is_ignored(saved: bool, loading: bool) -> None:
    old = {f"text_branch.{k}": v for k, v in TextBranch(persistent=saved).state_dict().items()}
    target = torch.nn.Module()
    target.text_branch = TextBranch(persistent=loading)
    fit_state_dict(target, old, "ckpt.pt", "model")
    assert torch.equal(target.text_branch.proj.weight, old["text_branch.proj.weight"])


def test_other_mismatches_are_explained() -> None:
    target = torch.nn.Module()
    target.text_branch = TextBranch(persistent=False)
    state = {f"text_branch.{k}": v for k, v in TextBranch(persistent=False).state_dict().items()}
    state.pop("text_branch.proj.bias")
    state["audio_branch.fusion_model.w"] = torch.zeros(1)
    expected = r"E210.*1 weights missing.*proj\.bias.*1 unexpected.*try fusion"
    with pytest.raises(ModelLoadError, match=expected):
        fit_state_dict(target, state, "ckpt.pt", "model", hint="try fusion")
    state = {"text_branch.proj.weight": torch.zeros(5, 5)}
    with pytest.raises(ModelLoadError, match="size mismatch"):
        fit_state_dict(target, state, "ckpt.pt", "model")


def test_laion_architecture_is_read_off_the_checkpoint() -> None:
    tiny = {"audio_branch.patch_embed.proj.weight": torch.zeros(96, 1, 4, 4)}
    assert detect_architecture(tiny) == (False, "HTSAT-tiny")
    fused = {**tiny, "audio_branch.patch_embed.mel_conv2d.weight": torch.zeros(1)}
    assert detect_architecture(fused) == (True, "HTSAT-tiny")
    assert detect_architecture({}) == (False, None)


def test_laion_clap_checks_files_first_and_names_the_extra(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match=r"E206.*LAION-CLAP checkpoint.*downloads no weights"):
        get_backbone("laion-clap", checkpoint=tmp_path / "630k-audioset-best.pt", device="cpu")
    if importlib.util.find_spec("laion_clap") is not None:
        pytest.skip("laion_clap is installed here; the missing-package message cannot be shown")
    torch.save({"state_dict": {"audio_branch.patch_embed.proj.weight": torch.zeros(96, 1, 4, 4)}},
               tmp_path / "ckpt.pt")
    with pytest.raises(MissingDependencyError, match=r"E205.*laion_clap.*fortekit\[laion\]"):
        get_backbone("laion-clap", checkpoint=tmp_path / "ckpt.pt", device="cpu")


def test_laion_clap_end_to_end() -> None:
    checkpoint = os.environ.get("FORTEKIT_LAION_CLAP_CHECKPOINT")
    if importlib.util.find_spec("laion_clap") is None:
        pytest.skip("laion_clap is not installed (optional extra fortekit[laion]; it needs torchvision "
                    "matching torch and numpy<2)")
    if not checkpoint or not Path(checkpoint).is_file():
        pytest.skip("no LAION-CLAP weights: set FORTEKIT_LAION_CLAP_CHECKPOINT to a .pt checkpoint "
                    "(and FORTEKIT_ROBERTA_PATH to a local roberta-base directory)")
    clap = get_backbone("laion-clap", checkpoint=checkpoint, device="cpu",
                        text_model_path=os.environ.get("FORTEKIT_ROBERTA_PATH"))
    texts = clap.encode_text(["a dog barks", "rain on a roof"])
    audio = clap.encode_audio([(np.sin(np.arange(48_000) / 10).astype(np.float32), 48_000)] * 2)
    assert texts.shape == (2, 512) and audio.shape == (2, 512)
    assert torch.equal(audio[0], audio[1])


def test_msclap_window_is_deterministic() -> None:
    wave = np.arange(10.0)
    assert fit_window(wave, 4, "start", 0).tolist() == [0, 1, 2, 3]
    assert fit_window(wave, 4, "center", 0).tolist() == [3, 4, 5, 6]
    assert np.array_equal(fit_window(wave, 4, "random", 7), fit_window(wave, 4, "random", 7))
    assert fit_window(np.arange(3.0), 8, "center", 0).tolist() == [0, 1, 2, 0, 1, 2, 0, 1]
    with pytest.raises(PluginOptionError, match="crop"):
        get_backbone("msclap", weights="w.pth", crop="middle")
    with pytest.raises(PluginOptionError, match="version"):
        get_backbone("msclap", weights="w.pth", version="2024")


@pytest.fixture(scope="module")
def msclap_weights(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A randomly initialised msclap 2023 model (its real HTSAT audio tower; a 1-layer GPT-2
    text tower 768 wide) saved as msclap saves its weights, {"model": state_dict}."""
    for module in ("msclap", "torchlibrosa", "librosa", "yaml", "transformers", "soundfile"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (optional extra fortekit[msclap])")
    import yaml
    from plugin_fixtures import word_tokenizer
    from transformers import GPT2Config, GPT2Model

    from fortekit.plugins.backbones.msclap import import_msclap_model

    folder = tmp_path_factory.mktemp("msclap")
    tokenizer = word_tokenizer({"pad_token": "!", "eos_token": "<|endoftext|>", "bos_token": "<|endoftext|>"})
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=768, n_layer=1, n_head=12,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    GPT2Model(config).save_pretrained(folder / "gpt2")
    tokenizer.save_pretrained(folder / "gpt2")
    clap_module, package = import_msclap_model()
    cfg = yaml.safe_load((package / "configs" / "config_2023.yml").read_text())
    torch.manual_seed(0)
    model = clap_module.CLAP(
        audioenc_name=cfg["audioenc_name"], sample_rate=cfg["sampling_rate"], window_size=cfg["window_size"],
        hop_size=cfg["hop_size"], mel_bins=cfg["mel_bins"], fmin=cfg["fmin"], fmax=cfg["fmax"],
        classes_num=cfg["num_classes"], out_emb=cfg["out_emb"], text_model=str(folder / "gpt2"),
        transformer_embed_dim=cfg["transformer_embed_dim"], d_proj=cfg["d_proj"],
    )
    torch.save({"model": model.state_dict()}, folder / "CLAP_weights_2023.pth")
    return folder / "CLAP_weights_2023.pth", folder / "gpt2"


def test_msclap_end_to_end(msclap_weights: tuple[Path, Path], tmp_path: Path) -> None:
    from plugin_fixtures import write_wav

    weights, gpt2 = msclap_weights
    clap = get_backbone("msclap", weights=weights, text_model_path=gpt2, device="cpu", batch_size=2)
    assert (clap.dim, clap.sample_rate, clap.window) == (1024, 44_100, 7 * 44_100)
    texts = clap.encode_text(["a dog barks", "birds chirping in the morning", "rain"])
    assert texts.shape == (3, 1024)
    assert torch.allclose(texts.norm(dim=1), torch.ones(3), atol=1e-5)
    files = [write_wav(tmp_path / "long.wav", 12.0, 48_000), write_wav(tmp_path / "short.wav", 0.3, 16_000),
             write_wav(tmp_path / "stereo.wav", 7.0, 44_100, channels=2)]
    audio = clap.encode_audio(files)
    assert audio.shape == (3, 1024) and torch.isfinite(audio).all()
    single = torch.cat([clap.encode_audio([path]) for path in files])
    assert torch.allclose(audio, single, atol=1e-4)
    assert torch.equal(clap.encode_audio(files[:1]), clap.encode_audio(files[:1]))  # no random crop
    torch.save({"model": {"caption_encoder.projection.linear1.weight": torch.zeros(1024, 768)}},
               tmp_path / "partial.pth")
    with pytest.raises(ModelLoadError, match="E210"):
        get_backbone("msclap", weights=tmp_path / "partial.pth", text_model_path=gpt2, device="cpu")
