"""The audio index (issue 7): build, save/load, exact and FAISS search, validation, the CLI.

Real data (200 Clotho development clips, caption_1) and the real bundled MiniLM; the audio
path runs a tiny, randomly initialised transformers ClapModel over WAV files written here.
Speed: ``pytest tests/search/index/test_index.py -k bench --benchmark-group-by=group`` (figures in
docs/audio_index.md).
"""

from __future__ import annotations

import csv
import doctest
import importlib
import json
import pickle
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import SHARED_DATA, require
from plugin_fixtures import save_tiny_clap, write_wav

from fortekit.errors import AudioIndexError, QueryFileError
from fortekit.fol.caption import parse_caption
from fortekit.fol.predicates import Polarity, PredicateSymbol, predicates
from fortekit.plugins import AudioItem, get_backbone
from fortekit.search.cli import main
from fortekit.search.cli.options import parse_options
from fortekit.search.index import AudioIndex
from fortekit.search.index.format import parse_predicate_symbol
from fortekit.search.index.search import exact_top_k
from fortekit.search.index.sources import read_caption_file

N_CLIPS = 200
CLOTHO = SHARED_DATA / "clotho" / "clotho_captions_development.csv"
AUDIOCAPS_VAL = SHARED_DATA / "audiocaps" / "val.csv"


# -- fixtures -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def clotho_rows() -> list[dict[str, str]]:
    with require(CLOTHO).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return rows[:N_CLIPS]


@pytest.fixture(scope="module")
def minilm():  # type: ignore[no-untyped-def]
    return get_backbone("minilm", device="cpu")


@pytest.fixture(scope="module")
def clotho_index(clotho_rows: list[dict[str, str]], minilm) -> AudioIndex:  # type: ignore[no-untyped-def]
    items = [AudioItem(text=row["caption_1"], item_id=row["file_name"]) for row in clotho_rows]
    return AudioIndex.build(items, minilm, batch_size=64)


