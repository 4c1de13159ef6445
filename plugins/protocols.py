"""What a backbone, an elaborator and a captioner are: protocols and the records they exchange.

Plug-ins are duck-typed: any object with the members below is a plug-in, whether or
not it subclasses anything (`typing.Protocol`). This module imports neither torch nor
numpy at run time, so that `import fortekit.plugins` stays light.

Example:
    >>> from fortekit.plugins.protocols import AudioItem, Elaboration
    >>> AudioItem(path="dog.wav", text="a dog barks").text
    'a dog barks'
    >>> positives, negatives = Elaboration("rain", ("heavy rain",), ("light rain",))
    >>> negatives
    ('light rain',)
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    import torch

__all__ = [
    "BACKBONE_MEMBERS",
    "CAPTIONER_MEMBERS",
    "ELABORATOR_MEMBERS",
    "AudioInput",
    "AudioItem",
    "Backbone",
    "Captioner",
    "Elaboration",
    "Elaborator",
    "LabelTagger",
]


# eq=False: an item may carry a numpy array, whose == is element-wise and which is not
# hashable; identity semantics keep AudioItem usable as a dict key and in sets.
@dataclass(frozen=True, slots=True, eq=False)
class AudioItem:
    """One audio item of a collection, as the encoders and captioners take it.

    Give a file (`path`) or a waveform (`samples` with `sample_rate`); `text` is the
    caption, tags or description stored with the item (what the `minilm` backbone
    embeds and what the `stored` captioner returns); `item_id` is the collection's key.

    Attributes:
        path: an audio file (anything libsndfile reads: WAV, FLAC, OGG, MP3, ...).
        samples: a waveform, shape (n,) or (n, channels), as a numpy array.
        sample_rate: the waveform's rate in Hz (required with `samples`).
        text: the item's caption, tags or description.
        item_id: the item's id in its collection.

    Example:
        >>> AudioItem(path="clips/rain.flac", text="rain on a tin roof", item_id="r1").item_id
        'r1'
    """

    path: str | os.PathLike[str] | None = None
    samples: Any = None
    sample_rate: int | None = None
    text: str | None = None
    item_id: str | None = None

    def label(self) -> str:
        """A short name for messages: the id, else the path, else '<waveform>'."""
        if self.item_id is not None:
            return str(self.item_id)
        if self.path is not None:
            return os.fspath(self.path)
        return "<waveform>"


#: What `encode_audio` and `caption` accept for one item: a file path, an
#: :class:`AudioItem`, or a ``(samples, sample_rate)`` pair.
AudioInput: TypeAlias = "str | os.PathLike[str] | AudioItem | tuple[Any, int]"


@dataclass(frozen=True, slots=True)
class Elaboration:
    """An elaborated query: positives q+ (richer, same event) and contrastive negatives q-.

    It unpacks as ``positives, negatives = elaboration``.

    Attributes:
        query: the query as given.
        positives: elaborations that keep the sound event and add acoustic detail.
        negatives: the same sound source with one acoustic dimension changed.
    """

    query: str
    positives: tuple[str, ...]
    negatives: tuple[str, ...]

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        yield self.positives
        yield self.negatives


@runtime_checkable
class Backbone(Protocol):
    """A text encoder f_T and an audio encoder f_A into one shared, L2-normalised space.

    Attributes:
        name: the plug-in's name (as registered).
        dim: the embedding dimension d.
        device: where the model runs ("cpu", "cuda", "cuda:1", ...).
        sample_rate: the rate in Hz the audio tower wants (inputs at other rates are
            resampled); None when the "audio" side embeds the items' text descriptions.
    """

    name: str
    dim: int
    device: str
    sample_rate: int | None

    def encode_text(self, texts: Sequence[str]) -> torch.Tensor:
        """Embed texts: a float32 tensor (len(texts), dim), rows of unit L2 norm, on `device`."""
        ...

    def encode_audio(self, items: Sequence[AudioInput]) -> torch.Tensor:
        """Embed audio items: a float32 tensor (len(items), dim), rows of unit L2 norm, on `device`."""
        ...


@runtime_checkable
class Elaborator(Protocol):
    """Turns a query into positives q+ and contrastive negatives q- (Stage 1)."""

    name: str

    def elaborate(self, query: str) -> Elaboration:
        """Elaborate one query."""
        ...


@runtime_checkable
class Captioner(Protocol):
    """Writes (or looks up) one caption per audio item (Stage 3 re-ranking)."""

    name: str

    def caption(self, items: Sequence[AudioInput]) -> list[str]:
        """One caption per item, in order."""
        ...


@runtime_checkable
class LabelTagger(Protocol):
    """A captioner that also says how likely each of its sound labels is in each item.

    Formula scoring reads the probabilities as label evidence
    (:class:`~fortekit.search.evidence.LabelEvidence`) for the clauses a label grounds;
    the ``tagger`` captioner is one.
    """

    name: str

    def label_evidence(self, items: Sequence[AudioInput]) -> Any:
        """A :class:`~fortekit.search.evidence.LabelEvidence` with one row per item, in order."""
        ...


#: The members each kind must have; the registry checks them on what a factory returns.
BACKBONE_MEMBERS = ("name", "dim", "device", "sample_rate", "encode_text", "encode_audio")
ELABORATOR_MEMBERS = ("name", "elaborate")
CAPTIONER_MEMBERS = ("name", "caption")
