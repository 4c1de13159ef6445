"""The generator's sounds, checked by measurement: levels, attributes, timing, signatures.

Every check renders events or scenes with :mod:`fortekit.search.eval.bench.soundgen.render` and
measures the samples with NumPy/SciPy statistics (RMS dBFS, spectral centroid and flatness,
band energy, the energy envelope and its period). Speech (espeak-ng) is in
test_soundgen_speech.py; the written collection in test_soundgen.py.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from fortekit.search.eval.bench.soundgen.classes import ATTRIBUTES, BASE_LEVEL_DB, CLASSES, class_names
from fortekit.search.eval.bench.soundgen.dsp import (
    RATE,
    active_span,
    band_energy_db,
    envelope_period,
    frame_rms_db,
    rms_db,
    spectral_centroid,
    spectral_flatness,
)
from fortekit.search.eval.bench.soundgen.render import FLOOR_DB, PEAK, render_event, render_scene
from fortekit.search.eval.bench.soundgen.scene import CLIP_SECONDS, Event, GeneratorConfig, draw_scene

SYNTHESISED = class_names(speech=False)
ONSET, LENGTH = 0.5, 2.5


def _event(cls: str, *attributes: str, seed: int = 5, onset: float = ONSET, length: float = LENGTH) -> Event:
    return Event(cls, "", tuple(attributes), onset, length, seed)


def _span(stem: np.ndarray, onset: float = ONSET, length: float = LENGTH) -> np.ndarray:
    return stem[round(onset * RATE):round((onset + length) * RATE)]


@pytest.fixture(scope="module")
def neutral() -> dict[str, np.ndarray]:
    """Each synthesised class without attributes, over its nominal span."""
    return {cls: _span(render_event(_event(cls))) for cls in SYNTHESISED}


@pytest.mark.parametrize("cls", SYNTHESISED)
def test_each_class_sits_at_its_level_and_in_its_band(cls: str, neutral: dict[str, np.ndarray]) -> None:
    span = neutral[cls]
    assert rms_db(span) == pytest.approx(BASE_LEVEL_DB, abs=0.3)
    # plausible loudness while it sounds: the louder 20 ms frames well below full scale, and a
    # crest factor (peak over RMS) from a steady tone's 3 dB to a clap's or a step's 30 dB
    assert -32.0 < float(np.percentile(frame_rms_db(span), 90)) < -10.0
    assert 2.5 < 20 * np.log10(float(np.abs(span).max())) - rms_db(span) < 30.0
    # the declared band holds most of the power (it is what an absence is chosen by)
    assert band_energy_db(span, *CLASSES[cls].band) > -1.6


def test_distinct_classes_have_distinct_spectral_signatures(neutral: dict[str, np.ndarray]) -> None:
    """A nearest-centroid classifier tells every class apart on unseen seeds: features are the
    log energy shares of 16 bands from 40 Hz to 8 kHz, the spread of the 20 ms frame levels
    (steady vs impulsive) and the log spectral flatness (tonal vs noisy)."""
    edges = np.geomspace(40.0, 8000.0, 17)

    def features(x: np.ndarray) -> np.ndarray:
        power = np.abs(np.fft.rfft(x)) ** 2
        freqs = np.fft.rfftfreq(len(x), 1 / RATE)
        bands = np.array([power[(freqs >= lo) & (freqs < hi)].sum() for lo, hi in pairwise(edges)])
        spread = float(np.std(np.maximum(frame_rms_db(x), -80.0)))
        return np.concatenate([np.log10(bands / bands.sum() + 1e-12), [spread * 0.3,
                                                                      np.log10(spectral_flatness(x))]])

    centroids = {cls: np.mean([features(_span(render_event(_event(cls, seed=s)))) for s in (30, 31, 32)],
                              axis=0)
                 for cls in SYNTHESISED}
    wrong = []
    for cls in SYNTHESISED:
        for seed in (40, 41, 42):
            found = features(_span(render_event(_event(cls, seed=seed))))
            guess = min(SYNTHESISED, key=lambda other: float(np.sum((found - centroids[other]) ** 2)))
            if guess != cls:
                wrong.append((cls, seed, guess))
    assert not wrong
    # and the two summary statistics spread them: centroid over two decades, flatness noise vs tone
    centres = {cls: spectral_centroid(x) for cls, x in neutral.items()}
    flatness = {cls: spectral_flatness(x) for cls, x in neutral.items()}
    low, high = ("engine", "thunder", "wind"), ("bird", "rain")
    assert max(centres[c] for c in low) < 300 < 2500 < min(centres[c] for c in high)
    assert flatness["rain"] > 0.1 > 0.001 > max(flatness[c] for c in ("beeps", "siren", "bell", "bird"))


@pytest.mark.parametrize("cls", SYNTHESISED)
def test_loud_and_quiet_differ_by_their_level(cls: str) -> None:
    loud, quiet = (_span(render_event(_event(cls, name))) for name in ("loud", "quiet"))
    gap = ATTRIBUTES["loud"].level_db - ATTRIBUTES["quiet"].level_db
    assert rms_db(loud) - rms_db(quiet) == pytest.approx(gap, abs=0.5)
    assert rms_db(loud) - rms_db(quiet) > 15.0


@pytest.mark.parametrize("cls", [c for c in SYNTHESISED if "pitch" in CLASSES[c].dimensions])
def test_high_sounds_have_a_higher_spectral_centroid_than_low(cls: str) -> None:
    high, low = (spectral_centroid(_span(render_event(_event(cls, name)))) for name in ("high", "low"))
    assert high > 1.6 * low


@pytest.mark.parametrize("cls", ["dog", "knocking", "bell", "beeps", "footsteps", "clapping"])
def test_fast_sounds_repeat_faster_than_slow(cls: str) -> None:
    """The period of the energy envelope: fast < neutral < slow (classes of separate strokes)."""
    periods = {name: envelope_period(_span(render_event(_event(cls, *([name] if name else []), length=4.0)),
                                           length=4.0), longest_s=2.5)
               for name in ("fast", "", "slow")}
    assert None not in periods.values(), periods
    assert periods["fast"] < periods[""] < periods["slow"], periods  # type: ignore[operator]


@pytest.mark.parametrize("cls", [c for c in SYNTHESISED if c not in ("bell", "music")])
def test_far_sounds_are_quieter_and_ring_on_in_a_larger_room(cls: str) -> None:
    def measure(name: str) -> tuple[float, float]:
        stem = render_event(_event(cls, name, length=2.0))
        level = rms_db(_span(stem, length=2.0))
        tail = rms_db(stem[round(2.6 * RATE):round(2.9 * RATE)])  # 0.1-0.4 s after the nominal end
        return level, tail - level

    (near_level, near_tail), (far_level, far_tail) = measure("near"), measure("far")
    assert near_level - far_level == pytest.approx(13.0, abs=0.5)
    assert far_tail > near_tail + 15.0


@pytest.mark.parametrize("cls", SYNTHESISED)
def test_each_event_sounds_from_its_onset_for_its_duration(cls: str) -> None:
    """The energy envelope (frames within 40 dB of the loudest) starts at the onset and ends
    after most of the nominal duration, before the event's recorded bound ``sounds_until_s``."""
    for seed, onset, length in ((1, 0.3, 1.2), (2, 1.1, 2.6)):
        event = _event(cls, seed=seed, onset=onset, length=length)
        start, end = active_span(render_event(event), below_peak_db=40.0, frame_s=0.01)
        assert start == pytest.approx(onset, abs=0.02)
        assert onset + 0.6 * length < end <= event.sounds_until_s + 0.01


