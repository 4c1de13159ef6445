"""An index that grows: add as shards, remove by id, compact; all or nothing under failures and kills."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from fortekit.errors import AudioIndexError, OutputLockedError, OutputWriteError
from fortekit.search.index.audio_index import AudioIndex
from fortekit.search.index.format import folder_identity
from fortekit.search.index.growing import add_to_index, compact_index, remove_from_index
from fortekit.search.index.writing import index_output_lock

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CLOTHO = DATA / "clotho" / "clotho_captions_development.csv"
faiss_needed = pytest.mark.skipif(importlib.util.find_spec("faiss") is None,
                                  reason="faiss-cpu (fortekit[faiss]) is not installed")


@pytest.fixture(scope="module")
def clotho(minilm) -> tuple[list[str], list[str], np.ndarray]:  # type: ignore[no-untyped-def]
    """1,200 Clotho development clips: ids (file names), first captions, their MiniLM rows."""
    if not CLOTHO.is_file():
        pytest.skip(f"the Clotho development captions are not at {CLOTHO} (../shared/data)")
    with CLOTHO.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))[:1200]
    ids, captions = [row["file_name"] for row in rows], [row["caption_1"] for row in rows]
    return ids, captions, np.asarray(minilm.encode_text(captions), dtype=np.float32)


def _index(clotho, start: int, stop: int, **options) -> AudioIndex:  # type: ignore[no-untyped-def]
    ids, captions, rows = clotho
    return AudioIndex.from_captions(ids[start:stop], captions[start:stop], "minilm",
                                    embeddings=rows[start:stop], parse_captions=False, **options)


def _same_items(a: AudioIndex, b: AudioIndex) -> None:
    assert a.ids == b.ids and a.captions == b.captions and a.predicate_sets == b.predicate_sets
    np.testing.assert_array_equal(np.asarray(a.embeddings), np.asarray(b.embeddings))


def test_added_items_are_the_full_build_and_old_files_are_not_rewritten(clotho, tmp_path: Path) -> None:
    folder = _index(clotho, 0, 1000).save(tmp_path / "clips.index")
    old_rows = folder_identity(folder / "embeddings.npy")
    report = add_to_index(folder, _index(clotho, 1000, 1100))
    add_to_index(folder, _index(clotho, 1100, 1200))
    assert (report.added, report.shard, report.total) == (100, "0001", 1100)
    grown = AudioIndex.load(folder)
    _same_items(grown, _index(clotho, 0, 1200))
    assert folder_identity(folder / "embeddings.npy") == old_rows  # linked, not copied or rewritten
    assert json.loads((folder / "index.json").read_text())["format_version"] == 2
    assert grown.layout.describe() == "3 parts (2 added by `fortekit index add`), 0 removed items"
    queries = np.asarray(clotho[2][5:25])
    for found, expected in zip(grown.search(queries, k=10), _index(clotho, 0, 1200).search(queries, k=10),
                               strict=True):
        np.testing.assert_array_equal(np.asarray(found), np.asarray(expected))


def test_removed_items_are_never_found_and_compaction_keeps_the_rest(clotho, tmp_path: Path) -> None:
    folder = _index(clotho, 0, 1000).save(tmp_path / "clips.index")
    add_to_index(folder, _index(clotho, 1000, 1200))
    ids = clotho[0]
    gone = [ids[3], ids[500], ids[1100], ids[1100], ids[1199]]
    report = remove_from_index(folder, gone)
    assert (report.removed, report.skipped, report.total) == (4, (), 1196)
    index = AudioIndex.load(folder)
    assert len(index) == 1196 and not set(gone) & set(index.ids)
    _, rows = index.search(np.asarray(clotho[2][[3, 500, 1100, 1199]]), k=5)
    assert not {index.ids[row] for row in np.asarray(rows).ravel()} & set(gone)
    compact_index(folder)
    compacted = AudioIndex.load(folder)
    _same_items(compacted, index)
    assert compacted.layout.describe() == "1 part" and not (folder / "shards").exists()
    assert json.loads((folder / "index.json").read_text())["format_version"] == 1
    add_to_index(folder, _index(clotho, 1100, 1101))  # an id removed earlier comes back as a new row
    assert AudioIndex.load(folder).ids[-1] == ids[1100]


@faiss_needed
def test_index_add_never_reads_the_hnsw_graph(clotho, tmp_path: Path,  # type: ignore[no-untyped-def]
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Its search settings are in index.json: a shard's graph is built from them alone."""
    from fortekit.search.index.faiss_search import FaissSearcher

    base = _index(clotho, 0, 400)
    base.build_faiss("hnsw", ef_search=48)
    folder = base.save(tmp_path / "clips.index")
    settings = {"ef_search": 48}
    assert json.loads((folder / "index.json").read_text(encoding="utf-8"))["faiss_settings"] == settings

    def no_reading(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("index add read the FAISS file")

    monkeypatch.setattr(FaissSearcher, "read", no_reading)
    add_to_index(folder, _index(clotho, 400, 460))
    monkeypatch.undo()
    grown = AudioIndex.load(folder)
    shard = folder / "shards" / "0001"
    assert FaissSearcher.read(shard / "faiss.index", "hnsw", count=60, dim=grown.dim).settings() == settings
    assert json.loads((folder / "index.json").read_text(encoding="utf-8"))["faiss_settings"] == settings
    _, found = grown.search(np.asarray(clotho[2][400:460:7]), k=5, use_faiss=True)
    assert (np.asarray(found) >= 0).all()
    meta = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    for bad in ({"ef_search": "48"}, {"ef_search": 0}, {"colour": 3}, [48]):
        (folder / "index.json").write_text(json.dumps({**meta, "faiss_settings": bad}), encoding="utf-8")
        with pytest.raises(AudioIndexError, match="E600"):
            AudioIndex.load(folder)


def _spy_on_faiss_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The flags of every ``faiss.read_index`` call from now on (0: the whole file read)."""
    import faiss

    flags: list[int] = []
    real = faiss.read_index

    def spied(path, io_flags=0):  # type: ignore[no-untyped-def]
        flags.append(int(io_flags))
        return real(path, io_flags)

    monkeypatch.setattr(faiss, "read_index", spied)
    return flags


@faiss_needed
def test_an_older_index_json_without_settings_has_them_read_mapped_once(  # type: ignore[no-untyped-def]
        clotho, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index written before index.json recorded them: the file is mapped, never read whole, and
    the settings are recorded by that first add, so that the next add does not open the file."""
    import faiss

    base = _index(clotho, 0, 400)
    base.build_faiss("hnsw", ef_search=40)
    folder = base.save(tmp_path / "clips.index")
    meta = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    del meta["faiss_settings"]
    (folder / "index.json").write_text(json.dumps(meta), encoding="utf-8")
    assert AudioIndex.load(folder).meta.faiss_settings == {}  # it loads as before
    flags = _spy_on_faiss_reads(monkeypatch)
    add_to_index(folder, _index(clotho, 400, 430))
    assert flags == [faiss.IO_FLAG_MMAP_IFC]  # mapped: the graph's pages are never read
    recorded = json.loads((folder / "index.json").read_text(encoding="utf-8"))["faiss_settings"]
    assert recorded == {"ef_search": 40}
    add_to_index(folder, _index(clotho, 430, 460))
    assert flags == [faiss.IO_FLAG_MMAP_IFC]  # the second add never opens the file
    compact_index(folder)  # one graph again, built from the recorded settings
    assert flags == [faiss.IO_FLAG_MMAP_IFC]
    monkeypatch.undo()
    compacted = AudioIndex.load(folder)
    assert len(compacted) == 460 and compacted.meta.faiss_settings == {"ef_search": 40}
    _, found = compacted.search(np.asarray(clotho[2][420:460:9]), k=5, use_faiss=True)
    assert np.asarray(found)[:, 0].tolist() == list(range(420, 460, 9))


@faiss_needed
def test_ivfpq_settings_are_recorded_and_index_add_reads_only_the_trained_cells(  # type: ignore[no-untyped-def]
        clotho, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import faiss

    from fortekit.search.index.describe import ann_line, index_facts

    base = _index(clotho, 0, 1000)
    base.build_faiss("ivfpq", nlist=20, nprobe=6, pq_bytes=48)
    folder = base.save(tmp_path / "clips.index")
    settings = {"nprobe": 6, "nlist": 20, "pq_bytes": 48}
    assert json.loads((folder / "index.json").read_text(encoding="utf-8"))["faiss_settings"] == settings
    flags = _spy_on_faiss_reads(monkeypatch)
    add_to_index(folder, _index(clotho, 1000, 1060))
    assert flags == [faiss.IO_FLAG_MMAP]  # the cells and codebooks read; the lists mapped and dropped
    monkeypatch.undo()
    grown = AudioIndex.load(folder)
    assert index_facts(grown, folder)["faiss_settings"] == settings
    assert ann_line(grown).startswith("FAISS ivfpq (nprobe 6, nlist 20, pq_bytes 48), recall@10")
    queries = np.asarray(clotho[2][1000:1060:6])
    _, found = grown.search(queries, k=10, use_faiss=True)
    _, exact = grown.search(queries, k=10)
    # the shard's codes were made with the base's codebooks: its own rows are found as in the base
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(np.asarray(found), np.asarray(exact),
                                                               strict=True)]) >= 0.5


