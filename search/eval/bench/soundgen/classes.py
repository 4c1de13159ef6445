"""The sound-event classes of the generator: one declarative table, one row per class.

A :class:`ClassSpec` names the class, its synthesiser, the FOL predicates of its events, the
band its energy lives in, the attributes it can take, how long its events last and whether
it can be a background bed. How captions name it lives in the data file ``templates.toml``
(``[classes.NAME]``). The attribute values and what they do to a sound are in
:data:`ATTRIBUTES`.

Example:
    >>> len(CLASSES), CLASSES["dog"].symbols, CLASSES["thunder"].dimensions
    (15, ('Dog', 'Barking'), ('loudness', 'distance'))
    >>> ATTRIBUTES["high"].dimension, ATTRIBUTES["high"].symbol
    ('pitch', 'HighPitched')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fortekit.search.eval.bench.soundgen import synth_noise, synth_tonal
from fortekit.search.eval.bench.soundgen.dsp import SynthRequest

__all__ = ["ATTRIBUTES", "CLASSES", "DIMENSIONS", "AttributeSpec", "ClassSpec", "class_names"]

Synth = Callable[[SynthRequest], np.ndarray]

#: The attribute dimensions, in caption order (how loud, what pitch, how fast, how far).
DIMENSIONS = ("loudness", "pitch", "rate", "distance")


@dataclass(frozen=True)
class AttributeSpec:
    """One attribute value and its effect on the sound.

    Attributes:
        name: the value ("loud", "far", ...).
        dimension: one of :data:`DIMENSIONS`.
        symbol: its FOL predicate (Loud, HighPitched, Distant, ...).
        level_db: added to the event's level (dB).
        pitch: factor on the synthesiser's frequencies.
        rate: factor on the synthesiser's repetition rate.
        reverb: (RT60 in seconds, wet share) of the room the event sounds in, or None (default room).
        air_lowpass: a low-pass cutoff (Hz) for air absorption, or None.
    """

    name: str
    dimension: str
    symbol: str
    level_db: float = 0.0
    pitch: float = 1.0
    rate: float = 1.0
    reverb: tuple[float, float] | None = None
    air_lowpass: float | None = None


#: The attribute values. Loud and quiet differ by 20 dB; near and far by 13 dB and a reverberant room.
ATTRIBUTES: dict[str, AttributeSpec] = {spec.name: spec for spec in (
    AttributeSpec("loud", "loudness", "Loud", level_db=8.0),
    AttributeSpec("quiet", "loudness", "Quiet", level_db=-12.0),
    AttributeSpec("high", "pitch", "HighPitched", pitch=1.5),
    AttributeSpec("low", "pitch", "LowPitched", pitch=0.6),
    AttributeSpec("fast", "rate", "Fast", rate=1.8),
    AttributeSpec("slow", "rate", "Slow", rate=0.55),
    AttributeSpec("near", "distance", "Nearby", level_db=5.0, reverb=(0.15, 0.05)),
    AttributeSpec("far", "distance", "Distant", level_db=-8.0, reverb=(0.8, 0.6), air_lowpass=3000.0),
)}

#: The room of an event without a distance attribute: (RT60 s, wet share).
DEFAULT_ROOM = (0.3, 0.15)
#: The level of an event without loudness or distance attributes (RMS over its span, dBFS).
BASE_LEVEL_DB = -26.0


@dataclass(frozen=True)
class ClassSpec:
    """One sound-event class.

    Attributes:
        name: the class name (also its concept in ``item_concepts.jsonl`` and query metadata).
        symbols: the FOL predicates of its events, e.g. ("Dog", "Barking").
        absence_symbol: the predicate of "no such sound" (``¬∃w Dog(w)``).
        synth: the synthesiser (speech is bound to its sentences by the renderer).
        band: the frequency band (Hz) that carries most of its energy: its signature.
        dimensions: the attribute dimensions it takes (loudness and distance always).
        duration: (shortest, longest) event in seconds.
        bed: whether it can run under other events as a background.
        variants: variant -> its extra predicate (speech: male -> Man, female -> Woman).
    """

    name: str
    symbols: tuple[str, ...]
    absence_symbol: str
    synth: Synth | None
    band: tuple[float, float]
    dimensions: tuple[str, ...] = ("loudness", "distance")
    duration: tuple[float, float] = (1.0, 3.0)
    bed: bool = False
    variants: dict[str, str] = field(default_factory=dict)


_ALL = ("loudness", "pitch", "rate", "distance")
_NO_PITCH = ("loudness", "rate", "distance")
_NO_RATE = ("loudness", "pitch", "distance")

_TABLE = (
    ClassSpec("speech", ("Speaking",), "Speech", None, (100, 4000), _ALL, (1.2, 4.0), bed=True,
              variants={"male": "Man", "female": "Woman"}),
    ClassSpec("dog", ("Dog", "Barking"), "Dog", synth_tonal.dog, (400, 3000), _ALL, (0.8, 3.0)),
    ClassSpec("bird", ("Bird", "Chirping"), "Bird", synth_tonal.bird, (2500, 7500), _ALL, (0.8, 3.5)),
    ClassSpec("siren", ("Siren", "Wailing"), "Siren", synth_tonal.siren, (500, 2500), _ALL, (1.5, 4.5),
              bed=True),
    ClassSpec("rain", ("Rain", "Falling"), "Rain", synth_noise.rain, (1500, 8000), _NO_PITCH, (1.5, 4.8),
              bed=True),
    ClassSpec("wind", ("Wind", "Blowing"), "Wind", synth_noise.wind, (30, 500), _ALL, (1.5, 4.8), bed=True),
    ClassSpec("engine", ("Engine", "Running"), "Engine", synth_tonal.engine, (25, 600), _NO_RATE, (1.5, 4.8),
              bed=True),
    ClassSpec("knocking", ("Knocking",), "Knocking", synth_noise.knocking, (150, 1500), _ALL, (0.8, 3.0)),
    ClassSpec("bell", ("Bell", "Ringing"), "Bell", synth_tonal.bell, (300, 4000), _ALL, (0.5, 2.5)),
    ClassSpec("beeps", ("Beeping",), "Beeping", synth_tonal.beeps, (900, 3000), _ALL, (0.8, 3.0)),
    ClassSpec("footsteps", ("Footstep", "Walking"), "Footstep", synth_noise.footsteps, (40, 2500),
              _NO_PITCH, (1.0, 3.5)),
    ClassSpec("clapping", ("Clapping",), "Clapping", synth_noise.clapping, (700, 5000), _NO_PITCH,
              (0.8, 3.0)),
    ClassSpec("water", ("Water", "Flowing"), "Water", synth_noise.water, (300, 4000), _ALL, (1.5, 4.8),
              bed=True),
    ClassSpec("thunder", ("Thunder", "Rumbling"), "Thunder", synth_noise.thunder, (20, 250),
              ("loudness", "distance"), (1.8, 3.5)),
    ClassSpec("music", ("Music", "Playing"), "Music", synth_tonal.music, (100, 3000), _ALL, (1.5, 4.8),
              bed=True),
)

#: The classes by name, in table order.
CLASSES: dict[str, ClassSpec] = {spec.name: spec for spec in _TABLE}


def class_names(*, speech: bool = True) -> tuple[str, ...]:
    """The class names in table order, without ``speech`` when ``speech`` is False.

    Example:
        >>> class_names(speech=False)[:3]
        ('dog', 'bird', 'siren')
    """
    return tuple(name for name in CLASSES if speech or name != "speech")
