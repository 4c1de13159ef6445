"""What a clip holds, decided before any sound is made: events, their timing and attributes, absences.

A :class:`Scene` is drawn from the generator's seed and the clip's index alone
(``SeedSequence([seed, index])``), so any clip can be re-drawn, rendered or checked on its own.
The held-out pairs (:data:`HELD_OUT_PAIRS`) never sound together in a training clip; half of
the test clips with two or more events are built around one of them.

Structures: ``single`` (one event), ``while`` (two overlapping events), ``then`` (the second
starts after the first has died away), each of the last two optionally over a background bed
(a third event, under both). A clip may also declare one absent class.

Example:
    >>> scene = draw_scene(0, 3, split="test")
    >>> scene.clip_id, scene.split, 1 <= len(scene.events) <= 3
    ('clip000003', 'test', True)
    >>> draw_scene(0, 3, split="test") == scene
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from fortekit.search.eval.bench.soundgen.classes import ATTRIBUTES, CLASSES, DIMENSIONS

__all__ = [
    "CLIP_SECONDS",
    "HELD_OUT_PAIRS",
    "Event",
    "GeneratorConfig",
    "Scene",
    "clip_split",
    "draw_scene",
    "held_out_pairs",
]

#: The length of every clip (s).
CLIP_SECONDS = 5.0

#: Pairs of classes that never sound together in a training clip: a cycle through all fifteen
#: classes, so each class is in exactly two pairs.
HELD_OUT_PAIRS: tuple[tuple[str, str], ...] = (
    ("speech", "bird"), ("bird", "engine"), ("engine", "bell"), ("bell", "rain"), ("rain", "knocking"),
    ("knocking", "music"), ("music", "thunder"), ("thunder", "dog"), ("dog", "siren"), ("siren", "water"),
    ("water", "footsteps"), ("footsteps", "beeps"), ("beeps", "wind"), ("wind", "clapping"),
    ("clapping", "speech"),
)

# How long an event sounds on after its last onset (s): its own ring, then the room.
_RING = {"bell": 1.2, "music": 0.6}
_ROOM_TAIL = {"far": 0.45, "near": 0.05, None: 0.15}


@dataclass(frozen=True)
class GeneratorConfig:
    """The generator's settings (what the CLI passes; all have the documented defaults).

    Attributes:
        seed: the seed every clip derives its random generator from.
        n: the number of clips.
        test_every: every ``test_every``-th clip (index % test_every == test_every - 1) is a test clip.
        speech: whether the speech class (espeak-ng) is used.
        max_queries_per_kind: the most "and", "without" and "order" queries per split; held-out
            pairs come first.
    """

    seed: int = 0
    n: int = 20_000
    test_every: int = 5
    speech: bool = True
    max_queries_per_kind: int = 60

    @property
    def classes(self) -> tuple[str, ...]:
        """The classes in use."""
        return tuple(name for name in CLASSES if self.speech or name != "speech")


@dataclass(frozen=True)
class Event:
    """One sound event of a clip.

    Attributes:
        cls: its class name.
        variant: the class variant ("male"/"female" for speech), or "".
        attributes: attribute values, in :data:`DIMENSIONS` order.
        onset_s: when it starts in the clip (s).
        duration_s: its nominal length (s): the span its level is set over.
        seed: the seed of its own random generator.
        bed: whether it is a background bed under the other events.
    """

    cls: str
    variant: str
    attributes: tuple[str, ...]
    onset_s: float
    duration_s: float
    seed: int
    bed: bool = False

    @property
    def level_db(self) -> float:
        """The intended RMS level over its nominal span (dBFS), before the clip's limiter."""
        from fortekit.search.eval.bench.soundgen.classes import BASE_LEVEL_DB

        offset = sum(ATTRIBUTES[a].level_db for a in self.attributes)
        return BASE_LEVEL_DB - (4.0 if self.bed else 0.0) + offset

    @property
    def distance(self) -> str | None:
        """"near", "far" or None."""
        return next((a for a in self.attributes if ATTRIBUTES[a].dimension == "distance"), None)

    @property
    def sounds_until_s(self) -> float:
        """A bound on when it has died away (s): its span, its ring and its room's tail."""
        return self.onset_s + self.duration_s + _RING.get(self.cls, 0.1) + _ROOM_TAIL[self.distance]

    def to_dict(self) -> dict[str, object]:
        """The event as JSON-ready data."""
        return {"class": self.cls, "variant": self.variant, "attributes": list(self.attributes),
                "onset": self.onset_s, "duration": self.duration_s, "level_db": self.level_db,
                "bed": self.bed, "seed": self.seed}