@faiss_needed
@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivfpq"])
def test_each_shard_gets_an_ann_part_searched_and_merged_exactly(clotho, tmp_path: Path, kind: str) -> None:
    base = _index(clotho, 0, 1000)
    base.build_faiss(kind, nprobe=16) if kind == "ivfpq" else base.build_faiss(kind)
    folder = base.save(tmp_path / "clips.index")
    add_to_index(folder, _index(clotho, 1000, 1150))
    remove_from_index(folder, [clotho[0][1010], clotho[0][7]])
    grown = AudioIndex.load(folder)
    assert (folder / "shards" / "0001" / "faiss.index").is_file()
    queries = np.asarray(clotho[2][1000:1150:3])
    _, found = grown.search(queries, k=10, use_faiss=True)
    _, exact = grown.search(queries, k=10)
    found, exact = np.asarray(found), np.asarray(exact)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, exact, strict=True)])
    assert recall == 1.0 if kind == "flat" else recall >= (0.9 if kind == "hnsw" else 0.5)
    assert not {grown.ids[row] for row in found.ravel()} & {clotho[0][1010], clotho[0][7]}
    assert (found >= 0).all() and all(len(set(row)) == 10 for row in found)
    compact_index(folder)
    compacted = AudioIndex.load(folder)
    assert compacted.faiss_kind == kind and compacted.layout.describe() == "1 part"
    assert compacted.meta.ann_recall is None if kind == "flat" else compacted.meta.ann_recall > 0.5


