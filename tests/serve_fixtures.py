"""Fixtures of the `fortekit serve` tests: a collection with real audio files, its index, an eval run.

- ``sound_collection``: 24 clips made by the sound generator (WAV files and their captions,
  ``clips.jsonl``) once per test session;
- ``sound_index``: those clips indexed with the bundled MiniLM over their first caption, with
  their audio paths registered (kind ``audio_captions``);
- ``negation_run``: the output folder of ``fortekit eval --beir`` (systems ``baseline`` and
  ``formula``) on 40 queries of the real AudioCaps test exclusion set in
  ``../shared/data/negation/audiocaps_test`` (its first 20 conjunctions and first 20 exclusions,
  over its whole corpus; skipped with a reason when it is absent);
- ``Server``: the real ``fortekit serve`` in a subprocess, its output read as it comes.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
NEGATION_SET = DATA / "negation" / "audiocaps_test"


@pytest.fixture(scope="session")
def sound_collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fortekit.search.eval.bench.soundgen.generate import generate
    from fortekit.search.eval.bench.soundgen.scene import GeneratorConfig

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

    root = tmp_path_factory.mktemp("serve_eval")
    collection = some_of_each_kind(NEGATION_SET, root / "audiocaps_test_40", per_kind=20)
    out = root / "run"
    code = main(["eval", "--beir", str(collection), "--systems", "baseline,formula", "--device", "cpu",
                 "--direction", "t2a", "--no-umap", "-o", str(out)])
    assert code == 0
    return out


def some_of_each_kind(source: Path, target: Path, *, per_kind: int) -> Path:
    """A copy of a BEIR collection with the first ``per_kind`` queries of each kind (all items)."""
    import shutil

    (target / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "item_concepts.jsonl"):
        shutil.copyfile(source / name, target / name)
    kept: list[str] = []
    taken: dict[str, int] = {}
    for line in (source / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        kind = json.loads(line)["metadata"].get("kind")
        if line.strip() and taken.get(kind, 0) < per_kind:
            taken[kind] = taken.get(kind, 0) + 1
            kept.append(line)
    (target / "queries.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    ids = {json.loads(line)["_id"] for line in kept}
    header, *rows = (source / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    (target / "qrels" / "test.tsv").write_text(
        "\n".join([header, *(row for row in rows if row.split("\t")[0] in ids)]) + "\n", encoding="utf-8")
    return target


class Server:
    """``fortekit serve`` in a subprocess; its output read as it comes."""

    def __init__(self, *args: str, cwd: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "fortekit", "serve", *args], cwd=cwd,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        encoding="utf-8", errors="replace")
        self.err: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        for stream, sink in ((self.process.stdout, None), (self.process.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, sink), daemon=True).start()

    def _read(self, stream: Any, sink: list[str] | None) -> None:
        for line in stream:
            if sink is not None:
                sink.append(line)
            self._lines.put(line)

    def port(self, timeout: float = 300) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                line = self._lines.get(timeout=0.5)
            except queue.Empty:
                continue
            found = re.search(r"fortekit serve: http://127\.0\.0\.1:(\d+)/", line)
            if found:
                return int(found.group(1))
        self.stop()
        raise AssertionError(f"no URL printed; exit {self.process.poll()}\n{''.join(self.err)[-3000:]}")

    def stop(self) -> int | None:
        """Stop it (SIGTERM, then SIGKILL after 30 s); its exit status."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        return self.process.returncode
