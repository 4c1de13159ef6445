"""The ANN part over projected rows: the Stage 2 head stays on with ANN candidates (issue 45, item 6).

Real captions (examples/audiocaps_train_sample.csv) embedded with MiniLM, the head shipped for it,
and ANN_MIN_ITEMS lowered so that a few hundred items take the approximate first pass.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("faiss", reason="faiss-cpu (the extra fortekit[faiss]) is not installed")

from fortekit.errors import AudioIndexError, PipelineError
from fortekit.search.index.audio_index import AudioIndex
from fortekit.search.index.growing import add_to_index, compact_index, remove_from_index
from fortekit.search.index.projected import PROJECTED_FAISS_FILE, PROJECTED_ROWS_FILE, project_rows
from fortekit.search.pipeline import PipelineSpec
from fortekit.search.pipeline.assemble import default_head
from fortekit.search.projection.ann import head_identity, index_head
from fortekit.search.projection.shipped import shipped_head

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "audiocaps_train_sample.csv"
ITEMS, QUERIES = 300, 24


@pytest.fixture(scope="module")
def captions(minilm) -> tuple[list[str], np.ndarray, list[str]]:  # type: ignore[no-untyped-def]
    """300 AudioCaps captions (the items), their MiniLM rows, and 24 other captions as queries."""
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        texts = [row["caption"] for row in csv.DictReader(handle)][:ITEMS + QUERIES]
    rows = np.asarray(minilm.encode_text(texts[:ITEMS]), dtype=np.float32)
    return texts[:ITEMS], rows, texts[ITEMS:]


def _index(captions, start: int = 0, stop: int = ITEMS, kind: str | None = "hnsw") -> AudioIndex:  # type: ignore[no-untyped-def]
    texts, rows, _ = captions
    index = AudioIndex.from_captions([f"ac{i}" for i in range(start, stop)], texts[start:stop], "minilm",
                                     embeddings=rows[start:stop], parse_captions=False)
    if kind is not None:
        index.build_faiss(kind)
    return index


def _other_head(folder: Path) -> Path:
    """A head of MiniLM's width that is not the shipped one (untrained, seeded)."""
    import torch

    from fortekit.search.projection import ProjectionHead, save_projection

    torch.manual_seed(7)
    save_projection(ProjectionHead(384), folder)
    return folder


def _top(retriever, queries: list[str], k: int = 10) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [[hit.item_id for hit in result.hits] for result in retriever.search(queries, k=k)]


def test_building_with_a_head_records_the_projected_part(captions, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    index = _index(captions)
    head = default_head(index)
    assert head is not None and head.source == "shipped:minilm"
    index.build_projected_ann(head)
    folder = index.save(tmp_path / "clips.index")
    record = json.loads((folder / "index.json").read_text(encoding="utf-8"))["projected_ann"]
    assert record["head"] == head_identity(shipped_head("minilm")) and record["source"] == "shipped:minilm"
    assert record["recall"] >= 0.95
    assert (folder / PROJECTED_ROWS_FILE).is_file() and (folder / PROJECTED_FAISS_FILE).is_file()
    loaded = AudioIndex.load(folder)
    assert loaded.projected_ann == index.projected_ann
    expected = project_rows(index_head(shipped_head("minilm"), "minilm"), captions[1])
    np.testing.assert_allclose(np.asarray(loaded.projected_rows), expected, atol=1e-5)
    # a new ANN kind drops the part of the old one (its kind and settings are the part's)
    loaded.build_faiss("flat")
    assert loaded.projected_ann is None and loaded.projected_rows is None


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_the_ann_first_pass_with_the_head_gives_the_exact_projected_top_10(  # type: ignore[no-untyped-def]
        minilm, captions, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fortekit.search.index.ann as ann
    from fortekit.search.retriever import Retriever

    index = _index(captions, kind=kind)
    index.build_projected_ann(default_head(index))  # type: ignore[arg-type]
    loaded = AudioIndex.load(index.save(tmp_path / "clips.index"))
    monkeypatch.setattr(ann, "ANN_MIN_ITEMS", 100)
    spec = PipelineSpec(stage1=None)
    asked = spec if kind == "hnsw" else spec.replace(first_pass="ann")  # flat: exact, never ANN by itself
    approximate = Retriever(loaded, asked, backbone=minilm)
    exact = Retriever(loaded, spec.replace(first_pass="exact"), backbone=minilm)
    assert approximate.use_faiss and approximate.projected
    assert "projection" in approximate.pipeline.running and "projection" in exact.pipeline.running
    assert "over the rows the Stage 2 head projects" in approximate.first_pass
    queries = captions[2]
    found, truth = _top(approximate, queries), _top(exact, queries)
    if kind == "flat":  # an exact part: the same top 10
        assert found == truth
    else:  # HNSW: the same up to the ANN's error
        shared = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, truth, strict=True)])
        assert shared >= 0.95
    # the score parts: Stage 2's share is the projected cosine minus the plain one, of the unprojected row
    encoded = minilm.encode_text([queries[0]])[0]
    query = encoded.numpy() if hasattr(encoded, "numpy") else np.asarray(encoded)
    result = approximate.search(queries[0], k=3, explain=True)
    for hit in result.hits:
        parts = dict(hit.score_parts)
        row = loaded.ids.index(hit.item_id)
        plain = float(np.dot(loaded.embeddings[row], query) / np.linalg.norm(query))
        projected = float(np.dot(np.asarray(loaded.projected_rows)[row], query) / np.linalg.norm(query))
        assert parts["similarity"] + parts["stage2"] == pytest.approx(projected, abs=1e-4)
        assert parts["similarity"] == pytest.approx(plain, abs=1e-4)