def test_items_that_do_not_fit_are_refused_and_nothing_changes(clotho, tmp_path: Path) -> None:
    folder = _index(clotho, 0, 100).save(tmp_path / "clips.index")
    before = folder_identity(folder)
    ids, captions, rows = clotho
    other = AudioIndex.from_captions(ids[100:110], captions[100:110], "hf-clap", embeddings=rows[100:110],
                                     parse_captions=False)
    with pytest.raises(AudioIndexError, match=r"\[E630\].*backbone is 'hf-clap', the index's 'minilm'"):
        add_to_index(folder, other)
    narrow = AudioIndex.from_captions(ids[100:110], captions[100:110], "minilm",
                                      embeddings=rows[100:110, :64], parse_captions=False)
    with pytest.raises(AudioIndexError, match=r"\[E630\].*dim is 64"):
        add_to_index(folder, narrow)
    with pytest.raises(AudioIndexError, match=r"\[E644\]"):
        add_to_index(folder, _index(clotho, 0, 1))
    with pytest.raises(AudioIndexError, match=r"\[E633\] 2 id\(s\) to remove are not in the index"):
        remove_from_index(folder, [ids[0], "no-such.wav", "nor-this.wav"])
    with pytest.raises(AudioIndexError, match=r"\[E634\]"):
        remove_from_index(folder, ids[:100])
    assert folder_identity(folder) == before  # no new folder was swapped in
    report = remove_from_index(folder, [ids[0], "no-such.wav"], missing_ok=True)
    assert (report.removed, report.skipped) == (1, ("no-such.wav",))


