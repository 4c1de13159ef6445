"""``hf-clap``: a CLAP model through transformers (``ClapModel`` + ``ClapProcessor``).

Loads from a local directory (what ``save_pretrained`` writes, a snapshot of
laion/clap-htsat-unfused, laion/clap-htsat-fused, laion/larger_clap_general, ..., or an
original LAION-CLAP checkpoint converted by ``fortekit convert laion-clap``) or a hub id.
A hub id is read from the local Hugging Face cache only; fortekit downloads it only when
you pass ``allow_download=True``.

Audio: read with soundfile, mixed to mono, resampled to the processor's rate (48 kHz
for the LAION models), batched. The feature extractor crops clips longer than its
window (10 s) at random; each clip's crop is drawn from a generator seeded with
``seed``, so an embedding is the same in every run and whatever else is in its batch.
For fused models, ``is_longer`` is the clip's real length (transformers marks a random
clip of an all-short batch as long, which would make a clip's embedding depend on its
batch).

Example:
    >>> from fortekit.plugins import get_backbone
    >>> clap = get_backbone("hf-clap", model="/models/clap-htsat-unfused")  # doctest: +SKIP
    >>> clap.encode_audio(["rain.wav", "dog.flac"]).shape  # doctest: +SKIP
    torch.Size([2, 512])
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit._hf_progress import quiet_model_loading
from fortekit.errors import Errors, ModelLoadError, ModelNotFoundError
from fortekit.plugins._runtime import (
    batches,
    check_batch_size,
    check_texts,
    empty,
    l2_normalise,
    local_or_hub,
    model_loading,
    numpy_seed,
    require,
    resolve_device,
)
from fortekit.plugins.audio import check_items, load_waveform
from fortekit.plugins.protocols import AudioInput, one_or_many

if TYPE_CHECKING:
    import numpy as np
    import torch

__all__ = ["DEFAULT_MODEL", "HFClapBackbone", "pooled"]

#: Read from the local Hugging Face cache when no model is named.
DEFAULT_MODEL = "laion/clap-htsat-unfused"


def pooled(output: Any) -> torch.Tensor:
    """The embedding from get_*_features: a tensor (transformers 4) or an output whose
    pooler_output holds it (transformers 5)."""
    tensor: torch.Tensor = output if hasattr(output, "dim") else output.pooler_output
    return tensor


class HFClapBackbone:
    """A transformers CLAP model (text and audio towers) from a local directory or hub id.

    Args:
        model: a directory holding config.json, the weights and the processor files, or
            a hub id (default "laion/clap-htsat-unfused") found in the local cache.
        device: "auto" (CUDA when present), "cpu", "cuda", "cuda:N".
        batch_size: texts or clips per forward pass.
        allow_download: let transformers fetch a hub id that is not cached.
        revision: the hub revision, with a hub id.
        seed: seeds the crops of clips longer than the model's window.
        max_text_tokens: token limit of the text tower (LAION-CLAP trained with 77).

    Raises:
        MissingDependencyError: torch, transformers, soundfile or scipy is missing.
        ModelNotFoundError: the directory or cached model does not exist.
        ModelLoadError: the files are there but do not load as a CLAP model.
    """

    name = "hf-clap"

    def __init__(
        self,
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        *,
        device: str = "auto",
        batch_size: int = 16,
        allow_download: bool = False,
        revision: str | None = None,
        seed: int = 0,
        max_text_tokens: int = 77,
    ) -> None:
        require("torch", self.name)
        transformers = require("transformers", self.name)
        require("soundfile", self.name)
        require("scipy", self.name)
        self.device = resolve_device(device)
        self.batch_size = check_batch_size(batch_size)
        self.seed = int(seed)
        self.max_text_tokens = int(max_text_tokens)
        source, local_only = local_or_hub(os.fspath(model), allow_download)
        self.model_source = source
        if local_only and not Path(source).is_dir() and _looks_like_path(source):
            raise ModelNotFoundError(Errors.E206.format(
                what="CLAP model directory", path=source,
                hint="Pass a directory written by save_pretrained() (config.json, weights, processor files).",
            ))
        options: dict[str, Any] = {"local_files_only": local_only}
        self._revision = revision
        if revision is not None:
            options["revision"] = revision
        try:
            with quiet_model_loading(), model_loading("a CLAP model", source):
                model_obj = transformers.ClapModel.from_pretrained(source, **options)
                self._processor = transformers.ClapProcessor.from_pretrained(source, **options)
        except OSError as exc:
            if Path(source).is_dir():
                problem = Errors.E208.format(what="a CLAP model", path=source, problem=exc)
                raise ModelLoadError(problem) from exc
            raise ModelNotFoundError(Errors.E207.format(model=source, problem=exc)) from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelLoadError(Errors.E208.format(what="a CLAP model", path=source, problem=exc)) from exc
        self._model = model_obj.to(self.device).eval()
        self.dim = int(model_obj.config.projection_dim)
        extractor = self._processor.feature_extractor
        self.sample_rate = int(extractor.sampling_rate)
        self.fusion = bool(getattr(model_obj.config.audio_config, "enable_fusion", False))
        # The fused model was trained on 4-channel "fusion" mels; the unfused one on a crop.
        self._truncation = "fusion" if self.fusion else "rand_trunc"

    def __repr__(self) -> str:
        return f"HFClapBackbone(model={self.model_source!r}, device={self.device!r}, dim={self.dim})"

    @property
    def cache_identity(self) -> str:
        """The model's full identity for cache keys: folder (sizes, mtimes) or hub id, revision, seed."""
        from fortekit.plugins.protocols import identity_string

        return identity_string(
            self.name,
            {"model": self.model_source, "revision": self._revision, "max_text_tokens": self.max_text_tokens,
             "seed": self.seed, "dim": self.dim},
            [self.model_source] if Path(self.model_source).is_dir() else [],
        )

    @one_or_many
    def encode_text(self, texts: str | Sequence[str]) -> torch.Tensor:
        """Embed texts (one str: one vector, 1-D): float32 (len(texts), dim), unit L2 norm, on `device`.

        Raises:
            EncoderInputError: bytes or a non-str item.
        """
        import torch

        checked = check_texts(texts)
        if not checked:
            none: torch.Tensor = empty(self.dim, self.device)
            return none
        tokenizer = self._processor.tokenizer
        parts = []
        with torch.inference_mode():
            for chunk in batches(checked, self.batch_size):
                encoded = tokenizer(
                    list(chunk), padding=True, truncation=True, max_length=self.max_text_tokens,
                    return_tensors="pt",
                )
                inputs = {key: value.to(self.device) for key, value in encoded.items()
                          if key in ("input_ids", "attention_mask")}
                parts.append(l2_normalise(pooled(self._model.get_text_features(**inputs))))
        return torch.cat(parts)

    def encode_audio(self, items: Sequence[AudioInput]) -> torch.Tensor:
        """Embed audio clips: float32 (len(items), dim), unit L2 norm, on `device`.

        Args:
            items: file paths, AudioItem objects or (samples, sample_rate) pairs; any
                rate, mono or multi-channel.

        Raises:
            AudioReadError: a file cannot be read (the message names it), or is empty.
            EncoderInputError: a bad item type.
        """
        import torch

        audio = check_items(items)
        if not audio:
            none: torch.Tensor = empty(self.dim, self.device)
            return none
        parts = []
        with torch.inference_mode():
            for start in range(0, len(audio), self.batch_size):
                chunk = audio[start:start + self.batch_size]
                waves = [load_waveform(item, self.sample_rate, start + i) for i, item in enumerate(chunk)]
                features, longer = self._features(waves)
                embedded = self._model.get_audio_features(
                    input_features=features.to(self.device), is_longer=longer.to(self.device),
                )
                parts.append(l2_normalise(pooled(embedded)))
        return torch.cat(parts)

    def _features(self, waves: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        """Mel features clip by clip (seeded crops), and each clip's real is_longer flag."""
        import numpy as np
        import torch

        extractor = self._processor.feature_extractor
        limit, hop = int(extractor.nb_max_samples), int(extractor.hop_length)
        mels, flags = [], []
        for wave in waves:
            with numpy_seed(self.seed):
                mels.append(extractor(
                    wave, sampling_rate=self.sample_rate, truncation=self._truncation, return_tensors="np",
                )["input_features"][0])
            # The fusion path treats a clip within one hop of the window as not longer.
            longer = len(wave) > limit and (self._truncation != "fusion" or len(wave) // hop != limit // hop)
            flags.append([longer])
        return torch.from_numpy(np.stack(mels)).float(), torch.tensor(flags, dtype=torch.bool)


def _looks_like_path(source: str) -> bool:
    """A hub id is 'name' or 'org/name'; anything with more parts or a leading dot or
    slash can only be a path (and a missing one)."""
    return source.startswith(("/", ".", "~")) or source.count("/") > 1 or (os.sep != "/" and os.sep in source)
