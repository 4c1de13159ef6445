"""Synthesisers of the noise-based classes: rain, wind, water, thunder, knocking, footsteps, clapping.

Each takes a :class:`~fortekit.search.eval.bench.soundgen.dsp.SynthRequest` and returns a float
array at 16 kHz of at least ``request.samples`` samples; the mixer sets the level.

Example:
    >>> import numpy as np
    >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest, spectral_centroid
    >>> spectral_centroid(thunder(SynthRequest(np.random.default_rng(0), 2.0))) < 300
    True
"""

from __future__ import annotations

import numpy as np

from fortekit.search.eval.bench.soundgen.dsp import (
    RATE,
    SynthRequest,
    add_at,
    bandpass,
    decay,
    highpass,
    lowpass,
    onset_times,
    pink_noise,
)

__all__ = ["clapping", "footsteps", "knocking", "rain", "thunder", "water", "wind"]


def _ramp(n: int, seconds: float) -> np.ndarray:
    t = np.arange(n)
    return np.asarray(np.clip(np.minimum(t, n - 1 - t) / max(seconds * RATE, 1.0), 0.0, 1.0))


def _slow_wave(rng: np.random.Generator, n: int, hz: float) -> np.ndarray:
    """A smooth random curve in [0, 1] changing about ``hz`` times a second."""
    knots = max(int(n / RATE * hz) + 3, 4)
    values = rng.uniform(0.0, 1.0, knots)
    return np.asarray(np.interp(np.arange(n), np.linspace(0, n - 1, knots), values))


def rain(request: SynthRequest) -> np.ndarray:
    """Rain: high-passed hiss with a patter of small drops (short falling blips).

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> rain(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (16000,)
    """
    rng = request.rng
    n = request.samples
    hiss = highpass(pink_noise(rng, n), 1500.0 * request.pitch) * 0.5
    drops = np.zeros(n)
    for start in onset_times(request, 40.0, jitter=0.9):
        m = int(rng.uniform(0.004, 0.015) * RATE)
        t = np.arange(m) / RATE
        freq = rng.uniform(2000, 5000) * request.pitch * (1 - 0.3 * t / t[-1])
        blip = np.sin(2 * np.pi * np.cumsum(freq) / RATE) * decay(m, m / RATE / 4, attack_s=0.0005)
        add_at(drops, blip * rng.uniform(0.2, 1.0), int(start * RATE))
    return np.asarray((hiss + drops) * _ramp(n, 0.2))


def wind(request: SynthRequest) -> np.ndarray:
    """Wind: low-passed noise whose cutoff and level swell in slow gusts, with a faint howl.

    The gust curve (about 0.6 swells a second, times the rate) moves the cutoff from 180 to
    520 Hz and the level over about 15 dB; the howl is narrow-band noise whose centre
    (260-440 Hz) rises with the gust.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> wind(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (16000,)
    """
    rng = request.rng
    n = request.samples
    noise = rng.standard_normal(n)
    knots = max(int(n / RATE * 0.6 * request.rate) + 3, 4)  # lulls and gusts in turn
    values = np.where((np.arange(knots) + int(rng.integers(2))) % 2 == 0, rng.uniform(0.0, 0.3, knots),
                      rng.uniform(0.65, 1.0, knots))
    gust = _smooth(np.interp(np.arange(n), np.linspace(0, n - 1, knots), values), 0.25)
    # two low-passed copies cross-faded by the gust curve: a moving cutoff without per-sample filters
    dull = lowpass(noise, 180.0 * request.pitch, order=2)
    bright = lowpass(noise, 520.0 * request.pitch, order=2)
    signal = (1 - gust) * dull / (np.std(dull) + 1e-9) + gust * bright / (np.std(bright) + 1e-9)
    howl = np.zeros(n)
    for position, centre in enumerate((260.0, 340.0, 440.0)):
        weight = np.exp(-(((gust - position / 2) / 0.3) ** 2))
        band = bandpass(rng.standard_normal(n), centre * 0.96 * request.pitch, centre * 1.04 * request.pitch)
        howl += weight * band / (np.std(band) + 1e-9)
    signal = signal + 0.35 * howl
    return np.asarray(signal * (0.18 + 0.82 * gust**1.5) * _ramp(n, 0.4))


def _smooth(curve: np.ndarray, seconds: float) -> np.ndarray:
    """``curve`` through a moving average of ``seconds`` (edges held), for rounded gusts."""
    width = max(int(seconds * RATE), 1)
    padded = np.concatenate([np.full(width, curve[0]), curve, np.full(width, curve[-1])])
    summed = np.cumsum(padded)
    averaged = (summed[width:] - summed[:-width]) / width
    start = width // 2
    return np.asarray(averaged[start:start + len(curve)])