def test_a_damaged_layout_is_named(clotho, tmp_path: Path) -> None:
    folder = _index(clotho, 0, 100).save(tmp_path / "clips.index")
    add_to_index(folder, _index(clotho, 100, 120))
    other = _index(clotho, 200, 300).save(tmp_path / "other.index")
    add_to_index(other, _index(clotho, 300, 320))
    stolen = tmp_path / "stolen.index"
    shutil.copytree(folder, stolen)
    shutil.rmtree(stolen / "shards" / "0001")
    shutil.copytree(other / "shards" / "0001", stolen / "shards" / "0001")
    with pytest.raises(AudioIndexError, match=r"\[E631\].*names the index"):
        AudioIndex.load(stolen)
    shutil.rmtree(stolen / "shards" / "0001")
    with pytest.raises(AudioIndexError, match=r"\[E632\].*0001"):
        AudioIndex.load(stolen)
    with pytest.raises(AudioIndexError, match=r"\[E632\]"):
        add_to_index(stolen, _index(clotho, 500, 501))
    (folder / "shards.json").write_text('{"index_id": "x", "shards": ["../../etc"]}')
    with pytest.raises(AudioIndexError, match=r"\[E600\].*shards is"):
        AudioIndex.load(folder)


@faiss_needed
def test_an_ann_file_of_other_rows_is_refused(clotho, tmp_path: Path) -> None:
    first, second = _index(clotho, 0, 300), _index(clotho, 300, 600)
    for index in (first, second):
        index.build_faiss("hnsw")
    mine, theirs = first.save(tmp_path / "a.index"), second.save(tmp_path / "b.index")
    shutil.copyfile(theirs / "faiss.index", mine / "faiss.index")  # same count and dimension, other rows
    with pytest.raises(AudioIndexError, match=r"\[E636\].*not found at their own places"):
        AudioIndex.load(mine).search(np.asarray(clotho[2][:1]), k=5, use_faiss=True)
    narrow = AudioIndex.from_captions(clotho[0][:300], clotho[1][:300], "minilm",
                                      embeddings=clotho[2][:300, :128], parse_captions=False)
    narrow.build_faiss("flat")
    shutil.copyfile(narrow.save(tmp_path / "c.index") / "faiss.index", mine / "faiss.index")
    with pytest.raises(AudioIndexError, match=r"\[E636\].*dimension 128"):
        AudioIndex.load(mine).search(np.asarray(clotho[2][:1]), k=5, use_faiss=True)


