""""refined" equals the query when nothing was refined (phi* = phi0): the feedback regime (depth 0)
and an unrefined query of the beam report the query itself, not G(phi0), the verbalised formula
(issue 46, "Conventions")."""

from __future__ import annotations

from pathlib import Path

import pytest

from fortekit.search import RefineConfig, Refiner
from fortekit.search.pipeline import PipelineSpec
from fortekit.search.retriever import Retriever
from fortekit.verbalise import verbalise

# G(phi0) of each is another wording than the query itself
QUERIES = ["a dog barks while people are talking", "rain falls on a tin roof", "birds chirp in the morning"]


def test_the_feedback_regime_reports_the_query(cafe: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    retriever = Retriever(cafe, PipelineSpec(stage1=RefineConfig.feedback()), backbone=minilm)
    results = retriever.search(QUERIES, k=2)
    assert [result.source for result in results] == ["refine"] * len(QUERIES)
    assert [result.refined_text for result in results] == QUERIES
    assert [result.phi_star for result in results] == [result.phi0 for result in results]
    assert any(verbalise(refined.phi0) != refined.query  # the old report differed from the query
               for refined in retriever.refiner.refine_many(QUERIES))  # type: ignore[union-attr]


@pytest.mark.parametrize("config", [RefineConfig.online(), RefineConfig.online(output="verbalised")])
def test_the_beam_reports_g_phi_star_only_when_it_refined(minilm, config: RefineConfig) -> None:  # type: ignore[no-untyped-def]
    results = Refiner(minilm, "lexical", config=config).refine_many(QUERIES)
    for result in results:
        expected = result.query if result.phi_star == result.phi0 else verbalise(result.phi_star)
        assert result.refined_text == expected, result.query
        assert result.to_dict()["refined_text"] == expected


def test_the_explained_table_prints_the_query_as_refined(cafe: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.search.cli.main import main

    assert main(["search", "--index", str(cafe), "--stage1", "feedback", "-k", "1", "--explain",
                 "--device", "cpu", QUERIES[0]]) == 0
    assert f"  refined: {QUERIES[0]} (refine)" in capsys.readouterr().out