@dataclass(frozen=True)
class Scene:
    """One clip's content.

    Attributes:
        index: the clip's index (0-based).
        split: "train" or "test".
        structure: "single", "while" or "then".
        events: the events: the first, the second (``while``/``then``), then the bed if any.
        absent: a class declared absent (said in captions and in the gold formula), or None.
        floor_seed: the seed of the clip's noise floor.
        caption_seed: the seed of the clip's caption choices.
    """

    index: int
    split: str
    structure: str
    events: tuple[Event, ...]
    absent: str | None
    floor_seed: int
    caption_seed: int
    relations: tuple[tuple[str, int, int], ...] = field(default=())

    @property
    def clip_id(self) -> str:
        """The clip's id, ``clip`` and six digits."""
        return f"clip{self.index:06d}"

    @property
    def classes(self) -> frozenset[str]:
        """The classes that sound in the clip."""
        return frozenset(event.cls for event in self.events)


def clip_split(index: int, test_every: int = 5) -> str:
    """"test" for every ``test_every``-th clip, else "train".

    Example:
        >>> [clip_split(i) for i in range(5)]
        ['train', 'train', 'train', 'train', 'test']
    """
    return "test" if index % test_every == test_every - 1 else "train"


def held_out_pairs(classes: tuple[str, ...]) -> frozenset[frozenset[str]]:
    """The held-out pairs among ``classes``, as unordered pairs.

    Example:
        >>> len(held_out_pairs(tuple(CLASSES))), len(held_out_pairs(tuple(CLASSES)[1:]))
        (15, 13)
    """
    return frozenset(frozenset(pair) for pair in HELD_OUT_PAIRS if set(pair) <= set(classes))


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**31 - 1))


def _attributes(rng: np.random.Generator, cls: str, *, bed: bool) -> tuple[str, ...]:
    chosen = []
    for dimension in DIMENSIONS:
        if dimension not in CLASSES[cls].dimensions or rng.random() >= (0.15 if bed else 0.3):
            continue
        values = [spec.name for spec in ATTRIBUTES.values() if spec.dimension == dimension]
        if bed and dimension == "loudness":
            values = ["quiet"]
        chosen.append(values[int(rng.integers(len(values)))])
    return tuple(chosen)


def _event(rng: np.random.Generator, cls: str, onset: float, longest: float, *, bed: bool = False) -> Event:
    low, high = CLASSES[cls].duration
    duration = round(float(rng.uniform(low, max(low, min(high, longest)))), 3)
    variants = sorted(CLASSES[cls].variants)
    variant = variants[int(rng.integers(len(variants)))] if variants else ""
    return Event(cls, variant, _attributes(rng, cls, bed=bed), round(onset, 3), duration, _seed(rng), bed)


def _band_overlap(band: tuple[float, float], others: list[tuple[float, float]]) -> float:
    """The share of ``band`` (on a log-frequency axis) that the ``others`` cover."""
    low, high = math.log(band[0]), math.log(band[1])
    covered = 0.0
    for other_low, other_high in sorted((math.log(a), math.log(b)) for a, b in others):
        start, end = max(low, other_low), min(high, other_high)
        if end > start:
            covered += end - start
            low = end
    return covered / (math.log(band[1]) - math.log(band[0]))


def _choose_classes(rng: np.random.Generator, config: GeneratorConfig, split: str,
                    count: int) -> list[str] | None:
    classes = list(config.classes)
    held = held_out_pairs(config.classes)
    if split == "test" and count >= 2 and rng.random() < 0.5:
        pair = sorted(sorted(p) for p in held)[int(rng.integers(len(held)))]
        chosen = [pair[i] for i in rng.permutation(2)]
    else:
        chosen = [classes[i] for i in rng.choice(len(classes), size=min(count, 2), replace=False)]
    if count == 3:
        beds = [c for c in classes if CLASSES[c].bed and c not in chosen]
        chosen.append(beds[int(rng.integers(len(beds)))])
    if split == "train" and any(frozenset((a, b)) in held for a in chosen for b in chosen if a != b):
        return None
    return chosen


