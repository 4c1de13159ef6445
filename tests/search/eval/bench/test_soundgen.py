"""``fortekit bench generate``: the written collection, its truth, determinism, resuming, errors.

A module fixture generates 60 clips without speech (about 2 s); the WAV files are read back and
compared with the scenes re-rendered from the seed, the text files with the truth in
clips.jsonl. The sounds themselves are measured in test_soundgen_audio.py.
"""

from __future__ import annotations

import csv
import json
import wave
from pathlib import Path

import numpy as np
import pytest

from fortekit.errors import SoundGenError, SpeechSynthMissingError
from fortekit.fol import parse_formula
from fortekit.search.cli.main import main
from fortekit.search.eval.beir import load_beir
from fortekit.search.eval.bench.soundgen.captions import scene_formula
from fortekit.search.eval.bench.soundgen.dsp import RATE
from fortekit.search.eval.bench.soundgen.generate import generate
from fortekit.search.eval.bench.soundgen.queries import QUERY_KINDS
from fortekit.search.eval.bench.soundgen.render import render_scene
from fortekit.search.eval.bench.soundgen.scene import HELD_OUT_PAIRS, GeneratorConfig, draw_scene
from fortekit.search.eval.bench.soundgen.templates import load_templates

N = 60
CONFIG = GeneratorConfig(seed=0, n=N, speech=False)


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("soundgen") / "gen"
    report = generate(CONFIG, out)
    assert (report.clips, report.rendered) == (N, N)
    return out


def _clips(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "clips.jsonl").read_text(encoding="utf-8").splitlines()]


def _read_wav(path: Path) -> tuple[tuple[int, int, int, int], np.ndarray]:
    with wave.open(str(path)) as file:
        shape = (file.getframerate(), file.getnchannels(), file.getsampwidth(), file.getnframes())
        samples = np.frombuffer(file.readframes(file.getnframes()), dtype="<i2") / 32767.0
    return shape, samples


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_the_layout(collection: Path) -> None:
    names = {p.name for p in collection.iterdir()}
    assert names == {"audio", "train", "test", "clips.jsonl", "captions_train.csv", "captions_test.csv",
                     "manifest.json", ".fortekit-output"}  # the marker: only such folders are replaced
    for split in ("train", "test"):
        assert {str(p.relative_to(collection / split)) for p in (collection / split).rglob("*.*")} == {
            "corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv", "item_concepts.jsonl"}
    manifest = json.loads((collection / "manifest.json").read_text())
    assert manifest["complete"] is True and manifest["settings"]["n"] == N
    assert manifest["counts"]["train_clips"] + manifest["counts"]["test_clips"] == N


def test_the_wav_files_are_5_s_mono_16_khz_and_hold_the_rendered_scenes(collection: Path) -> None:
    clips = _clips(collection)
    assert len(clips) == N and len(list((collection / "audio").glob("*.wav"))) == N
    for record in clips[:12]:
        shape, samples = _read_wav(collection / record["audio"])
        assert shape == (RATE, 1, 2, 5 * RATE)
        index = int(record["_id"].removeprefix("clip"))
        rendered = render_scene(draw_scene(0, index, config=CONFIG))
        assert np.abs(samples - rendered.samples).max() <= 1.0 / 32767 + 1e-12  # the 16-bit rounding only
        assert record["gain_db"] == pytest.approx(rendered.gain_db, abs=1e-4)
        caption = (collection / "audio" / f"{record['_id']}.txt").read_text(encoding="utf-8").strip()
        assert caption == record["captions"][0]


