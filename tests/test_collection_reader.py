"""fortekit.collection_reader: one reader of collections for `index build`, `search --queries`,
`fol-refine` and `eval`, so that a BEIR folder needs no column options and one clip is one item."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from beir_fixtures import NEGATION, write_jsonl
from conftest import require, run_fol_refine

from fortekit.collection_reader import (
    ItemRecord,
    RecordError,
    item_record,
    query_field,
    query_id,
    read_items,
)
from fortekit.errors import AudioIndexError
from fortekit.search.index.sources import read_caption_file
from fortekit.search.refine.query_io import read_queries

# -- items --------------------------------------------------------------------------------------


def test_a_beir_corpus_line_is_one_item_of_its_captions(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    write_jsonl(path, [
        {"_id": "d1", "title": "", "text": "rain", "captions": ["rain", " rain on a roof ", "  "]},
        {"_id": 7, "title": "Dogs", "text": "", "captions": ["a dog barks", "barking"]},
        {"_id": "d3", "text": "wind"},
    ])
    items = read_items(path)
    assert [(r.id, r.text, r.texts, r.title) for r in items] == [
        ("d1", "rain", ("rain", "rain on a roof"), ""),
        ("7", "a dog barks", ("a dog barks", "barking"), "Dogs"),
        ("d3", "wind", ("wind",), None),
    ]
    table = read_caption_file(path)  # what `index build` reads: no column options
    assert table.ids == ["d1", "7", "d3"] and table.captions == ["rain", "a dog barks", "wind"]
    assert table.texts[1] == ("a dog barks", "barking")


def test_a_list_field_is_a_list_of_captions_never_its_printed_form(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_jsonl(path, [{"_id": "a", "captions": ["rain", "wind"]}, {"_id": "b", "captions": ["bell"]}])
    for table in (read_caption_file(path), read_caption_file(path, caption_column="captions")):
        assert table.captions == ["rain", "bell"] and table.texts == [("rain", "wind"), ("bell",)]
        assert not any("[" in str(caption) for caption in table.captions)
    write_jsonl(path, [{"_id": "a", "text": {"en": "rain"}}])
    with pytest.raises(AudioIndexError, match=r'\[E615\].*line 1: "text" is \{.en.: .rain.\}, not text'):
        read_caption_file(path)
    write_jsonl(path, [{"_id": "a", "text": "rain", "captions": "rain"}])
    with pytest.raises(AudioIndexError, match=r'\[E615\].*line 1: "captions" is .rain., not a list of str'):
        read_caption_file(path)


def test_a_record_without_text_keeps_its_behaviour(tmp_path: Path) -> None:
    """No text and no captions: an item without a caption (E617 when it is embedded), as before."""
    assert item_record({"_id": "a", "text": " "}, 3) == ItemRecord(3, "a", None)
    with pytest.raises(RecordError, match=r'line 2: it has no id \("_id" or "id" or "file_name"\)'):
        item_record({"text": "rain"}, 2)
    with pytest.raises(RecordError, match=r'"_id" is True'):
        item_record({"_id": True, "text": "rain"}, 2)


def test_caption_csvs_are_one_item_per_clip_unless_a_column_is_named(tmp_path: Path) -> None:
    clotho = tmp_path / "clotho.csv"
    clotho.write_text("file_name,caption_1,caption_2,caption_3\na.wav,rain,rain falls,\nb.wav,,,\n",
                      encoding="utf-8")
    assert [(r.id, r.text, r.texts) for r in read_items(clotho)] == [
        ("a.wav", "rain", ("rain", "rain falls")), ("b.wav", None, ())]
    assert [r.texts for r in read_items(clotho, text_column="caption_2")] == [("rain falls",), ()]
    audiocaps = tmp_path / "ac.csv"
    audiocaps.write_text("audiocap_id,youtube_id,start_time,caption\n1,v,30,a dog\n2,w,0,rain\n"
                         "3,v,30,barking\n4,v,60,a cat\n", encoding="utf-8")
    assert [(r.id, r.texts) for r in read_items(audiocaps)] == [
        ("v_30", ("a dog", "barking")), ("w", ("rain",)), ("v_60", ("a cat",))]
    plain = tmp_path / "plain.tsv"
    plain.write_text("_id\ttext\nx\tthunder\n", encoding="utf-8")
    assert [(r.id, r.texts) for r in read_items(plain)] == [("x", ("thunder",))]


def test_queries_are_read_from_query_or_beir_text_with_their_ids(tmp_path: Path) -> None:
    assert query_field({"_id": "q1", "text": "rain"}) == "text"
    assert query_field({"query": "a", "text": "b"}) == "query"
    assert query_id({"_id": "q1"}) == "q1" and query_id({"id": 3}) == "3" and query_id({"_id": ""}) is None
    path = tmp_path / "queries.jsonl"
    write_jsonl(path, [{"_id": "q1", "text": "rain without thunder", "metadata": {"kind": "without"}},
                       {"_id": "q2", "query": "a dog"}, {"text": "wind"}])
    lines = list(read_queries(path))
    assert [(q.query, q.query_id) for q in lines] == [("rain without thunder", "q1"), ("a dog", "q2"),
                                                      ("wind", None)]
    table = tmp_path / "queries.csv"
    table.write_text("_id,text\nq9,birds singing\n", encoding="utf-8")
    assert [(q.query, q.query_id) for q in read_queries(table)] == [("birds singing", "q9")]


# -- the same clip, the same item, in `index build` and `eval --beir` (real data) -----------------


@pytest.fixture(scope="module")
def beir_subset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 24 clips and 4 queries of negation/audiocaps_val (a development set), as a BEIR folder."""
    source = require(NEGATION / "audiocaps_val")
    folder = tmp_path_factory.mktemp("beir") / "audiocaps_val"
    (folder / "qrels").mkdir(parents=True)
    corpus = (source / "corpus.jsonl").read_text("utf-8").split("\n")[:24]
    queries = (source / "queries.jsonl").read_text("utf-8").split("\n")[:4]
    (folder / "corpus.jsonl").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    first = json.loads(corpus[0])["_id"]
    judged = "".join(f"{json.loads(line)['_id']}\t{first}\t1\n" for line in queries)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + judged, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def beir_index(beir_subset: Path) -> Path:
    from fortekit.search.cli import main

    out = beir_subset.parent / "I.index"
    # as the issue asks: no column options
    assert main(["index", "build", "--captions", str(beir_subset / "corpus.jsonl"), "-o", str(out),
                 "--device", "cpu", "-q"]) == 0
    return out


