"""Convert an original LAION-CLAP checkpoint into a transformers CLAP folder for ``hf-clap``.

:func:`convert_laion_clap` reads the ``.pt`` file that the ``laion_clap`` package saves (or
a ``.safetensors`` file of its state dict), renames its weights onto transformers'
``ClapModel`` (:mod:`fortekit.plugins.backbones.laion_keys`), infers every size from the
weights (HTSAT-tiny or -base, fused or not, the RoBERTa text tower) and writes a folder
that ``get_backbone("hf-clap", model=OUT_DIR)`` loads: ``config.json``,
``model.safetensors``, the feature extractor's settings (LAION's: 48 kHz, 64 mel bins,
50-14000 Hz, 10 s window) and the tokenizer of the text tower. At run time nothing imports
``laion_clap``.

Original checkpoints are pickles (they store the epoch and the optimiser beside the
weights). They are read with ``torch.load(weights_only=True)`` first; a file that needs the
full unpickler is refused (E701) unless the caller passes ``trust_pickle=True``
(``--trust-pickle``), because unpickling can run any code the file contains.

Example:
    >>> from fortekit.plugins.backbones.laion_convert import convert_laion_clap
    >>> report = convert_laion_clap("630k-audioset-best.pt", "clap-630k-audioset",
    ...                             tokenizer="/models/roberta-base", trust_pickle=True)  # doctest: +SKIP
    >>> report.fusion  # doctest: +SKIP
    False
"""

from __future__ import annotations

import json
import os
import pickle
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit._hf_progress import quiet_model_loading
from fortekit.errors import Errors, ModelLoadError, ModelNotFoundError, PluginOptionError
from fortekit.plugins._runtime import require
from fortekit.plugins.backbones._checkpoint import strip_prefix
from fortekit.plugins.backbones.laion_keys import IGNORED, audio_model_name, clap_config, from_laion

if TYPE_CHECKING:
    import torch

__all__ = ["ConversionReport", "convert_laion_clap", "read_laion_checkpoint"]

#: LAION-CLAP's audio front end (every released checkpoint): laion_clap's model configs.
SAMPLE_RATE, HOP, WINDOW, FMIN, FMAX = 48_000, 480, 1024, 50, 14_000
_MODEL_FILES = ("config.json", "model.safetensors", "pytorch_model.bin")
_NAME = "laion-clap converter"


@dataclass(frozen=True)
class ConversionReport:
    """What :func:`convert_laion_clap` wrote.

    Attributes:
        out_dir: the folder, loadable with ``get_backbone("hf-clap", model=out_dir)``.
        fusion: whether the model is the fused one (4-channel mel input for long clips).
        audio_model: "HTSAT-tiny", "HTSAT-base" or "HTSAT (patch width N)".
        parameters: parameters of the converted ClapModel.
        dropped: LAION-CLAP weights left out on purpose (mel front end, classifier, training MLPs).
        unpickled: whether the checkpoint needed the full unpickler (--trust-pickle).
    """

    out_dir: Path
    fusion: bool
    audio_model: str
    parameters: int
    dropped: tuple[str, ...]
    unpickled: bool