def test_a_different_head_does_not_use_the_part(  # type: ignore[no-untyped-def]
        minilm, captions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fortekit.search.index.ann as ann
    from fortekit.search.pipeline.assemble import first_pass_reason
    from fortekit.search.retriever import Retriever

    other = _other_head(tmp_path / "head")
    index = _index(captions)
    index.build_projected_ann(default_head(index))  # type: ignore[arg-type]
    monkeypatch.setattr(ann, "ANN_MIN_ITEMS", 100)
    mine = Retriever(index, PipelineSpec(stage1=None, projection=str(other)), backbone=minilm)
    assert not mine.use_faiss and not mine.projected  # exact candidates with that head
    assert "built for another head, the head shipped for minilm" in mine.first_pass
    with pytest.raises(PipelineError, match=r"\[E425\].*build-ann"):
        Retriever(index, PipelineSpec(stage1=None, projection=str(other), first_pass="ann"), backbone=minilm)
    # the part built for the other head: the default (shipped) head is off with ANN candidates, and says why
    index.build_projected_ann(index_head(other, "minilm"))
    reason = first_pass_reason(PipelineSpec(), index)
    assert reason.startswith("ann (hnsw: 300 items") and "the Stage 2 head is off" in reason
    assert str(other) in reason
    plain = Retriever(index, PipelineSpec(stage1=None), backbone=minilm)
    assert plain.use_faiss and not plain.projected and "projection" not in plain.pipeline.running
    again = Retriever(index, PipelineSpec(stage1=None, projection=str(other)), backbone=minilm)
    assert again.use_faiss and again.projected and "projection" in again.pipeline.running


@pytest.mark.parametrize("kind", ["flat", "ivf"])
def test_index_add_remove_and_compact_keep_the_part_in_step(  # type: ignore[no-untyped-def]
        captions, kind: str, tmp_path: Path) -> None:
    head = index_head(shipped_head("minilm"), "minilm")
    base = _index(captions, 0, 250, kind=kind)
    base.build_projected_ann(head)
    folder = base.save(tmp_path / "clips.index")
    with pytest.raises(AudioIndexError, match=r"\[E645\].*no head was given"):
        add_to_index(folder, _index(captions, 250, 300, kind=None))
    other = index_head(_other_head(tmp_path / "h"))
    with pytest.raises(AudioIndexError, match=r"\[E645\].*is another one"):
        add_to_index(folder, _index(captions, 250, 300, kind=None), head=other)
    add_to_index(folder, _index(captions, 250, 300, kind=None), head=head)
    shard = folder / "shards" / "0001"
    assert (shard / PROJECTED_ROWS_FILE).is_file() and (shard / PROJECTED_FAISS_FILE).is_file()
    grown = AudioIndex.load(folder)
    expected = project_rows(head, captions[1])
    assert grown.projected_ann is not None and grown.projected_ann.head == head.identity
    np.testing.assert_allclose(np.asarray(grown.projected_rows), expected, atol=1e-5)
    queries = expected[[3, 120, 260, 299]]
    _, rows = grown.search_projected(queries, k=1)
    assert np.asarray(rows)[:, 0].tolist() == [3, 120, 260, 299]  # each projected row finds itself
    gone = ["ac3", "ac260"]
    remove_from_index(folder, gone)
    shrunk = AudioIndex.load(folder)
    _, rows = shrunk.search_projected(queries, k=5)
    assert not {shrunk.ids[row] for row in np.asarray(rows).ravel()} & set(gone)
    compact_index(folder)
    compacted = AudioIndex.load(folder)
    assert compacted.layout.describe() == "1 part" and compacted.projected_ann is not None
    np.testing.assert_allclose(np.asarray(compacted.projected_rows), np.asarray(shrunk.projected_rows))
    _, rows = compacted.search_projected(queries[[1, 3]], k=1)
    assert [compacted.ids[row] for row in np.asarray(rows)[:, 0]] == ["ac120", "ac299"]


def test_an_index_without_the_part_still_works_and_build_ann_adds_it(  # type: ignore[no-untyped-def]
        minilm, captions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import fortekit.search.index.ann as ann
    from fortekit.search.cli.main import main
    from fortekit.search.retriever import Retriever

    folder = _index(captions).save(tmp_path / "old.index")  # as an index built before the part existed
    assert "projected_ann" not in json.loads((folder / "index.json").read_text(encoding="utf-8"))
    monkeypatch.setattr(ann, "ANN_MIN_ITEMS", 100)
    old = Retriever(folder, PipelineSpec(stage1=None), backbone=minilm)
    assert old.use_faiss and not old.projected and "projection" not in old.pipeline.running
    assert "no ANN part over the rows it projects (fortekit index build-ann adds one)" in old.first_pass
    assert len(old.search("a dog barks", k=10).hits) == 10
    assert main(["index", "build-ann", "--index", str(folder)]) == 0
    assert "over the rows projected by the head shipped for minilm" in capsys.readouterr().out
    assert main(["index", "info", "--index", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "projected   FAISS hnsw over the rows projected by the head shipped for minilm" in out
    assert "first pass   ann (hnsw over the rows the Stage 2 head projects: 300 items" in out
    new = Retriever(folder, PipelineSpec(stage1=None), backbone=minilm)
    assert new.use_faiss and new.projected and "projection" in new.pipeline.running
    assert main(["index", "build-ann", "--index", str(folder), "--projection", "none"]) == 0
    assert AudioIndex.load(folder).projected_ann is None and not (folder / PROJECTED_ROWS_FILE).exists()


def test_index_build_gives_an_ann_index_its_projected_part(  # type: ignore[no-untyped-def]
        tmp_path: Path, captions, capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.search.cli.main import main

    source = tmp_path / "clips.csv"
    with source.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "caption"])
        writer.writerows([f"clip{i}", text] for i, text in enumerate(captions[0][:40]))
    out = tmp_path / "clips.index"
    common = ["index", "build", "--captions", str(source), "--id-column", "id", "--text-column", "caption",
              "--no-parse", "-q"]
    assert main([*common, "-o", str(out), "--faiss", "hnsw"]) == 0
    printed = capsys.readouterr().out
    assert "projected: FAISS hnsw over the rows projected by the head shipped for minilm" in printed
    assert AudioIndex.load(out).projected_ann is not None
    more = tmp_path / "more.csv"  # index add projects the new items with the head index.json records
    with more.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "caption"])
        writer.writerows([f"more{i}", text] for i, text in enumerate(captions[0][40:50]))
    assert main(["index", "add", "--index", str(out), "--captions", str(more), "--id-column", "id",
                 "--text-column", "caption", "-q"]) == 0
    capsys.readouterr()
    assert (out / "shards" / "0001" / PROJECTED_FAISS_FILE).is_file()
    grown = AudioIndex.load(out)
    assert len(grown) == 50 and grown.projected_ann is not None and grown.projected_rows is not None
    assert main(["index", "add", "--index", str(out), "--captions", str(more), "--id-column", "id",
                 "--text-column", "caption", "-q", "--projection", str(_other_head(tmp_path / "head"))]) == 2
    assert "[E645]" in capsys.readouterr().err
    assert main([*common, "-o", str(tmp_path / "none.index"), "--faiss", "hnsw", "--projection", "none"]) == 0
    assert AudioIndex.load(tmp_path / "none.index").projected_ann is None
    assert main([*common, "-o", str(tmp_path / "exact.index")]) == 0  # no ANN part: none over projected rows
    assert AudioIndex.load(tmp_path / "exact.index").projected_ann is None


@pytest.mark.parametrize("bad", [{"head": "abc", "source": "x"}, {"head": "0" * 64, "source": ""},
                                 {"head": "0" * 64, "source": "x", "recall": 2}, ["0" * 64]])
def test_a_damaged_projected_record_is_e600(captions, tmp_path: Path, bad: object) -> None:  # type: ignore[no-untyped-def]
    index = _index(captions, 0, 20, kind="flat")
    index.build_projected_ann(index_head(shipped_head("minilm"), "minilm"))
    folder = index.save(tmp_path / "clips.index")
    meta = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    (folder / "index.json").write_text(json.dumps({**meta, "projected_ann": bad}), encoding="utf-8")
    with pytest.raises(AudioIndexError, match=r"\[E600\].*projected_ann"):
        AudioIndex.load(folder)