def test_scenes_follow_their_truth() -> None:
    """Rendered scenes: the mix is the sum of the events' stems (no other class sounds, so a
    declared absence is real) over a floor at -70 dBFS; nothing clips; each event sounds from its
    recorded onset over most of its span and stops by its recorded bound; "then" events are in
    order; "while" events overlap."""
    config = GeneratorConfig(seed=3, speech=False)
    structures = set()
    for index in range(40):
        scene = draw_scene(3, index, config=config)
        clip = render_scene(scene)
        structures.add(scene.structure)
        assert clip.samples.shape == (int(CLIP_SECONDS * RATE),)
        assert float(np.abs(clip.samples).max()) <= PEAK + 1e-9
        gain = 10 ** (clip.gain_db / 20)
        floor = clip.samples / gain - np.sum(clip.stems, axis=0)
        assert rms_db(floor) == pytest.approx(FLOOR_DB, abs=0.5)
        assert scene.absent is None or scene.absent not in scene.classes
        for event, stem in zip(scene.events, clip.stems, strict=True):
            assert not stem[:round(event.onset_s * RATE)].any()
            # with its attributes and room: from its onset, over most of its span, within its bound
            start, end = active_span(stem, below_peak_db=40.0, frame_s=0.01)
            nominal_end = min(event.onset_s + event.duration_s, CLIP_SECONDS)
            assert start == pytest.approx(event.onset_s, abs=0.03)
            assert event.onset_s + 0.5 * (nominal_end - event.onset_s) < end
            assert end <= min(event.sounds_until_s, CLIP_SECONDS) + 0.01
        if scene.structure == "then":
            first, second = clip.stems[0], clip.stems[1]
            starts = round(scene.events[1].onset_s * RATE)
            # the first has died away (>= 60 dB below its loudest frame) before the second starts
            assert rms_db(first[starts:]) < float(frame_rms_db(first).max()) - 60.0
            assert scene.events[0].sounds_until_s < scene.events[1].onset_s
            assert active_span(second, below_peak_db=40.0)[0] >= scene.events[1].onset_s - 0.02
        if scene.structure == "while":
            a, b = scene.events[0], scene.events[1]
            overlap = min(a.onset_s + a.duration_s, b.onset_s + b.duration_s) - max(a.onset_s, b.onset_s)
            assert overlap >= 0.5
    assert structures == {"single", "while", "then"}


def test_a_bed_sounds_under_the_whole_clip() -> None:
    scene = next(s for s in (draw_scene(4, i, config=GeneratorConfig(speech=False)) for i in range(60))
                 if len(s.events) == 3)
    bed = render_scene(scene).stems[2]
    assert scene.events[2].bed and scene.events[2].onset_s == 0.0
    levels = frame_rms_db(bed[: int(4.5 * RATE)], 0.25)
    assert float(levels.min()) > float(levels.max()) - 30.0  # no silent quarter-second in it