def test_clips_jsonl_holds_each_clip_s_truth_and_a_gold_formula_that_parses(collection: Path) -> None:
    for record in _clips(collection):
        scene = draw_scene(0, int(record["_id"].removeprefix("clip")), config=CONFIG)
        assert [e["class"] for e in record["events"]] == [e.cls for e in scene.events]
        assert [e["onset"] for e in record["events"]] == [e.onset_s for e in scene.events]
        assert record["split"] == scene.split and record["structure"] == scene.structure
        assert 1 <= len(record["events"]) <= 3 and len(record["captions"]) == 5
        formula = parse_formula(record["formula"])
        assert str(formula) == record["formula"] == str(scene_formula(scene))
        if record["absent"] is not None:
            assert "¬∃w" in record["formula"]
            assert record["absent"] not in {e["class"] for e in record["events"]}
        if record["structure"] == "then":
            assert "Before(x, y)" in record["formula"]
            first, second = record["events"][:2]
            assert first["onset"] + first["duration"] < second["onset"]


def test_the_caption_csvs_follow_clotho(collection: Path) -> None:
    clips = _clips(collection)
    for split in ("train", "test"):
        with (collection / f"captions_{split}.csv").open(encoding="utf-8", newline="") as file:
            rows = list(csv.reader(file))
        assert rows[0] == ["file_name", *(f"caption_{i}" for i in range(1, 6))]
        expected = [[f"{c['_id']}.wav", *c["captions"]] for c in clips if c["split"] == split]
        assert rows[1:] == expected


def test_the_beir_folder_loads_and_its_judgements_follow_the_truth(collection: Path) -> None:
    data = load_beir(collection / "test")
    clips = {c["_id"]: c for c in _clips(collection) if c["split"] == "test"}
    assert {item.id for item in data.items} == set(clips)
    for item in data.items:
        assert item.audio == (collection / "audio" / f"{item.id}.wav").resolve()
        assert item.captions == tuple(clips[item.id]["captions"])
    assert {q.metadata["kind"] for q in data.queries} <= set(QUERY_KINDS)

    def classes(clip: dict) -> set[str]:
        return {e["class"] for e in clip["events"]}

    def relevant(meta: dict, clip: dict) -> bool:
        a, b, kind = meta.get("a"), meta.get("b"), meta["kind"]
        if kind == "plain":
            return a in classes(clip)
        if kind == "attribute":
            return any(e["class"] == a and meta["attribute"] in e["attributes"] for e in clip["events"])
        if kind == "and":
            return a in classes(clip) and b in classes(clip)
        if kind == "without":
            return a in classes(clip) and b not in classes(clip)
        return any(r == "Before" and clip["events"][i]["class"] == a and clip["events"][j]["class"] == b
                   for r, i, j in clip["relations"])

    for query in data.queries:
        parse_formula(query.metadata["formula"])
        judged = {item for item, score in data.qrels[query.id].items() if score >= 1}
        assert judged == {cid for cid, clip in clips.items() if relevant(query.metadata, clip)}, query.text


def test_every_query_kind_is_there_with_enough_clips(tmp_path: Path) -> None:
    """Kinds as ``metadata.kind``: plain, attribute, and, without, order (a 200-clip collection's
    queries, decided from the scenes without rendering)."""
    from fortekit.search.eval.bench.soundgen.queries import build_queries

    scenes = [draw_scene(0, i, config=GeneratorConfig(n=200)) for i in range(200)]
    for split in ("train", "test"):
        queries = build_queries([s for s in scenes if s.split == split], seed=0)
        kinds = {q.kind for q in queries}
        assert kinds == set(QUERY_KINDS) == {"plain", "attribute", "and", "without", "order"}
        assert all(q.relevant for q in queries)


