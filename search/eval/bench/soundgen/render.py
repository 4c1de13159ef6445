"""From a scene to sound: each event synthesised, placed in its room, set to its level, mixed.

An event's stem is the synthesiser's output with the event's pitch and rate factors, through
its room (:func:`~fortekit.search.eval.bench.soundgen.dsp.reverb`: a small room near, a reverberant one
far, with air absorption) and scaled so that its RMS over its nominal span is exactly
:attr:`Event.level_db`. The clip is the sum of the stems and a pink noise floor at
:data:`FLOOR_DB`; a clip whose peak would pass :data:`PEAK` is scaled down as a whole (the
gain is recorded), so nothing clips.

Example:
    >>> from fortekit.search.eval.bench.soundgen.scene import Event, Scene
    >>> beep = Event("beeps", "", ("loud",), 0.5, 1.0, seed=1)
    >>> clip = render_scene(Scene(0, "train", "single", (beep,), None, 2, 3))
    >>> clip.samples.shape, clip.gain_db <= 0.0, round(float(abs(clip.samples).max()), 2) <= PEAK
    ((80000,), True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fortekit.search.eval.bench.soundgen.classes import ATTRIBUTES, CLASSES, DEFAULT_ROOM
from fortekit.search.eval.bench.soundgen.dsp import RATE, SynthRequest, lowpass, pink_noise, reverb
from fortekit.search.eval.bench.soundgen.scene import CLIP_SECONDS, Event, Scene

__all__ = ["FLOOR_DB", "PEAK", "RenderedClip", "render_event", "render_scene", "to_pcm16"]

#: The RMS level of every clip's noise floor (dBFS).
FLOOR_DB = -70.0
#: The largest absolute sample value of a clip (about -0.9 dBFS).
PEAK = 0.9
_CLIP_SAMPLES = int(CLIP_SECONDS * RATE)


@dataclass(frozen=True)
class RenderedClip:
    """A rendered clip.

    Attributes:
        samples: the mix, float64 in [-PEAK, PEAK], 5 s at 16 kHz.
        stems: each event's own signal, as placed in the mix (before the clip's gain).
        gain_db: the limiter's gain on the whole clip (0.0 or negative).
    """

    samples: np.ndarray
    stems: tuple[np.ndarray, ...]
    gain_db: float


def _factor(event: Event, dimension: str) -> float:
    factor = 1.0
    for name in event.attributes:
        spec = ATTRIBUTES[name]
        if spec.dimension == dimension:
            factor *= spec.pitch if dimension == "pitch" else spec.rate
    return factor


def _sentences() -> tuple[str, ...]:
    from fortekit.search.eval.bench.soundgen.templates import load_templates

    return load_templates().sentences


def render_event(event: Event) -> np.ndarray:
    """The event's stem: a clip-long array with the event at its onset and level.

    Example:
        >>> from fortekit.search.eval.bench.soundgen.dsp import rms_db
        >>> event = Event("bell", "", ("quiet", "far"), 1.0, 1.5, seed=4)
        >>> stem = render_event(event)
        >>> round(rms_db(stem[16000:40000]), 3) == round(event.level_db, 3)
        True
    """
    rng = np.random.default_rng(event.seed)
    request = SynthRequest(rng, event.duration_s, pitch=_factor(event, "pitch"), rate=_factor(event, "rate"),
                           variant=event.variant)
    spec = CLASSES[event.cls]
    if spec.synth is None:
        from fortekit.search.eval.bench.soundgen.speech import speech

        dry = speech(request, _sentences())
    else:
        dry = spec.synth(request)
    distance = event.distance
    room = (ATTRIBUTES[distance].reverb if distance else None) or DEFAULT_ROOM
    cutoff = ATTRIBUTES[distance].air_lowpass if distance else None
    # a reverberant event needs room to ring out: pad by the tail, then cut at the clip's end
    padded = np.concatenate([dry, np.zeros(int(0.8 * RATE))])
    wet = reverb(padded, rng, rt60_s=room[0], wet=room[1])
    if cutoff:
        wet = lowpass(wet, cutoff, order=2)
    span = wet[: request.samples]
    wet = wet * (10 ** (event.level_db / 20) / (np.sqrt(np.mean(span**2)) + 1e-12))
    stem = np.zeros(_CLIP_SAMPLES)
    start = round(event.onset_s * RATE)
    take = min(len(wet), _CLIP_SAMPLES - start)
    stem[start:start + take] = wet[:take]
    return stem


def render_scene(scene: Scene) -> RenderedClip:
    """Render a scene: its stems, the noise floor, the limiter.

    Example:
        >>> from fortekit.search.eval.bench.soundgen.scene import draw_scene
        >>> render_scene(draw_scene(0, 1, config=None)).samples.dtype  # doctest: +SKIP
        dtype('float64')
    """
    stems = tuple(render_event(event) for event in scene.events)
    floor = pink_noise(np.random.default_rng(scene.floor_seed), _CLIP_SAMPLES) * 10 ** (FLOOR_DB / 20)
    mix = np.sum(stems, axis=0) + floor
    peak = float(np.abs(mix).max())
    gain = min(1.0, PEAK / peak) if peak > 0 else 1.0
    return RenderedClip(mix * gain, stems, float(20 * np.log10(gain)))


def to_pcm16(samples: np.ndarray) -> bytes:
    """16-bit little-endian PCM bytes of samples in [-1, 1] (rounded, saturated).

    Example:
        >>> import numpy as np
        >>> to_pcm16(np.array([0.0, 1.0, -1.0]))
        b'\\x00\\x00\\xff\\x7f\\x01\\x80'
    """
    scaled = np.clip(np.round(samples * 32767.0), -32767, 32767).astype("<i2")
    return scaled.tobytes()
