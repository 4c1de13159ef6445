"""A plain BERT encoder read without transformers: torch, ``safetensors`` and ``tokenizers`` only.

The ``minilm`` backbone's model is a plain BERT (all-MiniLM-L6-v2). Loading it through
transformers' ``AutoModel`` imports transformers' modelling machinery (``torch._dynamo``
among it), which took longer than the model's own weights on a cold ``fortekit search``
(docs/cold_start.md). This module computes the same ``last_hidden_state`` as transformers'
``BertModel`` (inference only, no pooler) from the same files:

- ``config.json``: :class:`BertConfig`; a directory whose config asks for anything this
  module does not compute (another ``model_type``, relative positions, another activation,
  a decoder) is not a plain BERT, and :func:`load_plain_bert` answers None so that the
  caller goes through transformers;
- ``model.safetensors``: :class:`BertWeights` (safetensors, never a pickle);
- ``tokenizer.json``: :class:`BertTokenizer` (``tokenizers.Tokenizer.from_file``), padded to the
  longest text of a batch and truncated to ``max_length`` as transformers' fast tokenizer does
  with ``padding=True, truncation=True``; its special tokens, lower-casing and template come
  from the file itself.

Importing this module imports torch; :mod:`fortekit.plugins.backbones.minilm` imports it only
when a model is loaded.

Example:
    >>> import torch
    >>> config = BertConfig(vocab_size=8, hidden_size=4, num_hidden_layers=1, num_attention_heads=2,
    ...                     intermediate_size=8, max_position_embeddings=16, type_vocab_size=2)
    >>> weights = BertWeights.random(config, seed=0)
    >>> encoder = BertEncoder(config, weights).eval()
    >>> ids = torch.tensor([[1, 5, 2, 0]])
    >>> encoder(ids, torch.tensor([[1, 1, 1, 0]])).shape
    torch.Size([1, 4, 4])
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional

from fortekit.errors import Errors, ModelLoadError

__all__ = [
    "BertConfig",
    "BertEncoder",
    "BertTokenizer",
    "BertWeights",
    "PlainBert",
    "expected_weight_names",
    "load_plain_bert",
    "not_plain_bert",
]

WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
#: Name prefixes of a checkpoint saved from a BERT with a head (``BertForMaskedLM``: ``bert.``).
PREFIXES = ("", "bert.")
#: Activations computed here, as transformers' ``ACT2FN`` names them: both are exact (erf) GELU.
ACTIVATIONS = ("gelu", "gelu_python")
#: Tokenizer classes whose ``tokenizer.json`` is the whole tokenizer.
TOKENIZER_CLASSES = (None, "BertTokenizer", "BertTokenizerFast")


@dataclass(frozen=True)
class BertConfig:
    """The sizes of a plain BERT, as ``config.json`` writes them (transformers' defaults where absent).

    Example:
        >>> BertConfig.from_dict({"hidden_size": 384, "num_attention_heads": 12}).head_size
        32
    """

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BertConfig:
        """The fields of this class read from a parsed ``config.json``; other keys are ignored.

        Raises:
            ValueError: a size is not a number.
        """
        values: dict[str, Any] = {}
        for field in fields(cls):
            if field.name in data:
                kind = float if field.name == "layer_norm_eps" else int
                values[field.name] = kind(data[field.name])
        return cls(**values)

    @property
    def head_size(self) -> int:
        """Dimensions per attention head."""
        return self.hidden_size // self.num_attention_heads


def read_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The parsed ``config.json`` of a model directory.

    Raises:
        ModelLoadError: the file is not a JSON object (E208).
    """
    file = Path(path) / "config.json"
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ModelLoadError(Errors.E208.format(what="the BERT config", path=file, problem=exc)) from exc
    if not isinstance(data, dict):
        problem = "not a JSON object"
        raise ModelLoadError(Errors.E208.format(what="the BERT config", path=file, problem=problem))
    return data


def not_plain_bert(path: str | os.PathLike[str], config: Mapping[str, Any]) -> str | None:
    """Why the model directory is not a plain BERT that this module computes, or None when it is.

    Plain: ``model_type`` "bert", an encoder (no decoder, no cross-attention), absolute
    positions, exact GELU, float32 (no other ``dtype`` asked), heads that divide the hidden
    size, and beside ``config.json`` a ``model.safetensors`` and a ``tokenizer.json`` of a
    BERT tokenizer. Weight names are not checked here: a plain BERT whose file lacks one is
    a damaged model (:class:`BertWeights` says which), not another architecture.

    Example:
        >>> not_plain_bert(".", {"model_type": "roberta"})
        "model_type is 'roberta', not 'bert'"
    """
    folder = Path(path)
    if config.get("model_type") != "bert":
        return f"model_type is {config.get('model_type')!r}, not 'bert'"
    checks = (
        (config.get("is_decoder", False) is False, "it is a decoder"),
        (config.get("add_cross_attention", False) is False, "it has cross-attention"),
        (config.get("position_embedding_type", "absolute") == "absolute", "its positions are not absolute"),
        (config.get("hidden_act", "gelu") in ACTIVATIONS, f"hidden_act is {config.get('hidden_act')!r}"),
        (config.get("torch_dtype", config.get("dtype")) in (None, "float32"), "its dtype is not float32"),
        ((folder / WEIGHTS_FILE).is_file(), f"it has no {WEIGHTS_FILE}"),
        ((folder / TOKENIZER_FILE).is_file(), f"it has no {TOKENIZER_FILE}"),
    )
    for holds, reason in checks:
        if not holds:
            return reason
    try:
        sizes = BertConfig.from_dict(config)
    except (TypeError, ValueError):
        return "a size in config.json is not a number"
    if sizes.num_attention_heads < 1 or sizes.hidden_size % sizes.num_attention_heads:
        return "its heads do not divide the hidden size"
    tokenizer_config = folder / "tokenizer_config.json"
    if tokenizer_config.is_file():
        try:
            settings = json.loads(tokenizer_config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return "its tokenizer_config.json cannot be read"
        if not isinstance(settings, dict) or settings.get("tokenizer_class") not in TOKENIZER_CLASSES:
            return "its tokenizer is not a BERT tokenizer"
    return None


def expected_weight_names(config: BertConfig) -> list[str]:
    """The tensors a plain BERT's encoder reads (the pooler and position ids are not among them).

    Example:
        >>> config = BertConfig(num_hidden_layers=1)
        >>> len(expected_weight_names(config)), expected_weight_names(config)[0]
        (21, 'embeddings.word_embeddings.weight')
    """
    names = [f"embeddings.{part}_embeddings.weight" for part in ("word", "position", "token_type")]
    names += ["embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for layer in range(config.num_hidden_layers):
        stem = f"encoder.layer.{layer}."
        for dense in ("attention.self.query", "attention.self.key", "attention.self.value",
                      "attention.output.dense", "intermediate.dense", "output.dense",
                      "attention.output.LayerNorm", "output.LayerNorm"):
            names += [f"{stem}{dense}.weight", f"{stem}{dense}.bias"]
    return names


def _shapes(config: BertConfig) -> dict[str, tuple[int, ...]]:
    hidden, inner = config.hidden_size, config.intermediate_size
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (config.vocab_size, hidden),
        "embeddings.position_embeddings.weight": (config.max_position_embeddings, hidden),
        "embeddings.token_type_embeddings.weight": (config.type_vocab_size, hidden),
    }
    for name in expected_weight_names(config):
        if name in shapes:
            continue
        if "intermediate.dense" in name:
            shapes[name] = (inner, hidden) if name.endswith("weight") else (inner,)
        elif name.endswith("output.dense.weight") and "attention" not in name:
            shapes[name] = (hidden, inner)
        elif name.endswith("weight") and "LayerNorm" not in name:
            shapes[name] = (hidden, hidden)
        else:
            shapes[name] = (hidden,)
    return shapes


class BertWeights:
    """The encoder's tensors by name, read from ``model.safetensors`` (safetensors: no pickle).

    Args:
        tensors: name -> tensor, every name of :func:`expected_weight_names`.
        source: the file, for messages.

    Example:
        >>> weights = BertWeights.random(BertConfig(vocab_size=8, hidden_size=4, num_hidden_layers=1,
        ...     num_attention_heads=2, intermediate_size=8, max_position_embeddings=16), seed=0)
        >>> tuple(weights.take("embeddings.word_embeddings.weight").shape)
        (8, 4)
    """

    def __init__(self, tensors: Mapping[str, torch.Tensor], source: str | os.PathLike[str]) -> None:
        self._tensors = dict(tensors)
        self.source = os.fspath(source)

    @classmethod
    def read(cls, path: str | os.PathLike[str], config: BertConfig) -> BertWeights:
        """Read the encoder's tensors, checking every name and shape against `config`.

        A checkpoint saved from a BERT with a head (names under ``bert.``) is read too;
        the pooler and any head are left unread.

        Raises:
            ModelLoadError: the file is damaged (E208), a tensor is missing (E210) or not of
                its shape or float32 (E208).
        """
        from safetensors import safe_open

        file = Path(path)
        expected = _shapes(config)
        try:
            with safe_open(str(file), framework="pt", device="cpu") as handle:
                names = set(handle.keys())
                prefix = next((p for p in PREFIXES if f"{p}embeddings.word_embeddings.weight" in names), "")
                missing = [name for name in expected if prefix + name not in names]
                if missing:
                    unexpected = sorted(names - {prefix + name for name in expected})
                    raise ModelLoadError(Errors.E210.format(
                        path=file, model="BERT", n_missing=len(missing), missing=missing[:3],
                        n_unexpected=len(unexpected), unexpected=unexpected[:3] or "none",
                        hint="The file is damaged or holds another model: reinstall it, or pass model_path= "
                             "a complete sentence-transformers directory.",
                    ))
                tensors = {name: handle.get_tensor(prefix + name) for name in expected}
        except ModelLoadError:
            raise
        except Exception as exc:  # safetensors' SafetensorError, OSError
            raise ModelLoadError(Errors.E208.format(what="the BERT weights", path=file, problem=exc)) from exc
        for name, shape in expected.items():
            tensor = tensors[name]
            if tuple(tensor.shape) != shape or tensor.dtype != torch.float32:
                problem = (f"{name} is {tuple(tensor.shape)} {tensor.dtype}, config.json asks for {shape} "
                           "torch.float32")
                raise ModelLoadError(Errors.E208.format(what="the BERT weights", path=file, problem=problem))
        return cls(tensors, file)

    @classmethod
    def random(cls, config: BertConfig, *, seed: int = 0) -> BertWeights:
        """Random weights of the right shapes (tests and examples; LayerNorms start at 1 and 0)."""
        generator = torch.Generator().manual_seed(seed)
        tensors = {}
        for name, shape in _shapes(config).items():
            if "LayerNorm" in name:
                tensors[name] = torch.ones(shape) if name.endswith("weight") else torch.zeros(shape)
            else:
                tensors[name] = torch.randn(shape, generator=generator) * 0.02
        return cls(tensors, "(random)")

    def take(self, name: str) -> nn.Parameter:
        """The tensor `name` as a frozen parameter.

        Raises:
            ModelLoadError: no such tensor (E208).
        """
        try:
            tensor = self._tensors[name]
        except KeyError:
            what, problem = "the BERT weights", f"no tensor {name}"
            raise ModelLoadError(Errors.E208.format(what=what, path=self.source, problem=problem)) from None
        return nn.Parameter(tensor, requires_grad=False)


class Dense(nn.Module):
    """A linear layer whose weight and bias come from the checkpoint (no random init first)."""

    def __init__(self, weights: BertWeights, name: str) -> None:
        super().__init__()
        self.weight = weights.take(f"{name}.weight")
        self.bias = weights.take(f"{name}.bias")

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return functional.linear(hidden, self.weight, self.bias)


class LayerNorm(nn.Module):
    """Layer normalisation with the checkpoint's scale and shift and ``config.layer_norm_eps``."""

    def __init__(self, weights: BertWeights, name: str, eps: float) -> None:
        super().__init__()
        self.weight = weights.take(f"{name}.weight")
        self.bias = weights.take(f"{name}.bias")
        self.eps = eps

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return functional.layer_norm(hidden, (hidden.shape[-1],), self.weight, self.bias, self.eps)


class Embeddings(nn.Module):
    """Token + absolute position + token type (all 0: one segment) embeddings, then LayerNorm."""

    def __init__(self, config: BertConfig, weights: BertWeights) -> None:
        super().__init__()
        self.word = weights.take("embeddings.word_embeddings.weight")
        self.position = weights.take("embeddings.position_embeddings.weight")
        self.token_type = weights.take("embeddings.token_type_embeddings.weight")
        self.norm = LayerNorm(weights, "embeddings.LayerNorm", config.layer_norm_eps)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        length = input_ids.shape[1]
        hidden = functional.embedding(input_ids, self.word) + self.token_type[0]
        hidden = hidden + self.position[:length]
        out: torch.Tensor = self.norm(hidden)
        return out


class SelfAttention(nn.Module):
    """Multi-head self-attention over the unpadded tokens (``scaled_dot_product_attention``)."""

    def __init__(self, config: BertConfig, weights: BertWeights, stem: str) -> None:
        super().__init__()
        self.heads, self.head_size = config.num_attention_heads, config.head_size
        self.query = Dense(weights, f"{stem}.query")
        self.key = Dense(weights, f"{stem}.key")
        self.value = Dense(weights, f"{stem}.value")

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        batch, length, _ = hidden.shape

        def heads(dense: Dense) -> torch.Tensor:
            projected: torch.Tensor = dense(hidden)
            return projected.view(batch, length, self.heads, self.head_size).transpose(1, 2)

        context = functional.scaled_dot_product_attention(
            heads(self.query), heads(self.key), heads(self.value), attn_mask=mask,
            scale=self.head_size ** -0.5,
        )
        return context.transpose(1, 2).reshape(batch, length, self.heads * self.head_size)


class AddNorm(nn.Module):
    """A sub-layer's output projection, added to the sub-layer's input, then LayerNorm."""

    def __init__(self, config: BertConfig, weights: BertWeights, stem: str) -> None:
        super().__init__()
        self.dense = Dense(weights, f"{stem}.dense")
        self.norm = LayerNorm(weights, f"{stem}.LayerNorm", config.layer_norm_eps)

    def forward(self, output: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.norm(self.dense(output) + residual)
        return out


class FeedForward(nn.Module):
    """The intermediate projection with exact (erf) GELU, as ``hidden_act: "gelu"`` asks."""

    def __init__(self, weights: BertWeights, stem: str) -> None:
        super().__init__()
        self.dense = Dense(weights, f"{stem}.intermediate.dense")

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return functional.gelu(self.dense(hidden), approximate="none")


class Layer(nn.Module):
    """One transformer block: self-attention, add & norm, feed-forward, add & norm."""

    def __init__(self, config: BertConfig, weights: BertWeights, index: int) -> None:
        super().__init__()
        stem = f"encoder.layer.{index}"
        self.attention = SelfAttention(config, weights, f"{stem}.attention.self")
        self.attention_out = AddNorm(config, weights, f"{stem}.attention.output")
        self.feed_forward = FeedForward(weights, stem)
        self.feed_forward_out = AddNorm(config, weights, f"{stem}.output")

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        attended = self.attention_out(self.attention(hidden, mask), hidden)
        out: torch.Tensor = self.feed_forward_out(self.feed_forward(attended), attended)
        return out


class BertEncoder(nn.Module):
    """Embeddings and the layers: token ids and attention mask -> the last hidden state.

    Args:
        config: the sizes.
        weights: the tensors (:meth:`BertWeights.read`).
    """

    def __init__(self, config: BertConfig, weights: BertWeights) -> None:
        super().__init__()
        self.config = config
        self.embeddings = Embeddings(config, weights)
        layers = range(config.num_hidden_layers)
        self.layers = nn.ModuleList(Layer(config, weights, number) for number in layers)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """(batch, length) ids and 0/1 mask -> (batch, length, hidden), as BertModel's last_hidden_state."""
        # Padded keys are masked out; a batch without padding runs unmasked, as transformers does.
        mask = None if bool(attention_mask.all()) else attention_mask.bool()[:, None, None, :]
        hidden: torch.Tensor = self.embeddings(input_ids)
        for layer in self.layers:
            hidden = layer(hidden, mask)
        return hidden


class BertTokenizer:
    """``tokenizer.json`` through ``tokenizers``: [CLS] text [SEP], padded to the batch's longest, truncated.

    Args:
        path: the ``tokenizer.json`` file.
        pad_id: the padding id when the file names no padding of its own (the config's ``pad_token_id``).

    Raises:
        ModelLoadError: the file cannot be read as a tokenizer (E208).
    """

    def __init__(self, path: str | os.PathLike[str], *, pad_id: int = 0) -> None:
        from tokenizers import Tokenizer

        file = Path(path)
        try:
            tokenizer = Tokenizer.from_file(str(file))
        except Exception as exc:  # tokenizers raises plain Exception
            raise ModelLoadError(Errors.E208.format(what="the tokenizer", path=file, problem=exc)) from exc
        padding = tokenizer.padding or {}
        pad_id = int(padding.get("pad_id", pad_id))
        pad_token = padding.get("pad_token") or tokenizer.id_to_token(pad_id) or "[PAD]"
        self._tokenizer = tokenizer
        pad_type_id = int(padding.get("pad_type_id", 0))
        self._pad = {"pad_id": pad_id, "pad_token": pad_token, "pad_type_id": pad_type_id}
        self._max_length: int | None = None  # the truncation length the tokenizer is set to

    def __call__(self, texts: Sequence[str], max_length: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids and attention mask, (len(texts), longest), int64 (``padding=True, truncation=True``)."""
        tokenizer = self._tokenizer
        if self._max_length != max_length:
            # The file's own settings (all-MiniLM-L6-v2's: fixed padding to 128) are replaced, as
            # transformers replaces them for each call.
            tokenizer.enable_truncation(max_length, stride=0, strategy="longest_first", direction="right")
            tokenizer.enable_padding(direction="right", **self._pad)
            self._max_length = max_length
        encodings = tokenizer.encode_batch(list(texts), add_special_tokens=True)
        ids = torch.tensor([encoding.ids for encoding in encodings], dtype=torch.long)
        mask = torch.tensor([encoding.attention_mask for encoding in encodings], dtype=torch.long)
        return ids, mask


class PlainBert:
    """A plain BERT model directory, loaded: its tokenizer and encoder, on one device.

    Example:
        >>> from fortekit.plugins.backbones.minilm import bundled_model_path
        >>> bert = load_plain_bert(bundled_model_path())  # doctest: +SKIP
        >>> hidden, mask = bert.hidden_states(["a dog barking"], max_length=256)  # doctest: +SKIP
        >>> tuple(hidden.shape)  # doctest: +SKIP
        (1, 5, 384)
    """

    def __init__(self, config: BertConfig, tokenizer: BertTokenizer, model: BertEncoder) -> None:
        self.config = config
        self.tokenizer = tokenizer
        self.model = model

    def to(self, device: str) -> PlainBert:
        """Move the encoder to `device` (the tokenizer stays on the CPU)."""
        self.model = self.model.to(device).eval()
        return self

    def hidden_states(self, texts: Sequence[str], max_length: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The last hidden state and the attention mask of `texts`, on the encoder's device."""
        ids, mask = self.tokenizer(texts, max_length)
        device = self.model.embeddings.word.device
        ids, mask = ids.to(device), mask.to(device)
        hidden: torch.Tensor = self.model(ids, mask)
        return hidden, mask


def load_plain_bert(path: str | os.PathLike[str]) -> PlainBert | None:
    """The model directory's BERT on the CPU, or None when it is not a plain BERT (:func:`not_plain_bert`).

    Raises:
        ModelLoadError: config.json, model.safetensors or tokenizer.json is damaged, or a weight
            is missing (E208, E210).
    """
    folder = Path(path)
    data = read_config(folder)
    if not_plain_bert(folder, data) is not None:
        return None
    config = BertConfig.from_dict(data)
    weights = BertWeights.read(folder / WEIGHTS_FILE, config)
    tokenizer = BertTokenizer(folder / TOKENIZER_FILE, pad_id=int(data.get("pad_token_id") or 0))
    return PlainBert(config, tokenizer, BertEncoder(config, weights).eval())
