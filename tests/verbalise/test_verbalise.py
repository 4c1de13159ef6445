"""The template verbaliser G(φ): the paper's templates, fluent English, determinism."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fortekit.fol import CandidatePools, parse_formula, successors
from fortekit.verbalise import templates_used, verbalise

GOLD = Path(__file__).resolve().parents[1] / "data"

# One formula per template of the paper's table, with the shape each must produce.
TEMPLATE_CASES = [
    (1, "∃x ∃y ∃t [Morning(t) ∧ Dog(x) ∧ Barking(x) ∧ ¬Loud(x) ∧ In(x, y) ∧ Yard(y)]",
     "a dog barking in a yard, but not loud, during the morning"),
    (2, "Dog(x) ∧ Barking(x) ∧ ¬Loud(x) ∧ In(x, y) ∧ Yard(y)", "a dog barking in a yard, but not loud"),
    (3, "∃t Morning(t) ∧ Bird(x) ∧ Chirping(x) ∧ Soft(x)", "a bird chirping softly during the morning"),
    (4, "Dog(x) ∧ Barking(x) ∧ ¬Loud(x)", "a dog barking, but not loud"),
    (5, "Dog(x) ∧ Barking(x) ∧ In(x, y) ∧ Yard(y)", "a dog barking in a yard"),
    (6, "Dog(x) ∧ In(x, y) ∧ Yard(y)", "a dog in a yard"),
    (7, "Bird(x) ∧ Chirping(x) ∧ Loud(x)", "a bird chirping loudly"),
    (8, "Dog(x) ∧ ¬Loud(x)", "a dog, but not loud"),
    (9, "Bird(x) ∧ Chirping(x)", "a bird chirping"),
]


@pytest.mark.parametrize(("number", "formula", "expected"), TEMPLATE_CASES)
def test_each_template_of_the_paper(number: int, formula: str, expected: str) -> None:
    phi = parse_formula(formula)
    assert templates_used(phi) == [number]
    assert verbalise(phi) == expected


def test_papers_examples() -> None:
    assert verbalise(parse_formula("Quiet(x) ∧ Person(x) ∧ Speaking(x)")) == "a person speaking quietly"
    assert verbalise(parse_formula("∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]")) == (
        "a bird chirping during the morning"
    )
    assert verbalise(parse_formula("Wind(x) ∧ Blowing(x) ∧ ¬Rain(y)")) == "wind blowing, without rain"
    assert verbalise(parse_formula("¬Rain(y)")) == "without rain"
    assert verbalise(
        parse_formula("Footstep(x) ∧ Quiet(x) ∧ Empty(y) ∧ Corridor(y) ∧ In(x, y) ∧ ¬Crowd(z) ∧ ¬Loud(x)")
    ) == "a quiet footstep in an empty corridor, but not loud, without a crowd"
    plural = "∃X ∃t [Flock(X) ∧ ∀x∈X (Bird(x) ∧ Chirping(x)) ∧ Morning(t)]"
    assert verbalise(parse_formula(plural)) == "a flock of birds chirping during the morning"


def test_temporal_relations_join_clauses() -> None:
    assert verbalise(parse_formula("Siren(x) ∧ Announcement(y) ∧ Before(x, y)")) == (
        "a siren, followed by an announcement"
    )
    assert verbalise(parse_formula("Siren(x) ∧ Announcement(y) ∧ Before(y, x)")) == (
        "a siren after an announcement"
    )
    assert " while " in verbalise(parse_formula("Dog(x) ∧ Barking(x) ∧ Car(y) ∧ While(x, y)"))


def test_unknown_predicates_are_spelt_from_their_name() -> None:
    text = verbalise(parse_formula("Zorbling(x) ∧ GlassHarmonica(x) ∧ Near(x, y) ∧ Window(y)"))
    assert text == "a glass harmonica zorbling near a window"


def _formulas() -> list:  # type: ignore[type-arg]
    formulas = []
    for name in ("parser_gold.jsonl", "parser_gold_negation.jsonl"):
        for line in (GOLD / name).read_text(encoding="utf-8").splitlines():
            formulas.append(parse_formula(json.loads(line)["formula"]))
    return formulas


POOLS = CandidatePools(
    attributes=("Loud", "Distant", "Echoing"),
    relations=(("In", "Room"), ("Behind", "Door")),
    negations=("Music", "Shouting"),
)


def _operator_outputs(limit_per_depth: int = 400) -> list:  # type: ignore[type-arg]
    outputs, frontier = [], _formulas()
    for depth in range(1, 5):
        kids = [kid.formula for phi in frontier for kid in successors(phi, depth, POOLS)]
        frontier = kids[:limit_per_depth]
        outputs.extend(frontier)
    return outputs


_BAD = [
    (re.compile(r"\b(a|an) (a|an|the)\b"), "doubled article"),
    (re.compile(r"[{}]"), "unfilled slot"),
    (re.compile(r"\s{2,}|\s,|,,|^\W|[, ]$"), "spacing or punctuation"),
    (re.compile(r"\ban [b-df-hj-np-tv-z]\w*"), "'an' before a consonant"),
]


def test_english_is_well_formed_for_operator_outputs_up_to_depth_4() -> None:
    outputs = _formulas() + _operator_outputs()
    assert len(outputs) > 1000
    for phi in outputs:
        text = verbalise(phi)
        assert text, phi
        for pattern, problem in _BAD:
            assert not pattern.search(text), (problem, text, str(phi))
        for word in re.findall(r"\ba ([aeiou]\w*)", text):
            assert word.startswith(("one", "uni", "use", "usu", "eu")), (text, str(phi))


def test_output_is_deterministic_across_processes() -> None:
    formulas = [str(phi) for phi in _formulas()[:40]]
    script = (
        "import json,sys; from fortekit.fol import parse_formula; from fortekit.verbalise import verbalise;"
        "print(json.dumps([verbalise(parse_formula(f)) for f in json.load(sys.stdin)]))"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], input=json.dumps(formulas), capture_output=True, text=True,
            check=True, env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2")
    ]
    assert runs[0] == runs[1]
    assert json.loads(runs[0]) == [verbalise(parse_formula(f)) for f in formulas]