def test_held_out_pairs_never_sound_together_in_training(collection: Path) -> None:
    held = {frozenset(pair) for pair in HELD_OUT_PAIRS}
    scenes = [draw_scene(0, i, config=GeneratorConfig(n=1000)) for i in range(1000)]
    in_test = 0
    for scene in scenes:
        pairs = {frozenset((a, b)) for a in scene.classes for b in scene.classes if a != b}
        if scene.split == "train":
            assert not pairs & held, scene.clip_id
        else:
            in_test += bool(pairs & held)
    assert in_test >= 40  # about a third of the 200 test clips are built around one
    manifest = json.loads((collection / "manifest.json").read_text())
    assert {frozenset(p) for p in manifest["held_out_pairs"]} == held
    for record in _clips(collection):
        if record["split"] == "train":
            present = {e["class"] for e in record["events"]}
            assert not any(set(pair) <= present for pair in HELD_OUT_PAIRS)


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_clips(tmp_path: Path) -> None:
    small = GeneratorConfig(seed=5, n=8, speech=False)
    generate(small, tmp_path / "a")
    generate(small, tmp_path / "b", workers=2)
    first, second = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert first == second
    generate(GeneratorConfig(seed=6, n=8, speech=False), tmp_path / "c")
    other = _tree(tmp_path / "c")
    assert first["audio/clip000000.wav"] != other["audio/clip000000.wav"]


def test_an_interrupted_run_resumes_to_the_same_collection(tmp_path: Path) -> None:
    small = GeneratorConfig(seed=2, n=10, speech=False)

    def stop(done: int, todo: int) -> None:
        if done == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        generate(small, tmp_path / "cut", on_clip=stop)
    assert not json.loads((tmp_path / "cut" / "manifest.json").read_text())["complete"]
    report = generate(small, tmp_path / "cut")
    assert (report.clips, report.rendered) == (10, 6)
    generate(small, tmp_path / "whole")
    assert _tree(tmp_path / "cut") == _tree(tmp_path / "whole")
    again = generate(small, tmp_path / "cut")  # finished: nothing to do
    assert again.rendered == 0 and again.counts["clips"] == 10


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    assert main(["bench", "generate", "--n", "6", "-o", str(out), "--seed", "1", "--no-speech",
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "generated 6 clips" in printed and "clips/s" in printed
    assert len(list((out / "audio").glob("*.wav"))) == 6
    assert main(["bench", "generate", "--n", "6", "-o", str(out), "--seed", "1", "--no-speech",
                 "--quiet"]) == 0
    assert "nothing to do" in capsys.readouterr().out


@pytest.mark.parametrize(("arguments", "code"), [
    (["--n", "0"], "E550"),
    (["--n", "-5"], "E550"),
    (["--n", "2000000"], "E550"),
    (["--seed", "-1"], "E550"),
    (["--test-every", "1"], "E550"),
    (["--workers", "0"], "E550"),
])
def test_bad_settings_are_coded_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       arguments: list[str], code: str) -> None:
    out = tmp_path / "bad"
    assert main(["bench", "generate", "-o", str(out), "--no-speech", "--quiet", *arguments]) == 1
    err = capsys.readouterr().err
    assert f"[{code}]" in err and "Traceback" not in err
    assert not out.exists()


def test_bad_output_folders_are_coded_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    # a busy folder is the generator's own refusal (exit 1); a file where the folder should be is
    # refused by the one output rule at dispatch, before anything runs (exit 2)
    for out, code, status in ((busy, "E553", 1), (a_file, "E745", 2), (a_file / "below", "E74", 2)):
        assert main(["bench", "generate", "--n", "2", "-o", str(out), "--no-speech", "--quiet"]) == status
        err = capsys.readouterr().err
        assert f"[{code}" in err and "Traceback" not in err, err
    assert (busy / "notes.txt").read_text() == "mine"
    # --overwrite replaces only a folder the generator made: the user's folder is refused, untouched
    assert main(["bench", "generate", "--n", "2", "-o", str(busy), "--no-speech", "--quiet",
                 "--overwrite"]) == 1
    assert "[E744]" in capsys.readouterr().err
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]
    ours = tmp_path / "ours"
    assert main(["bench", "generate", "--n", "2", "-o", str(ours), "--no-speech", "--quiet"]) == 0
    # other settings in a finished folder: E553 again, never a silent mix
    assert main(["bench", "generate", "--n", "3", "-o", str(ours), "--no-speech", "--quiet"]) == 1
    assert "[E553]" in capsys.readouterr().err
    assert main(["bench", "generate", "--n", "3", "-o", str(ours), "--no-speech", "--quiet",
                 "--overwrite"]) == 0
    assert len(list((ours / "audio").glob("*.wav"))) == 3


