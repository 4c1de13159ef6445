"""The pipeline a user gets without flags: one table, per kind of index, chosen on development data.

An index is one of four kinds (:func:`index_kind`): human captions embedded as text
(``captions``), audio with the captions that came with it (``audio_captions``), audio captioned
by a captioner plug-in at build time (``audio_captioner``), and items without captions
(``audio``). For each kind ``search/pipeline/defaults.toml`` says which stages run by default and why
(the development part it was measured on); :func:`resolve_pipeline` applies it to an index,
under the caller's own choices, and says what runs and why in one :class:`Pipeline`, which
``fortekit index info`` and ``fortekit search --explain`` print.

Example:
    >>> table = default_table()
    >>> sorted(table)
    ['audio', 'audio_captioner', 'audio_captions', 'captions']
    >>> [stage.name for stage in table["captions"].stages if stage.on]
    ['stage1', 'projection', 'formula', 'stage3']
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Literal, TypeVar

from fortekit.errors import Errors, PipelineError

if TYPE_CHECKING:
    from fortekit.search.index.audio_index import AudioIndex

__all__ = [
    "KINDS", "STAGES", "KindDefaults", "Pipeline", "StageDefault", "StageState", "default_table",
    "index_kind", "kind_defaults", "resolve_pipeline",
]

KINDS: tuple[str, ...] = ("captions", "audio_captions", "audio_captioner", "audio")
STAGES: tuple[str, ...] = ("stage1", "projection", "formula", "stage3", "order_check")
_TABLE = "defaults.toml"
Source = Literal["default", "caller", "unavailable"]


@dataclass(frozen=True, slots=True)
class StageDefault:
    """One stage's default for one kind of index.

    Attributes:
        name: the stage (one of :data:`STAGES`).
        on: whether it runs by default.
        why: the evidence: the development part and what it measured.
    """

    name: str
    on: bool
    why: str


@dataclass(frozen=True, slots=True)
class KindDefaults:
    """The default pipeline of one kind of index.

    Attributes:
        kind: its name (one of :data:`KINDS`).
        description: what such an index holds.
        stages: each stage's default, in :data:`STAGES` order.

    Example:
        >>> kind_defaults("audio").stage("stage3").on
        False
    """

    kind: str
    description: str
    stages: tuple[StageDefault, ...]

    def stage(self, name: str) -> StageDefault:
        """The default of the stage ``name``.

        Raises:
            PipelineError: an unknown stage (E422).
        """
        return _by_name(self.stages, name)


@dataclass(frozen=True, slots=True)
class StageState:
    """Whether a stage runs for one retriever, and why.

    Attributes:
        name: the stage.
        on: whether it runs.
        source: ``"default"`` (the table's choice for the kind), ``"caller"`` (switched by the
            caller: a keyword or a flag), ``"unavailable"`` (the default is on, but the index or
            backbone lacks what it needs).
        why: the table's evidence, or what the caller or the index decided.
        detail: what runs, where it says more (the head's file, Stage 1's regime).
    """

    name: str
    on: bool
    source: Source
    why: str
    detail: str = ""

    def line(self) -> str:
        """One line for ``--explain`` and ``index info``.

        Example:
            >>> StageState("stage3", False, "unavailable", "the index holds no captions").line()
            'stage3       off  (unavailable: the index holds no captions)'
        """
        state = "on " if self.on else "off"
        detail = f" {self.detail}" if self.detail else ""
        return f"{self.name:<12} {state}{detail}  ({self.source}: {self.why})"


_Stage = TypeVar("_Stage", StageDefault, StageState)


def _by_name(stages: tuple[_Stage, ...], name: str) -> _Stage:
    """The stage called ``name`` (E422 for a name that is no stage)."""
    for stage in stages:
        if stage.name == name:
            return stage
    raise PipelineError(Errors.E422.format(name=name, options=", ".join(STAGES)))


@dataclass(frozen=True, slots=True)
class Pipeline:
    """The stages one retriever runs, each with its reason.

    Attributes:
        kind: the kind of index.
        stages: one :class:`StageState` per stage, in :data:`STAGES` order.

    Example:
        >>> pipeline = Pipeline("audio", tuple(StageState(name, False, "default", "-") for name in STAGES))
        >>> pipeline.running
        ()
    """

    kind: str
    stages: tuple[StageState, ...]

    @property
    def running(self) -> tuple[str, ...]:
        """The names of the stages that run."""
        return tuple(stage.name for stage in self.stages if stage.on)

    def state(self, name: str) -> StageState:
        """The state of the stage ``name``.

        Raises:
            PipelineError: an unknown stage (E422).
        """
        return _by_name(self.stages, name)

    def replace(self, name: str, on: bool, why: str, detail: str = "") -> Pipeline:
        """The same pipeline with the stage ``name`` switched by the caller."""
        self.state(name)
        return Pipeline(self.kind, tuple(
            StageState(name, on, "caller", why, detail) if stage.name == name else stage
            for stage in self.stages
        ))

    def lines(self) -> list[str]:
        """The kind and one line per stage, for a terminal."""
        description = default_table()[self.kind].description if self.kind in default_table() else ""
        return [f"kind         {self.kind} ({description})"] + [stage.line() for stage in self.stages]

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict: the kind and, per stage, on, source, why and detail."""
        return {"kind": self.kind, "stages": {
            stage.name: {"on": stage.on, "source": stage.source, "why": stage.why, "detail": stage.detail}
            for stage in self.stages
        }}


