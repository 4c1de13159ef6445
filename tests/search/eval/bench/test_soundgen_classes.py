"""Each synthesised class is what it says it is, by measurement of its dry synthesiser's output.

Bell partials inharmonic and the high ones dying first; the siren's pitch sweeping; chirps
frequency-modulated; the engine a periodic on a low firing frequency; music on the
equal-tempered scale; barks and beeps in separate bursts; beeps a pure tone; rain noisy with
drops; wind swelling in slow gusts; thunder starting with a crack and dying away; footsteps at
walking pace. Levels, attributes and timing of rendered events are in test_soundgen_audio.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import find_peaks, stft

from fortekit.search.eval.bench.soundgen import synth_noise, synth_tonal
from fortekit.search.eval.bench.soundgen.dsp import (
    RATE,
    SynthRequest,
    envelope_period,
    frame_rms_db,
    rms_db,
    spectral_centroid,
    spectral_flatness,
)

SEEDS = (1, 2, 3)


def _request(seed: int, seconds: float = 3.0) -> SynthRequest:
    return SynthRequest(np.random.default_rng(seed), seconds)


def _peaks(x: np.ndarray, *, share: float, distance_hz: float) -> tuple[np.ndarray, np.ndarray]:
    """Spectral peaks (Hz, magnitude) of at least ``share`` of the largest, ``distance_hz`` apart."""
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    freqs = np.fft.rfftfreq(len(x), 1 / RATE)
    found, _ = find_peaks(spectrum, height=spectrum.max() * share,
                          distance=max(int(distance_hz * len(x) / RATE), 1))
    return freqs[found], spectrum[found]


def _peak_track(x: np.ndarray, nperseg: int, *, floor: float) -> np.ndarray:
    """The loudest frequency of each STFT frame whose peak is within ``floor`` of the loudest."""
    freqs, _, frames = stft(x, RATE, nperseg=nperseg, noverlap=nperseg * 3 // 4)
    power = np.abs(frames)
    loud = power.max(axis=0) > power.max() * floor
    return np.asarray(freqs[power.argmax(axis=0)][loud])


@pytest.mark.parametrize("seed", SEEDS)
def test_a_bell_has_inharmonic_partials_and_the_high_ones_die_first(seed: int) -> None:
    strike = synth_tonal.bell(_request(seed, 0.5))[:RATE]  # one strike, 1 s of its ring
    freqs, heights = _peaks(strike, share=0.05, distance_hz=30)
    prime = float(freqs[np.argmax(heights)])
    for ratio in (0.5, 1.183, 1.506, 2.0):  # hum, tierce (a minor third), quint
        assert np.min(np.abs(freqs / prime - ratio)) < 0.01, (ratio, freqs / prime)
    assert np.min(np.abs(freqs / prime - 1.25)) > 0.03  # a minor, not a major, third: not harmonic

    def level(band: tuple[float, float], start: float) -> float:
        part = strike[int(start * RATE):int((start + 0.1) * RATE)]
        spectrum = np.abs(np.fft.rfft(part)) ** 2
        grid = np.fft.rfftfreq(len(part), 1 / RATE)
        return float(10 * np.log10(spectrum[(grid >= band[0]) & (grid < band[1])].sum() + 1e-20))

    hum, upper = (prime * 0.4, prime * 0.6), (prime * 1.9, prime * 2.1)
    assert level(hum, 0.0) - level(hum, 0.6) < level(upper, 0.0) - level(upper, 0.6) - 3.0


@pytest.mark.parametrize("seed", SEEDS)
def test_a_siren_sweeps_its_pitch_up_and_down(seed: int) -> None:
    track = _peak_track(synth_tonal.siren(_request(seed, 4.0)), 1024, floor=0.1)
    low, high = np.percentile(track, [5, 95])
    assert high / low > 1.5 and 500 < low < high < 1600


@pytest.mark.parametrize("seed", SEEDS)
def test_chirps_are_frequency_modulated_high_sweeps(seed: int) -> None:
    chirps = synth_tonal.bird(_request(seed))
    freqs, _, frames = stft(chirps, RATE, nperseg=256, noverlap=192)
    power = np.abs(frames)
    track = freqs[power.argmax(axis=0)]
    sounding = power.max(axis=0) > power.max() * 0.2
    assert 2500 < np.median(track[sounding]) < 7000
    # within a chirp (a run of sounding frames) the pitch moves: vibrato and sweep
    edges = np.flatnonzero(np.diff(sounding.astype(int))) + 1
    runs = zip(np.split(track, edges), np.split(sounding, edges), strict=True)
    moving = [np.ptp(run) for run, on in runs if on.all() and len(run) >= 6]
    assert moving and np.median(moving) > 300


@pytest.mark.parametrize("seed", SEEDS)
def test_an_engine_is_periodic_on_a_low_firing_frequency_unlike_the_low_noises(seed: int) -> None:
    def periodicity(x: np.ndarray) -> tuple[float, float]:
        """(frequency, normalised autocorrelation) of the strongest period from 1/60 to 1/8 s."""
        x = x - x.mean()
        correlation = np.correlate(x, x, "full")[len(x) - 1:]
        correlation = correlation / correlation[0]
        lag = RATE // 60 + int(np.argmax(correlation[RATE // 60:RATE // 8]))
        return RATE / lag, float(correlation[lag])

    window = slice(RATE, RATE + RATE // 4)
    hum = synth_tonal.engine(_request(seed))
    frequency, strength = periodicity(hum[window])
    assert 20 < frequency < 50 and strength > 0.45
    for noise in (synth_noise.thunder, synth_noise.wind):  # as low, but not periodic
        assert periodicity(noise(_request(seed))[window])[1] < 0.3
    assert spectral_centroid(hum) < 400


@pytest.mark.parametrize("seed", SEEDS)
def test_music_sits_on_the_equal_tempered_scale(seed: int) -> None:
    tune = synth_tonal.music(_request(seed, 1.6))
    freqs, _ = _peaks(tune, share=0.15, distance_hz=15)
    notes = freqs[(freqs > 80) & (freqs < 2000)]
    cents = 1200 * np.log2(notes / 440.0)
    off = np.abs(cents - 100 * np.round(cents / 100))
    assert len(notes) >= 5 and np.max(off) < 20  # notes and low harmonics within 20 cents
    assert len(set(np.round(cents / 100).astype(int) % 12)) >= 3  # a chord's worth of pitch classes


@pytest.mark.parametrize(("synth", "gap_db"), [(synth_tonal.dog, 25.0), (synth_tonal.beeps, 40.0),
                                               (synth_noise.clapping, 25.0), (synth_noise.knocking, 25.0)])
def test_barks_beeps_claps_and_knocks_come_in_separate_bursts(synth: object, gap_db: float) -> None:
    for seed in SEEDS:
        x = synth(_request(seed))  # type: ignore[operator]
        levels = frame_rms_db(x, 0.01)
        # quiet frames between the bursts: the envelope falls far below its peaks
        assert float(np.percentile(levels, 10)) < float(levels.max()) - gap_db


@pytest.mark.parametrize("seed", SEEDS)
def test_a_beep_is_a_pure_tone(seed: int) -> None:
    x = synth_tonal.beeps(_request(seed))
    spectrum = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / RATE)
    peak = freqs[np.argmax(spectrum)]
    assert 900 < peak < 1900
    near = spectrum[np.abs(freqs - peak) < 0.03 * peak].sum()
    assert near / spectrum.sum() > 0.8


@pytest.mark.parametrize("seed", SEEDS)
def test_rain_is_high_noise_with_drops(seed: int) -> None:
    x = synth_noise.rain(_request(seed))[RATE // 4:-RATE // 4]
    assert spectral_flatness(x) > 0.1 and spectral_centroid(x) > 2500
    assert 20 * np.log10(np.abs(x).max()) - rms_db(x) > 10.0  # drops stand out of the hiss


@pytest.mark.parametrize("seed", SEEDS)
def test_wind_swells_in_slow_gusts(seed: int) -> None:
    x = synth_noise.wind(_request(seed, 4.0))[RATE // 2:-RATE // 2]
    slow = frame_rms_db(x, 0.25)
    assert float(slow.max() - slow.min()) > 6.0  # gusts and lulls
    assert float(np.std(np.diff(frame_rms_db(x, 0.02)))) < 3.0  # but no clicks or bursts
    assert spectral_centroid(x) < 400


@pytest.mark.parametrize("seed", SEEDS)
def test_thunder_cracks_then_rumbles_away(seed: int) -> None:
    x = synth_noise.thunder(_request(seed))
    third = len(x) // 3
    assert rms_db(x[:third]) > rms_db(x[2 * third:]) + 6.0
    assert spectral_centroid(x[: int(0.1 * RATE)]) > 1.5 * spectral_centroid(x[RATE:])  # the crack
    assert spectral_centroid(x) < 250


def test_footsteps_go_at_walking_pace() -> None:
    for seed in SEEDS:
        period = envelope_period(synth_noise.footsteps(_request(seed, 4.0)))
        assert period is not None and 0.4 < period < 0.65  # 1.5 to 2.5 steps a second
