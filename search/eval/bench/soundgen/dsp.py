"""Signal helpers of the sound generator: envelopes, filters, levels, reverberation, measurement.

Everything works on float64 NumPy arrays at :data:`RATE` (16 kHz); scipy is imported inside the
functions that need it. The measurement helpers (:func:`frame_rms_db`, :func:`active_span`,
:func:`spectral_centroid`) are the ones the tests and docs/soundgen.md use.

Example:
    >>> import numpy as np
    >>> tone = np.sin(2 * np.pi * 1000 * np.arange(RATE) / RATE)
    >>> round(rms_db(set_rms_db(tone, -20.0)), 6)
    -20.0
    >>> round(spectral_centroid(tone))
    1000
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "RATE",
    "SynthRequest",
    "active_span",
    "add_at",
    "band_energy_db",
    "bandpass",
    "decay",
    "envelope_period",
    "frame_rms_db",
    "highpass",
    "lowpass",
    "onset_times",
    "pink_noise",
    "reverb",
    "rms_db",
    "set_rms_db",
    "spectral_centroid",
    "spectral_flatness",
]

#: The sample rate of every clip (Hz).
RATE = 16_000
_EPS = 1e-12


def decay(n: int, time_constant_s: float, *, attack_s: float = 0.002) -> np.ndarray:
    """An envelope of ``n`` samples: a linear attack, then an exponential decay.

    Example:
        >>> env = decay(1600, 0.01)
        >>> float(env.max()) == 1.0, bool(env[-1] < 1e-3)
        (True, True)
    """
    t = np.arange(n) / RATE
    ramp = np.clip(t / max(attack_s, 1.0 / RATE), 0.0, 1.0)
    return np.asarray(ramp * np.exp(-np.maximum(t - attack_s, 0.0) / max(time_constant_s, 1e-4)))


def _sos(kind: str, cutoff: float | tuple[float, float], order: int) -> np.ndarray:
    from scipy.signal import butter

    nyquist = RATE / 2
    if isinstance(cutoff, tuple):
        low, high = (min(max(c, 10.0), nyquist * 0.98) for c in cutoff)
        return np.asarray(butter(order, (low, max(high, low * 1.05)), btype=kind, fs=RATE, output="sos"))
    return np.asarray(butter(order, min(max(cutoff, 10.0), nyquist * 0.98), btype=kind, fs=RATE,
                             output="sos"))


def lowpass(x: np.ndarray, cutoff: float, order: int = 4) -> np.ndarray:
    """Butterworth low-pass (zero-phase would smear onsets, so causal).

    Example:
        >>> import numpy as np
        >>> lowpass(np.ones(100), 500.0).shape
        (100,)
    """
    from scipy.signal import sosfilt

    return np.asarray(sosfilt(_sos("lowpass", cutoff, order), x))


def highpass(x: np.ndarray, cutoff: float, order: int = 4) -> np.ndarray:
    """Butterworth high-pass.

    Example:
        >>> import numpy as np
        >>> abs(float(highpass(np.ones(16000), 100.0)[-1])) < 1e-3
        True
    """
    from scipy.signal import sosfilt

    return np.asarray(sosfilt(_sos("highpass", cutoff, order), x))


def bandpass(x: np.ndarray, low: float, high: float, order: int = 2) -> np.ndarray:
    """Butterworth band-pass between ``low`` and ``high`` Hz.

    Example:
        >>> import numpy as np
        >>> bandpass(np.random.default_rng(0).standard_normal(800), 300.0, 3000.0).shape
        (800,)
    """
    from scipy.signal import sosfilt

    return np.asarray(sosfilt(_sos("bandpass", (low, high), order), x))


def pink_noise(rng: np.random.Generator, n: int) -> np.ndarray:
    """Unit-RMS pink (1/f) noise, shaped in the frequency domain.

    Example:
        >>> import numpy as np
        >>> round(float(np.sqrt(np.mean(pink_noise(np.random.default_rng(0), 4000) ** 2))), 6)
        1.0
    """
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / RATE)
    spectrum /= np.sqrt(np.maximum(freqs, 20.0))
    noise = np.fft.irfft(spectrum, n)
    return np.asarray(noise / (np.sqrt(np.mean(noise**2)) + _EPS))


def rms_db(x: np.ndarray) -> float:
    """RMS level in dB relative to full scale (a full-scale sine is -3 dB).

    Example:
        >>> import numpy as np
        >>> round(rms_db(np.full(10, 0.1)), 6)
        -20.0
    """
    return float(20 * np.log10(np.sqrt(np.mean(np.square(x))) + _EPS))


def set_rms_db(x: np.ndarray, level_db: float) -> np.ndarray:
    """``x`` scaled to an RMS of ``level_db`` dBFS (silence stays silence).

    Example:
        >>> import numpy as np
        >>> round(rms_db(set_rms_db(np.ones(4), -6.0)), 6)
        -6.0
    """
    current = np.sqrt(np.mean(np.square(x)))
    if current < _EPS:
        return x
    return np.asarray(x * (10 ** (level_db / 20) / current))


def add_at(target: np.ndarray, source: np.ndarray, start: int) -> None:
    """Add ``source`` into ``target`` from sample ``start``, cut at the end of ``target``.

    Example:
        >>> import numpy as np
        >>> buf = np.zeros(4); add_at(buf, np.ones(3), 2); buf.tolist()
        [0.0, 0.0, 1.0, 1.0]
    """
    if start >= len(target):
        return
    start = max(start, 0)
    end = min(len(target), start + len(source))
    target[start:end] += source[: end - start]


def reverb(x: np.ndarray, rng: np.random.Generator, *, rt60_s: float, wet: float,
           tail_s: float = 0.8) -> np.ndarray:
    """``x`` through a synthetic room: exponentially decaying noise (RT60 ``rt60_s``) mixed ``wet``.

    The output is as long as the input; the wet part's RMS is matched to the dry part's,
    so ``wet`` is the share of reverberant energy.

    Example:
        >>> import numpy as np
        >>> click = np.zeros(16000); click[100] = 1.0
        >>> tail = reverb(click, np.random.default_rng(0), rt60_s=0.6, wet=0.5)
        >>> bool(np.abs(tail[4000:]).max() > 0)
        True
    """
    from scipy.signal import fftconvolve

    n_ir = int(min(tail_s, rt60_s * 1.2) * RATE)
    t = np.arange(n_ir) / RATE
    ir = rng.standard_normal(n_ir) * np.exp(-6.91 * t / rt60_s)  # -60 dB at rt60
    ir[0] = 0.0
    wet_signal = fftconvolve(x, ir)[: len(x)]
    dry_rms = np.sqrt(np.mean(x**2)) + _EPS
    wet_signal *= dry_rms / (np.sqrt(np.mean(wet_signal**2)) + _EPS)
    return np.asarray(np.sqrt(1 - wet) * x + np.sqrt(wet) * wet_signal)


def frame_rms_db(x: np.ndarray, frame_s: float = 0.02) -> np.ndarray:
    """RMS level of consecutive frames (default 20 ms), in dBFS.

    Example:
        >>> import numpy as np
        >>> frame_rms_db(np.full(640, 0.1)).round(3).tolist()
        [-20.0, -20.0]
    """
    size = int(frame_s * RATE)
    frames = x[: len(x) // size * size].reshape(-1, size)
    return np.asarray(20 * np.log10(np.sqrt(np.mean(frames**2, axis=1)) + _EPS))


def active_span(x: np.ndarray, *, below_peak_db: float = 30.0, frame_s: float = 0.02) -> tuple[float, float]:
    """(start, end) in seconds of the frames within ``below_peak_db`` dB of the loudest frame.

    Example:
        >>> import numpy as np
        >>> x = np.zeros(RATE); x[4000:8000] = 0.5
        >>> active_span(x)
        (0.24, 0.5)
    """
    levels = frame_rms_db(x, frame_s)
    loud = np.flatnonzero(levels >= levels.max() - below_peak_db)
    return round(float(loud[0] * frame_s), 6), round(float((loud[-1] + 1) * frame_s), 6)


def spectral_centroid(x: np.ndarray) -> float:
    """The power-weighted mean frequency (Hz) of the whole signal.

    Example:
        >>> import numpy as np
        >>> round(spectral_centroid(np.sin(2 * np.pi * 440 * np.arange(RATE) / RATE)))
        440
    """
    power = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / RATE)
    return float((freqs * power).sum() / (power.sum() + _EPS))


def band_energy_db(x: np.ndarray, low: float, high: float) -> float:
    """The share of the signal's power between ``low`` and ``high`` Hz, in dB (0 = all of it).

    Example:
        >>> import numpy as np
        >>> tone = np.sin(2 * np.pi * 440 * np.arange(RATE) / RATE)
        >>> band_energy_db(tone, 300, 600) > -0.1, band_energy_db(tone, 2000, 4000) < -60
        (True, True)
    """
    power = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / RATE)
    inside = power[(freqs >= low) & (freqs < high)].sum()
    return float(10 * np.log10((inside + _EPS) / (power.sum() + _EPS)))


def spectral_flatness(x: np.ndarray) -> float:
    """Wiener entropy of the power spectrum: geometric over arithmetic mean (1 white noise, ~0 a tone).

    Example:
        >>> import numpy as np
        >>> noise = np.random.default_rng(0).standard_normal(RATE)
        >>> tone = np.sin(2 * np.pi * 440 * np.arange(RATE) / RATE)
        >>> spectral_flatness(noise) > 0.5 > 0.01 > spectral_flatness(tone)
        True
    """
    power = np.abs(np.fft.rfft(x)) ** 2 + 1e-20
    return float(np.exp(np.mean(np.log(power))) / np.mean(power))


def envelope_period(x: np.ndarray, *, shortest_s: float = 0.03, longest_s: float = 2.0,
                    frame_s: float = 0.01) -> float | None:
    """The repetition period (s) of a sound's energy envelope: the first autocorrelation peak.

    The envelope is the RMS of ``frame_s`` frames; its autocorrelation's first local maximum
    above 0.2 between ``shortest_s`` and ``longest_s`` is the period; None when there is none.

    Example:
        >>> import numpy as np
        >>> clicks = np.zeros(2 * RATE); clicks[::RATE // 4] = 1.0  # four a second
        >>> envelope_period(clicks)
        0.25
    """
    size = int(frame_s * RATE)
    frames = x[: len(x) // size * size].reshape(-1, size)
    envelope = np.sqrt(np.mean(frames**2, axis=1))
    envelope = envelope - envelope.mean()
    correlation = np.correlate(envelope, envelope, "full")[len(envelope) - 1:]
    if correlation[0] <= 0:
        return None
    correlation = correlation / correlation[0]
    first = max(round(shortest_s / frame_s), 1)
    last = min(int(longest_s / frame_s), len(correlation) - 2)
    for lag in range(first, last + 1):
        value = correlation[lag]
        if value > 0.2 and value > correlation[lag - 1] and value >= correlation[lag + 1]:
            return round(lag * frame_s, 6)
    return None


@dataclass(frozen=True)
class SynthRequest:
    """What a synthesiser is asked for: the event's length and its pitch and rate factors.

    Attributes:
        rng: the event's own random generator (the event's seed makes it reproducible).
        duration_s: how long the event lasts (its last onset, for repeated sounds; tails may ring on).
        pitch: a factor on the class's frequencies (1.0 neutral; "high" > 1, "low" < 1).
        rate: a factor on the class's repetition rate (1.0 neutral; "fast" > 1, "slow" < 1).
        variant: the class's variant (speech: "male" or "female"), or "".
    """

    rng: np.random.Generator
    duration_s: float
    pitch: float = 1.0
    rate: float = 1.0
    variant: str = ""

    @property
    def samples(self) -> int:
        """The event's length in samples."""
        return round(self.duration_s * RATE)


