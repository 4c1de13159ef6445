"""``msclap``: Microsoft CLAP (versions 2022 and 2023; the paper's "CLAP" backbone).

Uses the model classes of the ``msclap`` package (``pip install 'fortekit[msclap]'``)
with your weights file (CLAP_weights_2022.pth or CLAP_weights_2023.pth). What differs
from msclap's own wrapper, and why:

- Input: 44.1 kHz mono, a fixed window (7 s for 2023, 5 s for 2022). Shorter clips are
  repeated to fill it, as msclap does; longer ones are cropped at a fixed place
  (``crop="center"`` or ``"start"``) instead of msclap's unseeded random crop, so an
  embedding never changes between runs (``crop="random"`` draws from ``seed``).
- Audio is read with soundfile and resampled with scipy: msclap's reader needs
  torchaudio, whose wheels are tied to one torch release. When only ``import msclap``
  fails for want of torchaudio, its model modules are loaded without its wrapper.
- The text model (gpt2 for 2023, bert-base-uncased for 2022) comes from
  ``text_model_path`` or the local Hugging Face cache, never from the network unless
  ``allow_download=True``.
- Weights are read with ``torch.load(weights_only=True)``, and must fit the model.

Example:
    >>> from fortekit.plugins import get_backbone
    >>> clap = get_backbone("msclap", weights="CLAP_weights_2023.pth",
    ...                     text_model_path="/models/gpt2")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fortekit.errors import Errors, MissingDependencyError, ModelNotFoundError, PluginOptionError
from fortekit.plugins._runtime import (
    INSTALL,
    batches,
    check_batch_size,
    check_texts,
    empty,
    l2_normalise,
    model_loading,
    require,
    resolve_device,
)
from fortekit.plugins.audio import check_items, load_waveform
from fortekit.plugins.backbones._checkpoint import fit_state_dict, read_state_dict
from fortekit.plugins.protocols import AudioInput, one_or_many

if TYPE_CHECKING:
    import numpy as np
    import torch

__all__ = ["MSClapBackbone", "fit_window", "import_msclap_model"]

WEIGHTS_HINT = (
    "fortekit downloads no weights: get CLAP_weights_2023.pth (or _2022) from Microsoft's "
    "msclap release on a machine with internet access, and pass its path as weights=."
)


def import_msclap_model() -> tuple[types.ModuleType, Path]:
    """msclap's model module and the package directory (for its configs).

    ``import msclap`` imports its wrapper, which imports torchaudio; when that alone
    fails, the package is registered without running its ``__init__`` so that its model
    modules (torch, transformers, torchlibrosa) still load.

    Raises:
        MissingDependencyError: msclap, or something its model modules import, is missing.
    """
    spec = importlib.util.find_spec("msclap")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(Errors.E205.format(
            plugin="msclap", package="msclap", problem="not installed", install=INSTALL["msclap"], note="",
        ))
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    try:
        return importlib.import_module("msclap.models.clap"), package_dir
    except ImportError as exc:
        if "torchaudio" not in str(exc) or "msclap.models.clap" in sys.modules:
            raise MissingDependencyError(Errors.E205.format(
                plugin="msclap", package=exc.name or "msclap", problem=exc,
                install=INSTALL.get(exc.name or "", INSTALL["msclap"]), note="",
            )) from exc
    stub = types.ModuleType("msclap", "msclap's package, loaded by fortekit without its torchaudio wrapper")
    stub.__path__ = [str(package_dir)]
    stub.__spec__ = spec
    sys.modules["msclap"] = stub
    try:
        return importlib.import_module("msclap.models.clap"), package_dir
    except ImportError as exc:
        raise MissingDependencyError(Errors.E205.format(
            plugin="msclap", package=exc.name or "msclap", problem=exc,
            install=INSTALL.get(exc.name or "", f"pip install {exc.name}"), note="",
        )) from exc


def fit_window(wave: np.ndarray, length: int, crop: str, seed: int) -> np.ndarray:
    """Repeat a short clip to `length` samples, or crop a long one (start, center or seeded random).

    Example:
        >>> import numpy as np
        >>> fit_window(np.arange(3.0), 7, "center", 0).tolist()
        [0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 0.0]
        >>> fit_window(np.arange(10.0), 4, "center", 0).tolist()
        [3.0, 4.0, 5.0, 6.0]
    """
    import numpy as np

    if len(wave) <= length:
        repeats = -(-length // len(wave))  # ceil
        return np.tile(wave, repeats)[:length]
    overflow = len(wave) - length
    start = {"start": 0, "center": overflow // 2}.get(crop)
    if start is None:
        start = int(np.random.default_rng(seed).integers(0, overflow + 1))
    return wave[start:start + length]


class MSClapBackbone:
    """Microsoft CLAP 2022/2023 from a weights file, with deterministic audio windows.

    Args:
        weights: CLAP_weights_2023.pth / _2022.pth (or a .safetensors of its state dict).
        version: "2023" (HTSAT + gpt2, 7 s) or "2022" (CNN14 + BERT, 5 s).
        text_model_path: a local directory of the text model (gpt2 / bert-base-uncased):
            its config and tokenizer files; weights too if your checkpoint lacks them.
        allow_download: fetch the text model from the hub when it is not local.
        crop: where to cut clips longer than the window: "center", "start" or "random".
        seed: for crop="random".
        device: "auto" (CUDA when present), "cpu", "cuda", "cuda:N".
        batch_size: texts or clips per forward pass.

    Raises:
        MissingDependencyError, ModelNotFoundError, ModelLoadError, PluginOptionError.
    """

    name = "msclap"

    def __init__(
        self,
        weights: str | os.PathLike[str],
        *,
        version: str = "2023",
        text_model_path: str | os.PathLike[str] | None = None,
        allow_download: bool = False,
        crop: str = "center",
        seed: int = 0,
        device: str = "auto",
        batch_size: int = 16,
    ) -> None:
        if str(version) not in ("2022", "2023"):
            expected = "'2022' or '2023'"
            raise PluginOptionError(Errors.E218.format(name="version", expected=expected, value=version))
        if crop not in ("center", "start", "random"):
            expected = "'center', 'start' or 'random'"
            raise PluginOptionError(Errors.E218.format(name="crop", expected=expected, value=crop))
        require("torch", self.name)
        transformers = require("transformers", self.name)
        yaml = require("yaml", self.name)
        require("soundfile", self.name)
        require("scipy", self.name)
        self.version, self.crop, self.seed = str(version), crop, int(seed)
        self.device = resolve_device(device)
        self.batch_size = check_batch_size(batch_size)
        self.weights = Path(weights).expanduser()
        state = read_state_dict(
            self.weights, what="msclap weights file", hint=WEIGHTS_HINT, nested=("model",),
        )
        clap_module, package_dir = import_msclap_model()
        config_file = package_dir / "configs" / f"config_{self.version}.yml"
        config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
        self.text_model = str(config["text_model"])
        self.text_len = int(config["text_len"])
        self.sample_rate = int(config["sampling_rate"])
        self.window = int(config["duration"]) * self.sample_rate
        self.dim = int(config["d_proj"])
        source, has_weights = self._text_source(text_model_path, allow_download)
        options = {"local_files_only": not allow_download}
        # msclap's TextEncoder calls AutoModel.from_pretrained(text_model); a directory
        # without weights is built from its config (the checkpoint fills it in).
        shim = types.SimpleNamespace(from_pretrained=lambda name: (
            transformers.AutoModel.from_pretrained(name, **options) if has_weights
            else transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(name, **options))
        ))
        original = clap_module.__dict__["AutoModel"]
        setattr(clap_module, "AutoModel", shim)  # noqa: B010 (a module attribute, swapped back below)
        try:
            with model_loading(f"the text model of msclap {self.version}", source):
                model = clap_module.CLAP(
                    audioenc_name=config["audioenc_name"], sample_rate=self.sample_rate,
                    window_size=config["window_size"], hop_size=config["hop_size"],
                    mel_bins=config["mel_bins"],
                    fmin=config["fmin"], fmax=config["fmax"], classes_num=config["num_classes"],
                    out_emb=config["out_emb"], text_model=source,
                    transformer_embed_dim=config["transformer_embed_dim"], d_proj=config["d_proj"],
                )
                self._tokenizer = transformers.AutoTokenizer.from_pretrained(source, **options)
        except OSError as exc:
            raise self._missing_text_model(f"it cannot be loaded from {source} ({exc})") from exc
        finally:
            setattr(clap_module, "AutoModel", original)  # noqa: B010
        # TextEncoder picks its pooling by the model *name* ('gpt' -> last token).
        model.caption_encoder.text_model = self.text_model
        if "gpt" in self.text_model:
            self._tokenizer.add_special_tokens({"pad_token": "!"})  # id 0, as msclap trained
        fit_state_dict(
            model, state, self.weights, f"msclap {self.version}",
            hint="Check version= against the weights file.",
            may_miss=("caption_encoder.base.",) if has_weights else (),
        )
        self._model = model.to(self.device).eval()

    def _missing_text_model(self, problem: str) -> ModelNotFoundError:
        files = "config.json and tokenizer files (vocab.json/merges.txt or vocab.txt)"
        return ModelNotFoundError(Errors.E211.format(
            package="msclap", text_model=self.text_model, problem=problem, files=files,
        ))

    def _text_source(self, path: str | os.PathLike[str] | None, allow_download: bool) -> tuple[str, bool]:
        """(where to load the text model from, whether that place has its weights)."""
        if path is not None:
            directory = Path(path).expanduser()
            if not directory.is_dir():
                raise ModelNotFoundError(Errors.E206.format(
                    what="text model directory (text_model_path)", path=directory,
                    hint=f"It must hold {self.text_model}'s config.json and tokenizer files.",
                ))
            weights = ("model.safetensors", "pytorch_model.bin")
            return str(directory), any((directory / name).is_file() for name in weights)
        if allow_download:
            return self.text_model, True
        try:
            from huggingface_hub import snapshot_download

            return snapshot_download(self.text_model, local_files_only=True), True
        except Exception as exc:  # huggingface_hub raises several types for "not cached"
            problem = f"it is not in the local Hugging Face cache ({type(exc).__name__})"
            raise self._missing_text_model(problem) from exc

    def __repr__(self) -> str:
        weights = str(self.weights)
        return f"MSClapBackbone(weights={weights!r}, version={self.version!r}, device={self.device!r})"

    @property
    def cache_identity(self) -> str:
        """The model's full identity for cache keys: weights (size, mtime), version, text model, seed."""
        from fortekit.plugins.protocols import identity_string

        return identity_string(
            self.name,
            {"weights": str(self.weights), "version": self.version, "text_model": self.text_model,
             "text_len": self.text_len, "crop": self.crop, "seed": self.seed, "dim": self.dim},
            [self.weights],
        )

    @one_or_many
    def encode_text(self, texts: str | Sequence[str]) -> torch.Tensor:
        """Embed texts (one str: one vector, 1-D): float32 (len(texts), 1024), unit L2 norm, on `device`."""
        import torch

        checked = check_texts(texts)
        if not checked:
            none: torch.Tensor = empty(self.dim, self.device)
            return none
        suffix = " <|endoftext|>" if "gpt" in self.text_model else ""
        keys = ("input_ids", "attention_mask") if "gpt" in self.text_model else (
            "input_ids", "token_type_ids", "attention_mask")
        parts = []
        with torch.inference_mode():
            for chunk in batches(checked, self.batch_size):
                tokens = self._tokenizer(
                    [text + suffix for text in chunk], padding="max_length", truncation=True,
                    max_length=self.text_len, return_tensors="pt",
                )
                inputs = {key: tokens[key].to(self.device) for key in keys if key in tokens}
                parts.append(l2_normalise(self._model.caption_encoder(inputs)))
        return torch.cat(parts)

    def encode_audio(self, items: Sequence[AudioInput]) -> torch.Tensor:
        """Embed clips (any rate, mono or not) in the model's window: (len(items), 1024), unit norm."""
        import numpy as np
        import torch

        audio = check_items(items)
        if not audio:
            none: torch.Tensor = empty(self.dim, self.device)
            return none
        parts = []
        with torch.inference_mode():
            for start in range(0, len(audio), self.batch_size):
                waves = [
                    fit_window(
                        load_waveform(item, self.sample_rate, start + i), self.window, self.crop, self.seed,
                    )
                    for i, item in enumerate(audio[start:start + self.batch_size])
                ]
                batch = torch.from_numpy(np.stack(waves)).float().to(self.device)
                parts.append(l2_normalise(self._model.audio_encoder(batch)[0]))
        return torch.cat(parts)
