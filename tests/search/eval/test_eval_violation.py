"""violated@10: `fortekit eval --beir`'s grounded violation measure and the evaluation page's badges.

The measure and the badges ask the one violation check (fortekit.fol.violation) of the items'
captions; the dataset's concept annotation (violation@10) stays as it was. The collection is
written from real AudioCaps captions (examples/audiocaps_train_sample.csv), several per clip.
"""

from __future__ import annotations

import csv
import doctest
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from beir_fixtures import make_beir

from fortekit.search.eval import grounded
from fortekit.search.eval.beir_eval import BeirSettings, run_beir_evaluation
from fortekit.search.eval.beir_metrics import GROUNDED_VIOLATION, VIOLATION, group_summary
from fortekit.search.eval.grounded import TOP_MARKS, GroundedMarks, held_sounds
from fortekit.search.serve import eval_marks, run_files
from fortekit.search.serve.eval_run import EvalRun

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "audiocaps_train_sample.csv"
CLIPS = {  # item -> real captions of the sample (each clip's captions: what the item holds)
    "dog": ["A small dog is barking and yipping", "A dog barking loudly"],
    "dog_woman": ["A woman speaks then a dog barks", "A woman speaks and a dog barks and growls"],
    "speech": ["A man is giving a speech", "A man speaking and rain falling"],
    "birds": ["Birds are chirping and squawking", "Knocking on wood with distant birds chirping and a "
                                                   "nearby goat bleating"],
    "whimper": ["A dog whimpers nearby"],
}
QUERIES = [
    {"_id": "q1", "text": "dog barking without people talking",
     "metadata": {"kind": "without", "a": "dog", "b": "speech"}},
    {"_id": "q2", "text": "a dog barking", "metadata": {"kind": "single", "a": "dog"}},
]
QRELS = [("q1", "dog", 1), ("q2", "dog", 1), ("q2", "dog_woman", 1)]
VIOLATING = {"dog_woman", "speech"}  # their captions say "speaks" / "a speech" / "a man speaking"