def read_laion_checkpoint(
    path: str | os.PathLike[str],
    *,
    trust_pickle: bool = False,
) -> tuple[dict[str, torch.Tensor], bool]:
    """Read a LAION-CLAP state dict from ``.pt``/``.ckpt`` (torch) or ``.safetensors``.

    Args:
        path: the checkpoint.
        trust_pickle: allow the full unpickler when the file holds more than tensors.

    Returns:
        (parameter name -> tensor, without a "module." prefix; whether it was unpickled).

    Raises:
        ModelNotFoundError: no such file (E700).
        ModelLoadError: a pickle without trust_pickle (E701), an unreadable file (E702),
            or not a state dict (E703).

    Example:
        >>> read_laion_checkpoint("missing.pt")
        Traceback (most recent call last):
        ...
        fortekit.errors.ModelNotFoundError: [E700] The LAION-CLAP checkpoint missing.pt was not found. ...
    """
    torch = require("torch", _NAME)
    file = Path(path).expanduser()
    if not file.is_file():
        raise ModelNotFoundError(Errors.E700.format(path=file))
    unpickled = False
    if file.suffix == ".safetensors":
        from safetensors.torch import load_file

        try:
            loaded: Any = load_file(str(file), device="cpu")
        except Exception as exc:  # safetensors raises its own SafetensorError
            raise ModelLoadError(Errors.E702.format(path=file, problem=exc)) from exc
    else:
        try:
            with warnings.catch_warnings():  # torch warns about pickle protocols it may not support
                warnings.simplefilter("ignore", UserWarning)
                loaded = torch.load(str(file), map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as exc:
            if not trust_pickle:
                problem = _refusal(exc)
                raise ModelLoadError(Errors.E701.format(path=file, name=file.name, problem=problem)) from exc
            loaded = _unpickle(torch, file)
            unpickled = True
        except (RuntimeError, OSError, EOFError, ValueError) as exc:
            problem = "the file is empty" if not file.stat().st_size else (str(exc) or type(exc).__name__)
            raise ModelLoadError(Errors.E702.format(path=file, problem=problem)) from exc
    return _state_dict(torch, loaded, file), unpickled


def _refusal(exc: Exception) -> str:
    """The line of torch's weights_only refusal that names what the file holds (no ANSI codes).

    Example:
        >>> _refusal(ValueError("Weights only load failed.\\nWeightsUnpickler error: Unsupported global: X"))
        'Unsupported global: X'
    """
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in str(exc).splitlines()]
    for line in lines:
        if "WeightsUnpickler error:" in line:
            return line.split("WeightsUnpickler error:", 1)[1].split(". ")[0].strip()  # not torch's advice
    return next((line for line in lines if line), type(exc).__name__)


def _unpickle(torch: Any, file: Path) -> Any:
    """The full unpickler, on the user's explicit say-so (trust_pickle)."""
    try:
        return torch.load(str(file), map_location="cpu", weights_only=False)
    except Exception as exc:  # anything the file's own code raises
        raise ModelLoadError(Errors.E702.format(path=file, problem=f"{type(exc).__name__}: {exc}")) from exc


def _state_dict(torch: Any, loaded: Any, file: Path) -> dict[str, torch.Tensor]:
    """The tensors of a checkpoint: under "state_dict" or "model" if nested, "module." removed."""
    for key in ("state_dict", "model"):
        if isinstance(loaded, Mapping) and isinstance(loaded.get(key), Mapping):
            loaded = loaded[key]
            break
    if not isinstance(loaded, Mapping):
        raise ModelLoadError(
            Errors.E703.format(
                path=file,
                problem=f"it holds a {type(loaded).__name__}, not a mapping",
                count=0,
                sample="none",
            )
        )
    tensors = strip_prefix({str(k): v for k, v in loaded.items() if isinstance(v, torch.Tensor)})
    needed = ("audio_branch.patch_embed.proj.weight", "text_branch.embeddings.word_embeddings.weight")
    missing = [key for key in needed if key not in tensors]
    if missing:
        raise ModelLoadError(
            Errors.E703.format(
                path=file,
                problem=f"it has no {' and no '.join(missing)}",
                count=len(loaded),
                sample=sorted(map(str, loaded))[:3] or "none",
            )
        )
    return tensors


def _load_tokenizer(transformers: Any, source: str | os.PathLike[str] | None) -> tuple[Any, dict[str, Any]]:
    """The text tower's tokenizer (and its model config.json, if the folder has one).

    A folder with tokenizer_config.json or tokenizer.json loads with AutoTokenizer; one with
    only vocab.json and merges.txt loads as a RobertaTokenizer. With no folder, roberta-base
    is looked up in the local Hugging Face cache only.
    """
    if source is None:
        try:
            return transformers.AutoTokenizer.from_pretrained("roberta-base", local_files_only=True), {}
        except (OSError, ValueError) as exc:
            raise ModelNotFoundError(
                Errors.E706.format(
                    problem="no --tokenizer was given and roberta-base is not in the local "
                    f"Hugging Face cache ({exc})",
                )
            ) from exc
    folder = Path(source).expanduser()
    if not folder.is_dir():
        raise ModelNotFoundError(Errors.E706.format(problem=f"the tokenizer folder {folder} does not exist"))
    text: dict[str, Any] = {}
    config = folder / "config.json"
    if config.is_file():
        try:
            loaded = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelLoadError(Errors.E702.format(path=config, problem=exc)) from exc
        if isinstance(loaded, dict):
            text = {
                key: loaded[key]
                for key in ("num_attention_heads", "layer_norm_eps", "hidden_act")
                if key in loaded
            }
    try:
        if (folder / "tokenizer_config.json").is_file() or (folder / "tokenizer.json").is_file():
            return transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True), text
        if (folder / "vocab.json").is_file() and (folder / "merges.txt").is_file():
            return transformers.RobertaTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt")), text
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelNotFoundError(
            Errors.E706.format(problem=f"the tokenizer in {folder} does not load ({exc})")
        ) from exc
    raise ModelNotFoundError(
        Errors.E706.format(
            problem=f"{folder} holds neither tokenizer.json, tokenizer_config.json nor vocab.json "
            "with merges.txt",
        )
    )


