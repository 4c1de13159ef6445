"""Shared helpers of the V_audio tests: the real data, analysed once and cached.

spaCy's analysis of the captions (Clotho development, AudioCaps train and val: about
67,000 captions, some 90 s on one core) is cached in pytest's cache directory
(``.pytest_cache/d/fortekit-vocab``), keyed by the caption texts and the pipeline's
version, so only the first run on a machine pays for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
CLOTHO_DEV = SHARED_DATA / "clotho" / "clotho_captions_development.csv"
AUDIOCAPS_TRAIN = SHARED_DATA / "audiocaps" / "train.csv"
AUDIOCAPS_VAL = SHARED_DATA / "audiocaps" / "val.csv"
ONTOLOGY = SHARED_DATA / "audioset" / "ontology.json"
SHIPPED_TSV = REPO / "vocab" / "vocabulary.tsv"


def require(path: Path, what: str) -> Path:
    """Skip the calling test, with the reason, when a data file is missing."""
    if not path.exists():
        pytest.skip(f"{what} not available: {path} is absent (no ../shared/data checkout)")
    return path


def analysis_cache(config: pytest.Config, tmp_factory: pytest.TempPathFactory) -> Path:
    """Where spaCy's analysis of the captions is cached for the test session."""
    cache = getattr(config, "cache", None)
    if cache is not None:
        return Path(cache.mkdir("fortekit-vocab"))
    return tmp_factory.mktemp("fortekit-vocab")


_ANALYSED: dict[tuple[str, str], tuple[tuple[object, ...], ...]] = {}


def analysed(path: Path, cache_dir: Path) -> tuple[tuple[object, ...], ...]:
    """spaCy's analysis of a caption CSV, once per process (and cached on disk)."""
    from fortekit.vocab.analyse import analyse_captions
    from fortekit.vocab.corpus import read_captions

    key = (str(path), str(cache_dir))
    if key not in _ANALYSED:
        _ANALYSED[key] = analyse_captions(read_captions(path), cache_dir=cache_dir)
    return _ANALYSED[key]


@pytest.fixture(scope="session")
def vocab_cache(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return analysis_cache(request.config, tmp_path_factory)
