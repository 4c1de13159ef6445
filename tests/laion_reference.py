"""A tiny LAION-CLAP reference model, built with the laion_clap package's own classes, offline.

Used by tests/plugins/test_laion_convert_equivalence.py. The laion_clap package is not a
dependency of the main environment: ``bash scripts/setup-laion.sh`` installs it (and what
it imports) into ``.laion-deps/``, which the test puts on ``sys.path``. Offline it needs
three work-arounds, none of which touches the model code under test:

- laion_clap fetches tokenizers (bert-base-uncased, roberta-base, facebook/bart-base) when
  it is imported and roberta-base when a model is built. ``from_pretrained`` of those
  classes is redirected to a tiny byte-level RoBERTa tokenizer and a one-layer RoBERTa
  (width 768, which laion_clap's projection hard-codes) made here.
- laion_clap imports torchvision (Resize for long fused clips, a few unused names) and
  torchaudio (the fused model's mel spectrogram). PyPI has only CUDA builds of both for
  torch 2.13; their pure-Python parts work on the CPU torch once the two operators that
  torchvision registers unconditionally (nms, qnms) exist as schemas.
- ``create_htsat_model`` builds HTSAT-tiny at its full size; a two-stage HTSAT of the same
  class (patch width 8, two blocks a stage, so shifted windows and their attention masks
  are covered) is built instead, registered as a model config of laion_clap's own factory.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEPS = REPO / ".laion-deps"
MODEL_NAME = "HTSAT-fortekit-tiny"
AUDIO_CFG = {
    "audio_length": 1024,
    "clip_samples": 480000,
    "mel_bins": 64,
    "sample_rate": 48000,
    "window_size": 1024,
    "hop_size": 480,
    "fmin": 50,
    "fmax": 14000,
    "class_num": 527,
    "model_type": "HTSAT",
    "model_name": "tiny",
}


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (the alphabet of byte-level BPE)."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    codes, extra = printable[:], 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, codes), strict=True))


def write_tokenizer(folder: Path) -> Path:
    """roberta-base's file layout with a tiny byte-level vocabulary (no merges): vocab.json,
    merges.txt and a config.json of a one-layer RoBERTa of width 768 (12 heads)."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {token: index for index, token in enumerate(["<s>", "<pad>", "</s>", "<unk>"])}
    for char in _bytes_to_unicode().values():
        vocab.setdefault(char, len(vocab))
    vocab["<mask>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    config = {
        "model_type": "roberta",
        "vocab_size": len(vocab),
        "hidden_size": 768,
        "num_hidden_layers": 1,
        "num_attention_heads": 12,
        "intermediate_size": 64,
        "max_position_embeddings": 80,
        "type_vocab_size": 1,
        "pad_token_id": 1,
        "bos_token_id": 0,
        "eos_token_id": 2,
        "layer_norm_eps": 1e-5,
        "hidden_act": "gelu",
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def import_laion_clap(tokenizer_dir: Path) -> Any:
    """Import laion_clap offline (see the module docstring); returns the package.

    Raises:
        ImportError: laion_clap or what it imports is not installed.
    """
    saved_path = list(sys.path)
    if DEPS.is_dir() and str(DEPS) not in sys.path:
        sys.path.append(str(DEPS))
    try:
        return _import_laion_clap(tokenizer_dir)
    finally:
        # laion_clap appends its own folder (top-level 'training', 'evaluate', 'clap_module'):
        # once imported, the modules stay in sys.modules; the search path goes back as it was,
        # so the other test files in the same run see the project's environment only.
        sys.path[:] = saved_path


def _import_laion_clap(tokenizer_dir: Path) -> Any:
    import torch

    try:
        import torchvision
    except ImportError:
        raise
    except Exception:  # a CUDA build on the CPU torch: its operators failed to register
        library = torch.library.Library("torchvision", "DEF")
        library.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        library.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        import_laion_clap.library = library  # type: ignore[attr-defined]  # keep it registered
        for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[name]
        import torchvision  # noqa: F401
    with offline_hub(tokenizer_dir):
        import laion_clap
    from laion_clap.clap_module.htsat import HTSAT_Swin_Transformer

    def tiny_htsat(audio_cfg: Any, enable_fusion: bool = False, fusion_type: str = "None") -> Any:
        return HTSAT_Swin_Transformer(
            spec_size=256,
            patch_size=4,
            patch_stride=(4, 4),
            num_classes=audio_cfg.class_num,
            embed_dim=8,
            depths=[2, 2],
            num_heads=[1, 2],
            window_size=8,
            config=audio_cfg,
            enable_fusion=enable_fusion,
            fusion_type=fusion_type,
        )

    tiny = {
        "embed_dim": 16,
        "joint_embed_shape": 8,
        "audio_cfg": dict(AUDIO_CFG),
        "text_cfg": {
            "context_length": 77,
            "vocab_size": _text_config(tokenizer_dir).vocab_size,
            "width": 768,
            "heads": 12,
            "layers": 1,
        },
    }
    # laion_clap puts its own folder on sys.path: its modules load twice, as laion_clap.clap_module.*
    # and as clap_module.* (which CLAP_Module uses). Patch both copies.
    for prefix in ("laion_clap.clap_module", "clap_module"):
        sys.modules[prefix + ".model"].create_htsat_model = tiny_htsat  # type: ignore[attr-defined]
        sys.modules[prefix + ".factory"]._MODEL_CONFIGS[MODEL_NAME] = tiny  # type: ignore[attr-defined]
    return laion_clap


def _text_config(tokenizer_dir: Path) -> Any:
    import transformers

    return transformers.RobertaConfig.from_pretrained(str(tokenizer_dir))


@contextmanager
def offline_hub(tokenizer_dir: Path) -> Iterator[None]:
    """Inside the block, the tokenizers and RobertaModel that laion_clap fetches by name come
    from `tokenizer_dir` (see the module docstring); outside it transformers is untouched."""
    import torch
    import transformers

    tokenizer = transformers.RobertaTokenizer(
        str(tokenizer_dir / "vocab.json"), str(tokenizer_dir / "merges.txt")
    )
    config = _text_config(tokenizer_dir)

    def tokenizer_from_pretrained(cls: type, *args: Any, **kwargs: Any) -> Any:
        return tokenizer

    def text_model_from_pretrained(cls: type, *args: Any, **kwargs: Any) -> Any:
        torch.manual_seed(1)
        return transformers.RobertaModel(config, add_pooling_layer=True)

    patched = {
        cls: tokenizer_from_pretrained
        for cls in (transformers.BertTokenizer, transformers.RobertaTokenizer, transformers.BartTokenizer)
    }
    patched[transformers.RobertaModel] = text_model_from_pretrained
    saved = {cls: cls.__dict__.get("from_pretrained") for cls in patched}
    try:
        for cls, replacement in patched.items():
            cls.from_pretrained = classmethod(replacement)  # type: ignore[attr-defined]
        yield
    finally:
        for cls, original in saved.items():
            if original is None:
                delattr(cls, "from_pretrained")
            else:
                cls.from_pretrained = original  # type: ignore[attr-defined]


def build_reference(laion_clap: Any, tokenizer_dir: Path, *, fusion: bool, seed: int = 0) -> Any:
    """A CLAP_Module of the tiny config with random weights (batch-norm statistics included)."""
    import torch

    torch.manual_seed(seed)
    with offline_hub(tokenizer_dir):
        module = laion_clap.CLAP_Module(enable_fusion=fusion, device="cpu", amodel=MODEL_NAME)
    with torch.no_grad():
        for name, buffer in module.model.named_buffers():
            if name.endswith("running_mean"):
                buffer.normal_(0.0, 0.5)
            elif name.endswith("running_var"):
                buffer.uniform_(0.5, 2.0)
        for name, parameter in module.model.named_parameters():
            if "bn0" in name or name.endswith(("norm.weight", "norm1.weight", "norm2.weight")):
                parameter.uniform_(0.5, 1.5)
    return module.eval()


def save_like_laion(module: Any, path: Path) -> Path:
    """Save as laion_clap's training loop does: epoch, name, the DataParallel state dict and the
    optimiser, plus a numpy scalar (which makes torch.load(weights_only=True) refuse the file)."""
    import torch

    state = {"module." + key: value for key, value in module.model.state_dict().items()}
    torch.save(
        {
            "epoch": 3,
            "name": "fortekit-tiny",
            "state_dict": state,
            "optimizer": {"state": {}, "param_groups": [{"lr": 1e-4}]},
            "best_mAP": np.float64(0.25),
        },
        path,
    )
    return path


def waveforms() -> list[np.ndarray]:
    """Clips at 48 kHz: 10 s, 3 s, 0.5 s and 4 s (all within the 10 s window, so neither side
    draws a random crop). laion_clap quantises each to 16 bits before featurising: give
    fortekit :func:`quantise` of each clip, and the reference the clip itself."""
    rng = np.random.default_rng(7)
    clips = []
    for seconds, freq in ((10.0, 440.0), (3.0, 660.0), (0.5, 1000.0), (4.0, 220.0)):
        t = np.arange(int(seconds * 48_000)) / 48_000
        wave = 0.4 * np.sin(2 * np.pi * freq * t) + 0.05 * rng.standard_normal(t.size)
        clips.append(wave.astype(np.float32))
    return clips


def quantise(wave: np.ndarray) -> np.ndarray:
    """laion_clap's int16 round trip (hook.float32_to_int16, then int16_to_float32)."""
    clipped = np.clip(wave, -1.0, 1.0)
    return ((clipped * 32767.0).astype(np.int16) / 32767.0).astype(np.float32)
