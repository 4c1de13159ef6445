"""The key mapping from an original LAION-CLAP state dict to transformers' ``ClapModel``, and
the ClapModel configuration read off the weights' shapes.

Pure functions over parameter names and tensors (no transformers import), shared by the
converter (:mod:`fortekit.plugins.backbones.laion_convert`) and its tests, which build a
LAION-layout state dict from a ``ClapModel`` with :func:`to_laion`.

The renames follow transformers' own conversion script for CLAP
(``models/clap/convert_clap_original_pytorch_to_hf.py``, as of transformers 4.27-5.x):
``text_branch`` -> ``text_model``, ``audio_branch`` -> ``audio_model.audio_encoder``, the
Swin blocks' ``attn``/``norm1``/``norm2``/``mlp.fc1``/``mlp.fc2`` -> ``attention.self`` /
``layernorm_before`` / ``layernorm_after`` / ``intermediate.dense`` / ``output.dense``,
``attn.proj`` -> ``attention.output.dense``, ``bn0`` -> ``batch_norm``, the projection MLPs'
``0``/``2`` -> ``linear1``/``linear2``, and each fused ``qkv`` weight split in three
(query, key, value). Parts of the LAION model that inference does not use are dropped:
the waveform-to-mel front end (transformers computes the mel spectrogram in its feature
extractor), the AudioSet classifier head and the contrastive-training MLPs.

Example:
    >>> import torch
    >>> hf_names("audio_branch.layers.0.blocks.1.attn.qkv.weight")
    ['audio_model.audio_encoder.layers.0.blocks.1.attention.self.query.weight', \
'audio_model.audio_encoder.layers.0.blocks.1.attention.self.key.weight', \
'audio_model.audio_encoder.layers.0.blocks.1.attention.self.value.weight']
    >>> hf_names("text_projection.2.bias")
    ['text_projection.linear2.bias']
    >>> hf_names("audio_branch.tscam_conv.weight")  # dropped: the AudioSet classifier
    []
    >>> hf_names("vision_branch.proj") is None  # not a LAION-CLAP weight
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

__all__ = [
    "DROPPED",
    "IGNORED",
    "audio_model_name",
    "clap_config",
    "from_laion",
    "hf_names",
    "is_dropped",
    "to_laion",
]

#: LAION-CLAP weights that ClapModel has no place for: dropped on purpose.
DROPPED = (
    "audio_branch.spectrogram_extractor.",  # STFT as a convolution: the feature extractor does it
    "audio_branch.logmel_extractor.",  # the mel filter bank: likewise
    "audio_branch.tscam_conv.",  # the AudioSet classifier (527 classes)
    "audio_branch.head.",
    "audio_transform.",  # the MLPs of the contrastive training loss
    "text_transform.",
)
#: Buffers that one side may have and the other not (recomputed when the model is built).
IGNORED = ("embeddings.position_ids", "embeddings.token_type_ids", "attn_mask")

_BLOCK = {
    "norm1.": "layernorm_before.",
    "norm2.": "layernorm_after.",
    "mlp.fc1.": "intermediate.dense.",
    "mlp.fc2.": "output.dense.",
    "attn.proj.": "attention.output.dense.",
    "attn.relative_position_bias_table": "attention.self.relative_position_bias_table",
    "attn.relative_position_index": "attention.self.relative_position_index",
    "attn.qkv.": "attention.self.qkv.",
}
_BLOCK_KEY = re.compile(r"^(audio_branch\.layers\.\d+\.blocks\.\d+\.)(.+)$")
_PROJECTION = re.compile(r"^(audio|text)_projection\.([02])\.(weight|bias)$")
_QKV = ("query", "key", "value")


def is_dropped(key: str) -> bool:
    """Whether a LAION-CLAP key names a part that the converted model leaves out."""
    return key.startswith(DROPPED) or key.endswith(IGNORED)


def hf_names(key: str) -> list[str] | None:
    """The ClapModel name(s) of one LAION-CLAP weight.

    Args:
        key: a LAION-CLAP state-dict key (without a "module." prefix).

    Returns:
        One name, three for a fused ``qkv`` weight (query, key, value, in that order), an
        empty list for a key dropped on purpose (:data:`DROPPED`), or None for a key the
        converter does not know.
    """
    if is_dropped(key):
        return []
    if key in ("logit_scale_a", "logit_scale_t"):
        return [key]
    projection = _PROJECTION.match(key)
    if projection:
        tower, index, kind = projection.groups()
        return [f"{tower}_projection.linear{1 if index == '0' else 2}.{kind}"]
    if key.startswith("text_branch."):
        return ["text_model." + key.removeprefix("text_branch.")]
    if not key.startswith("audio_branch."):
        return None
    block = _BLOCK_KEY.match(key)
    if block:
        prefix, rest = block.groups()
        for old, new in _BLOCK.items():
            if rest.startswith(old):
                name = (
                    "audio_model.audio_encoder."
                    + prefix.removeprefix("audio_branch.")
                    + new
                    + rest[len(old) :]
                )
                if ".qkv." in name:
                    return [name.replace(".qkv.", f".{part}.") for part in _QKV]
                return [name]
        return None
    rest = key.removeprefix("audio_branch.")
    if rest.startswith("bn0."):
        rest = "batch_norm." + rest.removeprefix("bn0.")
    elif not rest.startswith(("patch_embed.", "norm.", "layers.")):
        return None
    return ["audio_model.audio_encoder." + rest]


def from_laion(state: Mapping[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], list[str], list[str]]:
    """Rename (and split) a LAION-CLAP state dict into ClapModel's names.

    Args:
        state: the LAION-CLAP weights, "module." prefix already removed.

    Returns:
        (the renamed weights, the keys dropped on purpose, the keys not understood).
    """
    renamed: dict[str, torch.Tensor] = {}
    dropped: list[str] = []
    unknown: list[str] = []
    for key, value in state.items():
        names = hf_names(key)
        if names is None:
            unknown.append(key)
        elif not names:
            dropped.append(key)
        elif len(names) == 3:
            for name, part in zip(names, value.chunk(3, dim=0), strict=True):
                renamed[name] = part.contiguous()
        else:
            renamed[names[0]] = value
    return renamed, dropped, unknown


def to_laion(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The inverse of :func:`from_laion` on the weights ClapModel has (for tests and tools).

    Query, key and value are concatenated back into ``qkv``; buffers in :data:`IGNORED`
    are left out. The dropped LAION parts cannot be recovered and are absent.

    Example:
        >>> import torch
        >>> hf = {"audio_projection.linear1.weight": torch.zeros(2, 3)}
        >>> list(to_laion(hf))
        ['audio_projection.0.weight']
    """
    import torch

    inverse: dict[str, str] = {}
    fused: dict[str, list[str]] = {}
    # Build the inverse from the forward mapping of every candidate LAION name.
    for name in state:
        if name.endswith(IGNORED):
            continue
        laion = _laion_name(name)
        if (
            ".attention.self.query." in name
            or ".attention.self.key." in name
            or ".attention.self.value." in name
        ):
            fused.setdefault(laion, []).append(name)
        else:
            inverse[name] = laion
    out = {laion: state[name] for name, laion in inverse.items()}
    for laion, names in fused.items():
        order = sorted(names, key=lambda n: _QKV.index(n.rsplit(".", 2)[-2]))
        out[laion] = torch.cat([state[n] for n in order], dim=0)
    return out


