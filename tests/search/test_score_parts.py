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


def _index_of(folder: Path, directory: Path) -> Path:
    from fortekit.plugins import get_backbone
    from fortekit.search.index import AudioIndex

    corpus = [json.loads(line) for line in (require(folder) / "corpus.jsonl").read_text("utf-8").splitlines()]
    index = AudioIndex.from_captions([row["_id"] for row in corpus], [row["text"] for row in corpus],
                                     get_backbone("minilm", device="cpu"))
    index.save(directory)
    return directory


@pytest.mark.parametrize(("name", "every"), [("audiocaps_val", 4), ("clotho_development", 12)])
def test_the_score_parts_sum_to_the_score_over_a_development_negation_set(
        dev_index: Path, tmp_path: Path, name: str, every: int) -> None:
    from fortekit.search import Retriever

    folder = SHARED_DATA / "negation" / name
    index = dev_index if name == "audiocaps_val" else _index_of(folder, tmp_path / f"{name}.index")
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text("utf-8").splitlines()]
    texts = [row["text"] for row in queries[::every]]  # both kinds, every pair
    retriever = Retriever(index, device="cpu")
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


# --- what the exclusion pushed down, and the confidence signal (issue 46, items 2 and 3) -----------
def test_an_exclusion_lists_what_it_pushed_down_with_its_evidence(dev_index: Path) -> None:
    from fortekit.search import Retriever

    queries = [json.loads(line) for line in (DEV_SET / "queries.jsonl").read_text("utf-8").splitlines()]
    without = [row["text"] for row in queries if row["metadata"]["kind"] == "without"][:40]
    retriever = Retriever(dev_index, device="cpu")
    results = retriever.search(without, k=10)
    moved = [item for result in results for item in result.pushed_down]
    assert moved, "no exclusion moved anything out of the first pass's top 10"
    for result in results:
        shown = {hit.item_id for hit in result.hits}
        for item in result.pushed_down:
            assert item.item_id not in shown and 1 <= item.was <= 10
            assert item.now is None or item.now > 10
            assert item.evidence
    # an item whose caption names the excluded sound says so
    assert any(line.startswith("its caption says") for item in moved for line in item.evidence)
    record = json.loads(json.dumps(results[0].to_dict()))
    assert {"pushed_down", "confidence"} <= set(record)


def test_a_conjunction_pushes_nothing_down_as_an_exclusion(dev_index: Path) -> None:
    from fortekit.search import Retriever

    result = Retriever(dev_index, device="cpu").search("a dog barking and birds chirping", k=10)
    assert result.pushed_down == ()


def test_nonsense_is_marked_low_confidence_and_a_real_query_is_not(dev_index: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.search import Retriever
    from fortekit.search.cli.main import main

    retriever = Retriever(dev_index, device="cpu")
    nonsense, real = retriever.search(["vrolt quimzy", "a dog barking"], k=5)
    assert nonsense.confidence.low and nonsense.confidence.code in ("W860", "W861")
    assert not real.confidence.low
    assert main(["search", "--index", str(dev_index), "vrolt quimzy", "-k", "3", "--device", "cpu"]) == 0
    assert "[W86" in capsys.readouterr().err


def test_the_noise_floor_costs_no_encoder_call_of_its_own(dev_index: Path) -> None:
    from fortekit.search import Retriever

    retriever = Retriever(dev_index, device="cpu")
    calls = []
    encode = retriever.backbone.encode_text

    def counted(texts):  # type: ignore[no-untyped-def]
        calls.append(len(texts))
        return encode(texts)

    retriever.backbone.encode_text = counted  # type: ignore[method-assign]
    retriever.search(["rain falling on a roof without thunder"], k=5)
    assert len(calls) == 1


def test_explain_and_index_info_say_which_first_pass_runs(dev_index: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.search.cli.main import main

    assert main(["index", "info", "--index", str(dev_index)]) == 0
    assert "first pass   exact (the index has no ANN part" in capsys.readouterr().out
    assert main(["search", "--index", str(dev_index), "rain", "-k", "1", "--explain", "--first-pass", "exact",
                 "--device", "cpu"]) == 0
    assert "first pass   exact (asked for: --first-pass exact)" in capsys.readouterr().out


def test_the_retriever_takes_the_first_pass_by_name(dev_index: Path) -> None:
    from fortekit.errors import PipelineError
    from fortekit.search import Retriever

    retriever = Retriever(dev_index, device="cpu", first_pass="exact")
    assert retriever.spec.first_pass == "exact"
    assert retriever.first_pass == "exact (asked for: --first-pass exact)"
    with pytest.raises(PipelineError, match="E423"):
        Retriever(dev_index, device="cpu", first_pass="fast")
