"""The Retriever and `fortekit search`: one pipeline from an index and a backbone to ranked hits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from beir_fixtures import CORPUS, QUERIES, make_beir
from cafe_fixtures import CAFE

from fortekit.errors import FortekitError, RetrieverError
from fortekit.search.cli import main
from fortekit.search.index import AudioIndex
from fortekit.search.pipeline import PipelineSpec
from fortekit.search.retriever import Retriever, explain_predicates


def test_three_lines_from_a_notebook(cafe: Path) -> None:
    import fortekit

    retriever = fortekit.Retriever(cafe, device="cpu")
    result = retriever.search("a dog barking without people talking", k=3, explain=True)
    assert [hit.item_id for hit in result.hits][:2] == ["clip1", "clip0"]
    assert result.clauses == (("a dog barking", False), ("a person talking", True))
    assert result.phi0 == "∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]"
    dog_and_talk = result.hits[1]
    assert dog_and_talk.violated == ("¬Person/1", "¬Talking/1") and "Dog/1" in dog_and_talk.matched
    assert len(dog_and_talk.clause_similarities) == 2
    assert [hit.rank for hit in result.hits] == [1, 2, 3]
    assert [hit.score for hit in result.hits] == sorted((hit.score for hit in result.hits), reverse=True)


def test_a_plain_query_ranks_as_the_index_without_stage3(cafe: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    retriever = Retriever(cafe, PipelineSpec(stage1=None, projection=None, rerank=None), backbone=minilm)
    result = retriever.search(["rain on a roof"], k=5)[0]
    _, rows = retriever.index.search_text(["rain on a roof"], minilm, k=5, device="cpu")
    assert [hit.item_id for hit in result.hits] == [retriever.index.ids[i] for i in rows[0].tolist()]
    assert result.fallback == "plain" and result.clauses == ()


def test_a_batch_is_one_encoder_call_for_its_queries_and_their_clauses(cafe: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    # the clause texts formula scoring needs go with the queries (issue 45); the beam adds a call a depth
    retriever = Retriever(cafe, PipelineSpec(stage1=None), backbone=minilm)
    retriever.search(["a dog barking without people talking", "birds chirping and rain falling", "rain"])
    assert retriever.encoder.stats.calls == 1


def test_stages_can_be_switched_off_and_on(cafe: Path, minilm, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.projection import ProjectionHead
    from fortekit.search.projection.files import save_projection
    from fortekit.search.stage1.config import RefineConfig

    off = Retriever(cafe, PipelineSpec(stage1=None, projection=None, formula=None, rerank=None),
                    backbone=minilm)
    assert "stages=[]" in repr(off)
    plain = off.search("a dog barking without people talking", k=2)
    assert plain.hits[0].item_id == "clip0" and plain.fallback == "off"
    torch.manual_seed(0)
    head = ProjectionHead(384)
    weights = save_projection(head, tmp_path / "head")
    staged = Retriever(cafe, PipelineSpec(stage1=RefineConfig.online(), projection=weights), backbone=minilm)
    result = staged.search("a dog barking", k=4)
    assert result.refined_text is not None and len(result.hits) == 4
    assert staged.items.shape == (len(CAFE), 384)


def test_numpy_strings_are_queries(cafe: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    retriever = Retriever(cafe, PipelineSpec(rerank=None), backbone=minilm)
    plain = [r.hits[0].item_id for r in retriever.search(["rain on a roof", "a dog barking"], k=1)]
    from_numpy = retriever.search(np.array(["rain on a roof", "a dog barking"]), k=1)
    assert [r.hits[0].item_id for r in from_numpy] == plain
    assert type(from_numpy[0].query) is str
    assert retriever.search(np.str_("rain on a roof"), k=1).hits[0].item_id == plain[0]


@pytest.mark.parametrize("query", ["", "   ", 42, b"rain"])
def test_bad_queries_are_coded_errors(cafe: Path, minilm, query: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FortekitError, match=r"\[E30[02]\]"):
        Retriever(cafe, backbone=minilm).search([query])  # type: ignore[list-item]
    if isinstance(query, bytes):  # one undecoded query, named as bytes with the decoding hint
        with pytest.raises(FortekitError, match=r"\[E302\].*not bytes.*decode"):
            Retriever(cafe, backbone=minilm).search(query)  # type: ignore[arg-type]
    with pytest.raises(RetrieverError, match=r"\[E424\]"):
        Retriever(cafe, backbone=minilm).search("rain", k=0)


def test_explain_predicates() -> None:
    from fortekit.fol import parse_formula, predicates

    query = predicates(parse_formula("∃x [Rain(x) ∧ ¬∃y Thunder(y)]"))
    assert explain_predicates(query, predicates(parse_formula("∃x [Rain(x) ∧ Thunder(x)]"))) == (
        ("Rain/1",), (), ("¬Thunder/1",))
    assert explain_predicates(query, frozenset()) == ((), ("Rain/1",), ())


def test_fortekit_search_prints_a_table_json_and_explanations(cafe: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    query = "a dog barking without people talking"
    assert main(["search", "--index", str(cafe), query, "-k", "2", "--device", "cpu"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0] == f"query: {query}" and "clip1" in table[1] and table[2].split()[0] == "2.!"
    assert main(["search", "--index", str(cafe), query, "rain", "-k", "2", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["query"] for row in rows] == [query, "rain"] and rows[0]["hits"][0]["id"] == "clip1"
    assert main(["search", "--index", str(cafe), query, "-k", "1", "--explain"]) == 0
    explained = capsys.readouterr().out
    assert "clauses: 'a dog barking'; not 'a person talking'" in explained and "violated []" in explained


def test_fortekit_search_echoes_a_hostile_query_cut_and_escaped(cafe: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["search", "--index", str(cafe), "rain\x1b[2J" + "(" * 4000, "-k", "1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "\x1b" not in first and "\\x1b[2J" in first and len(first) < 300


def test_fortekit_search_bad_input_exits_with_a_code(cafe: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["search", "--index", str(cafe), "  "]) == 1  # the query failed
    assert "[E300]" in capsys.readouterr().err
    assert main(["search", "--index", str(tmp_path / "missing"), "rain"]) == 2  # an unusable index
    err = capsys.readouterr().err
    assert err.startswith("fortekit search: [E6") and "Traceback" not in err


def test_eval_and_search_give_the_same_ranking(minilm, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`fortekit eval --beir` (system `default`) and the Retriever rank a collection alike."""
    from fortekit.search.eval.data import item_embeddings

    folder = make_beir(tmp_path / "beir")
    assert main(["eval", "--beir", str(folder), "--systems", "default", "-o", str(tmp_path / "out"),
                 "--device", "cpu"]) == 0
    evaluated = {
        json.loads(line)["query_id"]: json.loads(line)["top"]
        for line in (tmp_path / "out" / "per_query" / "default.jsonl").read_text("utf-8").splitlines()
    }
    items = item_embeddings(minilm, [tuple(row["captions"]) for row in CORPUS])
    index = AudioIndex.from_captions([row["_id"] for row in CORPUS], [row["text"] for row in CORPUS], minilm,
                                     embeddings=items)
    results = Retriever(index, backbone=minilm).search([query["text"] for query in QUERIES], k=len(CORPUS))
    for query, result in zip(QUERIES, results, strict=True):
        assert [hit.item_id for hit in result.hits] == evaluated[query["_id"]][: len(result.hits)]


def test_fol_refine_ranks_through_the_same_retriever(cafe: Path, minilm, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.cli import fol_refine_main
    from fortekit.search.stage1.config import RefineConfig

    queries = ["a dog barking without people talking", "rain falling on a roof"]
    source = tmp_path / "queries.txt"
    source.write_text("\n".join(queries) + "\n", encoding="utf-8")
    output = tmp_path / "ranked.jsonl"
    assert fol_refine_main([str(source), "--index", str(cafe), "-k", "3", "-o", str(output), "--quiet",
                            "--no-progress", "--device", "cpu"]) == 0
    written = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    results = Retriever(cafe, PipelineSpec(stage1=RefineConfig.online()), backbone=minilm).search(queries,
                        k=3)
    for record, result in zip(written, results, strict=True):
        assert [item["id"] for item in record["ranking"]] == [hit.item_id for hit in result.hits]