def _laion_name(name: str) -> str:
    """The LAION-CLAP name of one ClapModel weight (qkv parts map to the fused name)."""
    projection = re.match(r"^(audio|text)_projection\.linear([12])\.(weight|bias)$", name)
    if projection:
        tower, index, kind = projection.groups()
        return f"{tower}_projection.{0 if index == '1' else 2}.{kind}"
    if name.startswith("text_model."):
        return "text_branch." + name.removeprefix("text_model.")
    if not name.startswith("audio_model.audio_encoder."):
        return name
    rest = name.removeprefix("audio_model.audio_encoder.")
    block = re.match(r"^(layers\.\d+\.blocks\.\d+\.)(.+)$", rest)
    if block:
        prefix, tail = block.groups()
        for part in _QKV:
            tail = tail.replace(f"attention.self.{part}.", "attention.self.qkv.")
        for old, new in _BLOCK.items():
            if tail.startswith(new):
                return "audio_branch." + prefix + old + tail[len(new) :]
    if rest.startswith("batch_norm."):
        rest = "bn0." + rest.removeprefix("batch_norm.")
    return "audio_branch." + rest


def _count(state: Mapping[str, Any], pattern: str) -> int:
    """How many distinct integers fill the {} of `pattern` in the keys (only whole keys count:
    a weight named by the pattern, not a buffer such as a block's attn_mask)."""
    head, tail = pattern.split("{}")
    seen = set()
    for key in state:
        if key.startswith(head) and key.endswith(tail):
            middle = key[len(head) : len(key) - len(tail)]
            if middle.isdigit():
                seen.add(int(middle))
    return len(seen)


