"""The default pipeline per kind of index: the table, the kinds, the Retriever and the commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fortekit.errors import PipelineError
from fortekit.search.index.audio_index import AudioIndex
from fortekit.search.index.format import IndexMeta, IndexRecords
from fortekit.search.pipeline import PipelineSpec
from fortekit.search.pipeline.defaults import (
    KINDS,
    STAGES,
    default_table,
    index_kind,
    parse_table,
    resolve_pipeline,
)


def _audio_index(captions: list[str | None], captioner: str | None = None) -> AudioIndex:
    """An audio index (items with paths) of unit rows, as `index build --audio` writes one."""
    count = len(captions)
    records = IndexRecords([f"clip{i}" for i in range(count)], list(captions),
                           [f"/audio/clip{i}.wav" for i in range(count)], [frozenset()] * count)
    return AudioIndex(np.eye(count, dtype=np.float32), records,
                      IndexMeta(backbone="demo", dim=count, count=count, captioner=captioner))


def test_the_table_names_every_stage_of_every_kind_with_its_evidence() -> None:
    table = default_table()
    assert sorted(table) == sorted(KINDS)
    for kind in KINDS:
        assert [stage.name for stage in table[kind].stages] == list(STAGES)
        assert table[kind].description
        for stage in table[kind].stages:
            assert len(stage.why) > 20, (kind, stage.name)


def test_the_kinds_follow_what_an_index_holds() -> None:
    captions = AudioIndex.from_captions(["a", "b"], ["rain falls", "a dog barks"], "demo",
                                        embeddings=np.eye(2), parse_captions=False)
    assert index_kind(captions) == "captions"
    assert index_kind(_audio_index(["rain falls", "a dog barks"])) == "audio_captions"
    assert index_kind(_audio_index(["rain", "dog"], captioner="tagger")) == "audio_captioner"
    assert index_kind(_audio_index([None, None])) == "audio"
    embeddings_only = AudioIndex.from_captions(["a"], [None], "demo", embeddings=np.eye(1),
                                               parse_captions=False)
    assert index_kind(embeddings_only) == "audio"


def test_a_damaged_table_an_unknown_kind_or_stage_are_coded_errors() -> None:
    with pytest.raises(PipelineError, match="E420"):
        parse_table("this is = = not toml")
    table = Path(__file__).resolve().parents[3] / "search" / "pipeline" / "defaults.toml"
    text = table.read_text(encoding="utf-8")
    with pytest.raises(PipelineError, match=r"E420.*captions.stage1"):
        parse_table(text.replace("[captions.stage1]\non = true", "[captions.stage1]\non = 'yes'"))
    with pytest.raises(PipelineError, match="E421"):
        resolve_pipeline("podcasts", {})
    with pytest.raises(PipelineError, match=r"E422.*stage1, projection"):
        resolve_pipeline("captions", {"stage2": True})


def test_the_caller_switches_any_stage_by_name_over_the_default() -> None:
    pipeline = resolve_pipeline("captions", {"stage1": False, "order_check": True})
    assert pipeline.state("stage1").on is False and pipeline.state("stage1").source == "caller"
    assert pipeline.state("order_check").on is True
    assert pipeline.state("formula").source == "default"
    unavailable = resolve_pipeline("captions", {},
                                   unavailable={"stage3": "the index holds no parsed captions"})
    assert unavailable.state("stage3").on is False
    assert "no parsed captions" in unavailable.state("stage3").line()


def test_the_retriever_runs_the_default_of_a_caption_index_and_says_why(cafe: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    from fortekit import Retriever
    from fortekit.search.projection.shipped import shipped_head

    retriever = Retriever(cafe, backbone=minilm)
    assert retriever.pipeline.kind == "captions"
    assert retriever.refiner is not None  # Stage 1, online
    assert retriever.projection == shipped_head("minilm", 384)
    assert retriever.formula_scorer is not None and retriever.reranker is not None
    assert retriever.order_check is None
    assert "kind='captions'" in repr(retriever)
    lines = "\n".join(retriever.pipeline.lines())
    assert "stage1       on" in lines and "development" in lines
    # Every stage off by name gives the frozen first pass.
    plain = Retriever(cafe, PipelineSpec(stage1=None, projection=None, formula=None, rerank=None),
                      backbone=minilm)
    assert plain.pipeline.running == ()
    assert plain.refiner is None and plain.projection is None
    hits = plain.search("a dog barks while people are talking", k=1).hits
    assert hits[0].item_id == "clip0"


def test_the_default_pipeline_ranks_a_described_clip_first(cafe: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    from fortekit import Retriever

    result = Retriever(cafe, backbone=minilm).search(["rain falls on a tin roof",
                       "birds chirp in the morning"], k=3)
    assert [r.hits[0].item_id for r in result] == ["clip3", "clip5"]


def test_index_info_and_search_explain_print_which_stages_run(cafe: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.cli.main import main

    assert main(["index", "info", "--index", str(cafe)]) == 0
    info = capsys.readouterr().out
    assert "default pipeline" in info and "kind         captions" in info
    assert "stage1       on" in info and "order_check  off" in info
    assert main(["index", "info", "--index", str(cafe), "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["pipeline"]["stages"]["stage1"]["on"] is True
    assert main(["search", "--index", str(cafe), "rain on a roof", "--explain", "--stage1", "off",
                 "--stage3", "off", "-k", "2"]) == 0
    explained = capsys.readouterr().out
    assert "pipeline:" in explained
    assert "stage1       off  (caller" in explained and "stage3       off  (caller" in explained
    assert "formula      on " in explained


def test_a_stage_default_on_is_unavailable_where_the_index_lacks_what_it_needs() -> None:
    from fortekit.search.pipeline.assemble import default_pipeline

    bare = default_pipeline(_audio_index([None, None]))
    assert bare.running == ("formula",)
    unparsed = default_pipeline(AudioIndex.from_captions(["a"], ["rain"], "demo", embeddings=np.eye(1),
                                                         parse_captions=False))
    assert unparsed.state("stage3").source == "unavailable"
    assert unparsed.state("projection").source == "unavailable"  # no head ships for "demo"


def test_the_table_is_shipped_and_read_without_torch() -> None:
    code = ("import sys; from fortekit.search.pipeline.defaults import default_table; default_table(); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_eval_lists_the_default_and_each_stage_left_out() -> None:
    from fortekit.search.eval.systems import ablation_systems

    names = [system.name for system in ablation_systems("feedback", ["feedback", "none"], shipped_head=True)]
    assert names[-5:] == ["default", "default-S1", "default-S2", "default-formula", "default-S3"]
    systems = ablation_systems("feedback", ["feedback"], shipped_head=True)
    default = next(s for s in systems if s.name == "default")
    assert (default.s1, default.s2, default.formula, default.s3, default.head) == (
        True, True, True, "polarity", "shipped")


def test_the_pipeline_is_json_ready(cafe: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    from fortekit import Retriever

    text = json.dumps(Retriever(cafe, PipelineSpec(stage1=None), backbone=minilm).pipeline.to_dict())
    assert json.loads(text)["stages"]["stage1"]["source"] == "caller"
