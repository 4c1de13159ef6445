"""Dataset adapters: Clotho and AudioCaps CSVs as clips, on the real files and on edge cases."""

from __future__ import annotations

import csv
import doctest
import logging
from pathlib import Path

import pytest
from conftest import SHARED_DATA, require

import fortekit.search.eval.datasets as datasets_module
import fortekit.search.eval.tasks as tasks_module
from fortekit.errors import DataFileError, EvaluationError
from fortekit.search.eval.datasets import (
    Clip,
    load_audiocaps_csv,
    load_clotho_csv,
    load_collection,
    read_audiocaps_csv,
    read_clotho_csv,
    read_collection,
)
from fortekit.search.eval.tasks import audio_to_text_task, retrieval_task, split_by_clip

CLOTHO_DEV = SHARED_DATA / "clotho" / "clotho_captions_development.csv"
AUDIOCAPS = SHARED_DATA / "audiocaps"
HEADER_AC = "audiocap_id,youtube_id,start_time,caption\n"


def write(tmp_path: Path, text: str | bytes, name: str = "captions.csv") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def distinct_videos(path: Path) -> list[str]:
    """The youtube_ids of an AudioCaps CSV in first-seen order, read independently with csv."""
    with path.open(encoding="utf-8", newline="") as handle:
        return list(dict.fromkeys(row["youtube_id"] for row in csv.DictReader(handle)))


# -- real data ------------------------------------------------------------------------------


def test_clotho_development_has_2893_clips_of_5_captions() -> None:
    collection = read_clotho_csv(require(CLOTHO_DEV))
    clips = collection.clips
    assert len(clips) == 2893
    assert all(len(clip.captions) == 5 for clip in clips)
    assert clips[0].clip_id == "Distorted AM Radio noise.wav"
    assert clips[0].captions[0] == "A muddled noise of broken channel of the TV"
    # a quoted caption with a comma stays one caption
    assert clips[1].captions[3].startswith("He sighed as he turned the pages of the book, stopping")
    assert len({clip.clip_id for clip in clips}) == 2893
    report = collection.report
    assert report.clean and (report.rows, report.captions) == (2893, 5 * 2893)


@pytest.mark.parametrize("split", ["test", "val", "train"])
def test_audiocaps_groups_into_one_clip_per_youtube_id(split: str) -> None:
    path = require(AUDIOCAPS / f"{split}.csv")
    collection = read_audiocaps_csv(path)
    videos = distinct_videos(path)
    assert [clip.clip_id for clip in collection.clips] == videos  # first-seen order
    assert collection.report.captions == collection.report.rows  # no caption lost
    if split == "test":
        assert len(videos) == 975 and all(len(clip.captions) == 5 for clip in collection.clips)
    if split == "val":
        assert len(videos) == 495


def test_load_collection_sniffs_both_real_formats() -> None:
    assert load_collection(require(CLOTHO_DEV))[:3] == load_clotho_csv(CLOTHO_DEV)[:3]
    test_csv = require(AUDIOCAPS / "test.csv")
    assert load_collection(test_csv) == load_audiocaps_csv(test_csv)


def test_clotho_caption_indexed_tasks() -> None:
    clips = load_clotho_csv(require(CLOTHO_DEV))
    train, rest = split_by_clip(clips, 2000)
    assert (len(train), len(rest)) == (2000, 893) and train[-1] is clips[1999]
    task = retrieval_task(rest, item_captions="single")
    assert len(task) == 893 and task.dropped == 0
    assert task.queries[0] == rest[0].captions[0] and task.item_texts[0] == (rest[0].captions[1],)
    mean = retrieval_task(rest)
    assert mean.item_texts[5] == rest[5].captions[1:]
    reverse = audio_to_text_task(rest, collection="all")
    assert len(reverse.captions) == 5 * 893
    assert all(reverse.captions[t] == q for t, q in zip(reverse.targets, task.queries, strict=True))


# -- formats and bad input ------------------------------------------------------------------


def test_clotho_any_number_of_caption_columns_in_numeric_order(tmp_path: Path) -> None:
    header = "caption_10,file_name," + ",".join(f"caption_{i}" for i in range(1, 10))
    row = "ten,a.wav," + ",".join(f"c{i}" for i in range(1, 10))
    clips = load_clotho_csv(write(tmp_path, f"{header}\n{row}\n"))
    assert clips == [Clip("a.wav", (*(f"c{i}" for i in range(1, 10)), "ten"))]


def test_empty_captions_skipped_and_captionless_clips_dropped(tmp_path: Path) -> None:
    text = 'file_name,caption_1,caption_2\na.wav,one,  \nb.wav,,""\n\nc.wav,"three, with comma",x\n'
    collection = read_clotho_csv(write(tmp_path, text))
    assert collection.clips == [Clip("a.wav", ("one",)), Clip("c.wav", ("three, with comma", "x"))]
    report = collection.report
    assert (report.rows, report.empty_captions, report.dropped_clips, report.clean) == (3, 3, 1, False)
    ac = read_audiocaps_csv(write(tmp_path, HEADER_AC + "1,v,0,\n2,w,0,rain\n", "ac.csv"))
    assert ac.clips == [Clip("w", ("rain",))]
    assert (ac.report.empty_captions, ac.report.dropped_clips) == (1, 1)


def test_undecodable_bytes_are_replaced_and_counted(tmp_path: Path) -> None:
    data = (
        b"\xef\xbb\xbf" + HEADER_AC.encode()  # a BOM, dropped
        + b"1,v,0,a dog \xff barks\n"
        + b"2,v,0,caf\xe9 \xfe\n"
        + "3,w,0,a real \ufffd in the file\n".encode()  # not a decoding error
    )
    collection = read_audiocaps_csv(write(tmp_path, data))
    assert collection.clips[0].captions == ("a dog \ufffd barks", "caf\ufffd \ufffd")
    assert collection.report.undecodable_bytes == 3
    assert collection.clips[1].captions == ("a real \ufffd in the file",)


