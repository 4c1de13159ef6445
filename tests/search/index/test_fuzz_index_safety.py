"""Indexes that cannot lose a user's files, cannot lie, and cannot be mixed by two writers.

The index part of "Nothing lost, part two" (docs/audio_index.md, "Saving" and "Checked rows"):

* an output that is or holds an input, a folder of the user's own files (with index file
  names or not), a file, or an index without ``--overwrite`` is refused before any encoding
  work, with a code, and nothing is changed;
* a full disk or ``ulimit -f`` is E743 naming the file, the previous index intact;
* rows with NaN/inf, rows of another length than 1 in a normalised index and rows of zeros
  are refused on load; an index saved with ``normalise=False`` ranks by cosine on every path;
* every ``index.json`` field is type-checked (no TypeError), a recorded ``device`` is no
  TypeError;
* a writer killed at any point (SIGKILL at random moments, and a simulated kill at every
  write step) leaves the previous index loadable, and two writers at once never mix.

No model is loaded: the indexes are built from given rows, and the commands that need a
backbone get a registered stand-in.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fortekit import safe_write
from fortekit.errors import AudioIndexError, OutputLockedError, OutputWriteError
from fortekit.safe_write import MARKER_FILE, OutputLock
from fortekit.search.cli.main import main
from fortekit.search.index import AudioIndex, writing
from fortekit.search.pipeline import PipelineSpec
from tests.fuzz_fixtures import Result, assert_clean, run_in_process, snapshot

FAKE = "index-safety-fake"
DIM = 8
CODED = "[E"


def fortekit(*argv: str) -> Result:
    return run_in_process(main, argv)


# --- small indexes whose every row says which build it came from ---------------------------------
def rows_of(version: int, count: int = 6, dim: int = DIM) -> np.ndarray:
    """Unit rows that encode `version` (row i points at axis i % dim, tilted by the version)."""
    rows, at = np.zeros((count, dim), dtype=np.float32), np.arange(count)
    rows[at, at % dim] = 1.0
    rows[at, (at + 1) % dim] = float(version)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def make_index(version: int, count: int = 6, backbone: str = FAKE, **options: Any) -> AudioIndex:
    ids = [f"v{version}-{row}" for row in range(count)]
    return AudioIndex.from_captions(ids, [f"caption {version}"] * count, backbone,
                                    embeddings=rows_of(version, count), parse_captions=False, **options)


def version_of(directory: Path) -> int:
    """The build an index folder holds, after checking that every file comes from that build."""
    index = AudioIndex.load(directory)
    versions = {item_id.split("-")[0] for item_id in index.ids}
    assert len(versions) == 1, f"items of several builds: {sorted(versions)}"
    version = int(versions.pop()[1:])
    assert index.captions == [f"caption {version}"] * len(index), "captions of another build"
    np.testing.assert_allclose(index.embeddings, rows_of(version, len(index)), atol=1e-6,
                               err_msg="embeddings of another build")
    return version


@pytest.fixture
def no_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any backbone load fails the test: the output must be refused before the encoding work."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the encoding work started before the output was checked")

    monkeypatch.setattr("fortekit.plugins.get_backbone", refuse)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (names relative to it) and its bytes."""
    return {str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def captions_file(folder: Path, name: str = "items.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps({"id": f"c{i}", "caption": "a dog barks", "extra": i}) + "\n"
                            for i in range(3)), encoding="utf-8")
    return path


# --- 1, 2, 14: outputs that are inputs, the user's folders, files --------------------------------
def test_an_output_folder_holding_the_captions_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_encoding: None,
) -> None:
    captions = captions_file(tmp_path)
    before = tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    for extra in ([], ["--overwrite"]):
        result = fortekit("index", "build", "--captions", "items.jsonl", "-o", ".", "--quiet", *extra)
        assert_clean(result, [2], "--out . holding --captions")
        assert "[E740]" in result.err and "captions file" in result.err, result.show()
    assert tree(tmp_path) == before and captions.exists()


