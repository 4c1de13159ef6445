"""Approximate search through FAISS (HNSW and IVF-PQ) on real caption embeddings: recall against exact."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("faiss", reason="faiss-cpu (the extra fortekit[faiss]) is not installed")

from fortekit.errors import AudioIndexError
from fortekit.search.index.audio_index import AudioIndex
from fortekit.search.index.faiss_search import FaissSearcher
from fortekit.search.pipeline import PipelineSpec

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
CLOTHO = DATA / "clotho" / "clotho_captions_development.csv"


@pytest.fixture(scope="module")
def caption_rows(minilm) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """MiniLM rows of 2,000 Clotho development captions (caption_1), and 200 others as queries."""
    if not CLOTHO.is_file():
        pytest.skip(f"the Clotho development captions are not at {CLOTHO} (../shared/data)")
    with CLOTHO.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    items = [row["caption_1"] for row in rows[:2000]]
    queries = [row["caption_2"] for row in rows[2000:2200]]
    encode = minilm.encode_text
    return np.asarray(encode(items), dtype=np.float32), np.asarray(encode(queries), dtype=np.float32)


def _recall(found: np.ndarray, exact: np.ndarray, k: int) -> float:
    return float(np.mean([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(found, exact, strict=True)]))


def _exact(rows: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    return FaissSearcher.build(rows, kind="flat").search(queries, k)[1]


def test_hnsw_finds_the_exact_top_10_on_real_captions(caption_rows: tuple[np.ndarray, np.ndarray]) -> None:
    rows, queries = caption_rows
    found = FaissSearcher.build(rows, kind="hnsw").search(queries, 10)[1]
    assert _recall(found, _exact(rows, queries, 10), 10) >= 0.95


def test_ivfpq_is_compressed_and_finds_most_of_the_top_10(
        caption_rows: tuple[np.ndarray, np.ndarray]) -> None:
    rows, queries = caption_rows
    searcher = FaissSearcher.build(rows, kind="ivfpq", nprobe=16)
    assert searcher.index.code_size <= rows.shape[1] // 8  # bytes a row, against 4 * 384 uncompressed
    assert _recall(searcher.search(queries, 10)[1], _exact(rows, queries, 10), 10) >= 0.5


def test_ann_kinds_are_saved_with_their_search_settings(  # type: ignore[no-untyped-def]
        minilm, caption_rows, tmp_path: Path) -> None:
    rows, queries = caption_rows
    index = AudioIndex.from_captions([f"c{i}" for i in range(len(rows))], [None] * len(rows), minilm,
                                     embeddings=rows, parse_captions=False)
    for kind, setting in (("hnsw", lambda i: i.hnsw.efSearch), ("ivfpq", lambda i: i.nprobe)):
        index.build_faiss(kind, ef_search=40, nprobe=8)
        before = index.search(queries[:5], k=10, use_faiss=True)
        loaded = AudioIndex.load(index.save(tmp_path / f"{kind}.index"))
        assert loaded.faiss_kind == kind
        after = loaded.search(queries[:5], k=10, use_faiss=True)
        assert np.array_equal(np.asarray(before[1]), np.asarray(after[1]))
        assert setting(loaded._faiss_searcher().index) in (40, 8)


def test_bad_ann_settings_are_coded(caption_rows: tuple[np.ndarray, np.ndarray]) -> None:
    rows, _ = caption_rows
    with pytest.raises(AudioIndexError, match=r"\[E613\] pq_bytes.*divisor of the dimension 384"):
        FaissSearcher.build(rows, kind="ivfpq", pq_bytes=100)
    with pytest.raises(AudioIndexError, match=r"\[E613\] ef_search"):
        FaissSearcher.build(rows, kind="hnsw", ef_search=-1)


def test_a_candidate_pool_wider_than_ef_search_is_filled(caption_rows: tuple[np.ndarray, np.ndarray]) -> None:
    """The Retriever asks for 1,000 candidates; HNSW keeps ef_search (64) unless widened for the search."""
    rows, queries = caption_rows
    found = FaissSearcher.build(rows, kind="hnsw").search(queries[:20], 1000)[1]
    assert (found >= 0).all()
    assert _recall(found, _exact(rows, queries[:20], 1000), 1000) >= 0.95


def test_ivfpq_hits_are_rescored_with_the_stored_rows(  # type: ignore[no-untyped-def]
        minilm, caption_rows: tuple[np.ndarray, np.ndarray]) -> None:
    rows, queries = caption_rows
    index = AudioIndex.from_captions([f"c{i}" for i in range(len(rows))], [None] * len(rows), minilm,
                                     embeddings=rows, parse_captions=False)
    index.build_faiss("ivfpq", nprobe=16)
    scores, found = index.search(queries, k=10, use_faiss=True)
    exact_scores, exact = index.search(queries, k=10)
    codes_only = index._faiss_searcher().search(queries, 10)[1]
    assert _recall(np.asarray(found), np.asarray(exact), 10) > _recall(codes_only, np.asarray(exact), 10)
    assert _recall(np.asarray(found), np.asarray(exact), 10) >= 0.9
    top = np.asarray(found)[:, 0] == np.asarray(exact)[:, 0]  # where the top hit agrees, so does its score
    np.testing.assert_allclose(np.asarray(scores)[top, 0], np.asarray(exact_scores)[top, 0], atol=1e-5)
    assert index.meta.ann_recall is not None and index.meta.ann_recall >= 0.9


def test_the_retriever_takes_its_candidates_from_the_ann_index_of_a_large_index(  # type: ignore[no-untyped-def]
        minilm, caption_rows, monkeypatch: pytest.MonkeyPatch) -> None:
    """From ANN_MIN_ITEMS items on (lowered here to 1,000), with the same hits as exact candidates."""
    import fortekit.search.index.ann as ann
    from fortekit.search.retriever import Retriever

    rows, _ = caption_rows
    with CLOTHO.open(encoding="utf-8", newline="") as handle:
        captions = [row["caption_1"] for row in list(csv.DictReader(handle))[:2000]]
    index = AudioIndex.from_captions([f"c{i}" for i in range(2000)], captions, minilm, embeddings=rows,
                                     parse_captions=False)
    index.build_faiss("hnsw")
    # 2,000 items: below the threshold
    assert not Retriever(index, PipelineSpec(stage1=None), backbone=minilm).use_faiss
    monkeypatch.setattr(ann, "ANN_MIN_ITEMS", 1000)
    approximate = Retriever(index, PipelineSpec(stage1=None), backbone=minilm)
    assert approximate.use_faiss and approximate.first_pass.startswith("ann (hnsw: 2,000 items")
    assert "recall@10 against exact" in approximate.first_pass
    assert "projection" not in approximate.pipeline.running  # the FAISS rows are the unprojected ones
    exact = Retriever(index, PipelineSpec(stage1=None, projection=None, first_pass="exact"), backbone=minilm)
    assert exact.first_pass == "exact (asked for: --first-pass exact)"
    queries = ["a dog barking without people talking", "rain falling on a roof and thunder"]
    for mine, theirs in zip(approximate.search(queries, k=10), exact.search(queries, k=10), strict=True):
        assert [hit.item_id for hit in mine.hits] == [hit.item_id for hit in theirs.hits]