def _captions() -> set[str]:
    with SAMPLE.open(encoding="utf-8", newline="") as handle:
        return {row["caption"] for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A baseline run over the clips, without item_concepts.jsonl (violated@10 needs none)."""
    known = _captions()
    assert all(caption in known for captions in CLIPS.values() for caption in captions)
    root = tmp_path_factory.mktemp("grounded")
    corpus = [{"_id": item, "text": captions[0], "captions": captions} for item, captions in CLIPS.items()]
    folder = make_beir(root / "coll", corpus=corpus, queries=QUERIES, qrels=QRELS, concepts=None)
    out = root / "run"
    run_beir_evaluation(BeirSettings(beir=folder, out=out, systems=("baseline",), device="cpu",
                                     directions=("t2a",), umap=False))
    return out


def _rows(out: Path, system: str = "baseline") -> dict[str, dict[str, Any]]:
    lines = (out / "per_query" / f"{system}.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["query_id"]: row for row in map(json.loads, lines)}


def test_speech_captions_violate_and_birds_do_not(run: Path) -> None:
    row = _rows(run)["q1"]
    assert row[VIOLATION] is None  # no item_concepts.jsonl: the annotated figure is not computed
    assert sorted(row["top"]) == sorted(CLIPS)  # every item in the top 10
    marks = dict(zip(row["top"], row[TOP_MARKS], strict=True))
    assert {item for item, held in marks.items() if held} == VIOLATING
    assert marks["speech"] == ["¬∃y [Person(y) ∧ Talking(y)]"] and marks["birds"] == []
    assert marks["whimper"] == []  # a dog, but no one talking
    assert row[GROUNDED_VIOLATION] == pytest.approx(len(VIOLATING) / len(CLIPS))


def test_a_query_that_excludes_nothing_has_no_grounded_violation(run: Path) -> None:
    row = _rows(run)["q2"]
    assert row[GROUNDED_VIOLATION] is None and row[TOP_MARKS] is None


def test_metrics_results_and_breakdowns_have_the_measure(run: Path) -> None:
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    share = len(VIOLATING) / len(CLIPS)
    assert metrics["t2a"]["systems"]["baseline"][GROUNDED_VIOLATION] == pytest.approx(share)  # q2: None
    assert metrics["t2a"]["systems"]["baseline"][VIOLATION] is None
    kinds = metrics["t2a"]["breakdown"]["kind"]
    assert kinds["without"]["baseline"][GROUNDED_VIOLATION] == pytest.approx(share)
    assert kinds["single"]["baseline"][GROUNDED_VIOLATION] is None
    table = (run / "results.md").read_text(encoding="utf-8")
    assert "| violation@10 | violated@10 |" in table and f"| {share:.3f} |" in table


def test_the_measure_counts_what_the_check_holds() -> None:
    from fortekit.fol import parse_formula, predicates
    from fortekit.fol.violation import default_check

    phi = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]")
    items = {name: predicates(parse_formula(text)) for name, text in {
        "man": "∃x [Man(x) ∧ Speaking(x)]", "speech": "∃x Speech(x)", "bird": "∃x [Bird(x) ∧ Chirping(x)]",
        "dog": "∃x [Dog(x) ∧ Barking(x)]", "none": "∃x ¬Music(x)"}.items()}
    marks = GroundedMarks({"q": phi}.get, items.get)
    for symbols in items.values():
        assert bool(held_sounds(phi, symbols)) == default_check().holds(phi, symbols)
    assert marks.mark("q", "none") is None  # nothing asserted: no caption to judge
    assert marks.share("q", list(items)) == pytest.approx(2 / 5)


def test_group_summary_adds_the_measure_only_for_rows_that_have_it() -> None:
    assert GROUNDED_VIOLATION not in group_summary([{"nDCG@10": 1.0, "AP": 1.0}], None)
    rows = [{"nDCG@10": 1.0, "AP": 1.0, GROUNDED_VIOLATION: 0.2}, {"nDCG@10": 0.0, "AP": 0.0,
                                                                   GROUNDED_VIOLATION: None}]
    assert group_summary(rows, None)[GROUNDED_VIOLATION] == pytest.approx(0.2)


def test_the_page_shows_the_runs_own_judgement(run: Path, tmp_path: Path) -> None:
    view = EvalRun.load(run).query("q1", "baseline")
    top = view["system"]["top"]
    assert {hit["id"] for hit in top if hit["violates"]} == VIOLATING
    assert {hit["judged_by"] for hit in top} == {"captions"}
    assert view["system"][GROUNDED_VIOLATION] == pytest.approx(len(VIOLATING) / len(CLIPS))
    # the page reads the stored marks, not a judgement of its own
    edited = tmp_path / "edited"
    shutil.copytree(run, edited)
    rows = _rows(edited)
    rows["q1"][TOP_MARKS] = [["¬∃y Bird(y)"] if item == "birds" else [] for item in rows["q1"]["top"]]
    (edited / "per_query" / "baseline.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows.values()), encoding="utf-8")
    shown = EvalRun.load(edited).query("q1", "baseline")["system"]["top"]
    assert [hit["id"] for hit in shown if hit["violates"]] == ["birds"]


def test_an_earlier_runs_files_load_and_the_page_judges_them_alike(run: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(run, old)
    rows = _rows(old)
    for row in rows.values():
        del row[GROUNDED_VIOLATION], row[TOP_MARKS]
    (old / "per_query" / "baseline.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows.values()), encoding="utf-8")
    metrics = json.loads((old / "metrics.json").read_text(encoding="utf-8"))
    for block in (metrics["systems"], metrics["t2a"]["systems"]):
        del block["baseline"][GROUNDED_VIOLATION]
    (old / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    loaded = EvalRun.load(old).preload()
    assert loaded.summary()["systems"][0][GROUNDED_VIOLATION] is None
    view = loaded.query("q1", "baseline")
    stored = dict(zip(_rows(run)["q1"]["top"], _rows(run)["q1"][TOP_MARKS], strict=True))
    top = view["system"]["top"]
    assert [hit["violated"] for hit in top] == [stored[hit["id"]] for hit in top]  # parsed by the page alike
    assert view["system"][GROUNDED_VIOLATION] is None
    assert not any(hit["violates"] for hit in loaded.query("q2", "baseline")["system"]["top"])


@pytest.mark.parametrize("module", [grounded, eval_marks, run_files])
def test_docstring_examples(module: Any) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 2