def test_an_index_whose_items_file_is_the_captions_file_is_refused(tmp_path: Path, no_encoding: None) -> None:
    directory = make_index(1).save(tmp_path / "clips.index")
    before = tree(tmp_path)
    result = fortekit("index", "build", "--captions", str(directory / "items.jsonl"), "-o", str(directory),
                      "--overwrite", "--quiet")
    assert_clean(result, [2], "--captions inside --out")
    assert "[E740]" in result.err, result.show()
    assert tree(tmp_path) == before


USER_FILES = {
    "faiss.index": b"my own faiss index",
    "evidence.safetensors": b"my own tensors",
    "embeddings.npy": np.lib.format.magic(1, 0) + b"mine",
    "index.json": b'{"mine": true}',
    "notes.txt": b"my notes",
}


@pytest.mark.parametrize("name", list(USER_FILES))
def test_a_folder_of_the_users_files_is_never_replaced(name: str, tmp_path: Path, no_encoding: None) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / name).write_bytes(USER_FILES[name])
    captions = captions_file(tmp_path, "captions.jsonl")
    before = tree(tmp_path)
    for extra in ([], ["--overwrite"]):
        result = fortekit("index", "build", "--captions", str(captions), "-o", str(folder), "--quiet",
                          *extra)
        assert_clean(result, [2], f"{name} {extra}")
        assert "[E626]" in result.err and name in result.err, result.show()
        for overwrite in (False, True):
            with pytest.raises(AudioIndexError, match=r"\[E626\]"):
                make_index(2).save(folder, overwrite=overwrite)
    assert tree(tmp_path) == before


def test_a_fortekit_index_holding_a_users_file_is_not_replaced(tmp_path: Path) -> None:
    directory = make_index(1).save(tmp_path / "clips.index")
    (directory / "my notes.txt").write_text("keep me", encoding="utf-8")
    before = tree(tmp_path)
    with pytest.raises(AudioIndexError, match=r"\[E626\].*my notes\.txt"):
        make_index(2).save(directory, overwrite=True)
    assert tree(tmp_path) == before


def test_an_index_folder_is_marked_and_replaced_only_with_overwrite(tmp_path: Path) -> None:
    directory = make_index(1).save(tmp_path / "clips.index")
    assert (directory / MARKER_FILE).is_file()
    with pytest.raises(AudioIndexError, match=r"\[E614\]"):
        make_index(2).save(directory)
    assert version_of(directory) == 1
    make_index(2).save(directory, overwrite=True)
    assert version_of(directory) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clips.index"]  # no lock, no temporary left
    empty = tmp_path / "empty"
    empty.mkdir()
    make_index(3).save(empty)  # an empty folder holds nothing to lose
    assert version_of(empty) == 3


def test_an_index_of_an_older_fortekit_is_still_replaced_with_overwrite(tmp_path: Path) -> None:
    """Backwards compatibility: index files only, index.json written by fortekit, no marker."""
    directory = make_index(1).save(tmp_path / "old.index")
    (directory / MARKER_FILE).unlink()
    (directory / ".embeddings.npy.tmp").write_bytes(b"left by an older, interrupted save")
    with pytest.raises(AudioIndexError, match=r"\[E614\]"):
        make_index(2).save(directory)
    make_index(2).save(directory, overwrite=True)
    assert version_of(directory) == 2 and (directory / MARKER_FILE).is_file()
    (directory / MARKER_FILE).unlink()
    (directory / "README").write_text("mine", encoding="utf-8")
    with pytest.raises(AudioIndexError, match=r"\[E626\].*README"):
        make_index(3).save(directory, overwrite=True)
    assert version_of(directory) == 2


def test_an_output_that_is_a_file_or_a_link_is_refused_before_encoding(
    tmp_path: Path, no_encoding: None,
) -> None:
    captions = captions_file(tmp_path, "captions.jsonl")
    target = tmp_path / "out.index"
    target.write_bytes(b"a file of mine")
    link = tmp_path / "link.index"
    link.symlink_to(tmp_path / "elsewhere")
    before = tree(tmp_path)
    for out, code in ((target, "[E745]"), (link, "[E741]")):
        result = fortekit("index", "build", "--captions", str(captions), "-o", str(out), "--overwrite",
                          "--quiet")
        assert_clean(result, [2], str(out))
        assert code in result.err, result.show()
    assert tree(tmp_path) == before and link.is_symlink()


