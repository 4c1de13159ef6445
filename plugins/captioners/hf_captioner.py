"""``hf-captioner``: caption audio with a transformers audio-to-text model from a local path.

Any model that ``AutoModelForSpeechSeq2Seq`` loads: Whisper-style audio captioners
(WhisperForConditionalGeneration fine-tuned on Clotho/AudioCaps) or a
``SpeechEncoderDecoderModel`` (an audio encoder with a text decoder), with the feature
extractor and tokenizer saved beside it. Audio is read with soundfile, mixed to mono
and resampled to the feature extractor's rate. Decoding is greedy by default (beam
search with ``num_beams``), so captions are reproducible.

Example:
    >>> from fortekit.plugins import get_captioner
    >>> captioner = get_captioner("hf-captioner", model="/models/whisper-audio-captioning")  # doctest: +SKIP
    >>> captioner.caption(["dog.wav"])  # doctest: +SKIP
    ['A dog barks several times.']
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fortekit._hf_progress import quiet_model_loading
from fortekit.errors import Errors, ModelLoadError, ModelNotFoundError
from fortekit.plugins._runtime import (
    check_batch_size,
    check_count,
    local_or_hub,
    model_loading,
    require,
    resolve_device,
)
from fortekit.plugins.audio import check_items, load_waveform
from fortekit.plugins.protocols import AudioInput

__all__ = ["HFCaptioner"]


class HFCaptioner:
    """A speech-seq2seq (audio-to-text) model, feature extractor and tokenizer from a directory.

    Args:
        model: a directory written by save_pretrained() (or a cached hub id).
        device: "auto" (CUDA when present), "cpu", "cuda", "cuda:N".
        batch_size: clips per generate() call.
        max_new_tokens: caption length limit in tokens.
        num_beams: 1 for greedy decoding, more for beam search.
        allow_download: fetch a hub id that is not cached.
        generation_options: extra keyword arguments for ``model.generate``.

    Raises:
        MissingDependencyError, ModelNotFoundError, ModelLoadError, PluginOptionError.
    """

    name = "hf-captioner"

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        device: str = "auto",
        batch_size: int = 8,
        max_new_tokens: int = 40,
        num_beams: int = 1,
        allow_download: bool = False,
        generation_options: dict[str, Any] | None = None,
    ) -> None:
        require("torch", self.name)
        transformers = require("transformers", self.name)
        require("soundfile", self.name)
        require("scipy", self.name)
        self.device = resolve_device(device)
        self.batch_size = check_batch_size(batch_size)
        self.max_new_tokens = check_count("max_new_tokens", max_new_tokens)
        self.num_beams = check_count("num_beams", num_beams)
        self.generation_options = dict(generation_options or {})
        source, local_only = local_or_hub(os.fspath(model), allow_download)
        self.model_source = source
        what = "an audio-to-text model (AutoModelForSpeechSeq2Seq)"
        try:
            options = {"local_files_only": local_only}
            with quiet_model_loading(), model_loading(what, source):
                seq2seq = transformers.AutoModelForSpeechSeq2Seq.from_pretrained(source, **options)
                self._extractor = transformers.AutoFeatureExtractor.from_pretrained(source, **options)
                self._tokenizer = transformers.AutoTokenizer.from_pretrained(source, **options)
        except OSError as exc:
            if Path(source).is_dir():
                raise ModelLoadError(Errors.E208.format(what=what, path=source, problem=exc)) from exc
            raise ModelNotFoundError(Errors.E207.format(model=source, problem=exc)) from exc
        except (ValueError, KeyError) as exc:
            raise ModelLoadError(Errors.E208.format(what=what, path=source, problem=exc)) from exc
        self._model = seq2seq.to(self.device).eval()
        self.sample_rate = int(self._extractor.sampling_rate)
        # Whisper-style extractors pad every clip to their fixed window by default, and
        # the model needs exactly that; others (wav2vec2) must be told to pad a batch.
        default = inspect.signature(self._extractor.__call__).parameters.get("padding")
        no_padding = (False, None, inspect.Parameter.empty)
        pads_by_default = default is not None and default.default not in no_padding
        self._padding: dict[str, Any] = {} if pads_by_default else {"padding": True}

    def __repr__(self) -> str:
        return f"HFCaptioner(model={self.model_source!r}, device={self.device!r})"

    def caption(self, items: Sequence[AudioInput]) -> list[str]:
        """One caption per clip, in order (special tokens removed, white space trimmed).

        Raises:
            AudioReadError: a file cannot be read (the message names it).
            EncoderInputError: a bad item type.
        """
        import torch

        audio = check_items(items, method="caption")
        captions: list[str] = []
        options: dict[str, Any] = {
            "max_new_tokens": self.max_new_tokens, "num_beams": self.num_beams, "do_sample": False,
            **self.generation_options,
        }
        with torch.inference_mode():
            for start in range(0, len(audio), self.batch_size):
                waves = [
                    load_waveform(item, self.sample_rate, start + i)
                    for i, item in enumerate(audio[start:start + self.batch_size])
                ]
                features = self._extractor(
                    waves, sampling_rate=self.sample_rate, return_tensors="pt", **self._padding,
                )
                inputs = {key: value.to(self.device) for key, value in features.items()}
                output = self._model.generate(**inputs, **options)
                decoded = self._tokenizer.batch_decode(output, skip_special_tokens=True)
                captions.extend(" ".join(text.split()) for text in decoded)
        return captions
