"""Why a hit ranks where it does: each hit's score parts sum to its score (issue 46, item 1).

On a development negation set (AudioCaps val, BEIR layout), indexed by its captions: the JSON
output of the default pipeline, its score parts per hit, over the set's exclusion and
conjunction queries.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED_DATA, require

from fortekit.search.hits import format_score_parts, score_bar

DEV_SET = SHARED_DATA / "negation" / "audiocaps_val"


@pytest.fixture(scope="module")
def dev_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fortekit.plugins import get_backbone
    from fortekit.search.index import AudioIndex

    lines = (require(DEV_SET) / "corpus.jsonl").read_text("utf-8").splitlines()
    corpus = [json.loads(line) for line in lines]
    directory = tmp_path_factory.mktemp("dev") / "audiocaps_val.index"
    minilm = get_backbone("minilm", device="cpu")
    index = AudioIndex.from_captions([row["_id"] for row in corpus], [row["text"] for row in corpus], minilm)
    index.save(directory)
    return directory


def test_the_score_parts_sum_to_the_score_over_a_development_negation_set(dev_index: Path) -> None:
    from fortekit.search import Retriever

    queries = [json.loads(line) for line in (DEV_SET / "queries.jsonl").read_text("utf-8").splitlines()]
    texts = [row["text"] for row in queries[::4]]  # every fourth: both kinds, every pair
    retriever = Retriever(dev_index, device="cpu")
    records = [json.loads(json.dumps(result.to_dict())) for result in retriever.search(texts, k=10)]
    stages_seen: set[str] = set()
    for record in records:
        for hit in record["hits"]:
            parts = hit["score_parts"]
            assert parts and parts[0]["stage"] == "similarity"
            assert abs(sum(part["amount"] for part in parts) - hit["score"]) <= 1e-6, (record["query"], hit)
            stages_seen |= {part["stage"] for part in parts}
    assert "formula" in stages_seen  # the default scores exclusions by their formula
    moved = [part["amount"] for record in records for hit in record["hits"] for part in hit["score_parts"]
             if part["stage"] == "formula"]
    assert any(abs(amount) > 1e-4 for amount in moved)


def test_explain_prints_the_labelled_parts(dev_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.search.cli.main import main

    assert main(["search", "--index", str(dev_index), "a dog barking without birds chirping", "-k", "3",
                 "--explain", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert out.count("score = similarity") == 3


def test_the_bar_and_the_line_label_every_part() -> None:
    parts = (("similarity", 0.5), ("formula", -0.125), ("stage3", 0.02))
    assert format_score_parts(parts) == "similarity 0.500 · formula −0.125 · stage3 +0.020"
    bar = score_bar(parts)
    assert bar.count("<rect") == 3 and 'data-stage="formula"' in bar and 'fill="none"' in bar
    assert score_bar(()) == ""
