"""Stage 1 from human captions: the caption corpus, the corpus elaborator and the feedback anchors.

Real captions (AudioCaps val, Clotho development) with the bundled MiniLM.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import SHARED_DATA, require, run_fol_refine

from fortekit.errors import RefineError
from fortekit.fol import predicates
from fortekit.fol.caption import default_parser, parse_caption
from fortekit.search import RefineConfig, Retriever
from fortekit.search.eval.datasets import load_collection
from fortekit.search.pipeline import PipelineSpec
from fortekit.search.stage1.anchors import AnchorRequest
from fortekit.search.stage1.beam import Refiner
from fortekit.search.stage1.corpus import CaptionCorpus, parse_from_dict
from fortekit.search.stage1.corpus_elaborator import CorpusElaborator, coverage_of, descriptors_of
from fortekit.search.stage1.feedback import FeedbackAnchors


@pytest.fixture(scope="module")
def clips() -> list:
    return [clip for clip in load_collection(require(SHARED_DATA / "audiocaps" / "val.csv"))][:300]


@pytest.fixture(scope="module")
def corpus(clips, minilm) -> CaptionCorpus:  # type: ignore[no-untyped-def]
    """Caption 2 of 300 AudioCaps val clips, embedded and parsed once."""
    return CaptionCorpus.from_captions([clip.captions[1] for clip in clips], minilm)


@pytest.fixture(scope="module")
def queries(clips) -> list[str]:  # type: ignore[no-untyped-def]
    return [clip.captions[0] for clip in clips[:40]]


def test_a_saved_corpus_loads_back_equal_without_parsing(corpus: CaptionCorpus, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    corpus.save(tmp_path / "corpus")
    import fortekit.fol.caption.parser as parser_module

    monkeypatch.setattr(parser_module, "default_parser", lambda: pytest.fail("load parsed a caption"))
    loaded = CaptionCorpus.load(tmp_path / "corpus")
    assert loaded.captions == corpus.captions
    assert loaded.parses == corpus.parses  # every record, span and confidence
    assert torch.equal(loaded.embeddings, corpus.embeddings)


def test_parse_from_dict_inverts_to_dict_on_real_captions(clips) -> None:  # type: ignore[no-untyped-def]
    parses = default_parser().parse_many([clip.captions[2] for clip in clips[:100]])
    assert all(parse_from_dict(json.loads(json.dumps(p.to_dict()))) == p for p in parses)


def test_positives_are_corpus_captions_that_cover_the_query(corpus: CaptionCorpus, queries: list[str],
                                                            minilm) -> None:  # type: ignore[no-untyped-def]
    elaborator = CorpusElaborator(corpus)
    parses = list(default_parser().parse_many(queries))
    found = elaborator.elaborate_parsed(parses, minilm.encode_text(queries), n_positives=2, n_negatives=3)
    with_positives = 0
    for phi0, neighbourhood in zip(parses, found, strict=True):
        for positive in neighbourhood.positives:
            assert positive.text in corpus.captions  # a human caption, not a template
            assert coverage_of(phi0, positive, corpus.idf, corpus.unseen_idf) >= elaborator.coverage
        for negative in neighbourhood.negatives:
            assert negative.text in corpus.captions
            assert coverage_of(phi0, negative, corpus.idf, corpus.unseen_idf) < elaborator.coverage
        # Every proposed attribute is a descriptor that a matching caption gives a sound source.
        used = {name for p in neighbourhood.positives for name in descriptors_of(p)}
        assert set(neighbourhood.pools.attributes[:1]) <= used or not neighbourhood.positives or \
            neighbourhood.matching > len(neighbourhood.positives)
        with_positives += bool(neighbourhood.positives)
    assert with_positives >= 10  # 12 of 40: coverage 0.7 is strict, and 300 clips are few


def test_the_refiner_parses_only_the_queries_with_a_corpus(corpus: CaptionCorpus, queries: list[str],
                                                           minilm) -> None:  # type: ignore[no-untyped-def]
    parser = default_parser()
    seen: list[str] = []
    original = parser.parse_many

    def recording(texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        texts = list(texts)
        seen.extend(texts)
        return original(texts, *args, **kwargs)

    refiner = Refiner(minilm, CorpusElaborator(corpus), parser=parser)
    parser.parse_many = recording  # type: ignore[method-assign]
    try:
        results = refiner.refine_many(queries[:10])
    finally:
        del parser.parse_many
    assert sorted(set(seen)) == sorted(set(queries[:10]))
    for result in results:
        assert set(result.positives) <= set(corpus.captions) | {result.query}


def test_feedback_anchors_never_count_an_excluded_sound_as_positive(corpus: CaptionCorpus,
                                                                    minilm) -> None:  # type: ignore[no-untyped-def]
    query = "a man speaking without any vehicle"
    phi0 = parse_caption(query)
    request = AnchorRequest(query, minilm.encode_text([query])[0], predicates(phi0.formula))
    source = FeedbackAnchors(corpus, k=30)
    anchors = source.anchor_batch([request])[0]
    assert anchors.positive is not None and anchors.negative is not None and anchors.weight == 0.0
    _, rows = corpus.neighbours(minilm.encode_text([query]), 30)
    excluded = [r for r in rows[0].tolist() if corpus.parses[r] is not None
                and "Vehicle" in {rec.symbol for rec in corpus.parses[r].predicates}]
    positive_rows = [r for r in rows[0].tolist() if corpus.parses[r] is not None
                     and coverage_of(phi0, corpus.parses[r], corpus.idf, corpus.unseen_idf)
                     >= source.coverage]
    assert not set(excluded) & set(positive_rows)
    expected = torch.nn.functional.normalize(corpus.embeddings[positive_rows].mean(0), dim=0)
    assert torch.allclose(anchors.positive, expected, atol=1e-6)


def test_the_feedback_weight_moves_q_star_and_zero_does_not(corpus: CaptionCorpus, queries: list[str],
                                                           minilm) -> None:  # type: ignore[no-untyped-def]
    config = RefineConfig.online()
    still = Refiner(minilm, "lexical", config=config, anchors=FeedbackAnchors(corpus, weight=0.0))
    moved = Refiner(minilm, "lexical", config=config, anchors=FeedbackAnchors(corpus, weight=0.2))
    a, b = still.refine_many(queries[:8]), moved.refine_many(queries[:8])
    assert [r.phi_star for r in a] == [r.phi_star for r in b]  # the weight changes q*, not the search
    assert sum(not torch.allclose(x.q_star, y.q_star) for x, y in zip(a, b, strict=True)) >= 6
    assert all(abs(float(r.q_star.norm()) - 1) < 1e-5 for r in b)


@pytest.mark.parametrize(("make", "code"), [
    (lambda: CaptionCorpus(torch.zeros((1, 4)), [""], [None]), "E411"),
    (lambda: CaptionCorpus(torch.zeros((2, 4)), ["a"], [None]), "E411"),
    (lambda: CaptionCorpus.load("/nonexistent/corpus"), "E412"),
    (lambda: CorpusElaborator("not a corpus"), "E410"),  # type: ignore[arg-type]
])
def test_bad_corpora_get_coded_errors(make, code: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RefineError, match=code):
        make()


def test_a_damaged_saved_corpus_is_e412(corpus: CaptionCorpus, tmp_path: Path) -> None:
    corpus.save(tmp_path / "c")
    lines = (tmp_path / "c" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace("∃", "∃∃(")
    (tmp_path / "c" / "corpus.jsonl").write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(RefineError, match="E412"):
        CaptionCorpus.load(tmp_path / "c")


def test_elaborate_alone_needs_a_backbone(corpus: CaptionCorpus, minilm) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RefineError, match="E413"):
        CorpusElaborator(corpus).elaborate("a dog barking")
    elaboration = CorpusElaborator(corpus, backbone=minilm).elaborate("a man speaking")
    assert set(elaboration.positives) <= set(corpus.captions)


def test_fol_refine_with_a_corpus_file_and_with_an_index(cafe: Path, tmp_path: Path, clips) -> None:  # type: ignore[no-untyped-def]
    captions = tmp_path / "captions.txt"
    captions.write_text("\n".join(clip.captions[1] for clip in clips[:200]), encoding="utf-8")
    queries = tmp_path / "q.txt"
    queries.write_text("a dog barking\nrain falling on a roof\n", encoding="utf-8")
    status, _, err = run_fol_refine(str(queries), "--elaborator", "corpus", "--corpus", str(captions),
                                    "-o", str(tmp_path / "a.jsonl"), "--no-progress")
    assert status == 0, err
    rows = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    human = set(captions.read_text(encoding="utf-8").splitlines())
    assert all(set(row["positives"]) <= human | {row["query"]} for row in rows)
    assert any(set(row["positives"]) & human for row in rows)
    status, _, err = run_fol_refine(str(queries), "--elaborator", "corpus", "--anchors", "feedback",
                                    "--index", str(cafe), "-o", str(tmp_path / "b.jsonl"), "--no-progress")
    assert status == 0, err
    status, _, err = run_fol_refine(str(queries), "--elaborator", "corpus", "-o", str(tmp_path / "c.jsonl"))
    assert status == 2 and "--corpus PATH or --index DIR" in err
    status, _, err = run_fol_refine(str(queries), "--anchors", "feedback", "-o", str(tmp_path / "d.jsonl"))
    assert status == 2 and "--index DIR" in err


def test_the_retriever_takes_the_corpus_elaborator_and_feedback_by_name(cafe: Path) -> None:
    retriever = Retriever(cafe, PipelineSpec(stage1=RefineConfig.online(), elaborator="corpus",
                          anchors="feedback", formula=None, rerank=None), device="cpu")
    result = retriever.search(["a dog barking"], k=3)[0]
    assert result.source == "refine"
    assert result.hits[0].item_id in {"clip0", "clip1"}
    assert retriever.refiner is not None and retriever.refiner.anchors.name == "feedback"


def test_fortekit_eval_runs_stage1_with_the_corpus_and_feedback(tmp_path: Path) -> None:
    from fortekit.search.cli import main

    clotho = require(SHARED_DATA / "clotho" / "clotho_captions_development.csv")
    out = tmp_path / "run"
    assert main(["eval", "--test", str(clotho), "--n-train", "60", "--limit-test", "40", "--epochs", "1",
                 "--anchors", "feedback,none", "--elaborator", "corpus", "--direction", "t2a", "--no-umap",
                 "--device", "cpu", "-o", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["settings"]["elaborator"] == "corpus" and config["settings"]["anchors"][0] == "feedback"
    assert {"baseline", "S1", "S1+S2+S3"} <= set(metrics["t2a"]["systems"])
    assert list((out / "stage1").glob("test-feedback-*.jsonl"))


def test_fortekit_eval_beir_runs_stage1_with_the_corpus_and_feedback(tmp_path: Path) -> None:
    from beir_fixtures import make_beir

    from fortekit.search.cli import main

    folder = make_beir(tmp_path / "tiny")
    out = tmp_path / "out"
    assert main(["eval", "--beir", str(folder), "-o", str(out), "--device", "cpu", "--systems",
                 "formula,S1+formula", "--anchors", "feedback", "--elaborator", "corpus"]) == 0
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["stage1"]["anchors"] == "feedback" and metrics["stage1"]["elaborator"] == "corpus"
    assert list((out / "stage1").glob("beir-feedback-*.jsonl"))


def test_auto_falls_back_to_lexical_and_no_anchors_without_captions(minilm) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.index import AudioIndex

    texts = ["a dog barks", "rain falls on a roof", "a bell rings"]
    bare = AudioIndex.from_captions(["a", "b", "c"], [None, None, None], minilm.name,
                                    embeddings=minilm.encode_text(texts).numpy(), parse_captions=False)
    retriever = Retriever(bare, PipelineSpec(stage1=RefineConfig.online(), formula=None, rerank=None),
                          backbone=minilm, device="cpu")
    assert retriever.refiner is not None
    assert retriever.refiner.elaborator.name == "lexical" and retriever.refiner.anchors.name == "none"
    assert retriever.search("a dog barking", k=1).hits[0].item_id == "a"


def test_a_query_that_excludes_a_sound_is_steered_but_not_moved(corpus: CaptionCorpus, minilm) -> None:  # type: ignore[no-untyped-def]
    source = FeedbackAnchors(corpus)
    plain, excluding = "a man speaking", "a man speaking without any vehicle"
    requests = [AnchorRequest(text, minilm.encode_text([text])[0], predicates(parse_caption(text).formula))
                for text in (plain, excluding)]
    anchors = source.anchor_batch(requests)
    assert anchors[0].weight == source.weight and anchors[1].weight == 0.0
    assert anchors[1].positive is not None  # still there to steer the search


# --- the feedback regime (depth 0, the default) ------------------------------------------------
def test_depth_zero_gives_the_searchs_q_star_where_the_search_keeps_phi0(
    corpus: CaptionCorpus, queries: list[str], minilm,  # type: ignore[no-untyped-def]
) -> None:
    searched = Refiner(minilm, CorpusElaborator(corpus), config=RefineConfig.online(),
                       anchors=FeedbackAnchors(corpus)).refine_many(queries[:20])
    feedback = Refiner(minilm, CorpusElaborator(corpus), config=RefineConfig.feedback(),
                       anchors=FeedbackAnchors(corpus)).refine_many(queries[:20])
    kept = [(s, f) for s, f in zip(searched, feedback, strict=True) if s.phi_star == s.phi0]
    assert len(kept) >= 15
    for s, f in kept:
        assert f.phi_star == f.phi0 and f.depth == 0 and f.threshold == "none"
        assert torch.allclose(s.q_star, f.q_star, atol=1e-5), s.query
    assert sum(not torch.allclose(f.q_star, minilm.encode_text([f.query])[0], atol=1e-4)
               for f in feedback) >= 10  # the anchors moved q*


def test_depth_zero_encodes_only_the_queries(corpus: CaptionCorpus, queries: list[str],
                                             minilm) -> None:  # type: ignore[no-untyped-def]
    refiner = Refiner(minilm, CorpusElaborator(corpus), config=RefineConfig.feedback(),
                      anchors=FeedbackAnchors(corpus))
    encoded: list[str] = []
    original = refiner.encoder.encode

    def recording(texts):  # type: ignore[no-untyped-def]
        encoded.extend(texts)
        return original(texts)

    refiner.encoder.encode = recording  # type: ignore[method-assign]
    results = refiner.refine_many(queries[:10])
    assert sorted(set(encoded)) == sorted(set(queries[:10]))
    assert [r.query for r in results] == queries[:10] and all(len(r.tree) == 1 for r in results)


def test_the_default_pipeline_runs_stage1_as_feedback_only(cafe: Path) -> None:
    retriever = Retriever(cafe, device="cpu")
    assert retriever.refiner is not None and retriever.refiner.config.max_depth == 0
    assert "feedback" in retriever.pipeline.state("stage1").detail
    online = retriever.replace(stage1=RefineConfig.online())
    assert online.refiner is not None and online.refiner.config.max_depth == 2


def test_a_negative_depth_is_e400() -> None:
    with pytest.raises(RefineError, match="E400"):
        RefineConfig(max_depth=-1)


@pytest.mark.parametrize("stage1", ["auto", None])
def test_the_default_pipeline_encodes_a_query_and_its_clauses_in_one_call(cafe: Path, stage1) -> None:  # type: ignore[no-untyped-def]
    retriever = Retriever(cafe, PipelineSpec(stage1=stage1), device="cpu")
    assert (retriever.refiner is not None) == (stage1 == "auto") and retriever.formula_scorer is not None
    stats = retriever.encoder.stats
    for query in ("a dog barking and rain falling", "a baby crying and a woman speaking"):
        stats.reset()
        retriever.search(query, k=3)
        assert stats.calls == 1, (query, stats)
        assert stats.texts_encoded >= 3  # the query and its two clause texts
