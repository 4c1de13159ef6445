"""Synthesisers of the pitched classes: barks, chirps, siren, bell, beeps, engine, music.

Each takes a :class:`~fortekit.search.eval.bench.soundgen.dsp.SynthRequest` and returns a float
array at 16 kHz of at least ``request.samples`` samples (a bell may ring on past it); the
level is set later by the mixer, so only the shape matters here.

Example:
    >>> from functools import lru_cache

import numpy as np
    >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest, spectral_centroid
    >>> chirps = bird(SynthRequest(np.random.default_rng(0), 1.0))
    >>> hum = engine(SynthRequest(np.random.default_rng(0), 1.0))
    >>> spectral_centroid(chirps) > 2000 > 500 > spectral_centroid(hum)
    True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from fortekit.search.eval.bench.soundgen.dsp import (
    RATE,
    SynthRequest,
    add_at,
    bandpass,
    decay,
    lowpass,
    onset_times,
)

__all__ = ["beeps", "bell", "bird", "dog", "engine", "music", "siren"]

_NYQUIST = RATE / 2


_TABLE_SIZE = 8192
_GRID = 2 * np.pi * np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE


@lru_cache(maxsize=256)
def _wavetable(count: int, tilt: float) -> np.ndarray:
    """One cycle of sum(sin(k theta) / k**tilt, k = 1..count) on :data:`_GRID`."""
    orders = np.arange(1, count + 1)
    return np.asarray((np.sin(np.outer(_GRID, orders)) / orders**tilt).sum(axis=1))


def _harmonics(phase: np.ndarray, f0_max: float, *, tilt: float = 1.0, limit: float = 7000.0) -> np.ndarray:
    """Sum of harmonics sin(k phase) / k**tilt below ``limit`` Hz (a band-limited buzz).

    One cycle is summed into a wavetable once, then read at ``phase`` (linear interpolation):
    one table lookup a sample instead of one sine a harmonic a sample.
    """
    table = _wavetable(max(int(limit / max(f0_max, 1.0)), 1), float(tilt))
    return np.asarray(np.interp(np.mod(phase, 2 * np.pi), _GRID, table))


def _phase(freq: np.ndarray) -> np.ndarray:
    return np.asarray(2 * np.pi * np.cumsum(freq) / RATE)


def dog(request: SynthRequest) -> np.ndarray:
    """Barks: a falling harmonic buzz with breath noise through three formants, in bursts.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> dog(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (16000,)
    """
    rng = request.rng
    out = np.zeros(request.samples)
    f0 = rng.uniform(380, 520) * request.pitch
    formants = np.array([rng.uniform(650, 850), rng.uniform(1400, 1700), rng.uniform(2400, 2800)])
    formants *= request.pitch
    for start in onset_times(request, 2.2, jitter=0.3, last_before_s=0.2):
        n = int(rng.uniform(0.13, 0.22) * RATE)
        t = np.arange(n) / n
        contour = f0 * (1.2 - 0.45 * t) * rng.uniform(0.92, 1.08)
        source = _harmonics(_phase(contour), float(contour.max()), tilt=0.8)
        source += 0.35 * rng.standard_normal(n)
        voiced = sum(bandpass(source, f * 0.8, f * 1.25) * gain
                     for f, gain in zip(formants, (1.0, 0.7, 0.4), strict=True))
        add_at(out, voiced * decay(n, 0.05, attack_s=0.008), int(start * RATE))
    return out


def bird(request: SynthRequest) -> np.ndarray:
    """Chirps: short frequency-modulated sweeps (2.5-7.5 kHz) with vibrato, often in trills.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> bird(SynthRequest(np.random.default_rng(0), 0.5)).shape
        (8000,)
    """
    rng = request.rng
    out = np.zeros(request.samples)
    base = rng.uniform(3200, 4200) * request.pitch
    sweep = rng.uniform(-1800, 1800)
    for start in onset_times(request, 5.0, jitter=0.4, last_before_s=0.12):
        n = int(rng.uniform(0.04, 0.11) * RATE)
        t = np.arange(n) / RATE
        freq = base * rng.uniform(0.9, 1.1) + sweep * t / t[-1] + 250 * np.sin(2 * np.pi * 45 * t)
        freq = np.clip(freq, 1200.0, 7600.0)
        add_at(out, np.sin(_phase(freq)) * np.hanning(n), int(start * RATE))
    return out


def siren(request: SynthRequest) -> np.ndarray:
    """A wailing siren: a buzzy tone swept up and down (faster when "fast").

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> siren(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (16000,)
    """
    rng = request.rng
    t = np.arange(request.samples) / RATE
    centre = rng.uniform(850, 1050) * request.pitch
    sweep_hz = rng.uniform(0.25, 0.4) * request.rate
    freq = centre * (1 + 0.3 * np.sin(2 * np.pi * sweep_hz * t + rng.uniform(0, 2 * np.pi)))
    phase = _phase(freq)
    tone = np.sin(phase) + 0.35 * np.sin(2 * phase) + 0.2 * np.sin(3 * phase)
    ramp = np.clip(np.minimum(t, t[-1] - t) / 0.05, 0.0, 1.0)
    return np.asarray(tone * ramp)


# Church-bell partials relative to the nominal: hum, prime, tierce, quint, nominal and above.
_BELL_PARTIALS = ((0.5, 0.6, 1.0), (1.0, 1.0, 0.8), (1.183, 0.7, 0.6), (1.506, 0.4, 0.5),
                  (2.0, 0.5, 0.45), (2.514, 0.3, 0.35), (2.662, 0.25, 0.3), (3.011, 0.2, 0.25),
                  (4.166, 0.12, 0.18))


def bell(request: SynthRequest) -> np.ndarray:
    """A bell: strikes of inharmonic partials, the higher ones decaying faster; rings 1 s on.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> bell(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (32000,)
    """
    rng = request.rng
    out = np.zeros(request.samples + RATE)
    nominal = rng.uniform(550, 800) * request.pitch
    ring = int(1.8 * RATE)
    for start in onset_times(request, 1.0, jitter=0.1, last_before_s=0.3):
        t = np.arange(ring) / RATE
        strike = np.zeros(ring)
        for ratio, amp, tau in _BELL_PARTIALS:
            if nominal * ratio < _NYQUIST * 0.95:
                strike += amp * np.sin(2 * np.pi * nominal * ratio * t * rng.uniform(0.998, 1.002)) \
                    * np.exp(-t / tau)
        strike[: int(0.003 * RATE)] *= np.linspace(0, 1, int(0.003 * RATE))
        add_at(out, strike, int(start * RATE))
    fade = int(0.2 * RATE)
    out[-fade:] *= np.linspace(1.0, 0.0, fade)
    return out


def beeps(request: SynthRequest) -> np.ndarray:
    """Electronic beeps: equal short tones (1-2 kHz), evenly spaced.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> beeps(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (16000,)
    """
    rng = request.rng
    out = np.zeros(request.samples)
    freq = rng.uniform(1000, 1800) * request.pitch
    n = int(rng.uniform(0.1, 0.16) * RATE)
    t = np.arange(n) / RATE
    tone = np.sin(2 * np.pi * freq * t) + 0.15 * np.sin(2 * np.pi * 3 * freq * t) * (3 * freq < _NYQUIST)
    ramp = np.clip(np.minimum(t, t[-1] - t) / 0.005, 0.0, 1.0)
    for start in onset_times(request, 2.5, jitter=0.0, last_before_s=n / RATE):
        add_at(out, tone * ramp, int(start * RATE))
    return out


def engine(request: SynthRequest) -> np.ndarray:
    """An engine: a low firing frequency's harmonics, pulsing per cylinder, with rumble noise.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> engine(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (16000,)
    """
    rng = request.rng
    n = request.samples
    t = np.arange(n) / RATE
    f0 = rng.uniform(28, 42) * request.pitch
    wander = 1 + 0.06 * np.sin(2 * np.pi * rng.uniform(0.2, 0.5) * request.rate * t + rng.uniform(0, 6.3))
    freq = f0 * wander
    phase = _phase(freq)
    tone = _harmonics(phase, float(freq.max()), tilt=1.1, limit=1800.0)
    pulse = 1 + 0.5 * np.sin(phase / 2)
    rumble = lowpass(rng.standard_normal(n), 300.0 * request.pitch)
    signal = lowpass(tone * pulse, 1200.0) + 0.6 * rumble / (np.std(rumble) + 1e-9) * np.std(tone)
    ramp = np.clip(np.minimum(t, t[-1] - t) / 0.15, 0.0, 1.0)
    return np.asarray(signal * ramp)


_PROGRESSIONS = ((0, 7, 9, 5), (0, 5, 7, 0), (9, 5, 0, 7))  # I-V-vi-IV and friends, in semitones
_TRIAD = {0: (0, 4, 7), 5: (0, 4, 7), 7: (0, 4, 7), 9: (0, 3, 7)}


def _note(freq: float, n: int) -> np.ndarray:
    t = np.arange(n) / RATE
    tone = sum(np.sin(2 * np.pi * freq * k * t) / k**1.5 for k in range(1, 7) if freq * k < _NYQUIST * 0.9)
    return np.asarray(tone * decay(n, 0.35, attack_s=0.004))


def music(request: SynthRequest) -> np.ndarray:
    """Music: major/minor triads over a chord progression, plucked-string tones with a bass note.

    Two styles: arpeggios (one chord note a step, five steps a second) or, one time in three,
    strummed chords (the triad and its octave within 60 ms, every other step).

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> music(SynthRequest(np.random.default_rng(0), 1.0)).shape  # rings on for 0.5 s
        (24000,)
    """
    rng = request.rng
    out = np.zeros(request.samples + RATE // 2)
    root = 220.0 * 2 ** (int(rng.integers(0, 8)) / 12) * request.pitch
    progression = _PROGRESSIONS[int(rng.integers(len(_PROGRESSIONS)))]
    pattern = (0, 1, 2, 1) if rng.random() < 0.5 else (0, 1, 2, 3)
    strummed = rng.random() < 1 / 3
    starts = onset_times(request, 5.0, jitter=0.0, last_before_s=0.1)
    for index, start in enumerate(starts):
        degree = progression[(index // 8) % len(progression)]
        triad = _TRIAD[degree]
        if strummed:
            if index % 2 == 0:
                for order, step in enumerate((0, 1, 2, 3)):
                    semitones = degree + (triad[step] if step < 3 else 12)
                    add_at(out, 0.6 * _note(root * 2 ** (semitones / 12), int(0.9 * RATE)),
                           int((start + order * rng.uniform(0.012, 0.02)) * RATE))
        else:
            step = pattern[index % len(pattern)]
            semitones = degree + (triad[step] if step < 3 else 12)
            add_at(out, _note(root * 2 ** (semitones / 12), int(0.6 * RATE)), int(start * RATE))
        if index % 8 == 0:  # the chord's bass note
            add_at(out, 0.6 * _note(root / 2 * 2 ** (degree / 12), int(1.2 * RATE)), int(start * RATE))
    fade = int(0.3 * RATE)
    out[-fade:] *= np.linspace(1.0, 0.0, fade)
    return out
