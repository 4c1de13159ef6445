"""Plug-ins: backbones (text/audio encoders), elaborators and captioners, found by name.

Built-ins: backbones ``minilm`` (the offline default), ``hf-clap``, ``laion-clap``,
``msclap``, ``small-clap``; elaborators ``hf-llm``, ``file``; captioners ``stored``,
``hf-captioner``, ``tagger``.
Other packages add their own through the entry-point groups ``fortekit.backbones``,
``fortekit.elaborators`` and ``fortekit.captioners``; code adds its own with the
``register_*`` decorators. Importing this package imports neither torch nor
transformers: each built-in imports what it needs when it is built.

Example:
    >>> import fortekit.plugins as plugins
    >>> "minilm" in plugins.available_backbones()
    True
    >>> @plugins.register_elaborator("echo")
    ... class Echo:
    ...     name = "echo"
    ...     def elaborate(self, query):
    ...         return plugins.Elaboration(query, (query,), ("not " + query,))
    >>> plugins.get_elaborator("echo").elaborate("rain").negatives
    ('not rain',)
    >>> plugins.unregister_elaborator("echo")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from fortekit.plugins.protocols import (
    AudioInput,
    AudioItem,
    Backbone,
    Captioner,
    Elaboration,
    Elaborator,
    LabelTagger,
    backbone_identity,
    one_or_many,
)
from fortekit.plugins.registry import KINDS, REGISTRIES, PluginInfo

__all__ = [
    "KINDS",
    "AudioInput",
    "AudioItem",
    "Backbone",
    "Captioner",
    "Elaboration",
    "Elaborator",
    "LabelTagger",
    "PluginInfo",
    "available_backbones",
    "available_captioners",
    "available_elaborators",
    "backbone_identity",
    "get_backbone",
    "get_captioner",
    "get_elaborator",
    "list_plugins",
    "one_or_many",
    "register_backbone",
    "register_captioner",
    "register_elaborator",
    "unregister_backbone",
    "unregister_captioner",
    "unregister_elaborator",
    "with_device",
]

F = TypeVar("F", bound=Callable[..., Any])


def _register(kind: str, name: str, factory: F | None, override: bool) -> Any:
    registry = REGISTRIES[kind]
    if factory is not None:
        return registry.register(name, factory, override=override)

    def decorator(target: F) -> F:
        registry.register(name, target, override=override)
        return target

    return decorator


def register_backbone(name: str, factory: F | None = None, *, override: bool = False) -> Any:
    """Register a backbone class or factory function under `name`.

    Use it as a decorator, ``@register_backbone("name")``, or call it,
    ``register_backbone("name", MyBackbone)``. The factory's keyword arguments are the
    options users pass to :func:`get_backbone`.

    Args:
        name: lower-case letters, digits, '-', '_' and '.'.
        factory: the class or function; omit it to get a decorator.
        override: replace an existing in-code or built-in plug-in of that name.

    Returns:
        The factory (unchanged), or a decorator when no factory was given.

    Raises:
        PluginRegistrationError: a bad name, or a taken one without override=True.

    Example:
        >>> @register_backbone("my-clap")
        ... def make(checkpoint="ckpt.pt"):
        ...     ...
        >>> unregister_backbone("my-clap")
    """
    return _register("backbone", name, factory, override)


def register_elaborator(name: str, factory: F | None = None, *, override: bool = False) -> Any:
    """Register an elaborator class or factory under `name` (like :func:`register_backbone`).

    Args:
        name: the plug-in name.
        factory: the class or function; omit it to get a decorator.
        override: replace an existing plug-in of that name.

    Returns:
        The factory, or a decorator.

    Raises:
        PluginRegistrationError: a bad or taken name.

    Example:
        >>> register_elaborator("mine", lambda: None) is not None
        True
        >>> unregister_elaborator("mine")
    """
    return _register("elaborator", name, factory, override)


def register_captioner(name: str, factory: F | None = None, *, override: bool = False) -> Any:
    """Register a captioner class or factory under `name` (like :func:`register_backbone`).

    Args:
        name: the plug-in name.
        factory: the class or function; omit it to get a decorator.
        override: replace an existing plug-in of that name.

    Returns:
        The factory, or a decorator.

    Raises:
        PluginRegistrationError: a bad or taken name.

    Example:
        >>> @register_captioner("silent")
        ... class Silent:
        ...     name = "silent"
        ...     def caption(self, items):
        ...         return ["silence" for _ in items]
        >>> get_captioner("silent").caption(["a.wav"])
        ['silence']
        >>> unregister_captioner("silent")
    """
    return _register("captioner", name, factory, override)


def unregister_backbone(name: str) -> None:
    """Remove an in-code backbone registration (no error when absent)."""
    REGISTRIES["backbone"].unregister(name)


def unregister_elaborator(name: str) -> None:
    """Remove an in-code elaborator registration (no error when absent)."""
    REGISTRIES["elaborator"].unregister(name)


def unregister_captioner(name: str) -> None:
    """Remove an in-code captioner registration (no error when absent)."""
    REGISTRIES["captioner"].unregister(name)


def with_device(options: Mapping[str, Any] | None, device: str | None) -> dict[str, Any]:
    """A plug-in's options with ``device`` set: the one way to combine recorded options and a device.

    ``get_backbone(name, device=device, **options)`` fails with Python's own TypeError
    ("got multiple values for keyword argument 'device'") when the options already hold a
    device, as an index built with ``backbone_options={"device": "cpu"}`` records. Here the
    ``device`` argument wins when it is given (not None): it is this run's choice, where a
    recorded device belongs to the machine that wrote the options; with None the options'
    own device (if any) stays.

    Args:
        options: the plug-in's options (None: none).
        device: this run's device ("auto", "cpu", "cuda:N"), or None to keep the options' own.

    Returns:
        A new dict, to pass as ``get_backbone(name, **with_device(options, device))``.

    Example:
        >>> with_device({"device": "cpu", "model": "m"}, "auto")
        {'device': 'auto', 'model': 'm'}
        >>> with_device({"device": "cpu"}, None)
        {'device': 'cpu'}
    """
    merged = dict(options or {})
    if device is not None:
        merged["device"] = device
    return merged


def get_backbone(name: str, **options: Any) -> Backbone:
    """Build the backbone `name` with its options.

    Args:
        name: a name from :func:`available_backbones`.
        **options: the plug-in's own options (for example ``model=``, ``device=``,
            ``batch_size=``; see docs/plugins.md for each built-in). ``device="auto"``
            reaches the plug-in as "cuda" when torch sees a GPU, else "cpu".

    Returns:
        The backbone: ``encode_text`` and ``encode_audio`` give L2-normalised tensors.

    Raises:
        UnknownPluginError: no such name (the message lists the available ones).
        PluginLoadError: the plug-in cannot be imported, or what it built is no backbone.
        MissingDependencyError, ModelNotFoundError, ModelLoadError: from the plug-in.

    Example:
        >>> backbone = get_backbone("minilm")  # doctest: +SKIP
        >>> backbone.encode_text(["a dog barks"]).shape  # doctest: +SKIP
        torch.Size([1, 384])
    """
    if options.get("device") == "auto":
        # Plug-ins written against the protocol expect a torch device string; "auto" is
        # fortekit's own convention, so it is resolved here once for every backbone.
        from fortekit.plugins._runtime import resolve_device

        options["device"] = resolve_device("auto")
    plugin: Backbone = REGISTRIES["backbone"].create(name, **options)
    return plugin


def get_elaborator(name: str, **options: Any) -> Elaborator:
    """Build the elaborator `name` with its options.

    Args:
        name: a name from :func:`available_elaborators`.
        **options: the plug-in's options (``path=`` for ``file``, ``model=`` for ``hf-llm``).

    Returns:
        The elaborator.

    Raises:
        UnknownPluginError, PluginLoadError: as for :func:`get_backbone`.

    Example:
        >>> get_elaborator("file", path="elaborations.jsonl")  # doctest: +SKIP
    """
    plugin: Elaborator = REGISTRIES["elaborator"].create(name, **options)
    return plugin


def get_captioner(name: str, **options: Any) -> Captioner:
    """Build the captioner `name` with its options.

    Args:
        name: a name from :func:`available_captioners`.
        **options: the plug-in's options.

    Returns:
        The captioner.

    Raises:
        UnknownPluginError, PluginLoadError: as for :func:`get_backbone`.

    Example:
        >>> get_captioner("stored", captions={"a.wav": "rain"}).caption(["a.wav"])
        ['rain']
    """
    plugin: Captioner = REGISTRIES["captioner"].create(name, **options)
    return plugin


def available_backbones() -> list[str]:
    """Names of every backbone: built-in, registered in code, or installed (sorted).

    Example:
        >>> {"minilm", "hf-clap"} <= set(available_backbones())
        True
    """
    names: list[str] = REGISTRIES["backbone"].names()
    return names


def available_elaborators() -> list[str]:
    """Names of every elaborator (sorted).

    Example:
        >>> "file" in available_elaborators()
        True
    """
    names: list[str] = REGISTRIES["elaborator"].names()
    return names


def available_captioners() -> list[str]:
    """Names of every captioner (sorted).

    Example:
        >>> "stored" in available_captioners()
        True
    """
    names: list[str] = REGISTRIES["captioner"].names()
    return names


def list_plugins(kind: str | None = None) -> list[PluginInfo]:
    """Every plug-in with where it came from, by kind then name.

    Args:
        kind: "backbone", "elaborator" or "captioner"; None for all.

    Returns:
        One :class:`PluginInfo` per plug-in.

    Raises:
        PluginOptionError: an unknown kind.

    Example:
        >>> [info.source for info in list_plugins("captioner") if info.name == "stored"]
        ['built-in']
    """
    if kind is not None and kind not in REGISTRIES:
        from fortekit.errors import Errors, PluginOptionError

        expected = " or ".join(map(repr, KINDS))
        raise PluginOptionError(Errors.E218.format(name="kind", expected=expected, value=kind))
    kinds = KINDS if kind is None else (kind,)
    return [info for each in kinds for info in REGISTRIES[each].info()]
