"""One ranking path: every command and API that ranks gives the same ids and scores for the same settings.

`fortekit search`, `fol-refine --index`, the Retriever and the benchmark's loop (`fortekit eval`) all
rank through `Retriever`, on a real caption index (the first 120 AudioCaps captions of examples/, the
bundled MiniLM).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from fortekit.search.cli import fol_refine_main, main
from fortekit.search.index import AudioIndex
from fortekit.search.pipeline import PipelineSpec
from fortekit.search.retriever import Retriever

ROOT = Path(__file__).resolve().parents[2]
QUERIES = [
    "a dog barking without people talking",
    "a woman speaks and a cat meows",
    "water running without a man speaking",
    "birds chirping",
]
K = 10
TOLERANCE = 1e-5

Ranking = list[tuple[str, float]]


@pytest.fixture(scope="module")
def minilm():  # type: ignore[no-untyped-def]
    from fortekit.plugins import get_backbone

    return get_backbone("minilm", device="cpu")


@pytest.fixture(scope="module")
def captions_index(minilm, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    with (ROOT / "examples" / "audiocaps_train_sample.csv").open(encoding="utf-8", newline="") as handle:
        rows = [row for _, row in zip(range(120), csv.DictReader(handle), strict=False)]
    ids = list(dict.fromkeys(row["audiocap_id"] for row in rows))
    captions = {row["audiocap_id"]: row["caption"] for row in rows}
    directory = tmp_path_factory.mktemp("audiocaps") / "audiocaps.index"
    AudioIndex.from_captions(ids, [captions[item] for item in ids], minilm).save(directory)
    return directory


def assert_same(name: str, got: Ranking, expected: Ranking) -> None:
    assert [item for item, _ in got] == [item for item, _ in expected], name
    for (item, score), (_, wanted) in zip(got, expected, strict=True):
        assert abs(score - wanted) <= TOLERANCE, f"{name}: {item} scored {score}, expected {wanted}"


def from_retriever(retriever: Retriever, queries: list[str]) -> list[Ranking]:
    return [[(hit.item_id, hit.score) for hit in result.hits] for result in retriever.search(queries, k=K)]


def from_search(capsys: pytest.CaptureFixture[str], *options: str) -> list[Ranking]:
    assert main(["search", *options, "-k", str(K), "--json", "--device", "cpu"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return [[(hit["id"], hit["score"]) for hit in record["hits"]] for record in records]


def from_eval(retriever: Retriever, queries: list[str]) -> list[Ranking]:
    """The benchmark's loop (`fortekit eval`, both --test and --beir) over the Retriever's query side."""
    from fortekit.fol.predicates import predicates
    from fortekit.search.eval.systems import rank_all
    from fortekit.search.query_side import prepare_queries

    side = prepare_queries(queries, retriever.encoder, refiner=retriever.refiner)
    sets = [frozenset() if phi is None else predicates(phi) for phi in side.formulas]
    order, scores = rank_all(retriever, side.vectors, side.logic, sets)
    ids = retriever.index.ids
    return [[(ids[row], float(scores[q, row])) for row in order[q, :K]] for q in range(len(queries))]


def from_refine(tmp_path: Path, index: Path, queries: list[str], *options: str) -> list[Ranking]:
    source = tmp_path / "queries.txt"
    source.write_text("\n".join(queries) + "\n", encoding="utf-8")
    output = tmp_path / f"ranked{len(list(tmp_path.iterdir()))}.jsonl"
    assert fol_refine_main([str(source), "--index", str(index), "-k", str(K), "-o", str(output), "--quiet",
                            "--no-progress", "--device", "cpu", *options]) == 0
    records: list[dict[str, Any]] = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    assert [record["query"] for record in records] == queries
    return [[(hit["id"], hit["score"]) for hit in record["ranking"]] for record in records]


def test_search_retriever_and_eval_rank_alike(
    captions_index: Path, minilm, capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    retriever = Retriever(captions_index, backbone=minilm, device="cpu")
    expected = from_retriever(retriever, QUERIES)
    searched = from_search(capsys, "--index", str(captions_index), *QUERIES)
    evaluated = from_eval(retriever, QUERIES)
    for q, query in enumerate(QUERIES):
        assert len(expected[q]) == K
        assert_same(f"fortekit search: {query}", searched[q], expected[q])
        assert_same(f"eval: {query}", evaluated[q], expected[q])


def test_the_exclusion_is_scored_and_switching_stages_off_agrees(
    captions_index: Path, minilm, capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    plain = Retriever(captions_index, PipelineSpec(formula=None), backbone=minilm, device="cpu")
    scored = Retriever(captions_index, backbone=minilm, device="cpu")
    assert scored.search(QUERIES[0]).clauses == (("a dog barking", False), ("a person talking", True))
    assert from_retriever(plain, QUERIES[:1]) != from_retriever(scored, QUERIES[:1])  # the formula counts
    off = from_search(capsys, "--index", str(captions_index), "--formula-scoring", "off", *QUERIES)
    expected = from_retriever(plain, QUERIES)
    evaluated = from_eval(plain, QUERIES)
    for q, query in enumerate(QUERIES):
        assert_same(f"fortekit search --formula-scoring off: {query}", off[q], expected[q])
        assert_same(f"eval, formula scoring off: {query}", evaluated[q], expected[q])


def test_fol_refine_ranks_as_search_and_the_retriever_with_stage1(
    captions_index: Path, minilm, tmp_path: Path, capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    from fortekit.search.refine.lookup import LookupTable
    from fortekit.search.stage1.config import RefineConfig

    queries = QUERIES[:2]  # Stage 1 is the slow part: the exclusion and a conjunction
    refined = from_refine(tmp_path, captions_index, queries)
    retriever = Retriever(captions_index, PipelineSpec(stage1=RefineConfig.online()), backbone=minilm,
                          device="cpu")
    expected = from_retriever(retriever, queries)
    searched = from_search(capsys, "--index", str(captions_index), "--stage1", "online", *queries)
    evaluated = from_eval(retriever, queries)
    for q, query in enumerate(queries):
        assert_same(f"fol-refine --index: {query}", refined[q], expected[q])
        assert_same(f"fortekit search --stage1 online: {query}", searched[q], expected[q])
        assert_same(f"eval with Stage 1: {query}", evaluated[q], expected[q])
    # The stored refinements: fol-refine --lookup and fortekit search --lookup rank alike too.
    table = next(path for path in tmp_path.iterdir() if path.name.startswith("ranked"))
    looked_up = from_refine(tmp_path, captions_index, queries, "--lookup", str(table))
    expected = from_retriever(Retriever(captions_index, PipelineSpec(lookup=LookupTable.load(table)),
                                        backbone=minilm, device="cpu"),
                              queries)
    searched = from_search(capsys, "--index", str(captions_index), "--lookup", str(table), *queries)
    for q, query in enumerate(queries):
        assert_same(f"fol-refine --lookup --index: {query}", looked_up[q], expected[q])
        assert_same(f"fortekit search --lookup: {query}", searched[q], expected[q])
