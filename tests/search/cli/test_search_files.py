"""`fortekit search --queries FILE -o OUT` (fol-refine's file handling through the Retriever), stored
refinements in the Retriever, and `fortekit eval` ranking as `fortekit search` does."""

from __future__ import annotations

import json
from pathlib import Path

from beir_fixtures import CORPUS, QUERIES, make_beir

from fortekit.search.cli import main
from fortekit.search.index import AudioIndex
from fortekit.search.pipeline import PipelineSpec
from fortekit.search.retriever import Retriever


def _records(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text("utf-8").split("\n") if line]


def test_a_query_file_is_searched_into_jsonl_bad_lines_numbered(cafe: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    queries = tmp_path / "q.txt"
    queries.write_bytes(b"a dog barking without people talking\n\nrain on a roof\n\xff\xfe bad\n")
    out = tmp_path / "ranked.jsonl"
    code = main(["search", "--index", str(cafe), "--queries", str(queries), "-o", str(out), "-k", "3",
                 "--device", "cpu"])
    err = capsys.readouterr().err
    assert code == 1  # two bad lines
    assert f"{queries}:2: skipped" in err and f"{queries}:4: skipped" in err and "E656" in err
    records = _records(out)
    assert [(r["line"], r["query"]) for r in records] == [(1, "a dog barking without people talking"),
                                                         (3, "rain on a roof")]
    assert [hit["id"] for hit in records[0]["hits"]][:2] == ["clip1", "clip0"]
    assert records[0]["clauses"] == [{"text": "a dog barking", "negated": False},
                                     {"text": "a person talking", "negated": True}]
    assert len(records[1]["hits"]) == 3 and records[1]["source"] == "refine"  # Stage 1: the default here
    assert (tmp_path / "ranked.jsonl.settings.json").is_file()


def test_a_rerun_resumes_and_other_settings_are_refused(cafe: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    queries = tmp_path / "q.csv"
    queries.write_text("id,text\n1,rain on a roof\n2,a bell ringing\n", encoding="utf-8")
    out = tmp_path / "ranked.jsonl"
    argv = ["search", "--index", str(cafe), "--queries", str(queries), "--text-column", "text",
            "-o", str(out), "-k", "2"]
    assert main(argv) == 0
    before = out.read_bytes()
    assert main(argv) == 0
    assert out.read_bytes() == before and "2 already done" in capsys.readouterr().err
    assert main([*argv[:-1], "5"]) == 2  # an output of other settings: bad input
    assert "E663" in capsys.readouterr().err and out.read_bytes() == before
    assert main([*argv[:-1], "5", "--overwrite"]) == 0
    assert len(_records(out)[0]["hits"]) == 5


def test_standard_output_and_usage_errors(cafe: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    queries = tmp_path / "q.txt"
    queries.write_text("rain on a roof\n", encoding="utf-8")
    assert main(["search", "--index", str(cafe), "--queries", str(queries), "-o", "-", "-k", "1", "-q"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["hits"][0]["id"] == "clip3" and captured.err == ""
    assert main(["search", "--index", str(cafe), "--queries", str(queries), "other", "-o", "x.jsonl"]) == 2
    assert "E667" in capsys.readouterr().err
    assert main(["search", "--index", str(cafe), "--queries", str(queries), "-o", str(queries)]) == 2
    assert "E664" in capsys.readouterr().err and queries.read_text("utf-8") == "rain on a roof\n"
    link = tmp_path / "hard.txt"
    link.hardlink_to(queries)
    assert main(["search", "--index", str(cafe), "--queries", str(queries), "-o", str(link)]) == 2
    assert "E664" in capsys.readouterr().err and queries.read_text("utf-8") == "rain on a roof\n"


def test_stored_refinements_replace_stage1_for_the_queries_they_hold(cafe: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    class Table:
        def get(self, query: str) -> dict[str, str] | None:
            if query != "a dog":
                return None
            return {"refined_text": "a dog barking loudly", "phi_star": "∃x [Dog(x) ∧ Barking(x) ∧ Loud(x)]",
                    "phi0": "∃x [Dog(x)]"}

    # the others go as they are
    retriever = Retriever(cafe, PipelineSpec(lookup=Table(), stage1=None), backbone=minilm)
    stored, plain = retriever.search(["a dog", "rain on a roof"], k=2)
    assert stored.source == "lookup" and stored.refined_text == "a dog barking loudly"
    assert stored.phi_star == "∃x [Dog(x) ∧ Barking(x) ∧ Loud(x)]" and stored.phi0 == "∃x [Dog(x)]"
    assert stored.hits[0].item_id == "clip1"
    assert plain.source == "query" and plain.refined_text is None and plain.hits[0].item_id == "clip3"
    assert "lookup" in repr(retriever)
    direct = Retriever(cafe, PipelineSpec(stage1=None), backbone=minilm).search("a dog barking loudly",
                       k=2)
    assert [hit.item_id for hit in direct.hits] == [hit.item_id for hit in stored.hits]


def test_fortekit_search_uses_a_fol_refine_output_as_lookup(cafe: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    table = tmp_path / "refined.jsonl"
    table.write_text(json.dumps({"line": 1, "query": "rain", "refined_text": "rain falling on a roof",
                                 "phi_star": "∃x [Rain(x) ∧ Falling(x)]"}) + "\n", encoding="utf-8")
    assert main(["search", "--index", str(cafe), "rain", "--lookup", str(table), "--json", "-k", "1"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["source"] == "lookup" and record["refined_text"] == "rain falling on a roof"
    assert record["hits"][0]["id"] == "clip3"


def test_fortekit_eval_and_fortekit_search_rank_alike(minilm, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The same collection, query and settings: `fortekit eval --beir` (system default) and the
    `fortekit search` command give the same ranking."""
    from fortekit.search.eval.data import item_embeddings

    folder = make_beir(tmp_path / "beir")
    assert main(["eval", "--beir", str(folder), "--systems", "default", "-o", str(tmp_path / "out"),
                 "--device", "cpu"]) == 0
    evaluated = {
        json.loads(line)["query_id"]: json.loads(line)["top"]
        for line in (tmp_path / "out" / "per_query" / "default.jsonl").read_text("utf-8").splitlines()
    }
    items = item_embeddings(minilm, [tuple(row["captions"]) for row in CORPUS])
    index_dir = tmp_path / "beir.index"
    AudioIndex.from_captions([row["_id"] for row in CORPUS], [row["text"] for row in CORPUS], minilm,
                             embeddings=items).save(index_dir)
    capsys.readouterr()
    assert main(["search", "--index", str(index_dir), *[q["text"] for q in QUERIES], "--json",
                 "-k", str(len(CORPUS)), "--device", "cpu"]) == 0
    searched = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for query, record in zip(QUERIES, searched, strict=True):
        ids = [hit["id"] for hit in record["hits"]]
        assert ids == evaluated[query["_id"]][: len(ids)]


def test_the_output_may_not_be_the_lookup_table(cafe: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    queries = tmp_path / "q.txt"
    queries.write_text("rain\n", encoding="utf-8")
    table = tmp_path / "refined.jsonl"
    table.write_text(json.dumps({"line": 1, "query": "rain", "refined_text": "rain falling"}) + "\n",
                     encoding="utf-8")
    before = table.read_bytes()
    assert main(["search", "--index", str(cafe), "--queries", str(queries), "--lookup", str(table),
                 "-o", str(table)]) == 2
    assert "E664" in capsys.readouterr().err and table.read_bytes() == before
