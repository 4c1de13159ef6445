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

import functools
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, runtime_checkable

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
    "backbone_identity",
    "identity_string",
    "one_or_many",
    "path_fingerprint",
]

_Encode = TypeVar("_Encode", bound=Callable[..., Any])


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
    # Optional (not in BACKBONE_MEMBERS, so older plug-ins stay valid): ``cache_identity``, a
    # str naming the model fully (name, options, weights path + size + mtime) for cache keys;
    # read it through :func:`backbone_identity`, which derives one for plug-ins without it.

    def encode_text(self, texts: str | Sequence[str]) -> torch.Tensor:
        """Embed texts: a float32 tensor (len(texts), dim), rows of unit L2 norm, on `device`.

        As sentence-transformers' ``encode``: a list (a tuple, a NumPy array of strings) gives
        a matrix, one row per text; one text (a bare str) gives one vector, a 1-D tensor (dim,).
        Decorate the method with :func:`one_or_many` to accept a bare str (every built-in is);
        fortekit itself always passes a list.
        """
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
    (:class:`~fortekit.plugins.evidence.LabelEvidence`) for the clauses a label grounds;
    the ``tagger`` captioner is one.
    """

    name: str

    def label_evidence(self, items: Sequence[AudioInput]) -> Any:
        """A :class:`~fortekit.plugins.evidence.LabelEvidence` with one row per item, in order."""
        ...


def one_or_many(encode: _Encode) -> _Encode:
    """Let ``encode_text(self, texts)`` take one text as well as a list, as sentence-transformers does.

    A bare str (a ``numpy.str_`` too) is encoded as a list of one and its row returned: one
    vector, a 1-D tensor (dim,). Anything else goes to the method as it is, which returns a
    matrix (len(texts), dim). Bytes are not a str: the method's own check refuses them (E212).

    Example:
        >>> class Demo:
        ...     @one_or_many
        ...     def encode_text(self, texts):
        ...         return [[float(len(text))] for text in texts]
        >>> Demo().encode_text(["a", "bc"]), Demo().encode_text("abc")
        ([[1.0], [2.0]], [3.0])
    """

    @functools.wraps(encode)
    def encode_one_or_many(self: Any, texts: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(texts, str):
            return encode(self, [texts], *args, **kwargs)[0]
        return encode(self, texts, *args, **kwargs)

    encode_one_or_many.__dict__["one_or_many"] = True  # marks a method that takes one text too
    return encode_one_or_many  # type: ignore[return-value]


#: The members each kind must have; the registry checks them on what a factory returns.
BACKBONE_MEMBERS = ("name", "dim", "device", "sample_rate", "encode_text", "encode_audio")
ELABORATOR_MEMBERS = ("name", "elaborate")
CAPTIONER_MEMBERS = ("name", "caption")


# --- identity: what a cache of embeddings must key on -----------------------------------------
#: The most files of a model folder that :func:`path_fingerprint` lists (a folder of more is
#: a data set, not a model: its first files in name order still tell two models apart).
MAX_FINGERPRINT_FILES = 256


def _stat_entry(path: os.DirEntry[str] | str) -> list[Any]:
    info = os.stat(path, follow_symlinks=True)
    return [info.st_size, info.st_mtime_ns]


def path_fingerprint(path: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """Where a model's weights are and which version of them: resolved path, sizes and mtimes.

    Hashing the bytes of a multi-gigabyte checkpoint on every start would cost more than the
    cache saves, so a file stands for its resolved path, size and modification time (in ns):
    a replaced or re-trained file changes at least one of them. A folder stands for the
    files directly in it and one level below (a transformers snapshot, a small-CLAP folder),
    at most :data:`MAX_FINGERPRINT_FILES`.

    Args:
        path: a weights file or model folder; None gives None.

    Returns:
        ``{"path": ..., "size", "mtime_ns"}`` for a file, ``{"path": ..., "files": [[name,
        size, mtime_ns], ...]}`` for a folder, ``{"path": ..., "missing": True}`` when it
        cannot be read (a hub id, say).

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "w.bin").write_bytes(b"12")
        >>> [entry[:2] for entry in path_fingerprint(folder)["files"]]
        [['w.bin', 2]]
    """
    if path is None:
        return None
    target = os.path.realpath(os.path.expanduser(os.fspath(path)))
    try:
        if not os.path.isdir(target):
            size, mtime = _stat_entry(target)
            return {"path": target, "size": size, "mtime_ns": mtime}
        files: list[list[Any]] = []
        for root, folders, names in os.walk(target):
            # Hidden files (locks, markers, temporary files) change without the weights changing.
            depth = 0 if root == target else os.path.relpath(root, target).count(os.sep) + 1
            folders[:] = [] if depth >= 1 else sorted(name for name in folders if not name.startswith("."))
            for name in sorted(name for name in names if not name.startswith(".")):
                if len(files) >= MAX_FINGERPRINT_FILES:
                    break
                full = os.path.join(root, name)
                files.append([os.path.relpath(full, target), *_stat_entry(full)])
        return {"path": target, "files": files}
    except OSError:
        return {"path": target, "missing": True}


def identity_string(name: str, options: Mapping[str, Any], weights: Iterable[Any] = ()) -> str:
    """One canonical JSON line: a plug-in's name, its options and its weights' fingerprints.

    The built-in backbones build their ``cache_identity`` with it. Options that do not change
    an embedding (device, batch size) should be left out by the caller, so that a cache
    filled on a GPU serves the CPU too; values that are not JSON are written with ``str``.

    Example:
        >>> identity_string("demo", {"model": "m", "max_tokens": 77})
        '{"name": "demo", "options": {"max_tokens": 77, "model": "m"}, "weights": []}'
    """
    record = {"name": name, "options": dict(options),
              "weights": [path_fingerprint(item) if isinstance(item, (str, os.PathLike)) else item
                          for item in weights]}
    return json.dumps(record, sort_keys=True, default=str, ensure_ascii=False)


_SCALARS = (str, int, float, bool, type(None), os.PathLike)
_NOT_IDENTITY = frozenset({"device", "batch_size"})


def backbone_identity(backbone: Any) -> str:
    """What a cache of a backbone's embeddings must key on: its ``cache_identity``, or a derived one.

    A plug-in that defines ``cache_identity`` (a non-empty str; every built-in backbone does)
    gives it. For any other (a third-party plug-in written before the attribute existed) the
    identity is derived: its name, its class (module and qualified name), ``dim``,
    ``sample_rate`` and every public plain attribute (str, number, bool, path; a path that
    exists is fingerprinted by :func:`path_fingerprint`) except the device and batch size.
    Two instances of one class that differ only in private state get the same identity:
    such a plug-in should define ``cache_identity`` (docs/plugins.md).

    Args:
        backbone: any backbone.

    Returns:
        A str; equal for two backbones whose embeddings are interchangeable.

    Example:
        >>> class Toy:
        ...     name, dim, device, sample_rate, model = "toy", 4, "cpu", None, "v1"
        >>> backbone_identity(Toy()) == backbone_identity(Toy())
        True
        >>> other = Toy(); other.model = "v2"
        >>> backbone_identity(other) == backbone_identity(Toy())
        False
    """
    own = getattr(backbone, "cache_identity", None)
    if isinstance(own, str) and own:
        return own
    kind = type(backbone)
    options: dict[str, Any] = {"class": f"{kind.__module__}:{kind.__qualname__}",
                               "dim": getattr(backbone, "dim", None),
                               "sample_rate": getattr(backbone, "sample_rate", None)}
    weights: list[Any] = []
    try:
        attributes = dict(vars(backbone))
    except TypeError:  # __slots__ without __dict__
        attributes = {slot: getattr(backbone, slot, None) for slot in getattr(kind, "__slots__", ())}
    for key in sorted(attributes):
        value = attributes[key]
        if key.startswith("_") or key in _NOT_IDENTITY or not isinstance(value, _SCALARS):
            continue
        options[key] = os.fspath(value) if isinstance(value, os.PathLike) else value
        if isinstance(value, (str, os.PathLike)) and value and os.path.exists(os.fspath(value)):
            weights.append(path_fingerprint(value))
    return identity_string(str(getattr(backbone, "name", kind.__name__)), options, weights)