def clap_config(state: Mapping[str, Any], text: dict[str, Any], pad_token_id: int) -> dict[str, Any]:
    """ClapConfig arguments inferred from the LAION-CLAP weights' shapes.

    Args:
        state: the LAION-CLAP weights (LAION names).
        text: what the shapes cannot tell about the text tower: num_attention_heads (default
            width / 64), layer_norm_eps (1e-5, roberta-base's), hidden_act ("gelu").
        pad_token_id: the tokenizer's padding id (RoBERTa position ids start after it).

    Returns:
        Keyword arguments of ``transformers.ClapConfig`` (text_config, audio_config, projection_dim).

    Raises:
        KeyError: a weight every LAION-CLAP HTSAT + RoBERTa model has is missing.
    """

    def shape(key: str) -> tuple[int, ...]:
        return tuple(int(n) for n in state[key].shape)

    words, hidden = shape("text_branch.embeddings.word_embeddings.weight")
    text_layers = _count(state, "text_branch.encoder.layer.{}.attention.self.query.weight")
    text_config = {
        "vocab_size": words,
        "hidden_size": hidden,
        "num_hidden_layers": text_layers,
        "num_attention_heads": text.get("num_attention_heads") or max(1, hidden // 64),
        "intermediate_size": shape("text_branch.encoder.layer.0.intermediate.dense.weight")[0],
        "max_position_embeddings": shape("text_branch.embeddings.position_embeddings.weight")[0],
        "type_vocab_size": shape("text_branch.embeddings.token_type_embeddings.weight")[0],
        "layer_norm_eps": text.get("layer_norm_eps", 1e-5),
        "hidden_act": text.get("hidden_act", "gelu"),
        "pad_token_id": pad_token_id,
    }
    patch, channels, size, _ = shape("audio_branch.patch_embed.proj.weight")
    stages = _count(state, "audio_branch.layers.{}.blocks.0.norm1.weight")
    depths = [_count(state, f"audio_branch.layers.{i}.blocks.{{}}.norm1.weight") for i in range(stages)]
    heads, window = [], 8
    for i in range(stages):
        table = shape(f"audio_branch.layers.{i}.blocks.0.attn.relative_position_bias_table")
        heads.append(table[1])
        window = (round(table[0] ** 0.5) + 1) // 2
    fusion = any(".fusion_model." in key or ".mel_conv2d." in key for key in state)
    audio_config: dict[str, Any] = {
        "hidden_size": shape("audio_branch.norm.weight")[0],
        "patch_embeds_hidden_size": patch,
        "patch_size": size,
        "patch_stride": [size, size],
        "depths": depths,
        "num_attention_heads": heads,
        "window_size": window,
        "num_mel_bins": shape("audio_branch.bn0.weight")[0],
        "spec_size": 256,
        "patch_embed_input_channels": channels,
        "mlp_ratio": shape("audio_branch.layers.0.blocks.0.mlp.fc1.weight")[0] / patch,
        "enable_fusion": fusion,
        "fusion_type": "aff_2d" if fusion else None,
    }
    if "audio_branch.tscam_conv.weight" in state:
        audio_config["num_classes"] = shape("audio_branch.tscam_conv.weight")[0]
    if fusion:
        audio_config["aff_block_r"] = max(
            1, patch // shape("audio_branch.patch_embed.fusion_model.local_att.0.weight")[0]
        )
    projection = shape("audio_projection.0.weight")[0] if "audio_projection.0.weight" in state else 512
    text_config["projection_dim"] = audio_config["projection_dim"] = projection
    return {"text_config": text_config, "audio_config": audio_config, "projection_dim": projection}


def audio_model_name(audio: Mapping[str, Any]) -> str:
    """The LAION name of an HTSAT audio config ("HTSAT-tiny", ...), or its sizes.

    Example:
        >>> audio_model_name({"patch_embeds_hidden_size": 96, "depths": [2, 2, 6, 2]})
        'HTSAT-tiny'
    """
    known = {
        (96, (2, 2, 6, 2)): "HTSAT-tiny",
        (128, (2, 2, 12, 2)): "HTSAT-base",
        (256, (2, 2, 12, 2)): "HTSAT-large",
    }
    key = (audio["patch_embeds_hidden_size"], tuple(audio["depths"]))
    return known.get(
        key, f"HTSAT (patch width {audio['patch_embeds_hidden_size']}, depths {list(audio['depths'])})"
    )