def onset_times(request: SynthRequest, per_second: float, *, jitter: float = 0.15,
                last_before_s: float = 0.0, fill: bool = False) -> list[float]:
    """Onsets of a repeated sound: ``per_second * request.rate`` a second, jittered, from 0.

    With ``fill``, the period is stretched or shrunk (by at most a third) so that the last
    onset falls on ``duration_s - last_before_s``: the sound spans its whole event, even a
    short, slow one (two slow steps rather than one).

    Example:
        >>> import numpy as np
        >>> onset_times(SynthRequest(np.random.default_rng(0), 1.0), 4.0, jitter=0.0)
        [0.0, 0.25, 0.5, 0.75]
        >>> onset_times(SynthRequest(np.random.default_rng(0), 1.4), 1.0, jitter=0.0)
        [0.0, 1.0]
        >>> onset_times(SynthRequest(np.random.default_rng(0), 1.4), 1.0, jitter=0.0, fill=True)
        [0.0, 1.4]
    """
    period = 1.0 / (per_second * request.rate)
    end = request.duration_s - last_before_s
    if fill and end > 0:
        count = max(1, round(end / period))
        period = end / count
        inner = [i * period + 0.5 * jitter * period * float(request.rng.uniform(-1.0, 1.0))
                 for i in range(1, count)]
        return [0.0, *(round(t, 6) for t in inner), round(end, 6)]
    times: list[float] = []
    t = 0.0
    while t < end - 1e-9:
        times.append(round(t, 6))
        t += period * (1.0 + jitter * float(request.rng.uniform(-1.0, 1.0)))
    return times or [0.0]
