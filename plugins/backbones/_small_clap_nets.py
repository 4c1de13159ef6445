"""The torch modules of the small CLAP and its tagger: log-mel front end, CNN audio encoder, heads.

Importing this module imports torch; :mod:`fortekit.plugins.backbones.small_clap` imports it
only when a model is built or loaded. The sizes come from a
:class:`~fortekit.plugins.backbones.small_clap.SmallClapConfig`.

Example:
    >>> import torch
    >>> from fortekit.plugins.backbones.small_clap import SmallClapConfig
    >>> config = SmallClapConfig(channels=(4, 8), embed_dim=16, text_hidden=16, audio_hidden=16)
    >>> model = SmallClap(config).eval()
    >>> model.embed_audio(torch.zeros(2, 16000)).shape
    torch.Size([2, 16])
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

if TYPE_CHECKING:
    from fortekit.plugins.backbones.small_clap import SmallClapConfig

__all__ = ["AudioEncoder", "LogMel", "SmallClap", "TagHead", "Tagger", "mel_filterbank"]


def mel_filterbank(sample_rate: int, n_fft: int, n_mels: int, fmin: float, fmax: float) -> np.ndarray:
    """Triangular filters on the HTK mel scale: (n_mels, n_fft // 2 + 1), float32, peak 1.

    Example:
        >>> mel_filterbank(16000, 512, 8, 0.0, 8000.0).shape
        (8, 257)
    """
    def to_mel(hz: np.ndarray) -> np.ndarray:
        return np.asarray(2595.0 * np.log10(1.0 + hz / 700.0))

    def to_hz(mel: np.ndarray) -> np.ndarray:
        return np.asarray(700.0 * (10.0 ** (mel / 2595.0) - 1.0))

    bins = np.linspace(0.0, sample_rate / 2.0, n_fft // 2 + 1)
    edges = to_hz(np.linspace(to_mel(np.array(fmin)), to_mel(np.array(fmax)), n_mels + 2))
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising = (bins[None, :] - lower) / np.maximum(centre - lower, 1e-9)
    falling = (upper - bins[None, :]) / np.maximum(upper - centre, 1e-9)
    return np.asarray(np.clip(np.minimum(rising, falling), 0.0, None), dtype=np.float32)


class LogMel(nn.Module):
    """Waveforms (batch, samples) -> natural-log mel power (batch, n_mels, frames).

    The window and filters are buffers rebuilt from the config, not stored in the weights.
    """

    window: torch.Tensor
    filters: torch.Tensor

    def __init__(self, config: SmallClapConfig) -> None:
        super().__init__()
        self.n_fft, self.hop = config.n_fft, config.hop_length
        self.register_buffer("window", torch.hann_window(config.n_fft), persistent=False)
        filters = mel_filterbank(config.sample_rate, config.n_fft, config.n_mels, config.fmin, config.fmax)
        self.register_buffer("filters", torch.from_numpy(filters), persistent=False)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        spectrum = torch.stft(waves, self.n_fft, self.hop, window=self.window, center=True,
                              return_complex=True).abs().pow(2)
        return torch.log(torch.matmul(self.filters, spectrum) + 1e-6)


class AudioEncoder(nn.Module):
    """A compact CNN over log-mels: per-band normalisation, then 1-D conv blocks along time (the
    mel bands are the input channels; each block halves the time axis), then mean and max over
    time plus a coarse time profile (so that the order of events survives pooling).

    ``features(mel)`` gives (batch, feature_dim); the CLAP head and the tag head read them.
    """

    def __init__(self, config: SmallClapConfig) -> None:
        super().__init__()
        self.bn0 = nn.BatchNorm1d(config.n_mels)
        blocks: list[nn.Module] = []
        width = config.n_mels
        for channels in config.channels:
            blocks += [nn.Conv1d(width, channels, 3, padding=1, bias=False), nn.BatchNorm1d(channels),
                       nn.ReLU(inplace=True), nn.MaxPool1d(2)]
            width = channels
        self.blocks = nn.Sequential(*blocks)
        self.time_steps = config.time_steps
        self.profile = nn.Conv1d(width, config.profile_channels, 1)
        self.feature_dim = 2 * width + config.profile_channels * config.time_steps
        self.min_frames = 2 ** len(config.channels)

    def features(self, mel: torch.Tensor) -> torch.Tensor:
        """(batch, n_mels, frames) log-mels -> (batch, feature_dim)."""
        if mel.shape[-1] < self.min_frames:
            mel = nn.functional.pad(mel, (0, self.min_frames - mel.shape[-1]), value=math.log(1e-6))
        x = self.blocks(self.bn0(mel))  # (batch, channels, frames / 2**blocks)
        steps = nn.functional.adaptive_avg_pool1d(self.profile(x), self.time_steps).flatten(1)
        return torch.cat([x.mean(dim=2), x.amax(dim=2), steps], dim=1)


class TagHead(nn.Module):
    """Tag logits from audio features: one linear layer over ``feature_dim`` (see the tagger)."""

    def __init__(self, feature_dim: int, outputs: int) -> None:
        super().__init__()
        self.dropout = nn.Dropout(0.2)
        self.linear = nn.Linear(feature_dim, outputs)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.linear(self.dropout(features))  # type: ignore[no-any-return]


class SmallClap(nn.Module):
    """The trainable part of the small CLAP: front end, audio encoder and head, text projection,
    temperature. The frozen MiniLM text encoder is outside (its 384-d embeddings are the input of
    ``embed_text_features``)."""

    def __init__(self, config: SmallClapConfig) -> None:
        super().__init__()
        self.config = config
        self.front = LogMel(config)
        self.audio = AudioEncoder(config)
        self.audio_head = nn.Sequential(
            nn.Linear(self.audio.feature_dim, config.audio_hidden), nn.GELU(), nn.Dropout(0.1),
            nn.Linear(config.audio_hidden, config.embed_dim),
        )
        self.text_head = nn.Sequential(
            nn.Linear(config.text_dim, config.text_hidden), nn.GELU(), nn.Dropout(0.1),
            nn.Linear(config.text_hidden, config.embed_dim),
        )
        self.text_skip = nn.Linear(config.text_dim, config.embed_dim, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1.0 / config.init_temperature)))

    def embed_mel(self, mel: torch.Tensor) -> torch.Tensor:
        """Log-mels (batch, n_mels, frames) -> unit-norm embeddings (batch, embed_dim)."""
        return nn.functional.normalize(self.audio_head(self.audio.features(mel)), dim=-1)

    def embed_audio(self, waves: torch.Tensor) -> torch.Tensor:
        """Waveforms (batch, samples) at the config's rate -> unit-norm embeddings."""
        return self.embed_mel(self.front(waves))

    def embed_text_features(self, text: torch.Tensor) -> torch.Tensor:
        """Frozen text-encoder embeddings (batch, text_dim) -> unit-norm embeddings (batch, embed_dim)."""
        return nn.functional.normalize(self.text_head(text) + self.text_skip(text), dim=-1)


class Tagger(nn.Module):
    """Front end, audio encoder and tag head: waveforms (batch, samples) -> tag logits.

    In training it shares ``front`` and ``audio`` with a :class:`SmallClap`."""

    def __init__(self, config: SmallClapConfig, outputs: int, *, front: LogMel | None = None,
                 audio: AudioEncoder | None = None) -> None:
        super().__init__()
        self.config = config
        self.front = front if front is not None else LogMel(config)
        self.audio = audio if audio is not None else AudioEncoder(config)
        self.head = TagHead(self.audio.feature_dim, outputs)

    def forward(self, waves: torch.Tensor) -> torch.Tensor:
        return self.head(self.audio.features(self.front(waves)))  # type: ignore[no-any-return]
