"""``fortekit index build --audio DIR --captioner NAME``: captions from a captioner plug-in, label evidence.

The real path runs on the 200-clip generated collection and the small CLAP + tagger trained on
it (tests/soundclap_fixtures.py): an index of 36 of its WAV files, captioned by the tagger, whose
label evidence is saved as ``evidence.safetensors``, loaded back and read by ``fortekit search``.
The rest (chunking, bad evidence, bad option combinations, damaged files) needs no model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fortekit.errors import AudioIndexError  # noqa: E402
from fortekit.plugins import AudioItem  # noqa: E402
from fortekit.search.cli import main  # noqa: E402
from fortekit.search.formula.evidence import LabelEvidence  # noqa: E402
from fortekit.search.index import AudioIndex  # noqa: E402
from fortekit.search.index.captioning import caption_audio  # noqa: E402
from fortekit.search.index.evidence_file import EVIDENCE_FILE  # noqa: E402

Trained = tuple[Path, Path, dict[str, Any], str]
CLIPS = 36


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def captioned(trained_clap: Trained, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(the index directory, the model folder, what index build printed)."""
    collection, model, _, _ = trained_clap
    root = tmp_path_factory.mktemp("captioned")
    folder = root / "clips"
    folder.mkdir()
    for wav in sorted((collection / "audio").glob("*.wav"))[:CLIPS]:
        shutil.copy(wav, folder / wav.name)
        if wav.with_suffix(".txt").is_file():  # the generator's caption, which --captioner replaces
            shutil.copy(wav.with_suffix(".txt"), folder / wav.with_suffix(".txt").name)
    out = root / "clips.index"
    import io
    from contextlib import redirect_stdout

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        code = main(["index", "build", "--audio", str(folder), "-o", str(out), "--backbone", "small-clap",
                     "--backbone-option", f"model={model}", "--captioner", "tagger",
                     "--captioner-option", f"model={model}", "--captioner-option", "device=cpu",
                     "--device", "cpu", "--quiet"])
    assert code == 0, buffer.getvalue()
    return out, model, buffer.getvalue()


def _tagger(model: Path) -> Any:
    from fortekit.plugins import get_captioner

    return get_captioner("tagger", model=str(model), device="cpu")


def test_the_captions_are_the_taggers_and_are_parsed(captioned: tuple[Path, Path, str]) -> None:
    from fortekit.search.index.item_captions import item_predicates_from_captions

    directory, model, printed = captioned
    index = AudioIndex.load(directory)
    assert len(index) == CLIPS and index.meta.parsed
    paths = [str(path) for path in index.paths]
    expected = _tagger(model).caption(paths)
    assert index.captions == expected
    sidecars = [Path(path).with_suffix(".txt").read_text(encoding="utf-8").strip() for path in paths]
    assert index.captions != sidecars  # the tagger's captions, not the generator's
    assert index.predicate_sets == item_predicates_from_captions(expected)
    assert sum(1 for symbols in index.predicate_sets if symbols) == CLIPS
    assert index.meta.captioner == "tagger"
    assert index.meta.captioner_options == {"model": str(model.resolve())}
    assert "captioner tagger" in printed and "15 labels" in printed


def test_the_evidence_is_saved_and_loaded_back_equal(captioned: tuple[Path, Path, str]) -> None:
    directory, model, _ = captioned
    assert (directory / EVIDENCE_FILE).is_file()
    index = AudioIndex.load(directory)
    tagger = _tagger(model)
    fresh = tagger.label_evidence([str(path) for path in index.paths])
    assert index.evidence is not None and index.evidence.labels == tagger.label_phrases == fresh.labels
    assert index.meta.evidence_labels == fresh.labels
    assert torch.allclose(index.evidence.matrix, fresh.matrix, atol=1e-6)
    meta = json.loads((directory / "index.json").read_text(encoding="utf-8"))
    assert meta["captioner"] == "tagger" and meta["evidence_labels"] == list(fresh.labels)


def test_index_info_reports_the_captioner_and_the_evidence(captioned: tuple[Path, Path, str],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    directory, model, _ = captioned
    code, out, _ = run(["index", "info", "--index", str(directory)], capsys)
    assert code == 0
    rows = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in out.splitlines()}
    assert rows["captioner"] == f"tagger (model={model.resolve()})"
    assert rows["evidence"].startswith("15 labels (a person speaking, a dog barking")
    code, out, _ = run(["index", "info", "--index", str(directory), "--json"], capsys)
    facts = json.loads(out)
    assert facts["captioner"] == "tagger" and len(facts["evidence_labels"]) == 15


