"""``tagger``: templated captions from what a small audio tagger hears, for Stage 3.

The tagger (trained by ``fortekit bench train-clap`` next to the small CLAP, on the same CNN
audio encoder) predicts, from the audio alone: which sound classes are present, which of them
is a background bed, when each starts, whether two events overlap or follow one another, and
each event's attributes (loud/quiet, high/low, fast/slow, near/far). :func:`compose_caption`
turns these tags into a caption the caption parser reads: "a loud dog barking and then a bell
ringing", "a distant siren wailing while rain falls", "a quiet alarm beeping quickly". It never
reads the collection's captions. Files: ``tagger.safetensors`` + ``tagger.json``.

Example:
    >>> layout = TagLayout(("dog", "bell"), (("loudness", ("loud", "quiet")),))
    >>> layout.size
    15
    >>> compose_caption([Tag("dog", ("loud",), 0.1), Tag("bell", (), 0.5)], "then")
    'a loud dog barking and then a bell ringing'
    >>> compose_caption([Tag("rain", (), 0.0, bed=True), Tag("siren", ("far",), 0.2)], "single")
    'a distant siren wailing, with rain falling in the background'
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, ModelLoadError
from fortekit.plugins._runtime import check_batch_size, require, resolve_device
from fortekit.plugins.audio import check_items, load_waveform
from fortekit.plugins.protocols import AudioInput

if TYPE_CHECKING:
    import torch

    from fortekit.plugins.backbones._small_clap_nets import Tagger
    from fortekit.plugins.evidence import LabelEvidence

__all__ = ["PHRASES", "STRUCTURES", "TAGGER_FORMAT", "Tag", "TagLayout", "TaggerCaptioner", "compose_caption"]

#: The ``format`` field of tagger.json.
TAGGER_FORMAT = "fortekit-small-tagger"
TAGGER_STEM = "tagger"
#: How events combine, in the order of the structure logits.
STRUCTURES = ("single", "while", "then")

#: class -> (article, noun, gerund, finite verb) of its phrase (a noun that is itself the sound has no
#: gerund: "quiet knocking"); unknown classes are "{name} sounding".
PHRASES: dict[str, tuple[str, str, str, str]] = {
    "speech": ("a ", "person", "speaking", "speaks"), "dog": ("a ", "dog", "barking", "barks"),
    "bird": ("a ", "bird", "chirping", "chirps"), "siren": ("a ", "siren", "wailing", "wails"),
    "rain": ("", "rain", "falling", "falls"), "wind": ("", "wind", "blowing", "blows"),
    "engine": ("an ", "engine", "running", "runs"), "knocking": ("", "knocking", "", "is heard"),
    "bell": ("a ", "bell", "ringing", "rings"), "beeps": ("an ", "alarm", "beeping", "beeps"),
    "footsteps": ("", "footsteps", "", "are heard"), "clapping": ("", "clapping", "", "is heard"),
    "water": ("", "water", "flowing", "flows"), "thunder": ("", "thunder", "rumbling", "rumbles"),
    "music": ("", "music", "playing", "plays"),
}
_ADJECTIVES = {"loud": "loud", "quiet": "quiet", "high": "high-pitched", "low": "low-pitched",
               "near": "nearby", "far": "distant"}
_ADVERBS = {"fast": "quickly", "slow": "slowly"}


@dataclass(frozen=True)
class TagLayout:
    """What the tag logits mean: per class presence, bed, onset; the structure; per class and
    attribute dimension a choice of (none, first value, second value).

    Attributes:
        classes: the sound classes.
        dimensions: (dimension, (value, value)) pairs, e.g. ("loudness", ("loud", "quiet")).
    """

    classes: tuple[str, ...]
    dimensions: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def size(self) -> int:
        """The number of logits."""
        n = len(self.classes)
        return 3 * n + len(STRUCTURES) + n * len(self.dimensions) * 3

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        dimensions = {dim: list(values) for dim, values in self.dimensions}
        return {"classes": list(self.classes), "dimensions": dimensions}

    @classmethod
    def from_dict(cls, data: object, path: str | os.PathLike[str]) -> TagLayout:
        """A checked layout from tagger.json's ``tags``.

        Raises:
            ModelLoadError: E570.
        """
        def ok_names(value: object) -> bool:
            return isinstance(value, list) and all(isinstance(v, str) and v for v in value)

        classes = data.get("classes") if isinstance(data, dict) else None
        dims = data.get("dimensions") if isinstance(data, dict) else None
        if (not ok_names(classes) or not classes or not isinstance(dims, dict)
                or not all(ok_names(v) and len(v) == 2 for v in dims.values())):
            raise ModelLoadError(Errors.E570.format(
                path=path, what="tagger", problem="'tags' needs 'classes' (names) and 'dimensions' "
                "(dimension -> two values)",
            ))
        assert isinstance(classes, list) and isinstance(dims, dict)
        return cls(tuple(classes), tuple((str(k), tuple(v)) for k, v in dims.items()))


@dataclass(frozen=True)
class Tag:
    """One predicted event.

    Attributes:
        cls: its class.
        attributes: its attribute values ("loud", "far", ...).
        onset: when it starts, as a fraction of the clip.
        bed: whether it is a background bed.
    """

    cls: str
    attributes: tuple[str, ...]
    onset: float
    bed: bool = False


def _phrase(tag: Tag, finite: bool = False) -> str:
    det, noun, gerund, verb = PHRASES.get(tag.cls, ("", tag.cls.replace("_", " "), "sounding", "sounds"))
    adjectives = [_ADJECTIVES[a] for a in tag.attributes if a in _ADJECTIVES]
    adverbs = [_ADVERBS[a] for a in tag.attributes if a in _ADVERBS]
    if det and adjectives:
        det = "an " if adjectives[0][0] in "aeiou" else "a "
    words = [*adjectives, noun, verb if finite else gerund, *adverbs]
    return det + " ".join(word for word in words if word)


def compose_caption(tags: Sequence[Tag], structure: str) -> str:
    """A caption from predicted events: foreground events joined by their structure ("and
    then" for ``then``, "while" for ``while``), a bed said "in the background".

    Args:
        tags: the events (at most two foreground events and one bed are said).
        structure: "single", "while" or "then".

    Returns:
        The caption; "silence" when there are no tags.

    Example:
        >>> compose_caption([Tag("bird", ("fast",), 0.0), Tag("engine", ("low",), 0.0)], "while")
        'a bird chirping quickly while a low-pitched engine runs'
    """
    front = sorted((tag for tag in tags if not tag.bed), key=lambda tag: tag.onset)[:2]
    beds = [tag for tag in tags if tag.bed][:1]
    if not front and beds:
        front, beds = beds, []
    if not front:
        return "silence"
    if len(front) == 1:
        caption = _phrase(front[0])
    elif structure == "then":
        caption = f"{_phrase(front[0])} and then {_phrase(front[1])}"
    else:
        caption = f"{_phrase(front[0])} while {_phrase(front[1], finite=True)}"
    if beds:
        caption += f", with {_phrase(beds[0])} in the background"
    return caption


def decode_tags(logits: Any, layout: TagLayout, threshold: float = 0.5) -> tuple[list[Tag], str]:
    """The events and structure one row of tag logits says (the most likely class when none
    passes the threshold).

    Example:
        >>> import torch
        >>> layout = TagLayout(("dog", "bell"), ())
        >>> decode_tags(torch.tensor([4.0, -4.0, -4.0, -4.0, 0.0, 0.0, 0.0, 0.0, 0.0]), layout)
        ([Tag(cls='dog', attributes=(), onset=0.5, bed=False)], 'single')
    """
    import torch

    n, dims = len(layout.classes), len(layout.dimensions)
    probs = torch.sigmoid(logits[:n])
    beds = torch.sigmoid(logits[n:2 * n])
    onsets = torch.sigmoid(logits[2 * n:3 * n])
    structure = STRUCTURES[int(torch.argmax(logits[3 * n:3 * n + len(STRUCTURES)]))]
    choices = logits[3 * n + len(STRUCTURES):].reshape(n, dims, 3).argmax(dim=-1) if dims else None
    present = [i for i in range(n) if float(probs[i]) >= threshold] or [int(torch.argmax(probs))]
    present = sorted(present, key=lambda i: -float(probs[i]))[:3]
    tags = []
    for i in present:
        attributes = tuple(
            values[int(choices[i, d]) - 1] for d, (_, values) in enumerate(layout.dimensions)
            if choices is not None and int(choices[i, d]) > 0
        )
        bed = float(beds[i]) >= 0.5 and len(present) > 1
        tags.append(Tag(layout.classes[i], attributes, round(float(onsets[i]), 4), bed))
    return tags, structure


class TaggerCaptioner:
    """Captions from the tags a small audio tagger predicts (trained by ``fortekit bench train-clap``).

    Args:
        model: the folder train-clap wrote (it holds tagger.json and tagger.safetensors), or
            the path of either file.
        device: "auto" (CUDA when present), "cpu", "cuda", "cuda:N".
        batch_size: clips per forward pass.
        threshold: the probability above which a class counts as present.

    Raises:
        MissingDependencyError: torch, safetensors, soundfile or scipy is missing.
        ModelNotFoundError: E571; ModelLoadError: E570, E572, E208.
    """

    name = "tagger"

    def __init__(self, model: str | os.PathLike[str], *, device: str = "auto", batch_size: int = 64,
                 threshold: float = 0.5) -> None:
        for module in ("torch", "safetensors", "soundfile", "scipy"):
            require(module, self.name)
        from fortekit.plugins.backbones._small_clap_nets import Tagger
        from fortekit.plugins.backbones.small_clap import (
            SmallClapConfig,
            model_files,
            read_config,
            read_weights,
        )

        self.device = resolve_device(device)
        self.batch_size = check_batch_size(batch_size)
        self.threshold = float(threshold)
        self.model_path = Path(model).expanduser()
        config_file, weights = model_files(model, TAGGER_STEM, "tagger")
        data = read_config(config_file, TAGGER_FORMAT, "tagger")
        self.layout = TagLayout.from_dict(data.get("tags"), config_file)
        network = Tagger(SmallClapConfig.from_dict(data.get("model"), config_file), self.layout.size)
        read_weights(weights, network, "tagger")
        self._model = network.to(self.device).eval()
        self.sample_rate = network.config.sample_rate
        self._last: tuple[tuple[str, ...], torch.Tensor] | None = None

    def __repr__(self) -> str:
        return f"TaggerCaptioner(model={str(self.model_path)!r}, device={self.device!r})"

    def _logits(self, items: Sequence[AudioInput], method: str) -> torch.Tensor:
        """The tag logits of each clip; the last call's are kept for the same files, because
        a benchmark asks for captions and for label evidence of one collection in turn."""
        from fortekit.plugins.backbones.small_clap import run_batched

        audio = check_items(items, method=method)
        named = all(isinstance(item, (str, Path)) for item in audio)
        key = tuple(str(item) for item in audio) if named else None
        if key is not None and self._last is not None and self._last[0] == key:
            return self._last[1]
        waves = [load_waveform(item, self.sample_rate, index) for index, item in enumerate(audio)]
        logits = run_batched(self._model, waves, self.layout.size, self.device, self.batch_size).cpu()
        self._last = None if key is None else (key, logits)
        return logits

    def tags(self, items: Sequence[AudioInput]) -> list[tuple[list[Tag], str]]:
        """The predicted events and structure of each clip, in order.

        Raises:
            AudioReadError, EncoderInputError: an unreadable file or a bad item.
        """
        return [decode_tags(row, self.layout, self.threshold) for row in self._logits(items, "caption")]

    @property
    def label_phrases(self) -> tuple[str, ...]:
        """Each class said as a caption says it ("a dog barking"), in class order."""
        return tuple(_phrase(Tag(cls, (), 0.0)) for cls in self.layout.classes)

    def label_evidence(self, items: Sequence[AudioInput]) -> LabelEvidence:
        """How likely each class is present in each clip, for formula scoring.

        Returns:
            A :class:`~fortekit.plugins.evidence.LabelEvidence`: :attr:`label_phrases` and the
            (clips, classes) presence probabilities.

        Raises:
            AudioReadError, EncoderInputError: an unreadable file or a bad item.
        """
        import torch

        from fortekit.plugins.evidence import LabelEvidence

        logits = self._logits(items, "label_evidence")
        n = len(self.layout.classes)
        return LabelEvidence(self.label_phrases, torch.sigmoid(logits[:, :n]))

    def caption(self, items: Sequence[AudioInput]) -> list[str]:
        """One caption per clip, in order, from its predicted tags.

        Raises:
            AudioReadError, EncoderInputError: an unreadable file or a bad item.
        """
        return [compose_caption(tags, structure) for tags, structure in self.tags(items)]


def save_tagger(network: Tagger, layout: TagLayout, folder: str | os.PathLike[str], *,
                training: dict[str, Any] | None = None) -> Path:
    """Save a tagger (a :class:`~fortekit.plugins.backbones._small_clap_nets.Tagger`) as
    tagger.safetensors + tagger.json in ``folder``; the json path."""
    from fortekit.plugins.backbones.small_clap import write_model_files

    config = network.config
    header = {"format": TAGGER_FORMAT, "version": 1, "model": config.to_dict(), "tags": layout.to_dict(),
              "training": training or {}}
    return write_model_files(Path(folder), TAGGER_STEM, network, header)