def test_a_failed_write_at_any_step_leaves_the_last_good_index(
        clotho, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _index(clotho, 0, 200).save(tmp_path / "clips.index")
    add_to_index(folder, _index(clotho, 200, 220))
    expected = AudioIndex.load(folder)
    real_fsync, calls = os.fsync, {"n": 0, "fail_at": 0}

    def failing_fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == calls["fail_at"]:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    for fail_at in range(1, 12):  # every file an add writes (shard files, shards.json, index.json, folder)
        calls.update(n=0, fail_at=fail_at)
        try:
            add_to_index(folder, _index(clotho, 220, 240))
        except OutputWriteError:
            _same_items(AudioIndex.load(folder), expected)
            continue
        break  # past the last write: this add went through
    assert len(AudioIndex.load(folder)) == 240


def test_a_second_writer_is_refused_at_once(clotho, tmp_path: Path) -> None:
    folder = _index(clotho, 0, 50).save(tmp_path / "clips.index")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with index_output_lock(folder):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(30)
    try:
        with pytest.raises(OutputLockedError, match=r"\[E742\]"):
            add_to_index(folder, _index(clotho, 50, 60))
    finally:
        release.set()
        holder.join()


_WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.growing import add_to_index, remove_from_index

    folder, round_ = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(int(round_))
    for step in range(1000):
        rows = rng.normal(size=(20, 32)).astype(np.float32)
        ids = [f"r{round_}-{step}-{i}" for i in range(20)]
        add_to_index(folder, AudioIndex.from_captions(ids, [None] * 20, "enc", embeddings=rows,
                                                      parse_captions=False))
        remove_from_index(folder, ids[:3])
        print(step, flush=True)
""")


@faiss_needed
def test_a_kill_at_any_moment_leaves_a_loadable_index(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    start = AudioIndex.from_captions([f"s{i}" for i in range(300)], [None] * 300, "enc",
                                     embeddings=rng.normal(size=(300, 32)), parse_captions=False)
    start.build_faiss("hnsw")
    folder = start.save(tmp_path / "grow.index")
    chooser = random.Random(7)
    lengths = set()
    for round_ in range(8):
        writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(folder), str(round_)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert writer.stdout is not None
        writer.stdout.readline()  # it has imported everything and made one add
        time.sleep(chooser.uniform(0.0, 0.4))
        writer.send_signal(signal.SIGKILL)
        writer.communicate()
        index = AudioIndex.load(folder)  # the last good index, whatever the writer was doing
        assert len(set(index.ids)) == len(index)
        batches: dict[str, int] = {}
        for item_id in index.ids[300:]:
            batch = item_id.rsplit("-", 1)[0]
            batches[batch] = batches.get(batch, 0) + 1
        assert set(batches.values()) <= {17, 20}  # each add whole, each removal whole: never a part
        index.search(rng.normal(size=(2, 32)), k=5, use_faiss=True)
        lengths.add(len(index))
    assert len(lengths) > 1  # the writer got on between kills
    compact_index(folder)  # and what the kills left behind is cleaned up by the next write
    assert sorted(path.name for path in tmp_path.iterdir()) == ["grow.index"]


def _write_captions(path: Path, ids: list[str], captions: list[str]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file_name", "caption_1"])
        writer.writerows(zip(ids, captions, strict=True))
    return path


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from fortekit.search.cli.main import main

    code = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def test_the_commands_add_remove_compact_with_the_recorded_backbone_and_parsing(
        clotho, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids, captions, _ = clotho
    first = _write_captions(tmp_path / "first.csv", ids[:40], captions[:40])
    more = _write_captions(tmp_path / "more.csv", ids[40:52], captions[40:52])
    folder = tmp_path / "clips.index"
    code, out, _ = _cli(["index", "build", "--captions", str(first), "-o", str(folder), "-q"], capsys)
    assert code == 0 and "search: exact (no ANN index)" in out  # --ann auto: exact below ANN_MIN_ITEMS
    code, out, _ = _cli(["index", "add", "--index", str(folder), "--captions", str(more), "-q"], capsys)
    assert code == 0 and "added 12 items" in out and "shard 0001; 52 items now" in out
    full = AudioIndex.from_captions(ids[:52], captions[:52], "minilm")
    grown = AudioIndex.load(folder)
    assert grown.ids == full.ids and grown.predicate_sets == full.predicate_sets  # parsed like the build
    np.testing.assert_allclose(np.asarray(grown.embeddings), np.asarray(full.embeddings), atol=1e-5)
    gone = tmp_path / "gone.txt"
    gone.write_text(f"{ids[0]}\n\n  {ids[45]}  \n", encoding="utf-8")
    code, out, _ = _cli(["index", "remove", "--index", str(folder), "--ids", str(gone)], capsys)
    assert code == 0 and "removed 2 items" in out and "50 items now" in out
    code, out, _ = _cli(["index", "info", "--index", str(folder), "--json"], capsys)
    facts = json.loads(out)
    assert (facts["count"], facts["parts"], facts["removed"]) == (50, 2, 2)
    code, out, err = _cli(["index", "remove", "--index", str(folder), "--ids", str(gone)], capsys)
    assert code == 2 and "[E633]" in err
    gone.write_bytes(b"\xff\xfe bad")
    code, out, err = _cli(["index", "remove", "--index", str(folder), "--ids", str(gone)], capsys)
    assert code == 2 and "[E615]" in err
    code, out, _ = _cli(["index", "compact", "--index", str(folder)], capsys)
    assert code == 0 and "into 1 part of 50 items" in out
    code, out, err = _cli(["index", "add", "--index", str(tmp_path / "none.index"), "--captions", str(more)],
                          capsys)
    assert code == 2 and "[E601]" in err
    both = ["--ann", "hnsw", "--faiss", "flat"]
    argv = ["index", "build", "--captions", str(first), "-o", str(tmp_path / "x"), *both]
    code, out, err = _cli(argv, capsys)
    assert code == 2 and "[E620]" in err
