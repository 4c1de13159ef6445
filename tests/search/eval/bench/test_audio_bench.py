"""FORTE on waveforms, end to end at CI size: the 200-clip collection, the small CLAP trained on it
(tests/soundclap_fixtures.py, once a session), Stage 2 on its training clips, then
``fortekit eval --beir`` on the test clips' audio with the tagger's captions for Stage 3.

What scripts/audio_bench.sh runs at 2,000 and 20,000 clips (docs/results.md, "Audio, end to end").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

from fortekit.search.cli import main

Trained = tuple[Path, Path, dict[str, Any], str]


@pytest.fixture(scope="module")
def audio_run(trained_clap: Trained, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    collection, model, _, _ = trained_clap
    root = tmp_path_factory.mktemp("audio-bench")
    data = root / "stage2" / "train.safetensors"
    assert main(["bench", "stage2-data", "--data", str(collection), "--backbone-option", f"model={model}",
                 "-o", str(data), "--device", "cpu", "--captions-per-clip", "1"]) == 0
    assert main(["train-projection", "--train", str(data), "-o", str(root / "stage2"), "--epochs", "3",
                 "--batch-size", "32", "--device", "cpu", "--quiet"]) == 0
    out = root / "eval"
    assert main(["eval", "--beir", str(collection / "test"), "--backbone", "small-clap",
                 "--backbone-option", f"model={model}", "--captioner", "tagger",
                 "--captioner-option", f"model={model}", "--captioner-option", "device=cpu",
                 "--projection", str(root / "stage2"),
                 "--systems", "baseline,S2,S3-polarity,formula,formula+S3,formula+S3+order,default,full",
                 "--by", "kind", "--device", "cpu", "--beam-width", "2", "--no-umap", "-o", str(out)]) == 0
    return out, json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def _random_precision_at_10(collection: Path) -> float:
    """P@10 of a random ranking: the mean fraction of relevant clips per query."""
    items = sum(1 for line in (collection / "test" / "corpus.jsonl").open(encoding="utf-8") if line.strip())
    relevant: dict[str, int] = {}
    for line in (collection / "test" / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        query, _, score = line.split("\t")
        relevant[query] = relevant.get(query, 0) + (int(score) > 0)
    return sum(min(count, items) / items for count in relevant.values()) / len(relevant)


def test_the_trained_clap_ranks_the_audio_far_above_chance(trained_clap: Trained,
                                                            audio_run: tuple[Path, dict[str, Any]]) -> None:
    collection = trained_clap[0]
    _, metrics = audio_run
    baseline = metrics["systems"]["baseline"]
    assert baseline["P@10"] >= 2 * _random_precision_at_10(collection), baseline
    config = json.loads((audio_run[0] / "config.json").read_text(encoding="utf-8"))
    assert config["counts"]["item_sources"]["audio"] == metrics["items"]  # every item is its WAV file
    assert config["counts"]["item_texts"] == "tagger"  # Stage 3 read the tagger, not the generator
    assert metrics["modality_gap"]["pairs"] > 0 and "plot" not in metrics["modality_gap"]


def test_formula_scoring_helps_on_without_queries(audio_run: tuple[Path, dict[str, Any]]) -> None:
    rows = audio_run[1]["breakdown"]["kind"]["without"]
    assert rows["formula"]["nDCG@10"] >= rows["baseline"]["nDCG@10"] + 0.05, rows


def test_stage3_reads_the_taggers_captions(audio_run: tuple[Path, dict[str, Any]]) -> None:
    from fortekit.search.eval.per_query import read_per_query

    out, metrics = audio_run
    assert {"S2", "S3-polarity", "full", "formula+S3+order", "default"} <= set(metrics["systems"])
    kinds = metrics["breakdown"]["kind"]
    for kind in set(kinds) - {"order"}:  # no Before in their queries: the order check changes nothing
        assert kinds[kind]["formula+S3+order"]["nDCG@10"] == kinds[kind]["formula+S3"]["nDCG@10"], kind
    assert len(read_per_query(out / "per_query" / "full.jsonl")) == metrics["queries"]
    assert metrics["preparation_seconds"]["caption_items"] > 0


def test_audio_to_text_ranks_the_query_texts_for_each_clip(audio_run: tuple[Path, dict[str, Any]]) -> None:
    out, metrics = audio_run
    block = metrics["a2t"]
    assert list(block["systems"]) == list(metrics["t2a"]["systems"])  # every system, both directions
    assert block["items"] + block["dropped_items"] == metrics["items"]
    assert block["texts"] == metrics["queries"]
    baseline, chance = block["systems"]["baseline"], block["chance"]["all"]
    assert baseline["R@1"] >= 2 * chance["R@1"], (baseline, chance)  # the trained CLAP, far above chance
    assert baseline["nDCG@10"] >= 2 * chance["nDCG@10"], (baseline, chance)
    kinds = block["breakdown"]["kind"]
    for kind, rows in kinds.items():  # each kind ranks only its own texts
        assert rows["baseline"]["texts"] == sum(1 for q in _queries(out) if q == kind), kind
    for kind in set(kinds) - {"order"}:  # the order check moves nothing there: scores equal, a2t too
        assert kinds[kind]["formula+S3+order"]["nDCG@10"] == kinds[kind]["formula+S3"]["nDCG@10"], kind


def _queries(out: Path) -> list[str]:
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    path = Path(config["data"]["queries"]["path"])
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["metadata"]["kind"] for line in lines if line.strip()]


def test_a_captioner_on_items_without_audio_is_a_coded_error(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from beir_fixtures import make_beir

    folder = make_beir(tmp_path / "text-only")
    code = main(["eval", "--beir", str(folder), "-o", str(tmp_path / "out"), "--device", "cpu",
                 "--systems", "S3-polarity", "--captioner", "stored"])
    assert code == 1 and "[E590]" in capsys.readouterr().err
    code = main(["eval", "--beir", str(folder), "-o", str(tmp_path / "out"), "--device", "cpu",
                 "--systems", "S2"])
    assert code == 1 and "[E508]" in capsys.readouterr().err  # S2 needs --projection


def test_stage2_data_refuses_a_bad_split_or_caption_count(trained_clap: Trained) -> None:
    from fortekit.errors import SoundClapError
    from fortekit.plugins import get_backbone
    from fortekit.search.eval.bench.soundclap.stage2_data import stage2_data

    collection, model, _, _ = trained_clap
    clap = get_backbone("small-clap", model=model, device="cpu")
    with pytest.raises(SoundClapError, match=r"\[E591\].*captions_per_clip is 0"):
        stage2_data(collection, clap, captions_per_clip=0)
    with pytest.raises(SoundClapError, match=r"\[E591\].*0 clips of the split 'validation'"):
        stage2_data(collection, clap, split="validation")
    with pytest.raises(SoundClapError, match=r"\[E574\]"):
        stage2_data(collection / "nowhere", clap)


def test_the_order_check_reads_asserted_orders_between_two_events() -> None:
    from fortekit.fol import parse_formula
    from fortekit.search.formula.order_check import event_orders, order_agreement

    query = parse_formula("∃x ∃y [Dog(x) ∧ Barking(x) ∧ Before(x, y) ∧ Bell(y) ∧ Ringing(y)]")
    assert event_orders(parse_formula("∃x [Water(x) ∧ Before(x, x)]")) == []  # the parser's slip
    assert event_orders(parse_formula("∃x ∃y [Dog(x) ∧ ¬Before(x, y) ∧ Bell(y)]")) == []  # denied
    assert order_agreement(query, parse_formula("∃x ∃y [Dog(x) ∧ While(x, y) ∧ Bell(y)]")) == 0.0
    assert order_agreement(query, parse_formula("∃x ∃y [Bird(x) ∧ Before(x, y) ∧ Bell(y)]")) == 0.0
    two = parse_formula("∃x ∃y ∃z [Dog(x) ∧ Before(x, y) ∧ Bell(y) ∧ Before(y, z) ∧ Rain(z)]")
    assert order_agreement(two, parse_formula("∃x ∃y [Dog(x) ∧ Before(x, y) ∧ Bell(y)]")) == 0.5
