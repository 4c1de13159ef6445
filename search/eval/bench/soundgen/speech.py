"""Speech through Debian's ``espeak-ng`` (a subprocess), male and female voices.

``espeak-ng`` writes a 22,050 Hz WAV to stdout; it is resampled to 16 kHz with
:func:`fortekit.plugins.audio.resample`'s polyphase filter. Sentences come from the
generator's data file (``[speech] sentences``); an utterance is cached per process, so a
collection calls the program once per (sentence, voice, pitch, speed).

Set ``FORTEKIT_ESPEAK`` to the program's path when it is not on ``PATH``. A missing program
is :class:`~fortekit.errors.SpeechSynthMissingError` (E551).

Example:
    >>> espeak_command("female", pitch=1.0, rate=1.0)[:3]  # doctest: +ELLIPSIS
    ['...', '-v', 'en-us+f3']
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache

import numpy as np

from fortekit.errors import Errors, SoundGenError, SpeechSynthMissingError
from fortekit.search.eval.bench.soundgen.dsp import RATE, SynthRequest

__all__ = ["VOICES", "espeak_command", "espeak_program", "speech"]

#: Voice variants: espeak-ng voice and its base pitch (0-99).
VOICES = {"male": ("en-us+m3", 40), "female": ("en-us+f3", 65)}
_BASE_WPM = 160
_ESPEAK_RATE = 22_050


def espeak_program() -> str:
    """The espeak-ng executable: ``$FORTEKIT_ESPEAK`` or ``espeak-ng`` on ``PATH``.

    Raises:
        SpeechSynthMissingError: neither exists (E551).

    Example:
        >>> espeak_program()  # doctest: +SKIP
        '/usr/bin/espeak-ng'
    """
    named = os.environ.get("FORTEKIT_ESPEAK")
    found = shutil.which(named or "espeak-ng")
    if found is None:
        raise SpeechSynthMissingError(Errors.E551.format(searched=named or "espeak-ng on PATH"))
    return found


def espeak_command(variant: str, *, pitch: float, rate: float) -> list[str]:
    """The espeak-ng arguments for a voice variant and pitch and rate factors (text not included).

    Example:
        >>> espeak_command("male", pitch=1.5, rate=0.5)[1:]  # doctest: +SKIP
        ['-v', 'en-us+m3', '-p', '60', '-s', '80', '--stdout']
    """
    try:
        program = espeak_program()
    except SpeechSynthMissingError:
        program = "espeak-ng"
    voice, base = VOICES.get(variant, VOICES["male"])
    return [program, "-v", voice, "-p", str(int(np.clip(round(base * pitch), 0, 99))),
            "-s", str(int(np.clip(round(_BASE_WPM * rate), 80, 450))), "--stdout"]


@lru_cache(maxsize=512)
def _utterance(text: str, variant: str, pitch: float, rate: float) -> np.ndarray:
    from fortekit.plugins.audio import resample

    command = [espeak_program(), *espeak_command(variant, pitch=pitch, rate=rate)[1:], text]
    try:
        done = subprocess.run(command, capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SoundGenError(Errors.E552.format(command=" ".join(command[:-1]), problem=exc)) from None
    data = done.stdout
    marker = data.find(b"data")
    if done.returncode != 0 or marker < 0 or len(data) < marker + 10:
        problem = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}, no audio"
        raise SoundGenError(Errors.E552.format(command=" ".join(command[:-1]), problem=problem))
    pcm = np.frombuffer(data[marker + 8:len(data) - (len(data) - marker - 8) % 2], dtype="<i2")
    # kept as float32 (what the resampler gives): half the memory of the cache, the same values
    return np.asarray(resample(pcm.astype(np.float32) / 32768.0, _ESPEAK_RATE, RATE), dtype=np.float32)


def speech(request: SynthRequest, sentences: tuple[str, ...]) -> np.ndarray:
    """Speech of ``request.duration_s`` seconds: random sentences in the variant's voice, cut to fit.

    Example:
        >>> speech(SynthRequest(np.random.default_rng(0), 1.0, variant="female"),
        ...        ("good morning",)).shape  # doctest: +SKIP
        (16000,)
    """
    rng = request.rng
    n = request.samples
    out = np.zeros(n)
    filled = 0  # the first word starts at the onset; the gaps between sentences vary
    pitch = round(request.pitch * rng.uniform(0.92, 1.08), 2)
    while filled < n:
        text = sentences[int(rng.integers(len(sentences)))]
        voiced = _utterance(text, request.variant or "male", pitch, round(request.rate, 2))
        # espeak-ng pads each utterance with silence: keep the voiced part only
        loud = np.flatnonzero(np.abs(voiced) > 0.01)
        if loud.size:
            voiced = voiced[loud[0]:loud[-1] + 1]
        take = min(len(voiced), n - filled)
        out[filled:filled + take] = voiced[:take]
        filled += take + int(rng.uniform(0.15, 0.35) / request.rate * RATE)
    fade = min(int(0.05 * RATE), n)
    out[n - fade:] *= np.linspace(1.0, 0.0, fade)
    return out
