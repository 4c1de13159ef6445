"""The speech class (espeak-ng), checked by measurement: level, band, timing, voice pitch.

Skipped, with the reason, where espeak-ng is not installed (scripts/setup.sh installs it;
``fortekit bench generate --no-speech`` works without it).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fortekit.errors import SpeechSynthMissingError
from fortekit.search.eval.bench.soundgen.classes import BASE_LEVEL_DB
from fortekit.search.eval.bench.soundgen.dsp import RATE, active_span, band_energy_db, rms_db
from fortekit.search.eval.bench.soundgen.generate import generate
from fortekit.search.eval.bench.soundgen.render import render_event
from fortekit.search.eval.bench.soundgen.scene import Event, GeneratorConfig
from fortekit.search.eval.bench.soundgen.speech import espeak_program

try:
    espeak_program()
except SpeechSynthMissingError:
    pytestmark = pytest.mark.skip(reason="espeak-ng is not installed (apt-get install espeak-ng, or "
                                         "scripts/setup.sh); the speech class cannot be rendered")

ONSET, LENGTH = 0.4, 3.0


def _voice_f0(x: np.ndarray) -> float:
    """The median fundamental (Hz) of the voiced 40 ms frames, by autocorrelation (70-400 Hz)."""
    n = int(0.04 * RATE)
    found = []
    for start in range(0, len(x) - n, n):
        frame = x[start:start + n] - x[start:start + n].mean()
        if rms_db(frame) < -45.0:
            continue
        correlation = np.correlate(frame, frame, "full")[n - 1:]
        low, high = RATE // 400, RATE // 70
        lag = low + int(np.argmax(correlation[low:high]))
        if correlation[lag] > 0.3 * correlation[0]:
            found.append(RATE / lag)
    assert len(found) > 20, "too few voiced frames"
    return float(np.median(found))


def _speech(variant: str, *attributes: str) -> tuple[Event, np.ndarray]:
    event = Event("speech", variant, tuple(attributes), ONSET, LENGTH, seed=3)
    return event, render_event(event)


def test_speech_sits_at_its_level_in_the_voice_band_for_its_duration() -> None:
    for variant in ("male", "female"):
        event, stem = _speech(variant)
        span = stem[round(ONSET * RATE):round((ONSET + LENGTH) * RATE)]
        assert rms_db(span) == pytest.approx(BASE_LEVEL_DB, abs=0.3)
        assert band_energy_db(span, 100, 4000) > -1.0
        start, end = active_span(stem, below_peak_db=40.0, frame_s=0.01)
        assert start == pytest.approx(ONSET, abs=0.12)  # a sentence may start with a soft consonant
        assert ONSET + 0.8 * LENGTH < end <= event.sounds_until_s


def test_female_voices_are_higher_than_male_and_high_higher_than_low() -> None:
    male, female = _voice_f0(_speech("male")[1]), _voice_f0(_speech("female")[1])
    assert 70 < male < 160 < 180 < female < 350
    for variant in ("male", "female"):
        high, low = _voice_f0(_speech(variant, "high")[1]), _voice_f0(_speech(variant, "low")[1])
        assert high > 1.15 * low


def test_a_collection_with_speech(tmp_path: Path) -> None:
    generate(GeneratorConfig(seed=0, n=3), tmp_path)
    clips = [json.loads(line) for line in (tmp_path / "clips.jsonl").read_text().splitlines()]
    spoken = [e for clip in clips for e in clip["events"] if e["class"] == "speech"]
    assert spoken and all(e["variant"] in ("male", "female") for e in spoken)
    formulas = [clip["formula"] for clip in clips if "Speaking(" in clip["formula"]]
    assert formulas and all("Man(" in f or "Woman(" in f for f in formulas)
