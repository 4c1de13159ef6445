"""An index's state and the index's own rules (issue 43, cases 3, 8, 9, 10 and 12).

* case 3: a resumed ``search -o`` / ``fol-refine --index -o`` output records the index's state and
  is refused (E638) once ``index add``, ``remove`` or ``compact`` changed it;
* case 8: an index whose every item is removed is refused at load and search (E639), ``index
  info`` reports 0 items, ``compact`` writes nothing;
* case 9: a folder left in ``shards/`` never makes ``index add`` fail with "File exists": a shard
  of ours is left out, anything else is named (E641) and never deleted;
* case 10: one id rule (E640) at build and add; ``index remove --ids`` splits its file at ``\\n`` only;
* case 12: two processes saving one folder at once: one saves, the other gets E742.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from cafe_fixtures import CAFE

from fortekit.errors import AudioIndexError, QueryFileError
from fortekit.search.index import AudioIndex, index_state
from fortekit.search.index.format import IndexMeta, IndexRecords, check_item_ids
from fortekit.search.index.growing import add_to_index, compact_index, remove_from_index
from fortekit.search.index.writing import write_index_files


def _small(ids: list[str], dim: int = 4, seed: int = 0) -> AudioIndex:
    rows = np.random.default_rng(seed).normal(size=(len(ids), dim))
    return AudioIndex.from_captions(ids, [None] * len(ids), "enc", embeddings=rows, parse_captions=False)


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from fortekit.search.cli.main import main

    code = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def _snapshot(folder: Path) -> dict[str, bytes]:
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    return {str(path.relative_to(folder)): path.read_bytes() for path in files}


# --- case 3: the state ---------------------------------------------------------------------------
def test_the_state_changes_with_every_write_and_only_then(tmp_path: Path) -> None:
    folder = _small([f"c{n}" for n in range(6)]).save(tmp_path / "a.index")
    first = index_state(folder)
    assert first == index_state(folder) == index_state(AudioIndex.load(folder)) and first.startswith("none-")
    states = [first]
    add_to_index(folder, _small(["n1", "n2"], seed=1))
    states.append(index_state(folder))
    remove_from_index(folder, ["c0"])
    states.append(index_state(folder))
    compact_index(folder)
    states.append(index_state(folder))
    _small([f"c{n}" for n in range(6)]).save(folder, overwrite=True)  # the same items, written again
    states.append(index_state(folder))
    assert len(set(states)) == len(states), states
    identity = json.loads((tmp_path / "a.index" / "index.json").read_text()).get("index_id")
    assert identity is None and states[1].split("-")[0] == states[3].split("-")[0] != "none"
    moved = folder.rename(tmp_path / "moved.index")  # a move keeps the files: the same state
    assert index_state(moved) == states[-1]
    with pytest.raises(AudioIndexError, match=r"\[E643\]"):
        index_state(_small(["x"]))  # built in memory: no folder, no state


def test_a_resumed_search_is_refused_after_add_remove_or_compact(
        minilm, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    folder = AudioIndex.from_captions([f"clip{n}" for n in range(6)], CAFE[:6], minilm).save(tmp_path / "i")
    queries, out = tmp_path / "q.txt", tmp_path / "out.jsonl"
    queries.write_text("rain on a roof\n", encoding="utf-8")
    search = ["search", "--index", str(folder), "--queries", str(queries), "-o", str(out), "-k", "2", "-q"]
    assert _cli(search, capsys)[0] == 0
    recorded = json.loads(Path(f"{out}.settings.json").read_text())["index_state"]
    assert recorded == index_state(folder)
    queries.write_text("rain on a roof\nbirds chirping\n", encoding="utf-8")
    changes = [lambda: add_to_index(folder, AudioIndex.from_captions(["clip6", "clip7"], CAFE[6:], minilm)),
               lambda: remove_from_index(folder, ["clip0"]), lambda: compact_index(folder)]
    for change in changes:
        before, then = out.read_bytes(), index_state(folder)
        change()
        code, _, err = _cli(search, capsys)
        assert code == 2 and "[E638]" in err and then in err and index_state(folder) in err
        assert "--overwrite" in err and out.read_bytes() == before  # nothing appended
        assert _cli([*search, "--overwrite"], capsys)[0] == 0  # the fix: rank again against the new state
        assert len(out.read_text().splitlines()) == 2
    assert _cli(search, capsys)[0] == 0  # the same state: resumed, nothing added
    assert len(out.read_text().splitlines()) == 2


def test_an_output_of_an_older_fortekit_without_a_state_is_not_resumed(tmp_path: Path) -> None:
    from fortekit.search.refine.resume import check_settings, write_settings

    out = tmp_path / "out.jsonl"
    write_settings(out, {"index": "/i", "k": 5})
    with pytest.raises(QueryFileError, match=r"\[E638\].*unrecorded.*now in the state abc"):
        check_settings(out, {"index": "/i", "k": 5, "index_state": "abc"}, resuming=True)
    write_settings(out, {"index": "/i", "k": 5, "index_state": "abc"})
    check_settings(out, {"index": "/i", "k": 5, "index_state": "abc"}, resuming=True)


def test_a_search_whose_index_changed_while_it_started_is_refused(tmp_path: Path) -> None:
    from fortekit.search.cli.search_file import _check_loaded_state

    folder = _small(["a", "b"]).save(tmp_path / "i")
    recorded = index_state(folder)
    _check_loaded_state(folder, recorded, AudioIndex.load(folder))
    add_to_index(folder, _small(["c"], seed=2))
    with pytest.raises(AudioIndexError, match=r"\[E642\]"):
        _check_loaded_state(folder, recorded, AudioIndex.load(folder))


def test_a_resumed_fol_refine_is_refused_after_the_index_changed(minilm, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from conftest import run_fol_refine

    folder = AudioIndex.from_captions([f"clip{n}" for n in range(6)], CAFE[:6], minilm).save(tmp_path / "i")
    queries, out = tmp_path / "q.txt", tmp_path / "out.jsonl"
    queries.write_text("rain on a roof\n", encoding="utf-8")
    refine = [str(queries), "--index", str(folder), "-o", str(out), "-k", "2", "-B", "1", "-D", "1",
              "--anchors", "none", "--elaborator", "lexical", "--quiet"]
    status, _, err = run_fol_refine(*refine)
    assert status == 0, err
    then = index_state(folder)
    remove_from_index(folder, ["clip5"])
    queries.write_text("rain on a roof\nbirds chirping\n", encoding="utf-8")
    before = out.read_bytes()
    status, _, err = run_fol_refine(*refine)
    assert status == 2 and "[E638]" in err and then in err and index_state(folder) in err
    assert out.read_bytes() == before


def test_fol_refine_records_the_state_of_the_index_it_loaded(tmp_path: Path) -> None:
    from fortekit.search.cli.refine import _settings
    from fortekit.search.cli.refine_args import build_refine_parser

    folder = _small(["a", "b"]).save(tmp_path / "i")
    args = build_refine_parser().parse_args(["q.txt", "--index", str(folder)])
    assert _settings(args, "jsonl", AudioIndex.load(folder))["index_state"] == index_state(folder)
    assert "index_state" not in _settings(args, "jsonl")  # no index: settings as before states were


# --- case 8: an index of no items ----------------------------------------------------------------
def test_an_index_whose_every_item_is_removed_has_one_behaviour(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _small(["a", "b", "c"]).save(tmp_path / "e.index")
    add_to_index(folder, _small(["d"], seed=3))
    manifest = json.loads((folder / "shards.json").read_text())
    manifest["removed"] = {"base": [0, 1, 2], "0001": [0]}  # by hand: `index remove` refuses it (E634)
    (folder / "shards.json").write_text(json.dumps(manifest))
    with pytest.raises(AudioIndexError, match=r"\[E639\].*removes all 4 rows of its 2 part"):
        AudioIndex.load(folder)
    code, out, err = _cli(["index", "info", "--index", str(folder)], capsys)
    assert code == 0 and "0 (every item is removed)" in out and "[E639]" in err
    code, out, _ = _cli(["index", "info", "--index", str(folder), "--json"], capsys)
    assert code == 0 and json.loads(out)["count"] == 0
    code, _, err = _cli(["search", "--index", str(folder), "rain"], capsys)
    assert code == 2 and "[E639]" in err and "E613" not in err
    before = _snapshot(folder)
    code, _, err = _cli(["index", "compact", "--index", str(folder)], capsys)
    assert code == 2 and "[E639]" in err and _snapshot(folder) == before  # nothing written
    with pytest.raises(AudioIndexError, match=r"\[E639\]"):
        AudioIndex(np.zeros((0, 4), dtype=np.float32), IndexRecords([], [], [], []),
                   IndexMeta(backbone="enc", dim=4, count=0))
    with pytest.raises(AudioIndexError, match=r"\[E639\]"):
        write_index_files(tmp_path / "none.index", IndexMeta(backbone="enc", dim=4, count=0),
                          np.zeros((0, 4), dtype=np.float32), IndexRecords([], [], [], []))
    assert not (tmp_path / "none.index").exists()
    assert add_to_index(folder, _small(["e"], seed=4)).total == 1  # the fix: add items
    assert AudioIndex.load(folder).ids == ["e"]


# --- case 9: folders left in shards/ -------------------------------------------------------------
def test_a_foreign_folder_in_shards_is_named_and_kept(tmp_path: Path) -> None:
    folder = _small(["a", "b", "c"]).save(tmp_path / "s.index")
    add_to_index(folder, _small(["d"], seed=5))
    stray = folder / "shards" / "0002"
    stray.mkdir()
    (stray / "notes.txt").write_text("mine", encoding="utf-8")
    before = _snapshot(folder)
    changes = (lambda: add_to_index(folder, _small(["e"], seed=6)), lambda: remove_from_index(folder, ["a"]),
               lambda: compact_index(folder), lambda: _small(["z"]).save(folder, overwrite=True))
    for change in changes:
        with pytest.raises(AudioIndexError, match=r"\[E641\].*shards/0002/notes\.txt.*Move it out"):
            change()
        assert _snapshot(folder) == before
    (stray / "notes.txt").unlink()  # an empty folder nobody lists: still not ours to delete
    with pytest.raises(AudioIndexError, match=r"\[E641\].*shards/0002: it is not a shard that shards.json"):
        add_to_index(folder, _small(["e"], seed=6))
    stray.rmdir()
    assert add_to_index(folder, _small(["e"], seed=6)).shard == "0002"


def test_a_shard_of_ours_that_shards_json_no_longer_lists_is_left_out(tmp_path: Path) -> None:
    folder = _small(["a", "b"]).save(tmp_path / "s.index")
    add_to_index(folder, _small(["c"], seed=7))
    add_to_index(folder, _small(["d"], seed=8))
    manifest = json.loads((folder / "shards.json").read_text())
    manifest["shards"] = ["0001"]  # 0002 taken off by hand: its folder (with the marker) stays
    (folder / "shards.json").write_text(json.dumps(manifest))
    report = add_to_index(folder, _small(["e"], seed=9))
    assert report.shard == "0003"  # never the name of a folder that is there (it was "File exists")
    assert sorted(path.name for path in (folder / "shards").iterdir()) == ["0001", "0003"]
    assert AudioIndex.load(folder).ids == ["a", "b", "c", "e"]
    assert (folder / "shards" / "0003" / ".fortekit-output").is_file()


# --- case 10: the id rule -----------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["clip\u20281", "clip\x851", "clip\r1", "clip\n1", "clip\t1", "", " clip"])
def test_an_id_that_cannot_be_one_line_is_refused_at_build_and_add(bad: str, tmp_path: Path) -> None:
    with pytest.raises(AudioIndexError, match=r"\[E640\] Item 2 "):
        AudioIndex.from_captions(["ok", bad], [None, None], "enc", embeddings=np.eye(2), parse_captions=False)
    folder = _small(["a"]).save(tmp_path / "i")
    odd = AudioIndex(np.eye(1, 4, dtype=np.float32), IndexRecords([bad], [None], [None], [frozenset()]),
                     IndexMeta(backbone="enc", dim=4, count=1, parsed=False))
    with pytest.raises(AudioIndexError, match=r"\[E640\] Item 1 "):
        add_to_index(folder, odd)
    check_item_ids(["a dog, barking", "Y--0w1YabIS4.wav", "clip\u00a0"])  # other text is any id's


def test_the_command_names_the_row_and_remove_reads_ids_whole(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    captions = tmp_path / "c.csv"
    with captions.open("w", encoding="utf-8", newline="") as handle:
        rows = [["file_name", "caption_1"], ["a.wav", "rain"], ["b\u2028c.wav", "wind"]]
        csv.writer(handle).writerows(rows)
    build = ["index", "build", "--captions", str(captions), "-o", str(tmp_path / "x"), "-q"]
    code, _, err = _cli(build, capsys)
    assert code == 2 and "[E640] Item 2 of the captions file" in err and "U+2028 (LINE SEPARATOR)" in err
    assert not (tmp_path / "x").exists()
    # An index written before the rule holds such ids: remove reads them back whole.
    legacy = ["a\u2028b", "c\x85d", "e\rf", "plain"]
    records = IndexRecords(legacy, [None] * 4, [None] * 4, [frozenset()] * 4)
    meta = IndexMeta(backbone="enc", dim=4, count=4, parsed=False)
    folder = write_index_files(tmp_path / "old.index", meta, np.eye(4, dtype=np.float32), records)
    gone = tmp_path / "gone.txt"
    gone.write_bytes("a\u2028b\r\n\n  c\x85d  \n".encode())
    code, out, err = _cli(["index", "remove", "--index", str(folder), "--ids", str(gone)], capsys)
    assert code == 0 and "removed 2 items" in out, err
    assert AudioIndex.load(folder).ids == ["e\rf", "plain"]


# --- case 12: two saves at once -----------------------------------------------------------------
_SAVER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import numpy as np
    from fortekit.errors import OutputLockedError
    from fortekit.search.index import AudioIndex

    folder, go, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    index = AudioIndex.from_captions([f"c{n}" for n in range(count)], [None] * count, "enc",
                                     embeddings=np.random.default_rng(count).normal(size=(count, 64)),
                                     parse_captions=False)
    while not go.exists():
        time.sleep(0.001)
    try:
        index.save(folder, overwrite=True)
        print("saved")
    except OutputLockedError as exc:
        print(str(exc)[:6])
""")


def test_two_processes_saving_one_folder_at_once_give_one_index_or_e742(tmp_path: Path) -> None:
    for trial in range(2):
        folder, go = tmp_path / f"t{trial}" / "x.index", tmp_path / f"go{trial}"
        savers = [subprocess.Popen([sys.executable, "-c", _SAVER, str(folder), str(go), str(count)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for count in (3000, 3001)]
        go.touch()
        results = [saver.communicate(timeout=120) for saver in savers]
        outcomes = sorted(out.strip() for out, _ in results)
        assert all(saver.returncode == 0 for saver in savers), [err for _, err in results]
        assert outcomes in (["saved", "saved"], ["[E742]", "saved"]), results
        assert len(AudioIndex.load(folder)) in (3000, 3001)
        assert not [path.name for path in folder.parent.iterdir() if path.name.endswith((".tmp", ".old"))]