def index_kind(index: AudioIndex) -> str:
    """The kind of an index, from what it holds: paths to audio, captions, and who wrote them.

    Items without a path were embedded from their text (``fortekit index build --captions``,
    :class:`~fortekit.search.index.collection.Collection`): ``captions``. Audio items whose
    captions a captioner plug-in wrote: ``audio_captioner``; with captions that came with them:
    ``audio_captions``; no captions at all (audio, or embeddings only): ``audio``.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> index_kind(AudioIndex.from_captions(["a"], ["rain"], "demo", embeddings=np.eye(1),
        ...                                     parse_captions=False))
        'captions'
    """
    has_captions = any(caption for caption in index.captions)
    if not any(index.paths):
        return "captions" if has_captions else "audio"
    if not has_captions:
        return "audio"
    return "audio_captioner" if index.meta.captioner else "audio_captions"


@cache
def default_table() -> Mapping[str, KindDefaults]:
    """The shipped table of default pipelines, read once.

    Raises:
        PipelineError: a damaged table (E420).
    """
    text = resources.files("fortekit.search.pipeline").joinpath(_TABLE).read_text(encoding="utf-8")
    return parse_table(text, source=_TABLE)


def parse_table(text: str, *, source: str = "<text>") -> dict[str, KindDefaults]:
    """Read a table of default pipelines (the layout of ``search/pipeline/defaults.toml``).

    Args:
        text: the TOML text.
        source: its name, for messages.

    Returns:
        Per kind, its :class:`KindDefaults`.

    Raises:
        PipelineError: not TOML, a kind or stage missing, or a value of the wrong type (E420).

    Example:
        >>> parse_table("format = 1")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.PipelineError: [E420] The table of default pipelines <text> is unusable...
    """
    def fail(problem: str) -> PipelineError:
        return PipelineError(Errors.E420.format(
            path=source, problem=problem, kinds=", ".join(KINDS), stages=", ".join(STAGES),
        ))

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise fail(str(exc)) from None
    table: dict[str, KindDefaults] = {}
    for kind in KINDS:
        entry = data.get(kind)
        if not isinstance(entry, dict):
            raise fail(f"no kind {kind!r}")
        stages: list[StageDefault] = []
        for name in STAGES:
            stage = entry.get(name)
            if not isinstance(stage, dict) or not isinstance(stage.get("on"), bool) \
                    or not isinstance(stage.get("why"), str):
                raise fail(f"{kind}.{name} needs on = true|false and why = \"...\"")
            stages.append(StageDefault(name, stage["on"], stage["why"]))
        table[kind] = KindDefaults(kind, str(entry.get("description", "")), tuple(stages))
    return table


def kind_defaults(kind: str) -> KindDefaults:
    """The default pipeline of ``kind``.

    Raises:
        PipelineError: an unknown kind (E421).

    Example:
        >>> kind_defaults("captions").stage("stage1").on
        True
    """
    table = default_table()
    if kind not in table:
        raise PipelineError(Errors.E421.format(name=kind, options=", ".join(KINDS)))
    return table[kind]


def resolve_pipeline(
    kind: str,
    choices: Mapping[str, bool | None],
    *,
    unavailable: Mapping[str, str] | None = None,
    details: Mapping[str, str] | None = None,
    caller_why: Mapping[str, str] | None = None,
) -> Pipeline:
    """What runs for one retriever: the caller's choice where there is one, else the kind's default.

    Args:
        kind: the kind of index (:func:`index_kind`).
        choices: per stage, True/False when the caller switched it, None (or absent) for the default.
        unavailable: per stage, why it cannot run here (no captions, no shipped head): a default
            that is on becomes off with this reason; a caller's True is the caller's business
            (the component reports its own error).
        details: per stage, what runs (a head's file, a regime), shown beside "on".
        caller_why: per stage, how the caller switched it (default: "switched on/off by the caller").

    Returns:
        The :class:`Pipeline`.

    Raises:
        PipelineError: an unknown kind (E421) or stage (E422).

    Example:
        >>> pipeline = resolve_pipeline("captions", {"stage1": False}, unavailable={"projection": "no head"})
        >>> pipeline.running
        ('formula', 'stage3')
        >>> pipeline.state("stage1").source, pipeline.state("projection").source
        ('caller', 'unavailable')
    """
    defaults = kind_defaults(kind)
    for name in choices:
        if name not in STAGES:
            raise PipelineError(Errors.E422.format(name=name, options=", ".join(STAGES)))
    missing = dict(unavailable or {})
    detail = dict(details or {})
    said = dict(caller_why or {})
    states: list[StageState] = []
    for stage in defaults.stages:
        chosen = choices.get(stage.name)
        if chosen is not None:
            why = said.get(stage.name, f"switched {'on' if chosen else 'off'} by the caller")
            shown = detail.get(stage.name, "") if chosen else ""
            states.append(StageState(stage.name, chosen, "caller", why, shown))
        elif stage.on and stage.name in missing:
            states.append(StageState(stage.name, False, "unavailable", missing[stage.name]))
        else:
            states.append(StageState(stage.name, stage.on, "default", stage.why,
                                     detail.get(stage.name, "") if stage.on else ""))
    return Pipeline(kind, tuple(states))