def _main_events(rng: np.random.Generator, structure: str, chosen: list[str]) -> list[Event] | None:
    if structure == "single":
        onset = float(rng.uniform(0.1, 0.8))
        return [_event(rng, chosen[0], onset, CLIP_SECONDS - onset - 0.2)]
    if structure == "while":
        first = _event(rng, chosen[0], float(rng.uniform(0.0, 0.5)), CLIP_SECONDS - 0.6)
        # the second starts while the first sounds and overlaps it by at least 0.6 s
        latest = max(first.onset_s, first.onset_s + first.duration_s - 0.6)
        onset = float(rng.uniform(first.onset_s, latest))
        return [first, _event(rng, chosen[1], onset, CLIP_SECONDS - onset - 0.1)]
    first_onset = float(rng.uniform(0.1, 0.4))
    second_shortest = CLASSES[chosen[1]].duration[0]
    # room for the first event: its ring, the largest room tail, the gap and the second's shortest span
    tail = _RING.get(chosen[0], 0.1) + max(_ROOM_TAIL.values())
    budget = CLIP_SECONDS - first_onset - tail - 0.3 - second_shortest
    if budget < CLASSES[chosen[0]].duration[0]:
        return None
    first = _event(rng, chosen[0], first_onset, budget)
    onset = first.sounds_until_s + float(rng.uniform(0.1, 0.3))
    second = _event(rng, chosen[1], onset, CLIP_SECONDS - onset - 0.05)
    if second.onset_s + CLASSES[second.cls].duration[0] > CLIP_SECONDS:
        return None
    return [first, second]


def _absent(rng: np.random.Generator, config: GeneratorConfig, present: list[str]) -> str:
    others = [c for c in config.classes if c not in present]
    bands = [CLASSES[c].band for c in present]
    # mostly a class whose band the present ones leave free, so its absence can be heard and measured
    free = [c for c in others if _band_overlap(CLASSES[c].band, bands) < 0.25]
    pool = free if free and rng.random() < 0.7 else others
    return pool[int(rng.integers(len(pool)))]


def draw_scene(seed: int, index: int, *, split: str | None = None,
               config: GeneratorConfig | None = None) -> Scene:
    """Draw clip ``index``'s scene from the generator's seed (the same arguments, the same scene).

    Args:
        seed: the generator's seed.
        index: the clip's index.
        split: "train" or "test" (default: :func:`clip_split` of the index).
        config: the other settings (default :class:`GeneratorConfig`).

    Example:
        >>> scene = draw_scene(7, 0)
        >>> scene.split, scene.structure in ("single", "while", "then")
        ('train', True)
    """
    config = config or GeneratorConfig(seed=seed)
    split = split or clip_split(index, config.test_every)
    rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
    events: list[Event] | None = None
    while events is None:
        structure = ("single", "while", "then")[int(rng.choice(3, p=[0.3, 0.35, 0.35]))]
        count = 1 if structure == "single" else (3 if rng.random() < 0.3 else 2)
        for _ in range(50):  # classes that fit the structure (a long first event leaves no room for "then")
            chosen = _choose_classes(rng, config, split, count)
            events = None if chosen is None else _main_events(rng, structure, chosen)
            if events is not None:
                break
    assert chosen is not None
    relations: list[tuple[str, int, int]] = []
    if structure != "single":
        relations.append(("Before" if structure == "then" else "While", 0, 1))
    if len(chosen) == 3:
        events.append(_event(rng, chosen[2], 0.0, CLIP_SECONDS, bed=True))
        events[-1] = Event(events[-1].cls, events[-1].variant, events[-1].attributes, 0.0,
                           CLIP_SECONDS, events[-1].seed, True)
        relations += [("While", 0, 2), ("While", 1, 2)]
    absent = _absent(rng, config, chosen) if rng.random() < 0.3 else None
    return Scene(index, split, structure, tuple(events), absent, _seed(rng), _seed(rng), tuple(relations))