def test_a_full_disk_names_the_file_and_keeps_the_previous_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    directory = make_index(1).save(tmp_path / "clips.index")
    before = tree(tmp_path)

    def full(self: Any, data: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writing._Stream, "write", full)
    full_disk = r"\[E743\] Cannot write .*embeddings\.npy: No space left.*disk"
    with pytest.raises(OutputWriteError, match=full_disk):
        make_index(2).save(directory, overwrite=True)
    assert tree(tmp_path) == before and version_of(directory) == 1


SAVE_SCRIPT = """
import sys
import numpy as np
from fortekit.search.index import AudioIndex
directory, version, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = np.random.default_rng(version).standard_normal((count, 64)).astype("float32")
index = AudioIndex.from_captions([f"v{version}-{i}" for i in range(count)], [None] * count, "enc",
                                 embeddings=rows, parse_captions=False)
try:
    index.save(directory, overwrite=True)
except Exception as exc:
    print(str(exc), file=sys.stderr)
    sys.exit(1)
"""


def test_a_file_size_limit_is_a_coded_error_naming_the_file(tmp_path: Path) -> None:
    """``ulimit -f``: numpy's uncoded "19200 requested and 10208 written" was all a user saw."""
    directory = tmp_path / "clips.index"
    ok = subprocess.run([sys.executable, "-c", SAVE_SCRIPT, str(directory), "1", "10"], capture_output=True,
                        text=True, check=False, timeout=120)
    assert ok.returncode == 0, ok.stderr
    before = tree(tmp_path)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    done = subprocess.run([sys.executable, "-c", SAVE_SCRIPT, str(directory), "2", "2000"],
                          capture_output=True, text=True, check=False, timeout=120, preexec_fn=limit)
    assert done.returncode == 1, done.stderr
    assert "[E743]" in done.stderr and "embeddings.npy" in done.stderr, done.stderr
    assert "ulimit" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "requested and" not in done.stderr
    assert tree(tmp_path) == before


# --- 6, 7: rows that would lie ---------------------------------------------------------------------
def _damage_rows(directory: Path, change: Callable[[np.ndarray], None]) -> None:
    rows = np.load(directory / "embeddings.npy")
    change(rows)
    np.save(directory / "embeddings.npy", rows)


def _nan(rows: np.ndarray) -> None:
    rows[2, 0] = np.nan


def _inf(rows: np.ndarray) -> None:
    rows[3, 1] = -np.inf


def _scaled(rows: np.ndarray) -> None:
    rows[4] *= 100.0


def _zeros(rows: np.ndarray) -> None:
    rows[:] = 0.0


ROW_DAMAGE = {"nan": (_nan, "E623", "'v1-2'"), "inf": (_inf, "E623", "'v1-3'"),
              "scaled_by_100": (_scaled, "E624", "'v1-4'"), "all_zeros": (_zeros, "E625", "'v1-0'")}


@pytest.mark.parametrize("name", list(ROW_DAMAGE))
def test_rows_that_would_lie_are_refused_on_load(name: str, tmp_path: Path) -> None:
    change, code, item = ROW_DAMAGE[name]
    directory = make_index(1, backbone="minilm").save(tmp_path / "clips.index")
    _damage_rows(directory, change)
    before = snapshot(*sorted(directory.iterdir()))
    with pytest.raises(AudioIndexError, match=rf"\[{code}\].*{item}"):
        AudioIndex.load(directory)
    for argv in (["index", "info", "--index", str(directory)],
                 ["search", "--index", str(directory), "a dog", "--device", "cpu"]):
        result = fortekit(*argv)
        # an unusable index: fortekit search exits with 2 (bad input); the index commands still with 1
        assert_clean(result, [2], f"{name}: {argv[:2]}")
        assert f"[{code}]" in result.err, result.show()
    assert snapshot(*sorted(directory.iterdir())) == before