def _check_out_dir(out_dir: Path, overwrite: bool, checkpoint: Path) -> None:
    from fortekit.safe_write import check_not_input, check_not_symlink

    check_not_symlink(out_dir)  # E741
    for name in _MODEL_FILES:  # E740: `convert ckpt/model.safetensors ckpt` would replace its input
        check_not_input(out_dir / name, {"checkpoint": checkpoint})
    if out_dir.exists() and not out_dir.is_dir():
        raise ModelLoadError(
            Errors.E707.format(path=out_dir, what="a file of that name (it is not a folder)")
        )
    present = [name for name in _MODEL_FILES if (out_dir / name).exists()]
    if present and not overwrite:
        raise ModelLoadError(Errors.E707.format(path=out_dir, what="a model (" + ", ".join(present) + ")"))


def convert_laion_clap(
    checkpoint: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    tokenizer: str | os.PathLike[str] | None = None,
    trust_pickle: bool = False,
    text_heads: int | None = None,
    overwrite: bool = False,
) -> ConversionReport:
    """Convert a LAION-CLAP checkpoint into a folder that the ``hf-clap`` backbone loads.

    Args:
        checkpoint: the original ``.pt`` file (or a ``.safetensors`` file of its state dict).
        out_dir: the folder to write (created; it must not already hold a model unless
            `overwrite`).
        tokenizer: a local folder with the text tower's tokenizer (roberta-base's vocab.json
            and merges.txt, or a tokenizer.json); None looks for roberta-base in the local
            Hugging Face cache. Its config.json, if present, gives the number of heads.
        trust_pickle: let the full unpickler read a checkpoint that holds more than tensors
            (original LAION-CLAP files do). Unpickling can run code: pass True only for a
            file whose origin you trust.
        text_heads: attention heads of the text tower, when the tokenizer folder has no
            config.json (default hidden size / 64: 12 for roberta-base).
        overwrite: replace the model files of an existing output folder.

    Returns:
        A :class:`ConversionReport`.

    Raises:
        MissingDependencyError: torch, transformers or safetensors is missing.
        ModelNotFoundError: the checkpoint (E700) or the tokenizer (E706) is missing.
        ModelLoadError: a pickle without trust_pickle (E701), an unreadable file (E702), not a
            LAION-CLAP state dict (E703), unknown weights (E704), weights that do not fit
            (E705), an output folder that holds a model (E707) or cannot be written (E708).
        PluginOptionError: a bad text_heads (E709).

    Example:
        >>> convert_laion_clap("missing.pt", "out")
        Traceback (most recent call last):
        ...
        fortekit.errors.ModelNotFoundError: [E700] The LAION-CLAP checkpoint missing.pt was not found. ...
    """
    if text_heads is not None and (
        isinstance(text_heads, bool) or not isinstance(text_heads, int) or text_heads < 1
    ):
        raise PluginOptionError(
            Errors.E709.format(name="text_heads", expected="a positive int", value=text_heads)
        )
    state, unpickled = read_laion_checkpoint(checkpoint, trust_pickle=trust_pickle)
    renamed, dropped, unknown = from_laion(state)
    path = Path(checkpoint).expanduser()
    if unknown:
        raise ModelLoadError(Errors.E704.format(path=path, count=len(unknown), sample=sorted(unknown)[:5]))
    target = Path(out_dir).expanduser()
    _check_out_dir(target, overwrite, path)
    transformers = require("transformers", _NAME)
    tok, text = _load_tokenizer(transformers, tokenizer)
    if text_heads is not None:
        text["num_attention_heads"] = text_heads
    pad = tok.pad_token_id if tok.pad_token_id is not None else 1
    try:
        arguments = clap_config(state, text, int(pad))
    except (KeyError, IndexError, ZeroDivisionError) as exc:
        raise ModelLoadError(
            Errors.E705.format(path=path, problem=f"the weight {exc} is missing or malformed")
        ) from exc
    words = arguments["text_config"]["vocab_size"]
    if len(tok) > words:
        raise ModelNotFoundError(
            Errors.E706.format(
                problem=f"the tokenizer given has {len(tok)} tokens, more than the {words} of the "
                "checkpoint's text tower: it is not that tower's tokenizer",
            )
        )
    model = _build(transformers, arguments, renamed, path)
    _write(transformers, model, tok, target, arguments)
    return ConversionReport(
        out_dir=target,
        fusion=bool(arguments["audio_config"]["enable_fusion"]),
        audio_model=audio_model_name(arguments["audio_config"]),
        parameters=sum(p.numel() for p in model.parameters()),
        dropped=tuple(dropped),
        unpickled=unpickled,
    )