def test_index_build_makes_the_items_eval_makes(beir_subset: Path, beir_index: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.eval.beir import load_beir
    from fortekit.search.eval.beir_data import BeirData
    from fortekit.search.index import AudioIndex
    from fortekit.search.stage1.config import RefineConfig

    collection = load_beir(beir_subset)
    assert all(len(item.captions) == 5 for item in collection.items)  # a clip of five captions
    index = AudioIndex.load(beir_index)
    assert index.ids == [item.id for item in collection.items]
    assert index.captions == [item.text for item in collection.items]  # the same stored caption
    items = BeirData(collection, minilm, refine=RefineConfig.online()).items.numpy()
    gap = float(np.abs(index.embeddings - items).max())
    assert gap < 1e-6, gap  # the same vector: the mean of the clip's captions


def test_search_reads_beir_queries_and_writes_their_ids(beir_subset: Path, beir_index: Path) -> None:
    from fortekit.search.cli import main

    queries = beir_subset / "queries.jsonl"
    ids = [json.loads(line)["_id"] for line in queries.read_text("utf-8").splitlines()]
    out = beir_subset.parent / "ranked.jsonl"
    assert main(["search", "--index", str(beir_index), "--queries", str(queries), "-o", str(out), "-k", "2",
                 "--device", "cpu", "-q"]) == 0
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [r["query_id"] for r in records] == ids and all(len(r["hits"]) == 2 for r in records)
    trec = beir_subset.parent / "ranked.trec"
    assert main(["search", "--index", str(beir_index), "--queries", str(queries), "-o", str(trec), "-k", "1",
                 "--format", "trec", "--device", "cpu", "-q"]) == 0
    assert [line.split()[0] for line in trec.read_text("utf-8").splitlines()] == ids


def test_fol_refine_reads_beir_queries(beir_subset: Path, tmp_path: Path) -> None:
    queries = beir_subset / "queries.jsonl"
    out = tmp_path / "refined.jsonl"
    status, _, err = run_fol_refine(str(queries), "-o", str(out), "-q")
    assert status == 0, err
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    rows = [json.loads(line) for line in queries.read_text("utf-8").splitlines()]
    assert [(r["query_id"], r["query"]) for r in records] == [(row["_id"], row["text"]) for row in rows]
