"""The related-pair exclusion sets (scripts/related_pairs.py) and the cue-class wordings.

The builder is checked on the real captions of ../shared/data (skipped with the reason when it
is absent): every query's relevant clips and hard negatives are what the concept regexes of
tests/data/related_pairs/concepts.toml say (recomputed here independently of the script), the
halves do not share a pair, the split files are the committed ones and the draw of their seed,
and no related pair is a pair of the negation sets. Nothing here runs a retrieval system.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO, SHARED_DATA, require

HERE = REPO / "tests" / "data" / "related_pairs"
WORDINGS = REPO / "tests" / "data" / "wordings"
ACTIVE_SETS = ("audiocaps_val", "clotho_development")  # AudioCaps test is built by the script only


def _script(name: str) -> ModuleType:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="module")
def rp() -> ModuleType:
    return _script("related_pairs")


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    return json.loads((HERE / "pairs.json").read_text("utf-8"))["pairs"]


@pytest.fixture(scope="module")
def split() -> dict[str, str]:
    return json.loads((HERE / "split.json").read_text("utf-8"))["split"]


def _gold_mentions() -> tuple[dict[str, re.Pattern[str]], dict[str, set[str]]]:
    """The concepts' regexes and, per concept, itself and what it includes (transitively)."""
    rows = tomllib.loads((HERE / "concepts.toml").read_text("utf-8"))["concept"]
    patterns = {row["id"]: re.compile(row["pattern"], re.IGNORECASE) for row in rows}
    direct = {row["id"]: set(row.get("includes", ())) for row in rows}
    members: dict[str, set[str]] = {}
    for name in direct:
        seen, todo = {name}, list(direct[name])
        while todo:
            other = todo.pop()
            if other not in seen:
                seen.add(other)
                todo.extend(direct[other])
        members[name] = seen
    return patterns, members


class _GoldCounts:
    """Per clip, how many of its captions mention a concept (its regex or one it includes)."""

    def __init__(self, clips) -> None:
        self.patterns, self.members = _gold_mentions()
        self.clips = {clip.id: list(clip.captions) for clip in clips}
        self._own: dict[str, dict[str, list[bool]]] = {}
        self._cache: dict[str, dict[str, int]] = {}

    def _matches(self, concept: str) -> dict[str, list[bool]]:
        if concept not in self._own:
            pattern = self.patterns[concept]
            self._own[concept] = {
                cid: [bool(pattern.search(c)) for c in caps] for cid, caps in self.clips.items()
            }
        return self._own[concept]

    def __call__(self, concept: str) -> dict[str, int]:
        if concept not in self._cache:
            own = [self._matches(member) for member in self.members[concept]]
            self._cache[concept] = {
                cid: sum(any(m[cid][k] for m in own) for k in range(len(caps)))
                for cid, caps in self.clips.items()
            }
        return self._cache[concept]


# --- without the shared data ---------------------------------------------------------------------
def test_concepts_file(rp) -> None:
    inventory = rp.load_concepts()
    concepts = inventory.concepts
    assert 60 <= len(concepts) <= 100
    assert {c.kind for c in concepts.values()} == {"source", "event"}
    negation_25 = {c.negation_concept for c in concepts.values() if c.negation_concept}
    assert len(concepts) - len(negation_25) > len(concepts) / 2  # most are new or finer concepts
    crows = inventory.mentions("Crows caw as a rooster crows")
    assert crows >= {"crow", "bird", "rooster", "chicken", "animal"}
    assert "crow" not in inventory.mentions("A rooster crows in the distance")


def test_pairs_and_relations(rp, pairs) -> None:
    inventory = rp.load_concepts()
    keys = [rp.pair_key(p) for p in pairs]
    assert len(keys) == len(set(keys))
    assert {p["relation"] for p in pairs} == set(rp.RELATIONS)
    for pair in pairs:
        a, b = pair["a"], pair["b"]
        assert a != b and a in inventory.concepts and b in inventory.concepts
        if pair["relation"] == "hypernymy":
            provenance = pair["provenance"]  # synset names as WordNet spells them (shout.n.01 = cry.n.01)
            assert provenance["path"][0] == provenance["synset_b"]
            assert provenance["path"][-1] == provenance["synset_a"]
            assert inventory.concepts[a].synset and inventory.concepts[b].synset
        else:
            assert b not in inventory.concepts[a].heard_as
            assert pair["provenance"]["p_b_given_a"] >= rp.MIN_CONDITIONAL


