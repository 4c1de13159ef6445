"""``laion-clap``: LAION-CLAP through the ``laion_clap`` package, from your ``.pt`` checkpoint.

The usual way to run an original LAION-CLAP checkpoint is to convert it once,
``fortekit convert laion-clap CKPT OUT_DIR`` (:mod:`fortekit.plugins.backbones.laion_convert`),
and load ``OUT_DIR`` with the ``hf-clap`` backbone: no laion_clap at run time. This
backbone is for those who have a working laion_clap (``pip install 'fortekit[laion]'``):
it imports torchvision and torchaudio and pins numpy<2, so it needs a torch/torchvision
pair that import together (see docs/plugins.md). It agrees with the converted model
(tests/plugins/test_laion_convert_equivalence.py). Known pitfalls, handled here:

- Importing laion_clap fetches the bert-base-uncased, roberta-base and bart-base
  tokenizers, and its constructor ``roberta-base`` (tokenizer and model), from the
  Hugging Face hub. fortekit redirects all of them to ``text_model_path`` (a local
  directory; its config.json, vocab.json and merges.txt suffice, since the weights come
  from the checkpoint) or to the local cache, and says so plainly when neither has it.
- Newer transformers no longer keep ``text_branch.embeddings.position_ids`` in the
  state dict; old checkpoints have it. The key is dropped, and every other key must fit.
- Fusion or not, HTSAT-tiny or -base: read off the checkpoint's keys unless given.
- Clips longer than 10 s are cropped at random (and fused from random chunks); each
  clip's draws are seeded with ``seed``, so embeddings are deterministic.
- The checkpoint is read with ``torch.load(weights_only=True)`` (or safetensors),
  never unpickled (laion_clap's own loader unpickles).

Example:
    >>> from fortekit.plugins import get_backbone
    >>> clap = get_backbone("laion-clap", checkpoint="630k-audioset-best.pt",
    ...                     text_model_path="/models/roberta-base")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit._hf_progress import quiet_model_loading
from fortekit.errors import Errors, ModelNotFoundError
from fortekit.plugins._runtime import (
    batches,
    check_batch_size,
    check_texts,
    empty,
    l2_normalise,
    numpy_seed,
    require,
    resolve_device,
)
from fortekit.plugins.audio import check_items, load_waveform
from fortekit.plugins.backbones._checkpoint import fit_state_dict, read_state_dict
from fortekit.plugins.protocols import AudioInput, one_or_many

if TYPE_CHECKING:
    import torch

__all__ = ["CHECKPOINT_HINT", "LaionClapBackbone", "detect_architecture"]

CHECKPOINT_HINT = (
    "fortekit downloads no weights: get a LAION-CLAP checkpoint (630k-best.pt, "
    "630k-audioset-best.pt, 630k-fusion-best.pt, 630k-audioset-fusion-best.pt, or a music "
    "checkpoint) from the LAION-CLAP release on a machine with internet access, and pass its path."
)
_ROBERTA_FILES = "config.json, vocab.json and merges.txt"
_INSTALL_NOTE = (
    "laion_clap also imports torchvision, librosa and torchlibrosa and pins numpy<2; use a "
    "torchvision build made for your torch release. Or convert the checkpoint once with "
    "`fortekit convert laion-clap CKPT OUT_DIR` and use the hf-clap backbone on OUT_DIR, which "
    "needs no laion_clap."
)


def detect_architecture(state: dict[str, Any]) -> tuple[bool, str | None]:
    """(enable_fusion, audio model name) read off a LAION-CLAP state dict.

    Example:
        >>> import torch
        >>> detect_architecture({"audio_branch.patch_embed.proj.weight": torch.zeros(128, 1, 4, 4)})
        (False, 'HTSAT-base')
    """
    fusion = any("fusion_model" in key or "mel_conv2d" in key for key in state)
    proj = state.get("audio_branch.patch_embed.proj.weight")
    amodel = None
    if proj is not None:
        amodel = {96: "HTSAT-tiny", 128: "HTSAT-base"}.get(int(proj.shape[0]))
    return fusion, amodel


@contextmanager
def _redirect(classes: list[type], replacement: Any) -> Iterator[None]:
    """Temporarily replace `from_pretrained` on each class (laion_clap hard-codes 'roberta-base')."""
    saved = [(cls, cls.__dict__.get("from_pretrained")) for cls in classes]
    try:
        for cls in classes:
            cls.from_pretrained = classmethod(replacement(cls))  # type: ignore[attr-defined]
        yield
    finally:
        for cls, original in saved:
            if original is None:
                delattr(cls, "from_pretrained")
            else:
                cls.from_pretrained = original  # type: ignore[attr-defined]


class LaionClapBackbone:
    """LAION-CLAP (HTSAT audio tower, RoBERTa text tower) from a user checkpoint.

    Args:
        checkpoint: the ``.pt`` (or ``.safetensors``) file.
        enable_fusion: the fusion model or not; None reads it off the checkpoint.
        amodel: "HTSAT-tiny" or "HTSAT-base" (music checkpoints); None reads it off.
        text_model_path: a local roberta-base directory; None looks in the HF cache.
        allow_download: let laion_clap fetch roberta-base from the hub if it is not local.
        device: "auto" (CUDA when present), "cpu", "cuda", "cuda:N".
        batch_size: texts or clips per forward pass.
        seed: seeds the crops of clips longer than 10 s.

    Raises:
        MissingDependencyError: laion_clap (or what it imports) is not installed.
        ModelNotFoundError: the checkpoint, or roberta-base, is missing.
        ModelLoadError: the checkpoint is unsafe to read or does not fit.
    """

    name = "laion-clap"
    sample_rate: int | None = 48_000
    _max_samples = 480_000  # 10 s at 48 kHz, the window LAION-CLAP was trained on

    def __init__(
        self,
        checkpoint: str | os.PathLike[str],
        *,
        enable_fusion: bool | None = None,
        amodel: str | None = None,
        text_model_path: str | os.PathLike[str] | None = None,
        allow_download: bool = False,
        device: str = "auto",
        batch_size: int = 16,
        seed: int = 0,
    ) -> None:
        require("torch", self.name)
        require("soundfile", self.name)
        require("scipy", self.name)
        self.device = resolve_device(device)
        self.batch_size = check_batch_size(batch_size)
        self.seed = int(seed)
        self.checkpoint = Path(checkpoint).expanduser()
        # Check the user's files before importing laion_clap, whose import is slow.
        state = read_state_dict(self.checkpoint, what="LAION-CLAP checkpoint", hint=CHECKPOINT_HINT)
        detected_fusion, detected_amodel = detect_architecture(state)
        self.fusion = detected_fusion if enable_fusion is None else bool(enable_fusion)
        self.amodel = amodel or detected_amodel or "HTSAT-tiny"
        transformers = require("transformers", self.name)
        text_source = os.fspath(Path(text_model_path).expanduser()) if text_model_path else "roberta-base"
        if text_model_path is not None and not Path(text_source).is_dir():
            raise ModelNotFoundError(Errors.E206.format(
                what="roberta-base directory (text_model_path)", path=text_source,
                hint=f"It must hold roberta-base's {_ROBERTA_FILES}.",
            ))
        local_only = text_model_path is not None or not allow_download
        with self._roberta_from(transformers, text_source, local_only), quiet_model_loading():
            # Importing laion_clap fetches tokenizers by name (training/data.py): redirected too.
            laion_clap = require("laion_clap", self.name, note=_INSTALL_NOTE)
            module = laion_clap.CLAP_Module(enable_fusion=self.fusion, device="cpu", amodel=self.amodel)
        fit_state_dict(
            module.model, state, self.checkpoint, f"LAION-CLAP ({self.amodel}, fusion={self.fusion})",
            hint="Check enable_fusion= and amodel= against the checkpoint you downloaded.",
        )
        self._module = module.to(self.device).eval()
        self._hook = sys.modules[type(module).__module__]  # laion_clap.hook: its audio helpers
        self.dim = int(module.model_cfg.get("embed_dim", 512))

    def _roberta_from(self, transformers: Any, source: str, local_only: bool) -> Any:
        """Redirect laion_clap's from_pretrained('roberta-base') to `source`, offline."""

        def missing(exc: Exception) -> ModelNotFoundError:
            where = source if Path(source).is_dir() else "the local Hugging Face cache"
            problem = f"it is not in {where}"
            return ModelNotFoundError(Errors.E211.format(
                package="laion_clap", text_model="roberta-base", problem=f"{problem} ({exc})",
                files=_ROBERTA_FILES,
            ))

        def replacement(cls: type) -> Any:
            original = cls.from_pretrained  # type: ignore[attr-defined]

            def from_pretrained(klass: type, _name: str, *args: Any, **kwargs: Any) -> Any:
                kwargs["local_files_only"] = local_only
                if klass in unused:  # bert/bart tokenizers: built at import, used only in training
                    return transformers.RobertaTokenizer.from_pretrained(source)
                try:
                    if issubclass(klass, transformers.PreTrainedModel) and Path(source).is_dir() and not any(
                        (Path(source) / name).is_file() for name in ("model.safetensors", "pytorch_model.bin")
                    ):
                        # Config only: the text tower's weights come from the checkpoint.
                        return klass(transformers.AutoConfig.from_pretrained(source, local_files_only=True))
                    return original.__func__(klass, source, *args, **kwargs)
                except OSError as exc:
                    raise missing(exc) from exc

            return from_pretrained

        classes = [transformers.RobertaModel, transformers.RobertaTokenizer]
        fast = getattr(transformers, "RobertaTokenizerFast", None)
        if fast is not None and fast not in classes:
            classes.append(fast)
        unused = [getattr(transformers, name) for name in ("BertTokenizer", "BartTokenizer")
                  if getattr(transformers, name, None) is not None]
        unused = [cls for cls in unused if cls not in classes]
        return _redirect([*classes, *unused], replacement)

    def __repr__(self) -> str:
        checkpoint = str(self.checkpoint)
        return f"LaionClapBackbone(checkpoint={checkpoint!r}, fusion={self.fusion}, device={self.device!r})"

    @property
    def cache_identity(self) -> str:
        """The model's full identity for cache keys: checkpoint (size, mtime), architecture, seed."""
        from fortekit.plugins.protocols import identity_string

        return identity_string(
            self.name,
            {"checkpoint": str(self.checkpoint), "fusion": self.fusion, "amodel": self.amodel,
             "seed": self.seed, "dim": self.dim},
            [self.checkpoint],
        )

    @one_or_many
    def encode_text(self, texts: str | Sequence[str]) -> torch.Tensor:
        """Embed texts (one str: one vector, 1-D): float32 (len(texts), 512), unit L2 norm, on `device`."""
        import torch

        checked = check_texts(texts)
        if not checked:
            none: torch.Tensor = empty(self.dim, self.device)
            return none
        parts = []
        with torch.inference_mode():
            for chunk in batches(checked, self.batch_size):
                tokens = self._module.tokenizer(list(chunk))
                parts.append(l2_normalise(self._module.model.get_text_embedding(dict(tokens))))
        return torch.cat(parts).to(self.device)

    def encode_audio(self, items: Sequence[AudioInput]) -> torch.Tensor:
        """Embed clips (any rate, mono or not): float32 (len(items), 512), unit L2 norm."""
        import torch

        audio = check_items(items)
        if not audio:
            none: torch.Tensor = empty(self.dim, self.device)
            return none
        hook, cfg = self._hook, self._module.model_cfg["audio_cfg"]
        parts = []
        with torch.inference_mode():
            for start in range(0, len(audio), self.batch_size):
                inputs = []
                for offset, item in enumerate(audio[start:start + self.batch_size]):
                    wave = load_waveform(item, 48_000, start + offset)
                    # laion_clap quantises to int16 and back before featurising; so do we.
                    wave = hook.int16_to_float32(hook.float32_to_int16(wave))
                    with numpy_seed(self.seed):
                        inputs.append(hook.get_audio_features(
                            {}, torch.from_numpy(wave).float(), self._max_samples,
                            data_truncating="fusion" if self.fusion else "rand_trunc",
                            data_filling="repeatpad", audio_cfg=cfg, require_grad=False,
                        ))
                parts.append(l2_normalise(self._module.model.get_audio_embedding(inputs)))
        return torch.cat(parts).to(self.device)
