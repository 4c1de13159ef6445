"""``fortekit index add`` with ids the index holds already: refused before any model loads or any
item is embedded (E644), naming the command that fixes it (``index remove``), not ``index build
--merge-duplicates``; on real Clotho development captions."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from fortekit.search.index.audio_index import AudioIndex
from fortekit.search.index.format import folder_identity

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CLOTHO = DATA / "clotho" / "clotho_captions_development.csv"


@pytest.fixture(scope="module")
def clotho() -> tuple[list[str], list[str]]:
    """60 Clotho development clips: ids (file names) and first captions."""
    if not CLOTHO.is_file():
        pytest.skip(f"the Clotho development captions are not at {CLOTHO} (../shared/data is absent)")
    with CLOTHO.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))[:60]
    return [row["file_name"] for row in rows], [row["caption_1"] for row in rows]


def _captions(path: Path, ids: list[str], captions: list[str]) -> Path:
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


def test_known_ids_are_refused_before_any_encoding_with_the_command_that_fixes_it(
        clotho, minilm, tmp_path: Path, capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    ids, captions = clotho
    folder = tmp_path / "clips.index"
    AudioIndex.from_captions(ids[:40], captions[:40], minilm, parse_captions=False).save(folder)
    before = folder_identity(folder)
    # two of the new rows are clips the index holds already
    overlap = _captions(tmp_path / "more.csv", [ids[3], *ids[40:50], ids[7]], [captions[3], *captions[40:50],
                                                                             captions[7]])

    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("a backbone was built: the ids must be checked before any model loads")

    monkeypatch.setattr("fortekit.plugins.get_backbone", no_model)
    code, _, err = _cli(["index", "add", "--index", str(folder), "--captions", str(overlap), "-q"], capsys)
    assert code == 2 and "[E644] 2 of the new item id(s) are in the index" in err
    assert repr(ids[3]) in err and repr(ids[7]) in err
    assert f"fortekit index remove --index {folder} --ids FILE" in err and "docs/audio_index.md" in err
    assert "index build" not in err and "--merge-duplicates" not in err
    assert folder_identity(folder) == before  # nothing was written
    # an id repeated in the new file itself: E605 names index add's own --merge-duplicates, still no model
    twice = _captions(tmp_path / "twice.csv", [ids[50], ids[50]], [captions[50], captions[51]])
    code, _, err = _cli(["index", "add", "--index", str(folder), "--captions", str(twice), "-q"], capsys)
    assert code == 2 and "[E605]" in err and "fortekit index add --captions" in err
    monkeypatch.undo()

    # the fix the message names: remove the two, then the same add succeeds
    gone = tmp_path / "gone.txt"
    gone.write_text(f"{ids[3]}\n{ids[7]}\n", encoding="utf-8")
    code, _, _ = _cli(["index", "remove", "--index", str(folder), "--ids", str(gone)], capsys)
    assert code == 0
    code, out, _ = _cli(["index", "add", "--index", str(folder), "--captions", str(overlap), "-q",
                         "--device", "cpu"], capsys)
    assert code == 0 and "added 12 items" in out and "50 items now" in out
    assert sorted(AudioIndex.load(folder).ids) == sorted(ids[:50])
