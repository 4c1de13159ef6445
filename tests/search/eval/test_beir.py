"""`fortekit eval --beir`: the BEIR loader, trec_eval metrics by hand, violation@10, the registry."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from beir_fixtures import CONCEPTS, CORPUS, QRELS, make_beir

from fortekit.errors import EvaluationError
from fortekit.search.eval.beir import load_beir, read_jsonl
from fortekit.search.eval.beir_metrics import (
    breakdown_fields,
    group_summary,
    per_query_measures,
    violation_at,
)
from fortekit.search.eval.beir_systems import SYSTEMS, BeirData, parse_systems
from fortekit.search.stage1.config import RefineConfig

# -- the loader ---------------------------------------------------------------------------------


def test_loader_reads_items_queries_qrels_and_concepts(tmp_path: Path) -> None:
    collection = load_beir(make_beir(tmp_path / "b"))
    assert [item.id for item in collection.items] == [row["_id"] for row in CORPUS]
    assert collection.items[0].captions == tuple(CORPUS[0]["captions"])
    assert collection.items[0].text == "a dog barks in the rain"
    assert [q.id for q in collection.queries] == ["q1", "q2", "q3", "q4"]
    assert collection.queries[0].metadata == {"kind": "without", "a": "dog", "b": "rain"}
    assert collection.qrels["q4"] == {"d1": 1, "d3": 0}
    assert collection.relevant("q4") == {"d1"}
    assert collection.item_concepts is not None and collection.item_concepts["d7"]["thunder"] == 2
    assert set(collection.files) == {"corpus", "queries", "qrels", "item_concepts"}


def test_unicode_line_separators_inside_a_caption_do_not_split_the_line(tmp_path: Path) -> None:
    corpus = [dict(CORPUS[0], captions=["a dog\u2028barks", "rain\u0085falls", "x\u2029y"]), *CORPUS[1:]]
    folder = make_beir(tmp_path / "b", corpus=corpus)
    raw = (folder / "corpus.jsonl").read_text(encoding="utf-8")
    assert len(raw.splitlines()) > len(CORPUS)  # what str.splitlines would have done
    collection = load_beir(folder)
    assert len(collection.items) == len(CORPUS)
    assert collection.items[0].captions == ("a dog\u2028barks", "rain\u0085falls", "x\u2029y")


def test_crlf_bom_and_blank_lines_are_tolerated(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "b")
    text = (folder / "queries.jsonl").read_text(encoding="utf-8")
    (folder / "queries.jsonl").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n\n").encode())
    qrels = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_bytes(b"\xef\xbb\xbf" + qrels.replace("\n", "\r\n").encode())
    assert [q.id for q in load_beir(folder).queries] == ["q1", "q2", "q3", "q4"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [("{not json", "not JSON"), ("[1, 2]", "a JSON list"), ('{"text": "x"}', '"_id"'),
     ('{"_id": "z", "text": "x", "captions": "one"}', '"captions"'), ('{"_id": "z"}', '"text"')],
)
def test_a_bad_corpus_line_names_the_file_and_the_line(tmp_path: Path, line: str, problem: str) -> None:
    folder = make_beir(tmp_path / "b")
    with (folder / "corpus.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    with pytest.raises(EvaluationError, match=r"\[E501\]") as caught:
        load_beir(folder)
    message = str(caught.value)
    assert "corpus.jsonl" in message and f"line {len(CORPUS) + 1}" in message and problem in message


def test_invalid_utf8_is_a_coded_error_with_the_line(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "b")
    with (folder / "queries.jsonl").open("ab") as handle:
        handle.write(b'{"_id": "q9", "text": "caf\xe9"}\n')
    with pytest.raises(EvaluationError, match=r"\[E501\].*queries.jsonl, line 5: not valid UTF-8"):
        load_beir(folder)


@pytest.mark.parametrize("missing", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_a_missing_file_is_named(tmp_path: Path, missing: str) -> None:
    folder = make_beir(tmp_path / "b")
    (folder / missing).unlink()
    with pytest.raises(EvaluationError, match=r"\[E500\]") as caught:
        load_beir(folder)
    assert missing in str(caught.value)


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "b", corpus=[*CORPUS, CORPUS[2]])
    with pytest.raises(EvaluationError, match=r"\[E502\].*line 9: the id 'd3' was already given on line 3"):
        load_beir(folder)


@pytest.mark.parametrize(
    ("qrels", "code", "text"),
    [([*QRELS, ("q1", "d99", 1)], "E504", "1 corpus id(s) that corpus.jsonl lacks (first on line 8: 'd99')"),
     ([*QRELS, ("q77", "d1", 1)], "E504", "1 query id(s) that queries.jsonl lacks"),
     ([*QRELS, ("q1", "d2", 1)], "E503", "judged already on line 2"),
     ([*QRELS, ("q1", "d3", "high")], "E503", "not an integer")],
)
def test_bad_qrels_are_reported(tmp_path: Path, qrels: list, code: str, text: str) -> None:
    folder = make_beir(tmp_path / "b", qrels=qrels)
    with pytest.raises(EvaluationError, match=rf"\[{code}\]") as caught:
        load_beir(folder)
    assert text in str(caught.value) and "test.tsv" in str(caught.value)


def test_unknown_ids_in_item_concepts_are_reported(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "b", concepts={**CONCEPTS, "ghost": {"dog": 1}})
    with pytest.raises(EvaluationError, match=r"\[E504\].*item_concepts.jsonl.*'ghost'"):
        load_beir(folder)


def test_queries_without_a_relevant_item_are_dropped_and_counted(tmp_path: Path) -> None:
    collection = load_beir(make_beir(tmp_path / "b", qrels=[q for q in QRELS if q[0] != "q3"]))
    assert [q.id for q in collection.queries] == ["q1", "q2", "q4"] and collection.dropped_queries == 1
    with pytest.raises(EvaluationError, match=r"\[E505\]"):
        load_beir(make_beir(tmp_path / "c", qrels=[("q4", "d3", 0)]))
    assert [q.id for q in collection.limit_queries(2).queries] == ["q1", "q2"]


def test_a_missing_audio_file_is_named(tmp_path: Path) -> None:
    corpus = [dict(CORPUS[0], audio="audio/d1.wav"), *CORPUS[1:]]
    with pytest.raises(EvaluationError, match=r"\[E510\].*'d1'.*d1.wav"):
        load_beir(make_beir(tmp_path / "b", corpus=corpus))


def test_read_jsonl_skips_blank_lines_and_keeps_numbers(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"_id": "a"}\n\n  \n{"_id": "b"}', encoding="utf-8")
    assert [(n, row["_id"]) for n, row in read_jsonl(path)] == [(1, "a"), (4, "b")]


# -- items from audio through the backbone's audio encoder ---------------------------------------


class FakeAudioBackbone:
    """Text and audio towers of 3 dimensions; records the audio it was asked to embed."""

    name, dim, device, sample_rate = "fake-clap", 3, "cpu", 16000

    def __init__(self) -> None:
        self.audio: list[Path] = []

    def encode_text(self, texts: list[str]) -> torch.Tensor:
        return torch.nn.functional.normalize(torch.tensor([[1.0, len(t) % 5, 0.5] for t in texts]), dim=1)

    def encode_audio(self, items: list[Path]) -> torch.Tensor:
        self.audio.extend(items)
        return torch.tensor([[0.0, 0.0, 1.0]] * len(items))


def test_items_with_audio_use_the_audio_encoder_the_others_their_captions(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    (folder / "audio").mkdir(parents=True)
    (folder / "audio" / "d1.wav").write_bytes(b"RIFF")
    corpus = [dict(CORPUS[0], audio="audio/d1.wav"), *CORPUS[1:]]
    backbone = FakeAudioBackbone()
    data = BeirData(load_beir(make_beir(folder, corpus=corpus)), backbone, refine=RefineConfig.online())  # type: ignore[arg-type]
    items = data.items
    assert backbone.audio == [(folder / "audio" / "d1.wav").resolve()]
    assert items[0].tolist() == [0.0, 0.0, 1.0]
    assert data.item_sources == {"audio": 1, "captions": 7, "text": 0}
    assert torch.allclose(items.norm(dim=1), torch.ones(len(corpus)))


# -- metrics ------------------------------------------------------------------------------------


def test_trec_eval_metrics_match_hand_computed_values() -> None:
    ids = [f"d{i}" for i in range(1, 13)]
    qrels = {"q1": {"d1": 1, "d3": 1, "d2": 0}, "q2": {"d12": 1}, "q3": {"d4": 2, "d5": 1}}
    rankings = {
        "q1": ids,                                   # relevant at ranks 1 and 3
        "q2": [i for i in ids if i != "d12"] + ["d12"],  # relevant at rank 12
        "q3": ["d5", "d4", *[i for i in ids if i not in ("d4", "d5")]],  # gains 1 then 2
    }
    values = per_query_measures(qrels, rankings)
    log2_3 = 1.584962500721156
    q1 = values["q1"]
    assert q1["nDCG@10"] == pytest.approx((1 + 1 / 2) / (1 + 1 / log2_3))
    assert q1["AP"] == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert (q1["P@10"], q1["R@1"], q1["R@5"], q1["R@10"]) == pytest.approx((0.2, 0.5, 1.0, 1.0))
    q2 = values["q2"]
    assert q2["AP"] == pytest.approx(1 / 12)
    assert (q2["nDCG@10"], q2["P@10"], q2["R@1"], q2["R@5"], q2["R@10"]) == (0.0, 0.0, 0.0, 0.0, 0.0)
    q3 = values["q3"]
    assert q3["nDCG@10"] == pytest.approx((1 + 2 / log2_3) / (2 + 1 / log2_3))
    assert q3["AP"] == pytest.approx(1.0)
    assert (q3["P@10"], q3["R@1"], q3["R@5"]) == pytest.approx((0.2, 0.5, 1.0))


def test_a_query_without_a_ranking_scores_zero() -> None:
    assert per_query_measures({"q": {"a": 1}}, {})["q"]["AP"] == 0.0


def test_violation_at_10_counts_items_mentioning_b_once_or_more() -> None:
    concepts = {"a": {"rain": 1}, "b": {"rain": 0}, "c": {"wind": 3}, "d": {"rain": 5}}
    top = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "d"]
    assert violation_at(top, "rain", concepts) == pytest.approx(2 / 10)
    assert violation_at(["a", "d"], "rain", concepts) == 1.0
    assert violation_at([], "rain", concepts) == 0.0


def test_breakdown_fields_and_group_summary() -> None:
    metadata = [{"kind": "and", "a": str(i), "flag": True} for i in range(12)]
    metadata[0]["kind"] = "without"
    assert breakdown_fields(metadata) == ["kind"]  # a: 12 values; flag: 1 value
    with pytest.raises(EvaluationError, match=r"\[E507\].*'colour'"):
        breakdown_fields(metadata, ["colour"])
    rows = [{"nDCG@10": 1.0, "AP": 0.5, "violation@10": 0.1},
            {"nDCG@10": 0.0, "AP": 0.5, "violation@10": None}]
    summary = group_summary(rows, rows)
    assert summary["nDCG@10"] == 0.5 and summary["violation@10"] == pytest.approx(0.1)
    assert summary["p_nDCG@10"] == 1.0 and summary["t_AP"] == 0.0
    assert group_summary(rows[:1], rows[:1])["p_AP"] is None


def test_the_registry_keeps_baseline_first_and_refuses_unknown_names() -> None:
    assert list(SYSTEMS)[:3] == ["baseline", "S3-paper", "S3-polarity"]
    assert parse_systems("s3-polarity, formula") == ["baseline", "S3-polarity", "formula"]
    with pytest.raises(EvaluationError, match=r"\[E506\].*'S9'"):
        parse_systems("baseline,S9")