def test_unclean_load_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write(tmp_path, "file_name,caption_1\na.wav,\nb.wav,x\n")
    with caplog.at_level(logging.INFO, logger="fortekit.search.eval.datasets"):
        load_collection(path)
    assert caplog.records[-1].levelno == logging.WARNING
    assert "1 empty captions skipped, 1 clips dropped" in caplog.records[-1].getMessage()


def test_audiocaps_segments_of_one_video_stay_apart_in_first_seen_order(tmp_path: Path) -> None:
    text = HEADER_AC + "1,v,0,a\n2,w,5,b\n3,v,10,c\n4,v,0,d\n5,w,5,e\n"
    clips = load_audiocaps_csv(write(tmp_path, text))
    assert clips == [Clip("v_0", ("a", "d")), Clip("w", ("b", "e")), Clip("v_10", ("c",))]


def test_missing_file_is_a_data_file_error_with_the_fix(tmp_path: Path) -> None:
    for loader in (load_clotho_csv, load_audiocaps_csv, load_collection):
        with pytest.raises(DataFileError, match=r"\[E487\].*not found.*Clotho captions CSV"):
            loader(tmp_path / "nope.csv")


def test_unknown_header_lists_the_accepted_headers(tmp_path: Path) -> None:
    path = write(tmp_path, "id,text\n1,a dog\n")
    with pytest.raises(EvaluationError, match=r"\[E489\].*'id,text'.*file_name,caption_1.*youtube_id"):
        read_collection(path)
    with pytest.raises(EvaluationError, match=r"\[E489\]"):
        read_collection(write(tmp_path, b"", "empty.csv"))


def test_specific_loader_rejects_the_other_format(tmp_path: Path) -> None:
    audiocaps = write(tmp_path, HEADER_AC + "1,v,0,a\n")
    clotho = write(tmp_path, "file_name,caption_1\na.wav,x\n", "clotho.csv")
    with pytest.raises(EvaluationError, match=r"\[E490\].*not in the Clotho CSV format.*load_collection"):
        load_clotho_csv(audiocaps)
    with pytest.raises(EvaluationError, match=r"\[E490\].*not in the AudioCaps CSV format"):
        load_audiocaps_csv(clotho)


def test_unclosed_quote_is_reported_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'file_name,caption_1\na.wav,"never closed\nb.wav,x\n')
    with pytest.raises(EvaluationError, match=r"\[E491\].*line 3"):
        load_collection(path)


# -- splits and tasks -----------------------------------------------------------------------


CLIPS = [
    Clip("a", ("a1", "a2", "a3")),
    Clip("b", ("b1",)),
    Clip("c", ("c1", "c2")),
]


def test_split_by_clip_bounds() -> None:
    assert split_by_clip(CLIPS, 0) == ([], CLIPS)
    assert split_by_clip(CLIPS, 3) == (CLIPS, [])
    for bad in (-1, 4, 1.5, True):
        with pytest.raises(EvaluationError, match=r"\[E480\].*n_train"):
            split_by_clip(CLIPS, bad)  # type: ignore[arg-type]


def test_retrieval_task_modes_and_dropped_clips() -> None:
    mean = retrieval_task(CLIPS)
    assert mean.queries == ["a1", "c1"] and mean.item_texts == [("a2", "a3"), ("c2",)]
    assert (mean.targets, mean.clip_ids, mean.dropped) == ([0, 1], ["a", "c"], 1)
    second = retrieval_task(CLIPS, query_caption=1, item_captions="single")
    assert second.queries == ["a2"] and second.item_texts == [("a3",)] and second.dropped == 2
    last = retrieval_task([Clip("z", ("z1", "z2", "z3"))], query_caption=1, item_captions="single")
    assert last.item_texts == [("z3",)]
    wrap = retrieval_task([Clip("z", ("z1", "z2", "z3"))], query_caption=1)
    assert wrap.item_texts == [("z1", "z3")]


def test_retrieval_task_bad_options() -> None:
    with pytest.raises(EvaluationError, match=r"\[E480\].*item_captions"):
        retrieval_task(CLIPS, item_captions="median")  # type: ignore[arg-type]
    with pytest.raises(EvaluationError, match=r"\[E480\].*query_caption"):
        retrieval_task(CLIPS, query_caption=-1)
    with pytest.raises(EvaluationError, match=r"\[E492\].*none of the 3 clips has the 5 captions"):
        retrieval_task(CLIPS, query_caption=3)
    with pytest.raises(EvaluationError, match=r"\[E480\].*collection"):
        audio_to_text_task(CLIPS, collection="some")  # type: ignore[arg-type]


def test_audio_to_text_task_query_collection_is_the_transpose() -> None:
    forward = retrieval_task(CLIPS)
    reverse = audio_to_text_task(CLIPS)
    assert reverse.captions == forward.queries and reverse.item_texts == forward.item_texts
    assert reverse.targets == [0, 1] and reverse.relevant == [(0,), (1,)] and reverse.dropped == 1
    full = audio_to_text_task(CLIPS, collection="all", query_caption=1)
    assert full.captions == ["a1", "a2", "a3"] and full.targets == [1] and full.relevant == [(0, 1, 2)]
    assert full.caption_clips == [0, 0, 0] and full.clip_ids == ["a"] and full.dropped == 2


@pytest.mark.parametrize("module", [datasets_module, tasks_module], ids=lambda m: m.__name__)
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