def test_an_unnormalised_index_loads_and_zero_rows_are_refused_when_built(tmp_path: Path) -> None:
    directory = make_index(1).save(tmp_path / "clips.index")
    _damage_rows(directory, _scaled)
    meta = json.loads((directory / "index.json").read_text(encoding="utf-8"))
    (directory / "index.json").write_text(json.dumps({**meta, "normalised": False}), encoding="utf-8")
    assert len(AudioIndex.load(directory)) == 6  # rows at other lengths, as the index says
    with pytest.raises(AudioIndexError, match=r"\[E625\].*'b'"):
        AudioIndex.from_captions(["a", "b"], [None, None], "enc", embeddings=[[1.0, 0.0], [0.0, 0.0]],
                                 parse_captions=False)
    with pytest.raises(AudioIndexError, match=r"\[E625\]"):
        AudioIndex.from_captions(["a"], [None], "enc", embeddings=[[0.0, 0.0]], parse_captions=False,
                                 normalise=False)


# --- 8: normalise=False ranks by cosine on every path ---------------------------------------------
def test_an_unnormalised_index_ranks_by_cosine_on_every_path(tmp_path: Path, minilm: Any) -> None:
    from fortekit.search.formula.scoring import FormulaScoringConfig
    from fortekit.search.retriever import Retriever

    captions = ["rain on a tin roof", "a dog barking", "birds chirping at dawn", "a car passing by"]
    unit_rows = minilm.encode_text(captions).numpy()
    rows = unit_rows * np.array([[0.1], [0.5], [3.0], [10.0]], dtype=np.float32)  # lengths far from 1
    raw = AudioIndex.from_captions(["a", "b", "c", "d"], captions, "minilm", embeddings=rows,
                                   parse_captions=False, normalise=False)
    unit = AudioIndex.from_captions(["a", "b", "c", "d"], captions, "minilm", embeddings=unit_rows,
                                    parse_captions=False)
    loaded = AudioIndex.load(raw.save(tmp_path / "raw.index"))
    np.testing.assert_array_equal(loaded.embeddings, rows)  # stored as given
    query = minilm.encode_text(["heavy rain falling"])
    want_scores, want_rows = unit.search(query, k=4, device="cpu")
    assert want_rows[0, 0].item() == 0  # the rain caption, by cosine
    assert int(np.argmax(rows @ query.numpy()[0])) != 0  # a dot product would rank another first
    for index in (raw, loaded):
        scores, found = index.search(query, k=4, device="cpu")
        assert torch.equal(found, want_rows) and torch.allclose(scores, want_scores, atol=1e-6)
        torch.testing.assert_close(index.embedding_tensor("cpu"), unit.embedding_tensor("cpu"))
        for formula in (None, FormulaScoringConfig()):  # the first pass alone, and formula scoring's
            retriever = Retriever(index, PipelineSpec(stage1=None, projection=None, formula=formula,
                                  rerank=None), backbone=minilm, device="cpu")
            scores, found = retriever.rank(query, [None], k=4)
            assert torch.equal(found, want_rows), f"Retriever ranks by dot product ({formula})"
            assert torch.allclose(scores, want_scores, atol=1e-6)


# --- 13: every index.json field is type-checked; a recorded device is no TypeError -----------------
BAD_FIELDS: dict[str, dict[str, Any]] = {
    "unparsed_text": {"unparsed": "3"},
    "unparsed_list": {"unparsed": [1]},
    "unparsed_negative": {"unparsed": -1},
    "unparsed_above_count": {"unparsed": 99},
    "unparsed_float": {"unparsed": 1.5},
    "parsed_text": {"parsed": "yes"},
    "normalised_int": {"normalised": 1},
    "dim_float": {"dim": 8.0},
    "count_bool": {"count": True},
    "backbone_empty": {"backbone": " "},
    "backbone_list": {"backbone": ["minilm"]},
    "fortekit_version_int": {"fortekit_version": 3},
    "faiss_int": {"faiss": 3},
    "faiss_unknown": {"faiss": "annoy"},
    "backbone_options_list": {"backbone_options": ["device", "cpu"]},
    "backbone_options_nested": {"backbone_options": {"model": {"path": "/m"}}},
    "captioner_int": {"captioner": 5},
    "captioner_options_text": {"captioner_options": "model=x"},
    "captioner_options_nested": {"captioner_options": {"a": [{"b": 1}]}},
    "evidence_labels_text": {"evidence_labels": "rain"},
}


