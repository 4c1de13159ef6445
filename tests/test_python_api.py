"""The Python API reads well in a REPL and a notebook (issue 32, item 5).

Short reprs (the Unicode formula, a hit as rank/id/score/caption), ``_repr_html_`` for a search
result and a parse, readable signatures in ``help()``, backbone names wherever a backbone goes,
and ``fortekit.Collection.from_captions``: a list of captions searched without a directory,
ranked exactly as the same captions built into an index folder by ``fortekit index build``.
Real MiniLM and real AudioCaps captions (examples/audiocaps_train_sample.csv).
"""

from __future__ import annotations

import csv
import inspect
from pathlib import Path

import numpy as np
import pytest

import fortekit
from fortekit.errors import AudioIndexError
from fortekit.fol.caption import parse_caption
from fortekit.search.cli.main import main
from fortekit.search.hits import Hit, SearchResult
from fortekit.search.index.audio_index import AudioIndex
from fortekit.search.retriever import Retriever

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "audiocaps_train_sample.csv"
QUERY = "a dog barking without people talking"
HOSTILE = "<script>alert('x')</script> a man talks & a dog barks"


def _sample(count: int = 50) -> tuple[list[str], list[str]]:
    """The first `count` rows of the AudioCaps sample, and two of our own: a dog with people
    talking (violates the query) and a caption with markup (for the HTML escaping)."""
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))[: count - 2]
    ids = [row["audiocap_id"] for row in rows] + ["dog-people", "markup"]
    captions = [row["caption"] for row in rows] + ["a dog barks while people are talking", HOSTILE]
    return ids, captions


@pytest.fixture(scope="module")
def collection():  # type: ignore[no-untyped-def]
    ids, captions = _sample()
    return fortekit.Collection.from_captions(ids, captions, backbone="minilm",
                                             backbone_options={"device": "cpu"})


@pytest.fixture(scope="module")
def result(collection) -> SearchResult:  # type: ignore[no-untyped-def]
    return Retriever(collection, device="cpu").search(QUERY, k=50, explain=True)


def test_a_parse_prints_its_caption_and_unicode_formula() -> None:
    parse = parse_caption(QUERY)
    text = repr(parse)
    assert text.startswith(f"ParseResult({QUERY!r}, ∃x [") and len(text) < 200
    assert str(parse.formula) in text and "Atom(" not in text and "PredicateRecord(" not in text
    assert repr(parse.formula) == f"<Quant {parse.formula}>"
    html = parse._repr_html_()
    assert str(parse.formula) in html and "denied" in html and html.count("<tr>") == 1 + 3  # head + 3 clauses


def test_a_parse_of_markup_is_escaped_in_html() -> None:
    html = parse_caption(HOSTILE)._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "&amp;" in html


def test_hits_and_results_print_short(result: SearchResult) -> None:
    assert len(result.hits) == 50
    for hit in result.hits:
        text = repr(hit)
        assert len(text) < 200 and text.startswith(f"Hit({hit.rank}, {hit.item_id!r}, ")
        assert ("violated=" in text) == bool(hit.violated)
    text = repr(result)
    assert len(text) < 200 and text.startswith(f"SearchResult({QUERY!r}, ∃x [")
    assert result.phi_star is not None and result.phi_star in text and "50 hits: " in text
    assert repr(result.hits[0].item_id) in text


def test_the_result_table_marks_violated_hits_and_escapes_captions(result: SearchResult) -> None:
    violated = [hit for hit in result.hits if hit.violated]
    assert any(hit.item_id == "dog-people" for hit in violated)
    html = result._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert html.count('class="fortekit-violated"') == len(violated)
    assert html.count("<tr") == 1 + len(result.hits)
    row = next(part for part in html.split("<tr") if "dog-people" in part)
    assert 'class="fortekit-violated"' in row and "¬Talking/1" in row


def test_a_hit_without_a_caption_or_violations() -> None:
    assert repr(Hit(3, "clip", 0.5)) == "Hit(3, 'clip', 0.5)"
    assert repr(SearchResult("q", ())) == "SearchResult('q', 0 hits)"


@pytest.mark.parametrize("function", [
    Retriever.__init__, Retriever.search, Retriever.replace, AudioIndex.from_captions,
    AudioIndex.build, fortekit.Collection.from_captions, parse_caption,
], ids=lambda function: function.__qualname__)
def test_signatures_read_well(function) -> None:  # type: ignore[no-untyped-def]
    shown = str(inspect.signature(function))
    assert "object at 0x" not in shown
    assert "'Any'" not in shown.split("formula:")[-1].split(",")[0]


def test_the_pipeline_defaults_name_themselves() -> None:
    from fortekit.search.pipeline import PipelineSpec

    shown = str(inspect.signature(PipelineSpec))
    assert "formula: 'FormulaScoringConfig | Auto | None' = 'auto'" in shown
    assert "rerank: 'Reranker | Auto | None' = 'auto'" in shown
    # the Retriever only ranks: the index, the spec, where to run, and the one spec field a user
    # names at the door (first_pass, as --first-pass)
    assert len(inspect.signature(Retriever.__init__).parameters) - 1 <= 7


def test_a_backbone_name_builds_an_index(collection) -> None:  # type: ignore[no-untyped-def]
    ids, captions = collection.ids[:5], collection.captions[:5]
    index = AudioIndex.from_captions(ids, captions, "minilm", backbone_options={"device": "cpu"})
    assert type(index) is AudioIndex and (len(index), index.dim, index.backbone_name) == (5, 384, "minilm")
    # another batch pads the texts otherwise: the same vectors up to float rounding
    assert np.allclose(index.embeddings, collection.embeddings[:5], atol=1e-5)
    assert index.predicate_sets == collection.predicate_sets[:5]


def test_an_unknown_backbone_name_lists_the_registered_ones() -> None:
    with pytest.raises(AudioIndexError, match=r"\[E613\] backbone must be .*minilm.*, not 'minilmm'"):
        AudioIndex.from_captions(["a"], ["rain"], "minilmm")


def test_the_collection_is_a_retriever_index(collection) -> None:  # type: ignore[no-untyped-def]
    assert repr(collection) == "Collection(count=50, dim=384, backbone='minilm')"
    assert "Collection" in dir(fortekit) and isinstance(collection, AudioIndex)
    assert collection.unparsed_count == 0 and all(collection.predicate_sets)


def test_the_collection_ranks_as_a_built_index_folder(collection, result: SearchResult, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    ids, captions = _sample()
    path = tmp_path / "captions.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "caption"])
        writer.writerows(zip(ids, captions, strict=True))
    folder = tmp_path / "idx"
    code = main(["index", "build", "--captions", str(path), "-o", str(folder), "--quiet",
                 "--device", "cpu"])
    assert code == 0, capsys.readouterr().err
    built = Retriever(folder, device="cpu")
    assert built.index.ids == collection.ids and built.index.predicate_sets == collection.predicate_sets
    assert built.formula_scorer is not None and built.reranker is not None
    other = built.search(QUERY, k=50, explain=True)
    assert [hit.item_id for hit in other.hits] == [hit.item_id for hit in result.hits]
    assert all(abs(a.score - b.score) <= 1e-6 for a, b in zip(other.hits, result.hits, strict=True))
    assert other.clauses == result.clauses and result.clauses  # formula scoring ran, on the same clauses
    assert [hit.violated for hit in other.hits] == [hit.violated for hit in result.hits]
