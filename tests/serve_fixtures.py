"""Fixtures of the `fortekit serve` tests: a collection with real audio files, its index, an eval run.

- ``sound_collection``: 24 clips made by the sound generator (WAV files and their captions,
  ``clips.jsonl``) once per test session;
- ``sound_index``: those clips indexed with the bundled MiniLM over their first caption, with
  their audio paths registered (kind ``audio_captions``);
- ``negation_run``: the output folder of ``fortekit eval --beir`` (systems ``baseline`` and
  ``formula``) on the first 40 queries of the real AudioCaps test exclusion set in
  ``../shared/data/negation/audiocaps_test`` (skipped with a reason when it is absent).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
NEGATION_SET = DATA / "negation" / "audiocaps_test"


@pytest.fixture(scope="session")
def sound_collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fortekit.search.eval.soundgen.generate import generate
    from fortekit.search.eval.soundgen.scene import GeneratorConfig

    root = tmp_path_factory.mktemp("serve_sounds") / "gen"
    generate(GeneratorConfig(seed=0, n=24, speech=False), root)
    return root


def sound_clips(collection: Path) -> list[dict[str, object]]:
    """The generated clips' records (id, audio path relative to the collection, captions)."""
    lines = (collection / "clips.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="session")
def sound_index(sound_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fortekit.plugins import get_backbone
    from fortekit.plugins.protocols import AudioItem
    from fortekit.search.index.audio_index import AudioIndex

    items = [AudioItem(path=sound_collection / str(clip["audio"]), text=str(clip["captions"][0]),  # type: ignore[index]
                       item_id=str(clip["_id"])) for clip in sound_clips(sound_collection)]
    directory = tmp_path_factory.mktemp("serve_index") / "sounds.index"
    AudioIndex.build(items, get_backbone("minilm", device="cpu")).save(directory)
    return directory


@pytest.fixture(scope="session")
def negation_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (NEGATION_SET / "corpus.jsonl").is_file():
        pytest.skip(f"the AudioCaps test exclusion set is not at {NEGATION_SET} (../shared/data)")
    from fortekit.search.cli import main

    out = tmp_path_factory.mktemp("serve_eval") / "run"
    code = main(["eval", "--beir", str(NEGATION_SET), "--systems", "baseline,formula",
                 "--limit-queries", "40", "--device", "cpu", "--direction", "t2a", "--no-umap",
                 "-o", str(out)])
    assert code == 0
    return out