def test_search_runs_over_it_with_captions_and_evidence(captioned: tuple[Path, Path, str],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.search.retriever import Retriever

    directory, _, _ = captioned
    code, out, err = run(["search", "--index", str(directory), "a dog barking without rain", "rain falling",
                          "-k", "5", "--json", "--device", "cpu"], capsys)
    assert code == 0, err
    index = AudioIndex.load(directory)
    results = [json.loads(line) for line in out.splitlines()]
    assert len(results) == 2
    for result in results:
        assert len(result["hits"]) == 5
        for hit in result["hits"]:
            assert hit["caption"] and hit["caption"] == index.captions[index.ids.index(hit["id"])]
    # Stage 1 runs too: with item captions, "auto" is the corpus elaborator and feedback anchors.
    code, out, err = run(["search", "--index", str(directory), "a dog barking without rain", "-k", "3",
                          "--stage1", "online", "--json", "--device", "cpu"], capsys)
    assert code == 0, err
    assert json.loads(out)["source"] == "refine" and len(json.loads(out)["hits"]) == 3
    retriever = Retriever(directory, device="cpu")
    assert retriever.evidence is not None and len(retriever.evidence) == CLIPS
    plain = retriever.replace(evidence=None)
    scores = [[hit.score for hit in r.search(["a dog barking without rain", "rain falling"], k=10)[i].hits]
              for r in (retriever, plain) for i in (0, 1)]
    assert scores[0] != scores[2]  # the exclusion "without rain" reads the tagger's rain probability
    assert scores[1] == scores[3]  # a plain query has no negated clause: the evidence is not read


@pytest.mark.parametrize("damage", ["garbage", "rows", "columns", "range", "missing", "name", "labels"])
def test_a_damaged_evidence_file_is_a_coded_error(captioned: tuple[Path, Path, str], tmp_path: Path,
                                                   damage: str, capsys: pytest.CaptureFixture[str]) -> None:
    from safetensors.numpy import save_file

    directory = tmp_path / "damaged.index"
    shutil.copytree(captioned[0], directory)
    target = directory / EVIDENCE_FILE
    matrix = np.full((CLIPS, 15), 0.5, dtype=np.float32)
    if damage == "garbage":
        target.write_bytes(b"\x00\x01 not a safetensors file")
    elif damage == "rows":
        save_file({"probabilities": matrix[:-1]}, str(target))
    elif damage == "columns":
        save_file({"probabilities": matrix[:, :-1]}, str(target))
    elif damage == "range":
        matrix[3, 2] = 1.5
        save_file({"probabilities": matrix}, str(target))
    elif damage == "missing":
        target.unlink()
    elif damage == "name":
        save_file({"logits": matrix}, str(target))
    else:
        meta = json.loads((directory / "index.json").read_text(encoding="utf-8"))
        meta["evidence_labels"] = meta["evidence_labels"][:-1]
        (directory / "index.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(AudioIndexError, match=r"^\[E621\] .*Rebuild the index with `fortekit index build"):
        AudioIndex.load(directory)
    code, _, err = run(["search", "--index", str(directory), "a dog barking", "--device", "cpu"], capsys)
    assert code == 2 and "[E621]" in err and "evidence.safetensors" in err


# -- no model needed --------------------------------------------------------------------------------
class FakeTagger:
    """A LabelTagger over named files: caption = the file's stem, evidence = a fixed row per file."""

    name = "fake-tagger"

    def __init__(self, rows: int | None = None, labels: list[tuple[str, ...]] | None = None) -> None:
        self.calls: list[list[Any]] = []
        self.rows, self.labels = rows, labels

    def caption(self, items: list[Any]) -> list[str]:
        self.calls.append(list(items))
        return [Path(str(item)).stem.replace("_", " ") for item in items]

    def label_evidence(self, items: list[Any]) -> LabelEvidence:
        labels = self.labels.pop(0) if self.labels else ("rain falling", "a dog barking")
        rows = [[float(len(str(item)) % 3) / 2, 0.25] for item in items]
        return LabelEvidence(labels, rows[: self.rows] if self.rows is not None else rows)


def test_caption_audio_chunks_and_joins_the_evidence() -> None:
    names = ["rain_a", "dog", "rain_bb", "x", "y"]
    items = [AudioItem(path=f"clips/{name}.wav", item_id=name) for name in names]
    tagger = FakeTagger()
    captions, evidence = caption_audio(tagger, items, chunk_size=2)
    assert captions == ["rain a", "dog", "rain bb", "x", "y"]
    assert [len(call) for call in tagger.calls] == [2, 2, 1] and tagger.calls[0][0] == "clips/rain_a.wav"
    whole = FakeTagger().label_evidence([f"clips/{name}.wav" for name in names])
    assert evidence is not None and evidence.labels == whole.labels
    assert torch.equal(evidence.matrix, whole.matrix)
    assert caption_audio("stored", [AudioItem(text="a bell rings")]) == (["a bell rings"], None)


@pytest.mark.parametrize(("tagger", "problem"), [
    (FakeTagger(rows=1), "1 rows for 2 items"),
    (FakeTagger(labels=[("rain falling", "a dog barking"), ("rain", "a dog barking")]), "other labels"),
])
def test_unusable_label_evidence_is_e622(tagger: FakeTagger, problem: str) -> None:
    items = [AudioItem(path=f"{name}.wav") for name in "abcd"]
    with pytest.raises(AudioIndexError, match=rf"^\[E622\] The captioner 'fake-tagger' .*{problem}"):
        caption_audio(tagger, items, chunk_size=2)


def test_evidence_round_trips_and_an_old_index_loads_unchanged(tmp_path: Path) -> None:
    base = AudioIndex.from_captions(["a", "b"], ["rain", "a dog"], "enc", embeddings=np.eye(2),
                                    parse_captions=False)
    evidence = LabelEvidence(("rain falling", "a dog barking"), [[0.9, 0.0], [0.1, 1.0]])
    index = base.with_evidence(evidence)
    assert base.evidence is None and index.meta.evidence_labels == evidence.labels
    loaded = AudioIndex.load(index.save(tmp_path / "with"))
    assert loaded.evidence is not None and loaded.evidence.labels == evidence.labels
    assert torch.equal(loaded.evidence.matrix, evidence.matrix)
    # Saving over it without evidence removes the file; an index.json without the keys still loads.
    base.save(tmp_path / "with", overwrite=True)
    assert not (tmp_path / "with" / EVIDENCE_FILE).exists()
    assert AudioIndex.load(tmp_path / "with").evidence is None
    meta = json.loads((tmp_path / "with" / "index.json").read_text(encoding="utf-8"))
    for key in ("captioner", "captioner_options", "evidence_labels"):
        del meta[key]
    (tmp_path / "with" / "index.json").write_text(json.dumps(meta), encoding="utf-8")
    old = AudioIndex.load(tmp_path / "with")
    assert old.evidence is None and old.meta.captioner is None and old.ids == ["a", "b"]
    with pytest.raises(AudioIndexError, match=r"^\[E610\] the label evidence has 1 entries"):
        base.with_evidence(LabelEvidence(("rain falling",), [[0.5]]))


def test_a_python_build_with_a_captioner_embeds_and_stores_its_captions() -> None:
    class TextBackbone:
        name, dim = "text-len", 2

        def encode_audio(self, items: list[AudioItem]) -> Any:
            return torch.tensor([[float(len(item.text or "")), 1.0] for item in items])

        def encode_text(self, texts: list[str]) -> Any:
            return torch.tensor([[float(len(text)), 1.0] for text in texts])

    items = [AudioItem(path=f"clips/{name}.wav", text="old", item_id=name) for name in ["rain_falls", "dog"]]
    index = AudioIndex.build(items, TextBackbone(), captioner=FakeTagger(), captioner_options={"seed": 1})
    assert index.captions == ["rain falls", "dog"] and index.meta.captioner == "fake-tagger"
    assert index.meta.captioner_options == {"seed": 1} and index.evidence is not None
    assert sorted(map(str, index.predicate_sets[0])) == ["Falling/1", "Rain/1"]
    rows = index.embeddings / np.linalg.norm(index.embeddings, axis=1, keepdims=True)
    assert np.allclose(rows[1], np.array([3.0, 1.0]) / np.hypot(3.0, 1.0))  # "dog" embedded, not "old"


@pytest.mark.parametrize(("extra", "problem"), [
    (["--captions", "CAPTIONS", "--captioner", "tagger"], "--captioner captions audio, but --captions"),
    (["--audio", "AUDIO", "--captioner-option", "model=x"], "--captioner-option is given without"),
    (["--audio", "AUDIO", "--captioner", " "], "--captioner is empty"),
    (["--audio", "AUDIO", "--captioner", "tagger", "--merge-duplicates"], "--merge-duplicates applies to"),
    (["--audio", "AUDIO", "--id-column", "file"], "--id-column applies to --captions"),
])
def test_bad_combinations_are_e620(extra: list[str], problem: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    captions = tmp_path / "c.txt"
    captions.write_text("a dog barks\n", encoding="utf-8")
    argv = [str(captions) if a == "CAPTIONS" else str(tmp_path) if a == "AUDIO" else a for a in extra]
    code, _, err = run(["index", "build", *argv, "-o", str(tmp_path / "o")], capsys)
    assert code == 2 and err.startswith("fortekit index build: [E620] ") and problem in err, err
    assert "--captioner NAME" in err and not (tmp_path / "o").exists()


def test_an_unknown_captioner_or_a_malformed_option_is_a_coded_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "a.wav").write_bytes(b"")
    code, _, err = run(["index", "build", "--audio", str(tmp_path), "-o", str(tmp_path / "o"),
                        "--captioner", "no-such-captioner"], capsys)
    assert code == 2 and err.startswith("fortekit index build: [E") and "no-such-captioner" in err
    with pytest.raises(SystemExit) as stop:
        main(["index", "build", "--audio", str(tmp_path), "-o", str(tmp_path / "o"),
              "--captioner", "tagger", "--captioner-option", "model"])
    assert stop.value.code == 2 and "[E668] --captioner-option takes KEY=VALUE" in capsys.readouterr().err
