"""The index's caption corpus parses on demand: nothing up front, a batch's neighbours in one spaCy call.

Stage 1 over a caption index reads only each query's nearest captions, so
``CaptionCorpus.from_index`` parses nothing when it is built (LazyParses) and takes its idf
weights from the index's stored predicate sets (IndexIdf). Real captions (the first 300
Clotho development clips, caption 1) with the bundled MiniLM: the lazy corpus gives the
eager one's idf, parses and Stage 1 output exactly.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from conftest import SHARED_DATA, require

from fortekit.errors import RefineError
from fortekit.fol import predicates
from fortekit.fol.caption import default_parser
from fortekit.fol.predicates import Polarity, PredicateSymbol
from fortekit.search.index.audio_index import AudioIndex
from fortekit.search.stage1.assembly import build_refiner
from fortekit.search.stage1.corpus import CaptionCorpus, IndexIdf, LazyParses, parse_captions_once
from fortekit.search.stage1.feedback import wanted_names

CLOTHO_DEV = SHARED_DATA / "clotho" / "clotho_captions_development.csv"
N_CLIPS = 300


class CountingParser:
    """The default caption parser, counting its ``parse_many`` calls (one per spaCy batch)."""

    def __init__(self) -> None:
        self.parser = default_parser()
        self.max_chars = self.parser.max_chars
        self.calls: list[int] = []

    def parse_many(self, texts: Sequence[str], **options: Any) -> Any:
        self.calls.append(len(texts))
        return self.parser.parse_many(texts, **options)


@pytest.fixture(scope="module")
def clotho_rows() -> list[dict[str, str]]:
    with require(CLOTHO_DEV).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def index(clotho_rows: list[dict[str, str]], minilm) -> AudioIndex:  # type: ignore[no-untyped-def]
    rows = clotho_rows[:N_CLIPS]
    ids, captions = [row["file_name"] for row in rows], [row["caption_1"] for row in rows]
    return AudioIndex.from_captions(ids, captions, minilm)


@pytest.fixture(scope="module")
def eager(index: AudioIndex) -> CaptionCorpus:
    """The corpus as it was built before: every caption parsed up front."""
    captions = [caption or "" for caption in index.captions]
    rows = np.array(index.embeddings, dtype=np.float32)
    return CaptionCorpus(rows, captions, parse_captions_once(captions))


@pytest.fixture(scope="module")
def queries(clotho_rows: list[dict[str, str]]) -> list[str]:
    """40 real queries: caption 2 of 28 indexed clips, and 12 later captions that use names some
    indexed captions hold only negatively ("without splashing", "never changing", "without stopping")."""
    later = [row[f"caption_{k}"] for row in clotho_rows[N_CLIPS:] for k in (2, 3)]
    picked = [text for stem in ("splash", "chang", "stopp")
              for text in [t for t in later if stem in t.lower()][:4]]
    return [row["caption_2"] for row in clotho_rows[:28]] + picked


def test_from_index_parses_nothing_and_a_batch_costs_one_spacy_call(index: AudioIndex) -> None:
    parser = CountingParser()
    corpus = CaptionCorpus.from_index(index, parser=parser)  # type: ignore[arg-type]
    assert isinstance(corpus.parses, LazyParses) and isinstance(corpus.idf, IndexIdf)
    assert corpus.parses.parsed == 0 and parser.calls == []
    _, rows = corpus.neighbours(torch.as_tensor(np.array(index.embeddings[:3])), k=20)
    settling = corpus.idf.rows_for(["Rain", "Splashing"])  # "without splashing": settled by its parse
    assert settling
    corpus.prefetch(rows.flatten().tolist(), names=["Rain", "Splashing"])
    read = set(rows.flatten().tolist()) | set(settling)
    assert len(parser.calls) == 1 and corpus.parses.parsed == len(read)
    corpus.prefetch(rows.flatten().tolist(), names=["Splashing"])  # all kept: no second call
    assert [corpus.parses[r] for r in rows[0].tolist()] and len(parser.calls) == 1


def test_the_stored_sets_give_the_eager_idf_exactly(index: AudioIndex, eager: CaptionCorpus) -> None:
    lazy = CaptionCorpus.from_index(index)
    # Some captions hold a name only negatively: "without splashing" (a denied entity's
    # clause, counted by the eager idf) and "not able to be discerned" (a negated
    # predicate, not counted). Only those captions are parsed to settle the names.
    assert isinstance(lazy.idf, IndexIdf)
    denied = lazy.idf.rows_for(["Splashing", "Discern"])
    assert denied and "Splashing" in eager.idf and "Discern" not in eager.idf
    assert lazy.idf["Splashing"] == eager.idf["Splashing"] and "Discern" not in lazy.idf
    assert lazy.parses.parsed == len(denied)  # type: ignore[attr-defined]
    assert dict(lazy.idf) == eager.idf and lazy.unseen_idf == eager.unseen_idf
    assert lazy.parses.parsed < len(lazy) // 10  # type: ignore[attr-defined]
    assert list(lazy.parses) == eager.parses  # forced: the same parses as parse_captions_once


def test_what_an_item_asserts_comes_from_its_stored_set_as_its_parse_says(
        index: AudioIndex, eager: CaptionCorpus) -> None:
    parser = CountingParser()
    lazy = CaptionCorpus.from_index(index, parser=parser)  # type: ignore[arg-type]
    assert lazy.stores_assertions and not eager.stores_assertions
    # every caption: the positive names of its stored set are its records neither negated nor excluded
    rows = range(len(lazy))
    assert [lazy.asserted(row) for row in rows] == [eager.asserted(row) for row in rows]
    assert parser.calls == []  # read without a parse


def test_feedback_anchors_over_an_index_parse_no_neighbour(index: AudioIndex) -> None:
    from fortekit.fol import predicates
    from fortekit.fol.caption import parse_caption
    from fortekit.search.stage1.anchors import AnchorRequest
    from fortekit.search.stage1.feedback import FeedbackAnchors

    parser = CountingParser()
    corpus = CaptionCorpus.from_index(index, parser=parser)  # type: ignore[arg-type]
    text = index.captions[0] or ""
    request = AnchorRequest(text, torch.as_tensor(np.array(index.embeddings[0])),
                            predicates(parse_caption(text).formula))
    anchors = FeedbackAnchors(corpus, k=10).anchor_batch([request])[0]
    assert anchors.positive is not None  # its own item satisfies its formula
    assert corpus.parses.parsed <= len(corpus.idf.rows_for(  # type: ignore[attr-defined]
        {s.name for s in request.predicates}))  # only what the idf settles, never the neighbours


def test_stage1_over_the_lazy_corpus_is_the_eager_one(index: AudioIndex, eager: CaptionCorpus,
                                                      queries: list[str], minilm: Any) -> None:
    parser = CountingParser()
    lazy = CaptionCorpus.from_index(index, parser=parser)  # type: ignore[arg-type]
    parsed = default_parser().parse_many(queries)
    names = {name for parse in parsed for name in wanted_names(predicates(parse.formula))}
    assert isinstance(lazy.idf, IndexIdf) and lazy.idf.rows_for(names)  # some are settled by parsing
    results = {}
    for name, corpus in (("eager", eager), ("lazy", lazy)):
        def shared(corpus: CaptionCorpus = corpus) -> CaptionCorpus:
            return corpus

        refiner = build_refiner(minilm, elaborator="corpus", anchors="feedback", index=index,
                                index_corpus=shared, device="cpu")
        assert getattr(refiner.elaborator, "corpus", None) is corpus
        assert getattr(refiner.anchors, "corpus", None) is corpus
        results[name] = refiner.refine_many(queries, batch_size=20)
    # Two batches, one spaCy call each: the elaborator's (the feedback anchors' top 10 are among
    # its 20 neighbours, already parsed).
    assert len(parser.calls) == 2
    assert lazy.parses.parsed < len(lazy)  # type: ignore[attr-defined]
    for before, after in zip(results["eager"], results["lazy"], strict=True):
        assert after.phi_star == before.phi_star and after.refined_text == before.refined_text
        assert after.positives == before.positives and after.negatives == before.negatives
        assert torch.allclose(after.q_star, before.q_star, atol=1e-6, rtol=0.0)
        for term, value in before.terms.to_dict().items():  # the anchors' terms (sim_pos, sim_neg) too
            assert after.terms.to_dict()[term] == pytest.approx(value, abs=1e-6)


def test_a_saved_lazy_corpus_writes_every_parse(index: AudioIndex, eager: CaptionCorpus,
                                                tmp_path: Path) -> None:
    lazy = CaptionCorpus.from_index(index)
    lazy.save(tmp_path / "corpus")
    loaded = CaptionCorpus.load(tmp_path / "corpus")
    assert loaded.parses == eager.parses and loaded.idf == eager.idf
    assert loaded.captions == eager.captions


def test_an_index_without_predicates_is_e411_and_an_unparsed_one_is_parsed_up_front() -> None:
    rows = np.eye(3, dtype=np.float32)
    captions = ["a dog barks", "rain falls", ""]
    empty = AudioIndex.from_captions(["a", "b", "c"], captions, "minilm", embeddings=rows,
                                     predicate_sets=[frozenset()] * 3)
    with pytest.raises(RefineError, match=r"E411.*no item of the index has a predicate"):
        CaptionCorpus.from_index(empty)
    unparsed = AudioIndex.from_captions(["a", "b", "c"], captions, "minilm", embeddings=rows,
                                        parse_captions=False)
    corpus = CaptionCorpus.from_index(unparsed)  # no stored sets: counted from every parse, as before
    assert isinstance(corpus.idf, dict) and corpus.parses.parsed == 3  # type: ignore[attr-defined]
    assert corpus.idf == CaptionCorpus(rows, captions, parse_captions_once(captions)).idf


def test_lazy_parses_keep_the_rules_of_parse_captions_once() -> None:
    captions = ["a dog barks", "", "x" * (default_parser().max_chars + 1), 7, "rain falls"]
    parses = LazyParses(captions)  # type: ignore[arg-type]
    assert parses[1] is None and parses[2] is None and parses[3] is None and parses.parsed == 3
    assert parses[-1] == parses[4] and parses[0:2] == parse_captions_once(captions)[0:2]  # type: ignore[arg-type]
    assert list(parses) == parse_captions_once(captions)  # type: ignore[arg-type]
    with pytest.raises(IndexError):
        parses[5]
    assert repr(parses) == "LazyParses(5 captions, 5 parsed)"


def test_a_name_held_only_negatively_is_settled_by_its_parse() -> None:
    negative = Polarity.NEGATIVE
    sets = [
        frozenset({PredicateSymbol("Train", 1), PredicateSymbol("Whistling", 1, negative)}),
        frozenset({PredicateSymbol("Dog", 1), PredicateSymbol("Barking", 1, negative)}),
        frozenset(),
    ]
    captions = ["a train with no whistle", "a dog that is not barking", ""]
    parses = LazyParses(captions)
    idf = IndexIdf(sets, parses)
    assert idf["Train"] == idf["Dog"] and parses.parsed == 0
    assert "Whistling" in idf and "Barking" not in idf and parses.parsed == 2
    assert dict(idf) == CaptionCorpus(np.eye(3), captions, parse_captions_once(captions)).idf


def test_neighbours_come_from_the_approximate_part_where_the_first_pass_uses_it(index: AudioIndex) -> None:
    """A million-row index answers Stage 1's neighbours from its HNSW part, not an exact scan."""
    pytest.importorskip("faiss", reason="faiss-cpu (the extra fortekit[faiss]) is not installed")
    approximate = AudioIndex.from_captions(index.ids, index.captions, "minilm", embeddings=index.embeddings,
                                           parse_captions=False)
    approximate.build_faiss("hnsw")
    queries = torch.from_numpy(np.array(index.embeddings[:5], dtype=np.float32))
    exact = CaptionCorpus.from_index(index).neighbours(queries, 10)[1]
    corpus = CaptionCorpus.from_index(approximate, use_faiss=True)
    calls: list[int] = []
    searched = approximate.search

    def counting(*args: Any, **options: Any) -> Any:
        calls.append(int(options.get("use_faiss", False)))
        return searched(*args, **options)

    approximate.search = counting  # type: ignore[method-assign]
    scores, rows = corpus.neighbours(queries, 10)
    assert calls == [1]
    assert rows.shape == (5, 10) and scores.shape == (5, 10)
    # 300 rows: the graph finds what the exact scan finds (each row is its own nearest)
    assert rows[:, 0].tolist() == list(range(5))
    assert len(set(rows.flatten().tolist()) & set(exact.flatten().tolist())) >= 45
    # below ANN_MIN_ITEMS the default is the exact scan, as for the first pass
    assert CaptionCorpus.from_index(approximate)._search is None
