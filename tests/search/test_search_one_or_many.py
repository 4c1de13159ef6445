"""``Retriever.search(str)`` gives one SearchResult and ``search(list)`` a list (issue 46, "Conventions");
every hit's matched/missed/violated predicates are filled with or without ``explain``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fortekit.search.hits import SearchResult
from fortekit.search.pipeline import PipelineSpec
from fortekit.search.retriever import Retriever


def test_a_str_gives_one_result_and_a_list_a_list(cafe: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    retriever = Retriever(cafe, PipelineSpec(stage1=None), backbone=minilm)
    one = retriever.search("a dog barking without people talking", k=3)
    assert isinstance(one, SearchResult) and len(one.hits) == 3
    many = retriever.search(["a dog barking without people talking"], k=3)
    assert isinstance(many, list) and len(many) == 1 and many[0].to_dict() == one.to_dict()
    assert isinstance(retriever.search(("rain", "a bell"), k=1), list)
    assert isinstance(retriever.search(np.array(["rain", "a bell"]), k=1), list)
    assert isinstance(retriever.search(np.str_("rain"), k=1), SearchResult)
    assert retriever.search([], k=1) == []


def test_predicates_are_filled_without_explain(cafe: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    retriever = Retriever(cafe, PipelineSpec(stage1=None), backbone=minilm)
    query = "a dog barking without people talking"
    plain, explained = retriever.search(query, k=8), retriever.search(query, k=8, explain=True)
    for hit, full in zip(plain.hits, explained.hits, strict=True):
        assert (hit.matched, hit.missed, hit.violated) == (full.matched, full.missed, full.violated)
    assert any(hit.matched for hit in plain.hits) and any(hit.violated for hit in plain.hits)