@pytest.mark.parametrize("name", list(BAD_FIELDS))
def test_every_index_json_field_is_type_checked(name: str, tmp_path: Path) -> None:
    directory = make_index(1, backbone="minilm").save(tmp_path / "clips.index")
    meta = json.loads((directory / "index.json").read_text(encoding="utf-8"))
    (directory / "index.json").write_text(json.dumps({**meta, **BAD_FIELDS[name]}), encoding="utf-8")
    with pytest.raises(AudioIndexError, match=r"\[E6(00|21)\]"):
        AudioIndex.load(directory)
    for argv in (["index", "info", "--index", str(directory)],
                 ["search", "--index", str(directory), "rain", "--device", "cpu"]):
        result = fortekit(*argv)
        # an unusable index: fortekit search exits with 2 (bad input); the index commands still with 1
        assert_clean(result, [2], f"{name}: {argv[:2]}")
        assert "[E600]" in result.err or "[E621]" in result.err, result.show()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**20) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
FIELDS = ["format_version", "fortekit_version", "backbone", "backbone_options", "dim", "count", "normalised",
          "parsed", "unparsed", "faiss", "captioner", "captioner_options", "evidence_labels", "index_id",
          "ann_recall"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_index(1, backbone="minilm").save(tmp_path_factory.mktemp("pristine") / "clips.index")


@settings(max_examples=80, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(FIELDS), value=JSON_VALUES, drop=st.booleans())
def test_any_json_in_any_index_json_field_loads_or_is_a_coded_error(
    pristine: Path, tmp_path_factory: pytest.TempPathFactory, field: str, value: Any, drop: bool,
) -> None:
    directory = tmp_path_factory.mktemp("fields") / "clips.index"
    directory.mkdir()
    for path in pristine.iterdir():
        (directory / path.name).write_bytes(path.read_bytes())
    meta = json.loads((pristine / "index.json").read_text(encoding="utf-8"))
    if drop:
        meta.pop(field, None)
    else:
        meta[field] = value
    (directory / "index.json").write_text(json.dumps(meta), encoding="utf-8")
    try:
        index = AudioIndex.load(directory)
    except AudioIndexError as exc:
        assert str(exc).startswith("[E6"), exc
        return
    assert len(index) == 6 and isinstance(index.meta.unparsed, int)
    assert all(isinstance(key, str) for key in index.meta.backbone_options)
    result = fortekit("index", "info", "--index", str(directory))
    assert_clean(result, [0], f"{field}={value!r}")


def test_options_that_cannot_be_recorded_are_refused_when_building() -> None:
    for options in ({"device": torch.device("cpu")}, {"scale": math.nan}, {"": 1}):
        with pytest.raises(AudioIndexError, match=r"\[E613\] backbone_options"):
            make_index(1, backbone_options=options)


def test_a_recorded_device_is_no_type_error(tmp_path: Path, minilm: Any) -> None:
    """The Python API records what it was given, {"device": "cpu"} included."""
    from fortekit.search.retriever import Retriever

    captions = ["rain on a tin roof", "a dog barking"]
    directory = AudioIndex.from_captions(
        ["rain", "dog"], captions, "minilm", embeddings=minilm.encode_text(captions),
        parse_captions=False, backbone_options={"device": "cpu"},
    ).save(tmp_path / "clips.index")
    retriever = Retriever(directory, PipelineSpec(formula=None, rerank=None), device="cpu")
    assert retriever.backbone.name == "minilm"
    assert retriever.search("rain falling on a roof", k=1).hits[0].item_id == "rain"
    query = fortekit("search", "--index", str(directory), "a dog", "-k", "1", "--formula-scoring", "off")
    assert_clean(query, [0], "search of an index that recorded a device")
    assert "dog" in query.out
    unknown = fortekit("search", "--index", str(directory), "rain", "--formula-scoring", "off",
                       "--device", "cuda:99")
    assert_clean(unknown, [0, 2], "--device cuda:99")


# --- 11 and the lock: two writers never mix -------------------------------------------------------
def test_a_second_build_of_a_locked_folder_fails_at_once(tmp_path: Path, no_encoding: None) -> None:
    captions = captions_file(tmp_path, "captions.jsonl")
    out = tmp_path / "clips.index"
    with OutputLock(out):  # another run (its own lock file descriptor)
        result = fortekit("index", "build", "--captions", str(captions), "-o", str(out), "--quiet")
        assert_clean(result, [1], "build of a locked folder")
        assert "[E742]" in result.err and f"pid {os.getpid()}" in result.err, result.show()
        with pytest.raises(OutputLockedError, match=r"\[E742\]"):
            make_index(1).save(out)
    assert not out.exists()


def test_two_savers_and_a_reader_at_once_never_mix(tmp_path: Path) -> None:
    """Threads: each save wins whole or gets E742; every load sees one build."""
    directory = make_index(0).save(tmp_path / "clips.index")
    stop = threading.Event()
    outcomes: dict[str, int] = {"saved": 0, "locked": 0, "read": 0}
    problems: list[BaseException] = []

    def save(version: int) -> None:
        index = make_index(version, count=50)
        for _ in range(15):
            try:
                index.save(directory, overwrite=True)
                outcomes["saved"] += 1
            except OutputLockedError:
                outcomes["locked"] += 1
            except BaseException as exc:  # reported below
                problems.append(exc)

    def read() -> None:
        while not stop.is_set():
            try:
                assert version_of(directory) in (0, 1, 2)
                outcomes["read"] += 1
            except BaseException as exc:  # reported below
                problems.append(exc)

    savers = [threading.Thread(target=save, args=(version,)) for version in (1, 2)]
    reader = threading.Thread(target=read)
    reader.start()
    for thread in savers:
        thread.start()
    for thread in savers:
        thread.join()
    stop.set()
    reader.join()
    assert not problems, problems[:3]
    assert outcomes["saved"] >= 1 and outcomes["saved"] + outcomes["locked"] == 30 and outcomes["read"] >= 1
    assert version_of(directory) in (1, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clips.index"]


def test_two_processes_saving_at_once_never_mix(tmp_path: Path) -> None:
    directory = tmp_path / "clips.index"
    runs = [subprocess.Popen([sys.executable, "-c", SAVE_SCRIPT, str(directory), str(version), "3000"],
                             stderr=subprocess.PIPE, text=True) for version in (1, 2)]
    results = [(run.wait(timeout=120), run.stderr.read() if run.stderr else "") for run in runs]
    for run in runs:
        if run.stderr:
            run.stderr.close()
    assert all(code == 0 or (code == 1 and "[E742]" in err) for code, err in results), results
    assert any(code == 0 for code, _ in results), results
    index = AudioIndex.load(directory)
    version = int(index.ids[0].split("-")[0][1:])
    rows = np.random.default_rng(version).standard_normal((3000, 64)).astype("float32")
    assert {item_id.split("-")[0] for item_id in index.ids} == {f"v{version}"}
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    np.testing.assert_allclose(index.embeddings, unit, atol=1e-6)


# --- kills: the previous index stays loadable ------------------------------------------------------
LOOP_SCRIPT = """
import sys
import numpy as np
from fortekit.search.index import AudioIndex
directory, count = sys.argv[1], int(sys.argv[2])

def rows_of(version):
    rows, at = np.zeros((count, 8), dtype=np.float32), np.arange(count)
    rows[at, at % 8] = 1.0
    rows[at, (at + 1) % 8] = float(version)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)

version = 0
while True:
    version += 1
    ids = [f"v{version}-{row}" for row in range(count)]
    index = AudioIndex.from_captions(ids, [f"caption {version}"] * count, "index-safety-fake",
                                     embeddings=rows_of(version), parse_captions=False)
    index.save(directory, overwrite=True)
    print(version, flush=True)
"""

KILLS = 24
BATCH = 4


def test_a_writer_killed_at_random_moments_leaves_the_previous_index(tmp_path: Path) -> None:
    """SIGKILL processes that save over one index again and again, at 24 random moments."""
    chooser = random.Random(31)
    for batch in range(KILLS // BATCH):
        runs = []
        for slot in range(BATCH):
            directory = tmp_path / f"kill{batch}-{slot}" / "clips.index"
            process = subprocess.Popen([sys.executable, "-c", LOOP_SCRIPT, str(directory), "5000"],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            runs.append((directory, process))
        for _, process in runs:  # each has saved once: there is a previous index
            assert process.stdout is not None
            first = process.stdout.readline()
            assert first.strip() == "1", (process.stderr.read() if process.stderr else "")
        start = time.monotonic()
        for at, (_, process) in sorted(zip([chooser.uniform(0.0, 0.3) for _ in runs], runs, strict=True),
                                       key=lambda pair: pair[0]):
            time.sleep(max(0.0, start + at - time.monotonic()))
            process.send_signal(signal.SIGKILL)
        for directory, process in runs:
            process.wait(timeout=30)
            assert process.stdout is not None and process.stderr is not None
            done = [1, *(int(line) for line in process.stdout.read().split())]
            process.stdout.close()
            process.stderr.close()
            found = version_of(directory)  # loadable, and one build's files only
            assert found in (done[-1], done[-1] + 1), (found, done[-1])
            make_index(found + 1, count=50).save(directory, overwrite=True)  # which cleans up after the kill
            assert version_of(directory) == found + 1
            assert sorted(p.name for p in directory.parent.iterdir()) == ["clips.index"]


class _Killed(BaseException):
    """A simulated SIGKILL: nothing after it runs (no finally block of the writer's cleans up)."""


def test_a_writer_stopped_at_every_write_step_leaves_the_previous_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Count the steps of one save (creating, writing, syncing, renaming, removing); then, for
    every step, a save that dies there, its clean-up skipped as a kill would skip it."""
    directory = make_index(1).save(tmp_path / "clips.index")
    steps: list[str] = []
    stop_at: list[int] = [0]
    real_rmtree = writing.shutil.rmtree

    def step(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            steps.append(name)
            if len(steps) == stop_at[0]:
                killed[0] = True  # from here on, as after a SIGKILL, nothing of the writer's runs
                raise _Killed(name)
            return function(*args, **kwargs)
        return wrapped

    def fake_rmtree(path: Any, ignore_errors: bool = False) -> None:
        # after a simulated kill no clean-up runs: the writer's finally blocks must not hide it
        if not killed[0]:
            real_rmtree(path, ignore_errors=ignore_errors)

    killed = [False]
    monkeypatch.setattr(writing.os, "fsync", step("fsync", os.fsync))
    monkeypatch.setattr(writing.os, "replace", step("replace", os.replace))
    monkeypatch.setattr(safe_write, "exchange_paths", step("exchange", safe_write.exchange_paths))
    monkeypatch.setattr(tempfile, "mkdtemp", step("mkdtemp", tempfile.mkdtemp))
    monkeypatch.setattr(writing._Stream, "write", step("write", writing._Stream.write))
    monkeypatch.setattr(writing.shutil, "rmtree", fake_rmtree)
    make_index(2).save(directory, overwrite=True)
    total = len(steps)
    assert total >= 8, steps
    for point in range(1, total + 1):
        steps.clear()
        stop_at[0] = point
        killed[0] = False
        previous = version_of(directory)
        with contextlib.suppress(_Killed):
            make_index(previous + 1).save(directory, overwrite=True)
        found = version_of(directory)
        assert found in (previous, previous + 1), (point, steps[-1], found)
        killed[0] = False
        stop_at[0] = 0
        make_index(found + 1).save(directory, overwrite=True)  # and the next save cleans up
        assert version_of(directory) == found + 1
        assert sorted(p.name for p in tmp_path.iterdir()) == ["clips.index"], (point, steps)
