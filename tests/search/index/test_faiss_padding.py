"""FAISS answers as every caller sees them: never a padding row -1, and never a file of another kind.

FAISS pads an answer with row -1 when it finds fewer than k rows (an IVF kind whose probed cells
hold fewer, an HNSW search that stops early). The padding is filled where FAISS answers
(:meth:`FaissSearcher.search`), so formula scoring, Stage 3 and the id lookup never see it (issue
43, case 5). A ``faiss.index`` of another kind than ``index.json`` says is E636 at load (case 6).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("faiss", reason="faiss-cpu (the extra fortekit[faiss]) is not installed")

from fortekit.errors import AudioIndexError
from fortekit.search.index.audio_index import AudioIndex
from fortekit.search.index.faiss_search import FaissSearcher
from fortekit.search.pipeline import PipelineSpec

WORDS = ["dog", "rain", "car", "bird", "bell", "wave", "people", "engine", "wind", "door"]
ROWS = 1200  # IVF-PQ trains from 1,000 rows on


@pytest.fixture(scope="module")
def rows() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(ROWS, 16)).astype(np.float32)


def _exact(rows: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    return FaissSearcher.build(rows, kind="flat").search(queries, k)[1]


@pytest.mark.parametrize("kind", ["ivf", "ivfpq"])
def test_an_ivf_answer_short_of_k_rows_is_filled_not_padded(rows: np.ndarray, kind: str) -> None:
    searcher = FaissSearcher.build(rows, kind=kind, nprobe=1)  # one cell of about 9 rows a query
    raw = searcher.index.search(rows[:20], 100)[1]
    assert (raw < 0).any()  # what FAISS itself answers: the case this guards
    scores, found = searcher.search(rows[:20], 100)
    assert found.shape == (20, 100) and (found >= 0).all() and np.isfinite(scores).all()
    assert all(len(set(row)) == 100 for row in found.tolist())
    assert (np.diff(scores, axis=1) <= 1e-6).all()  # still best first
    exact = _exact(rows, rows[:20], 100).tolist()
    recall = np.mean([len(set(a) & set(b)) / 100 for a, b in zip(found.tolist(), exact, strict=True)])
    assert recall >= 0.4  # more cells were probed: one cell alone holds under a tenth of the exact 100
    assert int(searcher.index.nprobe) == 1  # the widening is for that search only


def test_an_hnsw_answer_short_of_k_rows_is_filled_by_an_exact_search(rows: np.ndarray) -> None:
    searcher = FaissSearcher.build(rows, kind="hnsw", ef_search=16)

    class StopsEarly:
        """The HNSW index, answering with its last 5 places padded (a search that stopped early)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(searcher.index, name)

        def search(self, queries: np.ndarray, k: int, **options: Any) -> tuple[np.ndarray, np.ndarray]:
            scores, found = searcher.index.search(queries, k, **options)
            scores[:, -5:], found[:, -5:] = -np.inf, -1
            return scores, found

    _, found = FaissSearcher(StopsEarly(), "hnsw").search(rows[:4], 30)
    assert (found >= 0).all()
    assert found.tolist() == _exact(rows, rows[:4], 30).tolist()


def test_k_beyond_the_count_gives_every_row_once(rows: np.ndarray) -> None:
    searcher = FaissSearcher.build(rows[:50], kind="ivf", nlist=10, nprobe=1)
    found = searcher.search(rows[:3], 500)[1]
    assert found.shape == (3, 50) and all(sorted(row) == list(range(50)) for row in found.tolist())


@pytest.fixture(scope="module")
def ivfpq_folder(minilm, rows: np.ndarray, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    """A saved index of 1,200 captions whose IVF-PQ part probes one cell (few rows a query)."""
    rng = np.random.default_rng(1)
    captions = [" ".join(rng.choice(WORDS, 3)) for _ in range(ROWS)]
    vectors = np.asarray(minilm.encode_text(captions), dtype=np.float32)
    index = AudioIndex.from_captions([f"c{i}" for i in range(ROWS)], captions, minilm, embeddings=vectors)
    index.build_faiss("ivfpq", nprobe=1)
    return index.save(tmp_path_factory.mktemp("ivfpq") / "clips.index")


def test_the_retriever_over_ivfpq_gets_a_full_pool(minilm, ivfpq_folder: Path) -> None:  # type: ignore[no-untyped-def]
    """The Retriever asks the first pass for 1,000 candidates: one cell holds a few dozen."""
    from fortekit.search.retriever import Retriever

    retriever = Retriever(AudioIndex.load(ivfpq_folder), PipelineSpec(first_pass="ann"), backbone=minilm)
    result = retriever.search(["a dog barks in the rain", "a bell and the wind"], k=5)
    assert [len(one.hits) for one in result] == [5, 5]
    assert all(hit.item_id.startswith("c") for one in result for hit in one.hits)


def test_search_with_the_ann_first_pass_answers_over_ivfpq(
        ivfpq_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.search.cli.main import main

    code = main(["search", "--index", str(ivfpq_folder), "--first-pass", "ann", "-k", "3", "a dog barks"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "E481" not in captured.err and "Traceback" not in captured.err
    assert captured.out.count(" c") >= 3


@pytest.mark.parametrize(("recorded", "written"), [("hnsw", "ivfpq"), ("ivfpq", "hnsw"), ("flat", "hnsw")])
def test_a_faiss_file_of_another_kind_is_e636(
        rows: np.ndarray, tmp_path: Path, recorded: str, written: str) -> None:
    index = AudioIndex.from_captions([f"c{i}" for i in range(ROWS)], [None] * ROWS, "enc", embeddings=rows,
                                     parse_captions=False)
    index.build_faiss(recorded)
    folder = index.save(tmp_path / "clips.index")
    FaissSearcher.build(rows, kind=written).write(tmp_path / "other.faiss")
    shutil.copyfile(tmp_path / "other.faiss", folder / "faiss.index")
    loaded = AudioIndex.load(folder)
    with pytest.raises(AudioIndexError, match=rf"\[E636\].*of kind {written} .*index.json says {recorded}"):
        loaded.search(rows[:2], k=5, use_faiss=True)


def test_a_faiss_file_of_another_metric_is_e636(rows: np.ndarray, tmp_path: Path) -> None:
    import faiss

    index = AudioIndex.from_captions(["a", "b", "c"], [None] * 3, "enc", embeddings=rows[:3],
                                     parse_captions=False)
    index.build_faiss("flat")
    folder = index.save(tmp_path / "clips.index")
    l2 = faiss.IndexFlatL2(16)
    l2.add(rows[:3])
    faiss.write_index(l2, str(folder / "faiss.index"))
    with pytest.raises(AudioIndexError, match=r"\[E636\].*another metric"):
        AudioIndex.load(folder).search(rows[:1], k=2, use_faiss=True)
