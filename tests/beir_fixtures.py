"""A small BEIR folder for the `fortekit eval --beir` tests (tests/test_beir*.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NEGATION = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "negation"

CORPUS = [
    {"_id": "d1", "title": "", "text": "a dog barks in the rain",
     "captions": ["a dog barks in the rain", "a dog barking while rain falls"]},
    {"_id": "d2", "text": "a dog barks", "captions": ["a dog barks", "a dog is barking loudly"]},
    {"_id": "d3", "text": "rain falls on a roof", "captions": ["rain falls on a roof", "heavy rain"]},
    {"_id": "d4", "text": "birds chirp in the morning", "captions": ["birds chirp", "birds singing"]},
    {"_id": "d5", "text": "music plays and people talk",
     "captions": ["music plays", "people talk over music"]},
    {"_id": "d6", "text": "a car engine idles", "captions": ["a car engine idles", "an engine running"]},
    {"_id": "d7", "text": "thunder rumbles in the rain",
     "captions": ["thunder and rain", "rain with thunder"]},
    {"_id": "d8", "text": "a dog growls", "captions": ["a dog growls", "a growling dog"]},
]
QUERIES = [
    {"_id": "q1", "text": "a dog barking without rain",
     "metadata": {"kind": "without", "a": "dog", "b": "rain"}},
    {"_id": "q2", "text": "rain and thunder", "metadata": {"kind": "and", "a": "rain", "b": "thunder"}},
    {"_id": "q3", "text": "birds without music", "metadata": {"kind": "without", "a": "bird", "b": "music"}},
    {"_id": "q4", "text": "a dog and rain", "metadata": {"kind": "and", "a": "dog", "b": "rain"}},
]
QRELS = [("q1", "d2", 1), ("q1", "d8", 1), ("q2", "d7", 1), ("q3", "d4", 1), ("q4", "d1", 1), ("q4", "d3", 0)]
CONCEPTS = {"d1": {"dog": 2, "rain": 2}, "d2": {"dog": 2}, "d3": {"rain": 2}, "d4": {"bird": 2},
            "d5": {"music": 2, "speech": 1}, "d6": {"engine": 2}, "d7": {"rain": 2, "thunder": 2},
            "d8": {"dog": 2}}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def make_beir(folder: Path, *, corpus: list[dict[str, Any]] | None = None,
              queries: list[dict[str, Any]] | None = None, qrels: list[tuple[str, str, int]] | None = None,
              concepts: dict[str, dict[str, int]] | None = CONCEPTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "corpus.jsonl", CORPUS if corpus is None else corpus)
    write_jsonl(folder / "queries.jsonl", QUERIES if queries is None else queries)
    (folder / "qrels").mkdir(exist_ok=True)
    judged = QRELS if qrels is None else qrels
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, d, s in judged]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if concepts is not None:
        write_jsonl(folder / "item_concepts.jsonl", [{"_id": k, "concepts": v} for k, v in concepts.items()])
    return folder