@pytest.fixture(scope="module")
def saved_dir(clotho_index: AudioIndex, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clotho_index.save(tmp_path_factory.mktemp("index") / "clotho.index")


@pytest.fixture
def index_copy(saved_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(saved_dir, tmp_path / "copy.index"))


def random_queries(count: int, dim: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.nn.functional.normalize(torch.randn(count, dim, generator=generator))


def assert_same_ranking(scores: torch.Tensor, rows: torch.Tensor, reference: np.ndarray, k: int) -> None:
    """Our top-k against a stable numpy argsort of float64 scores: the same scores at each rank,
    and the same rows wherever the reference has no near-tie at that rank."""
    order = np.argsort(-reference, axis=1, kind="stable")[:, :k]
    expected = np.take_along_axis(reference, order, axis=1)
    np.testing.assert_allclose(scores.numpy(), expected, atol=1e-5)
    ranked = -np.sort(-reference, axis=1)[:, :k + 1]
    gaps = ranked[:, :-1] - ranked[:, 1:]  # gap to the next rank, (q, k)
    before = np.concatenate([np.full((len(gaps), 1), np.inf), gaps[:, :-1]], axis=1)
    clear = (before > 1e-5) & (gaps > 1e-5)
    assert clear.mean() > 0.9
    assert (rows.numpy()[clear] == order[clear]).all()


# -- building -----------------------------------------------------------------------------------
def test_build_records_ids_captions_and_unit_rows(clotho_index: AudioIndex, clotho_rows) -> None:  # type: ignore[no-untyped-def]
    assert len(clotho_index) == N_CLIPS and clotho_index.dim == 384
    assert clotho_index.backbone_name == "minilm"
    assert clotho_index.ids == [row["file_name"] for row in clotho_rows]
    assert clotho_index.captions == [row["caption_1"] for row in clotho_rows]
    assert clotho_index.embeddings.dtype == np.float32 and clotho_index.embeddings.shape == (N_CLIPS, 384)
    np.testing.assert_allclose(np.linalg.norm(clotho_index.embeddings, axis=1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="read-only"):
        clotho_index.embeddings[0, 0] = 2.0


def test_predicate_sets_are_those_of_the_parsed_captions(clotho_index: AudioIndex) -> None:
    assert clotho_index.unparsed_count == 0 and all(clotho_index.predicate_sets)
    for row in (0, 57, 199):
        caption = clotho_index.captions[row]
        assert caption is not None
        assert clotho_index.predicate_sets[row] == predicates(parse_caption(caption).formula)


def test_from_captions_embeds_like_build(clotho_index: AudioIndex, minilm) -> None:  # type: ignore[no-untyped-def]
    ids, captions = clotho_index.ids[:6], clotho_index.captions[:6]
    index = AudioIndex.from_captions(ids, captions, minilm, predicate_sets=clotho_index.predicate_sets[:6])
    np.testing.assert_allclose(index.embeddings, clotho_index.embeddings[:6], atol=1e-5)
    assert index.predicate_sets == clotho_index.predicate_sets[:6]


def test_given_embeddings_are_normalised_and_stored(clotho_index: AudioIndex) -> None:
    # e.g. the mean of two caption embeddings per clip
    means = (clotho_index.embeddings[:10] + clotho_index.embeddings[10:20]) / 2
    index = AudioIndex.from_captions(clotho_index.ids[:10], clotho_index.captions[:10], "minilm",
                                     embeddings=torch.from_numpy(means), parse_captions=False)
    unit = means / np.linalg.norm(means, axis=1, keepdims=True)
    np.testing.assert_allclose(index.embeddings, unit, atol=1e-6)
    assert index.predicate_sets == [frozenset()] * 10 and not index.meta.parsed


def test_unparsable_captions_are_counted_not_fatal() -> None:
    captions = ["a dog barks loudly", "   ", None, "x" * 100_001]
    index = AudioIndex.from_captions(["a", "b", "c", "d"], captions, "enc", embeddings=np.eye(4))
    assert [bool(symbols) for symbols in index.predicate_sets] == [True, False, False, False]
    assert index.unparsed_count == 3
    assert index.captions[1] is None  # blank captions are stored as missing


def test_unnormalised_index_still_searches_by_cosine() -> None:
    rows = np.array([[10.0, 0.0], [0.6, 0.8], [0.0, 0.1]], dtype=np.float32)
    index = AudioIndex.from_captions(["a", "b", "c"], [None] * 3, "enc", embeddings=rows,
                                     parse_captions=False, normalise=False)
    np.testing.assert_array_equal(index.embeddings, rows)
    scores, found = index.search(np.array([0.0, 1.0]), k=3, device="cpu")
    assert found.tolist() == [[2, 1, 0]]
    np.testing.assert_allclose(scores.numpy(), [[1.0, 0.8, 0.0]], atol=1e-6)


# -- search -------------------------------------------------------------------------------------
def test_exact_caption_query_finds_its_own_clip_first(clotho_index: AudioIndex, minilm) -> None:  # type: ignore[no-untyped-def]
    rows = list(range(0, N_CLIPS, 5))
    texts = [clotho_index.captions[row] or "" for row in rows]
    scores, found = clotho_index.search_text(texts, minilm, k=3, device="cpu")
    assert found[:, 0].tolist() == rows
    assert (scores[:, 0] > 0.999).all()


def test_top_k_matches_a_brute_force_numpy_argsort(clotho_index: AudioIndex, minilm) -> None:  # type: ignore[no-untyped-def]
    queries = torch.cat([minilm.encode_text(["a dog barking", "rain on a tin roof", "birds at dawn"]),
                         random_queries(40, 384)])
    scores, rows = clotho_index.search(queries, k=10, device="cpu")
    assert scores.dtype == torch.float32 and rows.dtype == torch.int64 and rows.shape == (43, 10)
    reference = queries.double().numpy() @ clotho_index.embeddings.astype(np.float64).T
    assert_same_ranking(scores, rows, reference, 10)


def test_chunked_search_equals_unchunked(clotho_index: AudioIndex) -> None:
    # BLAS picks kernels by matrix shape, so scores agree to float rounding, not bit for bit.
    queries = random_queries(37, 384, seed=1)
    whole = clotho_index.search(queries, k=7, device="cpu")
    for chunk in (1, 5, 36):
        chunked = clotho_index.search(queries, k=7, device="cpu", chunk_rows=chunk)
        torch.testing.assert_close(chunked[0], whole[0], rtol=0, atol=1e-6)
        assert torch.equal(chunked[1], whole[1])


def test_ties_go_to_the_lower_row_as_in_a_stable_argsort() -> None:
    base = np.eye(4, dtype=np.float32)
    rows = base[[1, 0, 1, 2, 1, 1, 0, 1]]  # row pattern with many exact ties
    index = AudioIndex.from_captions([str(i) for i in range(8)], [None] * 8, "enc", embeddings=rows,
                                     parse_captions=False)
    for k in (1, 2, 3, 5, 8):
        _, found = index.search(base[1], k=k, device="cpu")
        assert found.tolist() == [[0, 2, 4, 5, 7, 1, 3, 6][:k]]
    matrix = torch.from_numpy(rows)
    expected = np.argsort(-(rows @ base.T).T, axis=1, kind="stable")[:, :3]
    assert exact_top_k(matrix, torch.from_numpy(base), k=3)[1].tolist() == expected.tolist()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_search_matches_cpu(clotho_index: AudioIndex) -> None:
    queries = random_queries(9, 384, seed=5)
    on_gpu = clotho_index.search(queries.cuda(), k=10, device="cuda")
    on_cpu = clotho_index.search(queries, k=10, device="cpu")
    assert on_gpu[0].device.type == "cpu" and clotho_index.embedding_tensor("cuda").is_cuda
    torch.testing.assert_close(on_gpu[0], on_cpu[0], rtol=0, atol=1e-5)
    assert clotho_index.scores(queries, device="cuda").is_cuda


def test_k_is_clipped_and_scores_are_the_full_matrix(clotho_index: AudioIndex) -> None:
    queries = random_queries(3, 384, seed=2)
    scores, rows = clotho_index.search(queries, k=10_000, device="cpu")
    assert rows.shape == (3, N_CLIPS) and sorted(rows[0].tolist()) == list(range(N_CLIPS))
    full = clotho_index.scores(queries, device="cpu")
    assert full.shape == (3, N_CLIPS)
    torch.testing.assert_close(full.gather(1, rows), scores)
    with pytest.raises(AudioIndexError, match=r"\[E613\] k must be"):
        clotho_index.search(queries, k=0)


def test_bad_queries_are_typed_errors(clotho_index: AudioIndex, minilm) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AudioIndexError, match=r"\[E608\] The queries have dimension 10"):
        clotho_index.search(np.zeros((2, 10)), k=1)
    with pytest.raises(AudioIndexError, match=r"\[E618\]"):
        clotho_index.search("a dog barking", k=1)
    with pytest.raises(AudioIndexError, match=r"\[E618\].*shape \(1, 2, 384\)"):
        clotho_index.search(np.zeros((1, 2, 384)), k=1)
    with pytest.raises(AudioIndexError, match=r"\[E618\].*NaN"):
        clotho_index.search(np.full(384, np.nan), k=1)


def test_another_backbone_is_refused(clotho_index: AudioIndex, saved_dir: Path, tiny_clap) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AudioIndexError, match=r"\[E609\] The index was built with the backbone 'minilm'"):
        clotho_index.search_text(["rain"], tiny_clap)
    with pytest.raises(AudioIndexError, match=r"\[E609\]"):
        AudioIndex.load(saved_dir, backbone=tiny_clap)


# -- FAISS --------------------------------------------------------------------------------------
def test_faiss_flat_and_exhaustive_ivf_agree_with_exact_search(saved_dir: Path, tmp_path: Path) -> None:
    index = AudioIndex.load(saved_dir, mmap=False)
    queries = random_queries(25, 384, seed=3)
    reference = queries.double().numpy() @ index.embeddings.astype(np.float64).T
    index.build_faiss("flat")
    assert_same_ranking(*index.search(queries, k=10, use_faiss=True), reference, 10)
    loaded = AudioIndex.load(index.save(tmp_path / "flat.index"))
    assert loaded.faiss_kind == "flat" and (tmp_path / "flat.index" / "faiss.index").is_file()
    assert_same_ranking(*loaded.search(queries, k=10, use_faiss=True), reference, 10)
    index.build_faiss("ivf", nlist=4, nprobe=4)  # probing every cell is exhaustive, hence exact
    assert_same_ranking(*index.search(queries, k=10, use_faiss=True), reference, 10)


def test_faiss_errors_are_typed(saved_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = AudioIndex.load(saved_dir)
    with pytest.raises(AudioIndexError, match=r"\[E616\]"):
        index.search(random_queries(1, 384), use_faiss=True)
    with pytest.raises(AudioIndexError, match=r"\[E613\] kind"):
        index.build_faiss("annoy")
    with pytest.raises(AudioIndexError, match=r"\[E613\] kind.*1,000 rows"):
        index.build_faiss("ivfpq")  # too few rows to train product quantisation
    monkeypatch.setitem(sys.modules, "faiss", None)
    with pytest.raises(AudioIndexError, match=r"\[E612\].*pip install 'fortekit\[faiss\]'"):
        index.build_faiss()


# -- files --------------------------------------------------------------------------------------
def test_save_load_round_trip_is_identical_and_memory_mapped(
    clotho_index: AudioIndex, saved_dir: Path
) -> None:
    loaded = AudioIndex.load(saved_dir)
    assert loaded.ids == clotho_index.ids and loaded.captions == clotho_index.captions
    assert loaded.predicate_sets == clotho_index.predicate_sets
    np.testing.assert_array_equal(loaded.embeddings, clotho_index.embeddings)
    assert isinstance(loaded.embeddings, np.memmap) and not loaded.embeddings.flags.writeable
    assert (loaded.backbone_name, loaded.dim, len(loaded)) == ("minilm", 384, N_CLIPS)
    assert not isinstance(AudioIndex.load(saved_dir, mmap=False).embeddings, np.memmap)
    queries = random_queries(5, 384, seed=4)
    for got, want in zip(loaded.search(queries, k=5), clotho_index.search(queries, k=5), strict=True):
        assert torch.equal(got, want)
    loaded.embedding_tensor("cpu").mul_(0.0)  # a private copy-on-write map: the file is untouched
    np.testing.assert_array_equal(AudioIndex.load(saved_dir).embeddings, clotho_index.embeddings)


def test_files_are_plain_json_and_npy_without_pickle(
    saved_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = sorted(path.name for path in saved_dir.iterdir())
    # .fortekit-output: the marker that makes the folder fortekit's, so --overwrite may replace it
    assert names == [".fortekit-output", "embeddings.npy", "index.json", "items.jsonl"]
    meta = json.loads((saved_dir / "index.json").read_text(encoding="utf-8"))
    assert {"format_version", "fortekit_version", "backbone", "dim", "count", "normalised"} <= set(meta)
    first = json.loads((saved_dir / "items.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == {"id", "caption", "predicates"}
    assert all(isinstance(symbol, str) for symbol in first["predicates"])
    assert np.load(saved_dir / "embeddings.npy", allow_pickle=False).dtype == np.float32

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("pickle used")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    assert len(AudioIndex.load(saved_dir)) == N_CLIPS


def test_predicate_strings_round_trip() -> None:
    symbols = [
        PredicateSymbol("Rain", 1, Polarity.NEGATIVE), PredicateSymbol("Near", 2), PredicateSymbol("X_1", 0),
    ]
    assert [parse_predicate_symbol(str(symbol)) for symbol in symbols] == symbols
    for bad in ("Rain", "¬/1", "Rain/x", "Ra in/1", "", 3):
        with pytest.raises(AudioIndexError, match=r"\[E613\]"):
            parse_predicate_symbol(bad)  # type: ignore[arg-type]


def _rewrite_json(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


def _rewrite_items(path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    path.write_text("\n".join(edit(path.read_text(encoding="utf-8").splitlines())) + "\n", encoding="utf-8")


META, ROWS, ITEMS = "index.json", "embeddings.npy", "items.jsonl"
CORRUPTIONS = {
    "missing index.json": (lambda d: (d / META).unlink(), "E601", META),
    "missing embeddings": (lambda d: (d / ROWS).unlink(), "E601", ROWS),
    "missing items": (lambda d: (d / ITEMS).unlink(), "E601", ITEMS),
    "corrupt JSON": (lambda d: (d / META).write_text("{\"count\": 2", encoding="utf-8"), "E600", META),
    "JSON list": (lambda d: (d / META).write_text("[]", encoding="utf-8"), "E600", META),
    "bad dim": (lambda d: _rewrite_json(d / META, dim="384"), "E600", META),
    "future version": (lambda d: _rewrite_json(d / META, format_version=99), "E602", META),
    "count mismatch": (lambda d: _rewrite_json(d / META, count=N_CLIPS + 1), "E603", ROWS),
    "float64": (lambda d: np.save(d / ROWS, np.zeros((N_CLIPS, 384))), "E604", ROWS),
    "wrong dim": (lambda d: np.save(d / ROWS, np.zeros((N_CLIPS, 8), np.float32)), "E604", ROWS),
    "1-D": (lambda d: np.save(d / ROWS, np.zeros(N_CLIPS, np.float32)), "E604", ROWS),
    "fewer rows": (lambda d: np.save(d / ROWS, np.zeros((3, 384), np.float32)), "E603", ROWS),
    "pickled objects": (lambda d: np.save(d / ROWS, np.array([{"a": 1}], dtype=object), allow_pickle=True),
                        "E600", ROWS),
    "garbage npy": (lambda d: (d / ROWS).write_bytes(b"\x93NUMPY garbage"), "E600", ROWS),
    "truncated npy": (lambda d: (d / ROWS).write_bytes((d / ROWS).read_bytes()[:5000]), "E600", ROWS),
    "bad JSON line": (lambda d: _rewrite_items(d / ITEMS, lambda ls: [*ls[:5], "{oops", *ls[6:]]), "E600",
                      ITEMS),
    "line without id": (lambda d: _rewrite_items(d / ITEMS, lambda ls: ["{}", *ls[1:]]), "E600", ITEMS),
    "missing line": (lambda d: _rewrite_items(d / ITEMS, lambda ls: ls[1:]), "E603", ITEMS),
    "bad predicate": (lambda d: _rewrite_items(d / ITEMS, lambda ls: [
        json.dumps({"id": "x", "caption": None, "predicates": ["Rain"]}), *ls[1:]]), "E611", ITEMS),
    "duplicate id": (lambda d: _rewrite_items(d / ITEMS, lambda ls: [ls[1], *ls[1:]]), "E605", ""),
    "faiss named but absent": (lambda d: _rewrite_json(d / META, faiss="flat"), "E601", "faiss.index"),
}


@pytest.mark.parametrize("case", list(CORRUPTIONS))
def test_each_corrupt_file_is_an_audio_index_error(case: str, index_copy: Path) -> None:
    corrupt, code, named = CORRUPTIONS[case]
    corrupt(index_copy)
    with pytest.raises(AudioIndexError, match=rf"\[{code}\]") as caught:
        AudioIndex.load(index_copy)
    assert named in str(caught.value)


def test_missing_directory_and_overwrite(saved_dir: Path, clotho_index: AudioIndex, tmp_path: Path) -> None:
    with pytest.raises(AudioIndexError, match=r"\[E601\].*does not exist"):
        AudioIndex.load(tmp_path / "nowhere")
    with pytest.raises(AudioIndexError, match=r"\[E614\]"):
        clotho_index.save(saved_dir)
    target = clotho_index.save(tmp_path / "again")
    assert clotho_index.save(target, overwrite=True) == target and len(AudioIndex.load(target)) == N_CLIPS


def test_bad_collections_are_typed_errors(minilm) -> None:  # type: ignore[no-untyped-def]
    rows = np.eye(3)
    cases = [
        (lambda: AudioIndex.from_captions(["a", "b", "a"], [None] * 3, "enc", embeddings=rows), "E605"),
        (lambda: AudioIndex.from_captions([], [], "enc", embeddings=np.zeros((0, 3))), "E606"),
        (lambda: AudioIndex.build([], minilm), "E606"),
        (lambda: AudioIndex.from_captions(["a", "b", "c"], [None] * 3, "enc",
                                          embeddings=np.array([[1, 0, 0], [np.nan, 0, 0], [0, 1, 0]])),
         "E607"),
        (lambda: AudioIndex.from_captions(["a", "b"], [None] * 3, "enc", embeddings=rows), "E610"),
        (lambda: AudioIndex.from_captions(["a", "b"], [None] * 2, "enc", embeddings=rows), "E610"),
        (lambda: AudioIndex.from_captions(["a"], ["rain"], "enc", embeddings=np.ones((1, 3)),
                                          predicate_sets=[]), "E610"),
        (lambda: AudioIndex.from_captions(["a"], ["rain"], "enc", embeddings=[["x", "y"]]), "E618"),
        (lambda: AudioIndex.from_captions(["a"], ["rain"], "enc"), "E613"),
    ]
    for make, code in cases:
        with pytest.raises(AudioIndexError, match=rf"\[{code}\]"):
            make()


def test_bad_items_and_backbone_output_are_typed_errors(minilm) -> None:  # type: ignore[no-untyped-def]
    class HalfBroken:
        name, dim, device, sample_rate = "half-broken", 4, "cpu", None

        def encode_text(self, texts):  # type: ignore[no-untyped-def]
            return torch.zeros(len(texts), 4)

        def encode_audio(self, items):  # type: ignore[no-untyped-def]
            return torch.zeros(len(items), 3)

    with pytest.raises(AudioIndexError, match=r"\[E619\].*shape \(2, 3\)"):
        AudioIndex.build([AudioItem(item_id="a", text="x"), AudioItem(item_id="b", text="y")], HalfBroken())
    with pytest.raises(AudioIndexError, match=r"\[E617\].*neither an item_id nor a path"):
        AudioIndex.build([AudioItem(text="rain")], minilm)
    with pytest.raises(AudioIndexError, match=r"\[E617\].*no caption to embed"):
        AudioIndex.from_captions(["a", "b"], ["rain", " "], minilm)
    with pytest.raises(AudioIndexError, match=r"\[E608\]"):
        AudioIndex.from_captions(["a"], ["rain"], minilm, embeddings=np.ones((1, 3)))
    with pytest.raises(AudioIndexError, match=r"\[E613\] batch_size"):
        AudioIndex.build([AudioItem(item_id="a", text="x")], minilm, batch_size=0)


# -- sources ------------------------------------------------------------------------------------
def test_caption_files_of_every_format(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text('{"id": "a", "caption": "rain"}\n\n{"id": 7, "caption": ""}\n',
                                      encoding="utf-8")
    table = read_caption_file(tmp_path / "c.jsonl")
    assert (table.ids, table.captions) == (["a", "7"], ["rain", None])
    (tmp_path / "c.txt").write_text("# comment\nrain on a roof\nx1\tdog barking\n", encoding="utf-8")
    table = read_caption_file(tmp_path / "c.txt")
    assert (table.ids, table.captions) == (["2", "x1"], ["rain on a roof", "dog barking"])
    (tmp_path / "c.tsv").write_text("key\ttext\nk1\twind\n", encoding="utf-8")
    assert read_caption_file(tmp_path / "c.tsv", id_column="key", caption_column="text").captions == ["wind"]
    bad_files = [("c.xml", "<a/>", "E615"), ("bad.csv", "id,foo\n1,2\n", "E615"),
                 ("empty.csv", "file_name,caption_1\n", "E606"), ("bad.jsonl", "{x\n", "E615")]
    for name, content, code in bad_files:
        (tmp_path / name).write_text(content, encoding="utf-8")
        with pytest.raises(AudioIndexError, match=rf"\[{code}\]"):
            read_caption_file(tmp_path / name)


def test_backbone_options_parse_typed_values() -> None:
    assert parse_options(["model=/m", "batch-size=8", "allow_download=false", "seed=1.5"]) == {
        "model": "/m", "batch_size": 8, "allow_download": False, "seed": 1.5,
    }
    with pytest.raises(QueryFileError, match=r"\[E668\] --backbone-option"):
        parse_options(["model"])


# -- CLI ----------------------------------------------------------------------------------------
def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def test_cli_build_info_search_from_a_clotho_csv(clotho_rows, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "clotho.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(clotho_rows[0]))
        writer.writeheader()
        writer.writerows(clotho_rows[:20])
    out_dir = tmp_path / "idx"
    code, out, _ = run_cli(["index", "build", "--captions", str(path), "-o", str(out_dir), "--quiet",
                            "--device", "cpu"], capsys)
    assert code == 0 and "indexed 20 items (384-d, backbone minilm)" in out
    code, out, _ = run_cli(["index", "info", "--index", str(out_dir)], capsys)
    assert code == 0 and "items       20" in out and "dim         384" in out and "100.0%" in out
    code, out, _ = run_cli(["index", "info", "--index", str(out_dir), "--json"], capsys)
    facts = json.loads(out)
    assert (facts["count"], facts["backbone"], facts["predicate_share"]) == (20, "minilm", 1.0)
    target = clotho_rows[7]
    argv = ["search", "--index", str(out_dir), target["caption_1"], "rain", "-k", "2", "--device", "cpu"]
    code, out, _ = run_cli(argv, capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 6 and lines[3] == "query: rain"
    assert lines[0] == f"query: {target['caption_1']}"
    # The clip whose caption it is ranks first: a Clotho row is one item, the mean of its five
    # captions (as `fortekit eval` makes it), so the score is well below 1.
    assert lines[1].startswith("    1. ") and target["file_name"] in lines[1]
    assert float(lines[1].split()[1]) > 0.5
    code, _, err = run_cli(["index", "build", "--captions", str(path), "-o", str(out_dir)], capsys)
    assert code == 2 and "[E614]" in err


def test_build_index_folder_writes_what_index_build_writes(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The command only forwards: the Python function gives the same folder, and refuses the same."""
    from fortekit.search.index import IndexSource, build_index_folder

    captions = tmp_path / "c.jsonl"
    captions.write_text('{"id": "a", "caption": "rain on a roof"}\n{"id": "b", "caption": "a dog barks"}\n'
                        '{"id": "a", "caption": "rain falling on a tin roof"}\n', encoding="utf-8")
    code, _, _ = run_cli(["index", "build", "--captions", str(captions), "-o", str(tmp_path / "cli"),
                          "--quiet", "--device", "cpu", "--merge-duplicates"], capsys)
    assert code == 0
    index = build_index_folder(tmp_path / "api", IndexSource(captions=captions, merge_duplicates=True),
                               options={"device": "cpu"})
    by_cli = AudioIndex.load(tmp_path / "cli")
    assert index.ids == by_cli.ids == ["a", "b"] and index.captions == by_cli.captions
    np.testing.assert_allclose(AudioIndex.load(tmp_path / "api").embeddings, by_cli.embeddings, atol=1e-6)
    with pytest.raises(AudioIndexError, match=r"\[E620\].*--text-column applies to --captions"):
        build_index_folder(tmp_path / "x", IndexSource(audio=tmp_path, text_column="caption"))
    with pytest.raises(AudioIndexError, match=r"\[E605\]"):  # a repeated id without merge_duplicates
        build_index_folder(tmp_path / "y", IndexSource(captions=captions))
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_cli_errors_are_messages_with_exit_codes(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli(["index", "build", "--captions", str(tmp_path / "none.csv"), "-o",
                            str(tmp_path / "o")], capsys)
    assert code == 2 and "[E615]" in err and "none.csv" in err
    code, _, err = run_cli(["index", "info", "--index", str(tmp_path)], capsys)
    assert code == 2 and "[E601]" in err
    with pytest.raises(SystemExit) as usage:  # argparse's usage error, as in fol-refine
        run_cli(["index", "build", "--captions", "x.csv", "-o", "o", "--backbone-option", "model"], capsys)
    assert usage.value.code == 2 and "[E668]" in capsys.readouterr().err
    code, _, err = run_cli(["index", "build", "--audio", str(tmp_path), "-o", str(tmp_path / "o")], capsys)
    assert code == 2 and "[E606]" in err


def test_cli_merges_repeated_audiocaps_ids(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    with require(AUDIOCAPS_VAL).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_clip: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_clip.setdefault(row["youtube_id"], []).append(row)
    chosen = [row for clip in [group for group in by_clip.values() if len(group) > 1][:4] for row in clip]
    path = tmp_path / "audiocaps.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(chosen[0]))
        writer.writeheader()
        writer.writerows(chosen)
    common = ["index", "build", "--captions", str(path), "--id-column", "youtube_id", "--text-column",
              "caption", "--quiet", "--device", "cpu", "--no-parse"]
    code, _, err = run_cli([*common, "-o", str(tmp_path / "dup")], capsys)
    assert code == 2 and "[E605]" in err and "--merge-duplicates" in err
    code, _, _ = run_cli([*common, "-o", str(tmp_path / "merged"), "--merge-duplicates"], capsys)
    index = AudioIndex.load(tmp_path / "merged")
    assert code == 0 and index.ids == list(dict.fromkeys(row["youtube_id"] for row in chosen))
    assert index.captions[0] == chosen[0]["caption"] and not index.meta.parsed


# -- audio files through a (tiny, random) CLAP audio tower ----------------------------------------
@pytest.fixture(scope="module")
def clap_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_clap(tmp_path_factory.mktemp("clap") / "tiny-clap")


@pytest.fixture(scope="module")
def tiny_clap(clap_dir: Path):  # type: ignore[no-untyped-def]
    return get_backbone("hf-clap", model=str(clap_dir), device="cpu")


@pytest.fixture
def audio_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "clips"
    (folder / "dogs").mkdir(parents=True)
    write_wav(folder / "rain.wav", 1.0, 16_000, freq=220.0)
    write_wav(folder / "dogs" / "bark.wav", 0.5, 44_100, freq=880.0)
    write_wav(folder / "tone.WAV", 2.0, 48_000, channels=2)
    (folder / "dogs" / "bark.txt").write_text("a dog barks twice\n", encoding="utf-8")
    (folder / "notes.md").write_text("not audio", encoding="utf-8")
    return folder


def test_cli_indexes_audio_files_with_a_clap_backbone(
    audio_folder: Path, clap_dir: Path, tiny_clap, tmp_path: Path, capsys  # type: ignore[no-untyped-def]
) -> None:
    out_dir = tmp_path / "audio.index"
    code, out, _ = run_cli(["index", "build", "--audio", str(audio_folder), "-o", str(out_dir),
                            "--backbone", "hf-clap", "--backbone-option", f"model={clap_dir}",
                            "--device", "cpu", "--batch-size", "2"], capsys)
    assert code == 0 and "indexed 3 items (8-d, backbone hf-clap)" in out
    index = AudioIndex.load(out_dir, backbone=tiny_clap)
    assert index.ids == ["dogs/bark.wav", "rain.wav", "tone.WAV"]
    assert index.captions == ["a dog barks twice", None, None]
    assert [bool(symbols) for symbols in index.predicate_sets] == [True, False, False]
    assert index.meta.backbone_options == {"model": str(clap_dir.resolve())}
    paths = [str(audio_folder / name) for name in index.ids]
    np.testing.assert_allclose(index.embeddings, tiny_clap.encode_audio(paths).numpy(), atol=1e-5)
    code, out, _ = run_cli(["search", "--index", str(out_dir), "a dog barks", "-k", "5",
                            "--device", "cpu", "--json"], capsys)
    results = json.loads(out)["hits"]
    assert code == 0 and sorted(hit["id"] for hit in results) == sorted(index.ids)
    assert {hit["caption"] for hit in results} == {"a dog barks twice", None}


def test_build_from_a_list_of_audio_files(audio_folder: Path, tiny_clap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.index.sources import find_audio_items

    listing = audio_folder / "list.txt"
    listing.write_text("# two clips\nrain.wav\ndogs/bark.wav\n", encoding="utf-8")
    index = AudioIndex.build(find_audio_items(listing), tiny_clap, parse_captions=False)
    assert index.ids == ["rain.wav", "dogs/bark.wav"] and index.paths[0] == str(audio_folder / "rain.wav")
    listing.write_text("missing.wav\n", encoding="utf-8")
    with pytest.raises(AudioIndexError, match=r"\[E615\].*missing.wav"):
        find_audio_items(listing)


# -- docstring examples -------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["index", "index.audio_index", "index.build", "index.format",
                                  "index.writing", "index.search", "index.querying", "index.faiss_search",
                                  "index.parse", "index.sources", "cli.index", "index.from_files",
                                  "index.describe", "index.ann", "index.shards", "index.growing",
                                  "cli.index_grow"])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"fortekit.search.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


# -- speed --------------------------------------------------------------------------------------
BENCH_ITEMS, BENCH_QUERIES, BENCH_DIM = 100_000, 32, 384


@pytest.fixture(scope="module")
def bench_index() -> AudioIndex:
    rows = random_queries(BENCH_ITEMS, BENCH_DIM, seed=10).numpy()
    return AudioIndex.from_captions([str(i) for i in range(BENCH_ITEMS)], [None] * BENCH_ITEMS, "bench",
                                    embeddings=rows, parse_captions=False)


@pytest.mark.benchmark(group="index-top10-100k")
def test_bench_index_exact_top10(benchmark, bench_index: AudioIndex) -> None:  # type: ignore[no-untyped-def]
    queries = random_queries(BENCH_QUERIES, BENCH_DIM, seed=11)
    bench_index.embedding_tensor("cpu")
    scores, _ = benchmark.pedantic(bench_index.search, args=(queries,), kwargs={"k": 10, "device": "cpu"},
                                      rounds=5, warmup_rounds=1, iterations=1)
    benchmark.extra_info.update(items=BENCH_ITEMS, queries=BENCH_QUERIES, dim=BENCH_DIM)
    baseline = torch.topk(queries @ bench_index.embedding_tensor("cpu").T, 10, dim=1)
    torch.testing.assert_close(scores, baseline.values)


@pytest.mark.benchmark(group="index-top10-100k")
def test_bench_plain_matmul_topk_baseline(benchmark, bench_index: AudioIndex) -> None:  # type: ignore[no-untyped-def]
    queries = random_queries(BENCH_QUERIES, BENCH_DIM, seed=11)
    matrix = bench_index.embedding_tensor("cpu")

    def plain() -> torch.return_types.topk:
        with torch.inference_mode():
            return torch.topk(queries @ matrix.T, 10, dim=1)

    benchmark.pedantic(plain, rounds=5, warmup_rounds=1, iterations=1)
    benchmark.extra_info.update(items=BENCH_ITEMS, queries=BENCH_QUERIES, dim=BENCH_DIM)


@pytest.mark.benchmark(group="index-top10-100k")
def test_bench_faiss_flat_top10(benchmark, bench_index: AudioIndex) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("faiss")
    queries = random_queries(BENCH_QUERIES, BENCH_DIM, seed=11)
    index = AudioIndex(bench_index.embeddings, bench_index._records, bench_index.meta)
    index.build_faiss("flat")
    scores, _ = benchmark.pedantic(index.search, args=(queries,), kwargs={"k": 10, "use_faiss": True},
                                   rounds=5, warmup_rounds=1, iterations=1)
    benchmark.extra_info.update(items=BENCH_ITEMS, queries=BENCH_QUERIES, dim=BENCH_DIM)
    torch.testing.assert_close(scores, bench_index.search(queries, k=10, device="cpu")[0])