def water(request: SynthRequest) -> np.ndarray:
    """Running water: a dense babble of rising bubble blips over band-passed noise.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> water(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (16000,)
    """
    rng = request.rng
    n = request.samples
    out = 0.4 * bandpass(rng.standard_normal(n), 400.0 * request.pitch, 2500.0 * request.pitch)
    for start in onset_times(request, 70.0, jitter=0.9):
        m = int(rng.uniform(0.01, 0.03) * RATE)
        t = np.arange(m) / RATE
        f = rng.uniform(500, 1800) * request.pitch * (1 + 1.5 * t / t[-1])
        add_at(out, np.sin(2 * np.pi * np.cumsum(f) / RATE) * np.hanning(m) * rng.uniform(0.3, 1.0),
               int(start * RATE))
    return np.asarray(out * _ramp(n, 0.2))


def thunder(request: SynthRequest) -> np.ndarray:
    """Thunder: a crack, then a long low rumble (noise below 200 Hz) that rolls and decays.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> thunder(SynthRequest(np.random.default_rng(0), 2.0)).shape
        (32000,)
    """
    rng = request.rng
    n = request.samples
    t = np.arange(n) / RATE
    rumble = lowpass(rng.standard_normal(n), 140.0 * request.pitch, order=4)
    rolls = 0.4 + 0.6 * _slow_wave(rng, n, 3.0)
    envelope = np.clip(t / 0.08, 0, 1) * np.exp(-t / (request.duration_s * 0.45))
    crack_n = int(0.25 * RATE)
    crack = lowpass(rng.standard_normal(crack_n), 900.0) * decay(crack_n, 0.06, attack_s=0.005)
    out = rumble / (np.std(rumble) + 1e-9) * rolls * envelope
    add_at(out, 0.5 * crack / (np.std(crack) + 1e-9), 0)
    return np.asarray(out * _ramp(n, 0.05))


def knocking(request: SynthRequest) -> np.ndarray:
    """Knocking on wood: groups of two to four damped resonant knocks.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> knocking(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (16000,)
    """
    rng = request.rng
    out = np.zeros(request.samples)
    modes = np.array([rng.uniform(180, 260), rng.uniform(450, 600), rng.uniform(900, 1200)]) * request.pitch
    m = int(0.08 * RATE)
    t = np.arange(m) / RATE
    knock = sum(g * np.sin(2 * np.pi * f * t) * np.exp(-t / tau)
                for f, g, tau in zip(modes, (1.0, 0.6, 0.3), (0.025, 0.015, 0.008), strict=True))
    click = bandpass(rng.standard_normal(m), 1000, 3000) * decay(m, 0.002, attack_s=0.0005)
    knock = knock + 0.3 * click
    spacing = 0.14 / request.rate
    last = max(request.duration_s - 0.1, 0.0)
    start = 0.0
    while start <= last:  # groups of knocks with pauses between them, until the event's end
        count = int(rng.integers(2, 5))
        for i in range(count):
            if start + i * spacing <= last:
                add_at(out, knock * rng.uniform(0.7, 1.0), int((start + i * spacing) * RATE))
        group_end = start + (count - 1) * spacing
        start += count * spacing + rng.uniform(0.35, 0.6) / request.rate
        if start > last and last - group_end > 0.3 / request.rate:
            start = last  # a last knock at the end rather than silence through it
    return out


def footsteps(request: SynthRequest) -> np.ndarray:
    """Footsteps: a low heel thump and a scuff of noise, alternating feet at walking pace.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> footsteps(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (16000,)
    """
    rng = request.rng
    out = np.zeros(request.samples)
    m = int(0.12 * RATE)
    for index, start in enumerate(onset_times(request, 1.9, jitter=0.08, last_before_s=0.12, fill=True)):
        thump = lowpass(rng.standard_normal(m), 160.0 * request.pitch) * decay(m, 0.03, attack_s=0.003)
        scuff = bandpass(rng.standard_normal(m), 800.0, 2500.0) * decay(m, 0.012, attack_s=0.002)
        step = thump / (np.std(thump) + 1e-9) + 0.4 * scuff / (np.std(scuff) + 1e-9)
        add_at(out, step * (1.0 if index % 2 else 0.8), int(start * RATE))
    return out


def clapping(request: SynthRequest) -> np.ndarray:
    """Hand claps: sharp band-passed noise bursts from one to four people clapping together.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.eval.bench.soundgen.dsp import SynthRequest
        >>> clapping(SynthRequest(np.random.default_rng(0), 1.0)).shape
        (16000,)
    """
    rng = request.rng
    out = np.zeros(request.samples)
    m = int(0.05 * RATE)
    for _ in range(int(rng.integers(1, 5))):
        centre = rng.uniform(1200, 2200) * request.pitch
        for start in onset_times(request, 3.5, jitter=0.1, last_before_s=0.05):
            burst = bandpass(rng.standard_normal(m), centre * 0.6, centre * 1.8)
            burst = burst * decay(m, 0.008, attack_s=0.001)
            add_at(out, burst * rng.uniform(0.7, 1.0), int((start + rng.uniform(0, 0.02)) * RATE))
    return out