def test_split_is_the_seeded_draw_and_halves_are_disjoint(rp, pairs, split) -> None:
    data = json.loads((HERE / "split.json").read_text("utf-8"))
    assert data["seed"] == rp.SEED == 42
    assert split == rp.make_split(pairs, data["seed"])
    assert set(split) == {rp.pair_key(p) for p in pairs}
    assert set(split.values()) == set(rp.HALVES)
    for key, half in split.items():  # "A without B" and "B without A" are in one half
        a, b = key.split("|")
        assert split.get(f"{b}|{a}", half) == half
    for relation in rp.RELATIONS:
        halves = Counter(split[rp.pair_key(p)] for p in pairs if p["relation"] == relation)
        assert abs(halves["development"] - halves["heldout"]) <= max(3, sum(halves.values()) // 10)


@pytest.mark.parametrize(
    "path", [HERE / "split.json", WORDINGS / "cue_classes_split.json"], ids=["related_pairs", "cue_classes"]
)
def test_split_files_are_committed(path: Path) -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("no git checkout: cannot tell whether the split file is the committed one")
    relative = str(path.relative_to(REPO))
    log = subprocess.run(["git", "log", "--format=%H", "--", relative], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout.split()
    assert log, f"{relative} was never committed"
    changed = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", relative], cwd=REPO)
    assert changed.returncode == 0, f"{relative} differs from the committed split"


def test_cue_class_wordings() -> None:
    reword = _script("reword_queries")
    wordings = reword.load_wordings(WORDINGS / "cue_classes.toml")
    existing = reword.load_wordings(WORDINGS / "wordings.toml")
    split = json.loads((WORDINGS / "cue_classes_split.json").read_text("utf-8"))
    assert reword.default_split_path(WORDINGS / "cue_classes.toml") == WORDINGS / "cue_classes_split.json"
    assert split["split"] == reword.make_split(wordings, split["seed"])
    assert {row["id"] for row in wordings} == set(split["split"])
    assert all(row["named"] is False for row in wordings)
    assert not {row["id"] for row in wordings} & {row["id"] for row in existing}
    assert not {row["template"] for row in wordings} & {row["template"] for row in existing}
    classes = Counter(row["cue_class"] for row in wordings)
    assert set(classes) == {"omission_verb", "negated_want", "negative_prefix", "negex_trigger",
                            "sem2012_cue", "sfu_cue", "distance_control"}
    assert all(7 <= n <= 12 for n in classes.values())
    for row in wordings:
        assert row["kind"] == ("and" if row["cue_class"] == "distance_control" else "without")
        values = reword.slots("a dog barking", "birds chirping")
        text = reword.fill(row["template"], values)
        assert text and "{" not in text and "a dog barking" in text


# --- on the real captions ------------------------------------------------------------------------
def test_no_pair_of_the_negation_sets(rp, pairs) -> None:
    for name in rp.NEGATION_SETS:
        require(SHARED_DATA / "negation" / name / "queries.jsonl")
    inventory = rp.load_concepts()
    taken = rp.existing_pairs(SHARED_DATA)
    assert taken
    for pair in pairs:
        assert rp.as_negation_pair(inventory, pair["a"], pair["b"]) not in taken, pair


@pytest.fixture(scope="module")
def built(rp, pairs, split) -> dict[str, object]:
    require(SHARED_DATA / "clotho" / "clotho_captions_development.csv")
    require(SHARED_DATA / "audiocaps" / "val.csv")
    inventory = rp.load_concepts()
    return {name: rp.build(name, inventory, pairs, split, "all", SHARED_DATA) for name in ACTIVE_SETS}


@pytest.mark.parametrize("name", ACTIVE_SETS)
def test_relevance_follows_the_concept_regexes(rp, built, split, name) -> None:
    result = built[name]
    gold = _GoldCounts(result.clips)
    assert result.queries, f"{name}: no related pair met the rule"
    for query in result.queries:
        meta = query["metadata"]
        a, b = meta["a"], meta["b"]
        assert meta["kind"] == "without" and meta["pair"] == f"{a}|{b}"
        assert meta["half"] == split[meta["pair"]]
        n_a, n_b = gold(a), gold(b)
        relevant = {cid for cid in n_a if n_a[cid] >= 2 and n_b[cid] == 0}
        hard = {cid for cid in n_a if n_a[cid] >= 2 and n_b[cid] >= 2}
        assert set(result.relevant[query["_id"]]) == relevant, query["_id"]
        assert set(result.hard[query["_id"]]) == hard, query["_id"]
        assert len(relevant) >= 3 and len(hard) >= 3


@pytest.mark.parametrize("name", ACTIVE_SETS)
def test_written_set_loads_and_keeps_the_whole_collection(rp, built, name, tmp_path) -> None:
    from fortekit.search.eval.beir import load_beir

    rp.write(built[name], tmp_path)
    collection = load_beir(tmp_path)
    assert len(collection.queries) == len(built[name].queries) and collection.dropped_queries == 0
    negation = require(SHARED_DATA / "negation" / name / "corpus.jsonl")
    theirs = [json.loads(line) for line in negation.read_text("utf-8").splitlines() if line.strip()]
    ours = [json.loads(line) for line in (tmp_path / "corpus.jsonl").read_text("utf-8").splitlines()]
    assert [(r["_id"], r["captions"], r["text"]) for r in ours] == [
        (r["_id"], r["captions"], r["text"]) for r in theirs
    ]
    header = (tmp_path / "qrels" / "test.tsv").read_text("utf-8").splitlines()[0]
    assert header == "query-id\tcorpus-id\tscore"


def test_halves_partition_the_queries(rp, built, pairs, split) -> None:
    inventory = rp.load_concepts()
    every = {q["_id"] for q in built["audiocaps_val"].queries}
    halves = {}
    for half in rp.HALVES:
        one = rp.build("audiocaps_val", inventory, pairs, split, half, SHARED_DATA)
        halves[half] = {q["_id"] for q in one.queries}
    assert not halves["development"] & halves["heldout"]
    assert halves["development"] | halves["heldout"] == every