def _build(transformers: Any, arguments: dict[str, Any], renamed: dict[str, Any], path: Path) -> Any:
    """A ClapModel of the inferred sizes, holding the renamed weights (nothing else may be missing)."""
    try:
        config = transformers.ClapConfig(**arguments)
        if config.text_config.hidden_size % config.text_config.num_attention_heads:
            raise ValueError(
                f"the text width {config.text_config.hidden_size} is not a multiple of "
                f"{config.text_config.num_attention_heads} heads; pass text_heads= (--text-heads)"
            )
        model = transformers.ClapModel(config).eval()
    except (ValueError, TypeError) as exc:
        raise ModelLoadError(Errors.E705.format(path=path, problem=exc)) from exc
    try:
        result = model.load_state_dict(renamed, strict=False)
    except RuntimeError as exc:  # size mismatches are raised even with strict=False
        raise ModelLoadError(Errors.E705.format(path=path, problem=str(exc).splitlines()[0])) from exc
    missing = [key for key in result.missing_keys if not key.endswith(IGNORED)]
    unexpected = [key for key in result.unexpected_keys if not key.endswith(IGNORED)]
    if missing or unexpected:
        raise ModelLoadError(
            Errors.E705.format(
                path=path,
                problem=(
                    f"{len(missing)} weights missing (for example {missing[:3] or 'none'}) and "
                    f"{len(unexpected)} unexpected (for example {unexpected[:3] or 'none'})"
                ),
            )
        )
    return model


def _write(transformers: Any, model: Any, tokenizer: Any, target: Path, arguments: dict[str, Any]) -> None:
    """config.json, model.safetensors and the processor files (feature extractor + tokenizer)."""
    fusion = bool(arguments["audio_config"]["enable_fusion"])
    extractor = transformers.ClapFeatureExtractor(
        feature_size=int(arguments["audio_config"]["num_mel_bins"]),
        sampling_rate=SAMPLE_RATE,
        hop_length=HOP,
        fft_window_size=WINDOW,
        frequency_min=FMIN,
        frequency_max=FMAX,
        max_length_s=10,
        truncation="fusion" if fusion else "rand_trunc",
        padding="repeatpad",
    )
    tokenizer.model_max_length = 77  # LAION-CLAP trained with 77 tokens
    import tempfile

    from fortekit.errors import OutputError
    from fortekit.safe_write import check_not_symlink, create_output_directory

    try:
        create_output_directory(target)  # marked as fortekit's when new or empty
        # Written into a hidden folder beside the target first, then each file renamed into
        # place: a failed or killed conversion never leaves a half-written model.safetensors.
        hidden = tempfile.TemporaryDirectory(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with hidden as staging:
            with quiet_model_loading():
                model.save_pretrained(staging)  # model.safetensors
                transformers.ClapProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(
                    staging
                )
            for file in sorted(Path(staging).iterdir()):
                with file.open("rb+") as handle:
                    os.fsync(handle.fileno())
                check_not_symlink(target / file.name)
                os.replace(file, target / file.name)
    except OutputError:
        raise
    except OSError as exc:
        raise ModelLoadError(Errors.E708.format(path=target, problem=exc)) from exc