def test_missing_espeak_is_e551_and_no_speech_is_the_way_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FORTEKIT_ESPEAK", str(tmp_path / "no-such-espeak"))
    with pytest.raises(SpeechSynthMissingError, match=r"\[E551\].*--no-speech"):
        generate(GeneratorConfig(n=2), tmp_path / "speech")
    assert main(["bench", "generate", "--n", "2", "-o", str(tmp_path / "cli")]) == 1
    err = capsys.readouterr().err
    assert "[E551]" in err and "--no-speech" in err and "Traceback" not in err
    assert not (tmp_path / "cli").exists()
    arguments = ["bench", "generate", "--n", "2", "-o", str(tmp_path / "cli"), "--no-speech", "--quiet"]
    assert main(arguments) == 0


def test_a_bad_data_file_is_e555(tmp_path: Path) -> None:
    bad = tmp_path / "templates.toml"
    bad.write_text("[attributes]\n", encoding="utf-8")
    with pytest.raises(SoundGenError, match=r"\[E555\].*attributes\.loud"):
        load_templates(bad)
    bad.write_text("not = [toml", encoding="utf-8")
    with pytest.raises(SoundGenError, match=r"\[E555\]"):
        load_templates(bad)


def test_structures_keep_their_shares_and_then_events_fit_in_order() -> None:
    scenes = [draw_scene(1, i) for i in range(1000)]
    shares = {s: sum(scene.structure == s for scene in scenes) / len(scenes)
              for s in ("single", "while", "then")}
    assert shares == pytest.approx({"single": 0.3, "while": 0.35, "then": 0.35}, abs=0.05)
    for scene in scenes:
        if scene.structure == "then":
            first, second = scene.events[:2]
            assert first.sounds_until_s < second.onset_s and second.onset_s + second.duration_s <= 5.0
    assert len({scene.events[0].cls for scene in scenes if scene.structure == "then"}) == 15


def test_an_interrupted_command_says_how_to_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import fortekit.search.eval.bench.soundgen.generate as module

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "generate", interrupted)
    assert main(["bench", "generate", "--n", "4", "-o", str(tmp_path / "x"), "--no-speech"]) == 130
    err = capsys.readouterr().err
    assert "[E556]" in err and "run the same command again" in err and "Traceback" not in err


def test_bench_is_a_fortekit_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "generate", "--help"])
    assert "--no-speech" in capsys.readouterr().out


def test_agents_take_their_rate_as_an_adverb() -> None:
    from fortekit.search.eval.bench.soundgen.captions import phrase

    rng = np.random.default_rng(0)
    for cls, variant in (("speech", "female"), ("speech", "male"), ("dog", ""), ("footsteps", "")):
        for kind in ("np", "clause"):
            for _ in range(10):
                text = phrase(cls, variant, ("slow",), kind, rng)
                assert "slowly" in text and "slow " not in text, text
    assert any(phrase("rain", "", ("slow",), "np", rng).startswith("slow ") for _ in range(20))


def test_a_bad_adverb_only_entry_is_e555(tmp_path: Path) -> None:
    from fortekit.search.eval.bench.soundgen.templates import DATA_FILE

    bad = tmp_path / "templates.toml"
    bad.write_text(DATA_FILE.read_text(encoding="utf-8").replace(
        'adverb_only = ["speech", "dog", "bird", "footsteps"]', 'adverb_only = ["cat"]', 1), encoding="utf-8")
    with pytest.raises(SoundGenError, match=r"\[E555\].*adverb_only.*cat"):
        load_templates(bad)
