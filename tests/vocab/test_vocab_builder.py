"""The vocabulary builder on the real captions: it reproduces the shipped file."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from vocab_fixtures import (
    AUDIOCAPS_TRAIN,
    CLOTHO_DEV,
    ONTOLOGY,
    SHIPPED_TSV,
    analysed,
    require,
    vocab_cache,
)

from fortekit.errors import DataFileError
from fortekit.search.cli.vocab import add_vocab_commands
from fortekit.vocab import Category, Origin
from fortekit.vocab.builder import compile_vocabulary, phrases_to_count
from fortekit.vocab.corpus import class_names, read_captions, read_ontology
from fortekit.vocab.tables import load_tables
from fortekit.vocab.terms import count_terms, gerund, normalise_phrase, resolve_terms
from fortekit.vocab.wordnet import load_wordnet

__all__ = ["vocab_cache"]  # the fixture, imported for pytest


def run_cli(argv: list[str]) -> tuple[int, str]:
    import argparse
    import io

    parser = argparse.ArgumentParser(prog="fortekit")
    add_vocab_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    out = io.StringIO()
    return args.handler(args, out), out.getvalue()


@pytest.fixture(scope="module")
def corpus(vocab_cache: Path) -> dict[str, Any]:
    docs = {
        "clotho": analysed(require(CLOTHO_DEV, "Clotho development captions"), vocab_cache),
        "audiocaps": analysed(require(AUDIOCAPS_TRAIN, "AudioCaps train captions"), vocab_cache),
    }
    ontology = read_ontology(require(ONTOLOGY, "AudioSet ontology"))
    return {"docs": docs, "ontology": ontology, "phrases": phrases_to_count(ontology, load_tables())}


def test_rebuilding_reproduces_the_shipped_file(tmp_path: Path, vocab_cache: Path) -> None:
    out = tmp_path / "vocabulary.tsv"
    code, text = run_cli(
        [
            "vocab",
            "build",
            "--clotho",
            str(require(CLOTHO_DEV, "Clotho development captions")),
            "--audiocaps",
            str(require(AUDIOCAPS_TRAIN, "AudioCaps train captions")),
            "--ontology",
            str(require(ONTOLOGY, "AudioSet ontology")),
            "-o",
            str(out),
            "--min-freq",
            "5",
            "--cache-dir",
            str(vocab_cache),
        ]
    )
    assert code == 0, text
    assert out.read_bytes() == SHIPPED_TSV.read_bytes()
    assert "identical to the shipped vocabulary: yes" in text
    assert "Negation targets" in text


def test_inputs_are_read_as_the_paper_describes(corpus: dict[str, Any]) -> None:
    assert len(corpus["docs"]["clotho"]) == 2893 * 5
    assert len(corpus["docs"]["audiocaps"]) == 49838
    assert len(corpus["ontology"]) == 632
    assert "dishes" in list(class_names("Dishes, pots, and pans"))


def test_wordnet_repairs_spacy_slips(corpus: dict[str, Any]) -> None:
    raw = count_terms(corpus["docs"])
    fixed = resolve_terms(raw, load_wordnet(), keep=[k for k in load_tables().lexicon if k[1] != "*"])
    # spaCy tags "siren" as an adjective and lemmatises "barking" (noun) to itself
    assert raw.total(("siren", "ADJ")) > 100 and fixed.total(("siren", "ADJ")) == 0
    assert fixed.total(("siren", "NOUN")) >= raw.total(("siren", "NOUN")) + raw.total(("siren", "ADJ"))
    assert raw.total(("barking", "NOUN")) > 0 and fixed.total(("barking", "NOUN")) == 0
    assert sum(raw.freq[k][0] for k in raw.freq) == sum(fixed.freq[k][0] for k in fixed.freq)  # nothing lost
    assert raw.gerund("hum") == "humming" and raw.gerund("rev") == "revving"


def subset(corpus: dict[str, Any], step: int) -> dict[str, Any]:
    return {source: docs[::step] for source, docs in corpus["docs"].items()}


def test_compiling_is_deterministic_on_a_subset(corpus: dict[str, Any]) -> None:
    counts = count_terms(subset(corpus, 7), corpus["phrases"])
    first = compile_vocabulary(counts, corpus["ontology"])
    second = compile_vocabulary(counts, corpus["ontology"])
    assert first.vocabulary.to_tsv() == second.vocabulary.to_tsv()
    assert all(n > 0 for n in first.vocabulary.counts().values())


def test_the_threshold_applies_to_both_sources_together(corpus: dict[str, Any]) -> None:
    counts = count_terms(subset(corpus, 7), corpus["phrases"])
    strict = compile_vocabulary(counts, corpus["ontology"], min_freq=40).vocabulary
    loose = compile_vocabulary(counts, corpus["ontology"], min_freq=5).vocabulary
    assert len(strict) < len(loose)
    assert all(e.freq >= 40 for e in strict if e.origin is Origin.CORPUS)
    # AudioSet classes attested below the threshold join, as in the paper
    assert any(e.origin is Origin.AUDIOSET and e.freq < 40 for e in strict)
    assert strict.counts()[Category.TEMPORAL] > 0


@pytest.mark.parametrize(
    ("verb", "ing"),
    [
        ("hum", "humming"),
        ("sizzle", "sizzling"),
        ("tie", "tying"),
        ("whir", "whirring"),
        ("chirp", "chirping"),
        ("see", "seeing"),
        ("open", "opening"),
    ],
)
def test_gerund_spelling(verb: str, ing: str) -> None:
    assert gerund(verb) == ing


def test_phrases_normalise() -> None:
    assert normalise_phrase(" High-Pitched_whine ") == "high pitched whine"


def test_missing_and_malformed_inputs(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match=r"\[E108\]"):
        read_captions(tmp_path / "absent.csv")
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"\[E109\].*found a,b"):
        read_captions(wrong)
    bad = tmp_path / "ontology.json"
    bad.write_text(json.dumps({"not": "a list"}), encoding="utf-8")
    with pytest.raises(DataFileError, match=r"\[E109\]"):
        read_ontology(bad)


def test_cli_reports_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli(
        [
            "vocab",
            "build",
            "--clotho",
            str(tmp_path / "x.csv"),
            "--audiocaps",
            str(tmp_path / "y.csv"),
            "--ontology",
            str(tmp_path / "o.json"),
            "-o",
            str(tmp_path / "v.tsv"),
        ]
    )
    assert code == 1
    assert "[E108]" in capsys.readouterr().err


def test_shipped_frequencies_add_up_per_source() -> None:
    rows = SHIPPED_TSV.read_text(encoding="utf-8").splitlines()[1:]
    origins = Counter(row.split("\t")[7] for row in rows)
    assert set(origins) == {"corpus", "audioset", "curated"}
