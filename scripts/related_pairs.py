"""Build the related-pair exclusion sets: "A without B" where B is a kind of A or usually heard with A.

These are the hard exclusions: the clips of A resemble B. Two relations give the pairs:

* **hypernymy**: B's head noun is a WordNet hyponym of A's ("birds calling" / "crows cawing",
  "a vehicle passing by" / "a truck rumbling"), from the synsets written by hand in
  ``tests/data/related_pairs/concepts.toml``;
* **cooccurrence**: B is often described together with A in the development captions
  (Clotho development clips, where a concept is present when >= 2 of the 5 captions mention it,
  and AudioCaps train captions, one per clip): P(B|A) and PMI above the thresholds below.

The concepts (a query phrase, a regular expression per concept that decides whether a caption
mentions it, which IS the gold annotation, and a WordNet sense) are in ``concepts.toml``; the
pairs and their provenance in ``pairs.json``; the split of the pairs into a development and a
held-out half (seed 42, stratified by relation) in ``split.json``, drawn once before any system
ran on these sets. Steps, each run once, in this order::

    python scripts/related_pairs.py --derive-pairs     # concepts.toml -> pairs.json
    python scripts/related_pairs.py --make-split       # pairs.json -> split.json (refuses to redraw)
    python scripts/related_pairs.py                    # the sets, into runs/related_pairs/<set>/

The sets (BEIR layout, like ``../shared/data/negation/<set>/``): ``clotho_development``
(Clotho development, 2,893 clips), ``audiocaps_val`` (495 clips) and ``audiocaps_test`` (975
clips, for reporting only: never tune on it). The corpus is the whole collection. A concept is
*present* in a clip when >= 2 of its 5 captions mention it, *absent* when none does (1 mention:
neither). A pair makes a query in a set when the set has >= 3 relevant clips (A present, B
absent) and >= 3 hard negatives (A and B present). The query is worded "{A} without {B}",
"{A} but no {B}" or "{A} with no {B}" (B's a/an dropped after "no"), one per pair by a seeded
choice, the same in every set. ``--half development|heldout|all`` picks the pairs.

Files per set: ``corpus.jsonl`` (``_id``, ``title``, ``text`` = caption 1, ``captions``),
``queries.jsonl`` (``_id``, ``text``, ``metadata``: kind "without", a, b, relation, pair "a|b",
half), ``qrels/test.tsv``, ``meta.jsonl`` (per query its ``hard_negatives``) and
``item_concepts.jsonl`` (per clip, how many captions mention each concept the queries use; for
violation@10 only, a system must never read it).

This script only reads captions and writes files: it runs no retrieval system.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
HERE = ROOT / "tests" / "data" / "related_pairs"
CONCEPTS = HERE / "concepts.toml"
PAIRS = HERE / "pairs.json"
SPLIT = HERE / "split.json"
OUT = ROOT / "runs" / "related_pairs"

SEED = 42
HALVES = ("development", "heldout")
RELATIONS = ("hypernymy", "cooccurrence")
PRESENT = 2  # captions (of 5) that mention a concept for it to be present; absent = 0
MIN_RELEVANT = 3
MIN_HARD = 3
# co-occurrence thresholds (on the development captions)
MIN_JOINT = 15  # units (Clotho clips + AudioCaps train captions) where A and B are both present
MIN_CONDITIONAL = 0.10  # P(B | A)
MIN_PMI = 1.0  # log2 P(A, B) / (P(A) P(B)): B at least twice as likely with A as without
TEMPLATES = ("{a} without {b}", "{a} but no {b_bare}", "{a} with no {b_bare}")
SETS = ("clotho_development", "audiocaps_val", "audiocaps_test")
NEGATION_SETS = SETS  # ../shared/data/negation/<set>/queries.jsonl
_ARTICLE = re.compile(r"^(?:a|an) ")
_ID = re.compile(r"^[a-z][a-z_]*$")
# words that would make the wording benchmark's phrase splitter cut a phrase in two
_SPLITTERS = re.compile(r" (?:without|but no|with no|together with|and) |, and no ")


# --- concepts --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Concept:
    """A sound concept: its query phrase, the regular expression of a mention, its WordNet sense."""

    id: str
    phrase: str
    kind: str
    pattern: re.Pattern[str]
    synset: str | None = None
    includes: tuple[str, ...] = ()
    heard_as: tuple[str, ...] = ()
    negation_concept: str | None = None

    @property
    def bare(self) -> str:
        """The phrase without a leading a/an ("a dog barking" -> "dog barking")."""
        return _ARTICLE.sub("", self.phrase)


@dataclass
class Inventory:
    """The concepts of concepts.toml and what a caption mentions."""

    concepts: dict[str, Concept]
    closure: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in self.concepts:
            seen: list[str] = [name]
            stack = list(self.concepts[name].includes)
            while stack:
                other = stack.pop()
                if other not in seen:
                    seen.append(other)
                    stack.extend(self.concepts[other].includes)
            self.closure[name] = tuple(seen)

    def mentions(self, caption: str) -> set[str]:
        """The concepts a caption mentions (its own pattern or that of a concept it includes).

        Example:
            >>> inv = load_concepts()
            >>> sorted(inv.mentions("A crow caws while a man speaks"))
            ['animal', 'bird', 'crow', 'man_speaking', 'person_speaking']
        """
        own = {name for name, concept in self.concepts.items() if concept.pattern.search(caption)}
        return {name for name, members in self.closure.items() if not own.isdisjoint(members)}

    def counts(self, captions: Sequence[str]) -> Counter[str]:
        """Per concept, how many of the captions mention it."""
        return Counter(name for caption in captions for name in self.mentions(caption))


def load_concepts(path: Path = CONCEPTS) -> Inventory:
    """Read and check concepts.toml."""
    rows = tomllib.loads(path.read_text("utf-8")).get("concept", [])
    concepts: dict[str, Concept] = {}
    for row in rows:
        name = row.get("id", "?")
        for key in ("id", "phrase", "kind", "pattern"):
            if key not in row:
                raise SystemExit(f"{path}: concept {name} has no {key!r}")
        if not _ID.match(name) or name in concepts:
            raise SystemExit(f"{path}: concept id {name!r} is not a fresh [a-z_]+ name")
        if row["kind"] not in ("source", "event"):
            raise SystemExit(f"{path}: concept {name}: kind must be source or event")
        if _SPLITTERS.search(f" {row['phrase']} "):
            raise SystemExit(f"{path}: concept {name}: the phrase {row['phrase']!r} holds a connective")
        concepts[name] = Concept(
            id=name, phrase=row["phrase"], kind=row["kind"],
            pattern=re.compile(row["pattern"], re.IGNORECASE), synset=row.get("synset"),
            includes=tuple(row.get("includes", ())), heard_as=tuple(row.get("heard_as", ())),
            negation_concept=row.get("negation_concept"),
        )
    for concept in concepts.values():
        unknown = [other for other in (*concept.includes, *concept.heard_as) if other not in concepts]
        if unknown:
            raise SystemExit(f"{path}: concept {concept.id} names unknown concepts {unknown}")
    return Inventory(concepts)


# --- collections -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Clip:
    id: str
    captions: tuple[str, ...]


def read_clotho(path: Path) -> list[Clip]:
    """Clotho's five-caption clips, in file order."""
    with path.open(encoding="utf-8", newline="") as handle:
        return [
            Clip(row["file_name"], tuple(row[f"caption_{k}"] for k in range(1, 6)))
            for row in csv.DictReader(handle)
        ]


def read_audiocaps(path: Path, *, min_captions: int = 3) -> list[Clip]:
    """AudioCaps rows grouped by youtube_id (first appearance order), up to 5 captions in file order.

    The negation sets kept every val / test clip (each has 5 captions); a clip with fewer than
    ``min_captions`` captions would be dropped.
    """
    grouped: dict[str, list[str]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            grouped.setdefault(row["youtube_id"], []).append(row["caption"])
    return [Clip(key, tuple(caps[:5])) for key, caps in grouped.items() if len(caps) >= min_captions]


def read_set(name: str, data: Path = DATA) -> list[Clip]:
    """The clips of one of the three collections."""
    if name == "clotho_development":
        return read_clotho(data / "clotho" / "clotho_captions_development.csv")
    if name in ("audiocaps_val", "audiocaps_test"):
        return read_audiocaps(data / "audiocaps" / f"{name.split('_')[1]}.csv")
    raise SystemExit(f"unknown set {name!r} (one of {', '.join(SETS)})")


def existing_pairs(data: Path = DATA) -> set[tuple[str, str]]:
    """Every (a, b) concept pair of the negation sets' queries, either kind."""
    pairs: set[tuple[str, str]] = set()
    for name in NEGATION_SETS:
        path = data / "negation" / name / "queries.jsonl"
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                meta = json.loads(line)["metadata"]
                pairs.add((meta["a"], meta["b"]))
    return pairs


def as_negation_pair(inventory: Inventory, a: str, b: str) -> tuple[str, str] | None:
    """The pair in the negation sets' concepts, when both concepts are one of theirs."""
    first = inventory.concepts[a].negation_concept
    second = inventory.concepts[b].negation_concept
    return (first, second) if first and second else None


# --- deriving the pairs ----------------------------------------------------------------------
def hypernymy_pairs(inventory: Inventory) -> list[dict[str, object]]:
    """(A, B) where B's synset is a WordNet hyponym of A's, with the hypernym path from B up to A."""
    from fortekit.vocab.wordnet import load_wordnet

    wordnet = load_wordnet().reader
    senses = {c.id: wordnet.synset(c.synset) for c in inventory.concepts.values() if c.synset}
    pairs = []
    for a, upper in senses.items():
        for b, lower in senses.items():
            if a == b or upper == lower:
                continue
            paths = [p for p in lower.hypernym_paths() if upper in p]
            if not paths:
                continue
            path = min(paths, key=len)
            chain = [s.name() for s in path[path.index(upper):]][::-1]
            pairs.append({
                "a": a, "b": b, "relation": "hypernymy",
                "provenance": {"synset_a": upper.name(), "synset_b": lower.name(), "path": chain,
                               "a_includes_b": b in inventory.closure[a]},
            })
    return pairs


def development_units(inventory: Inventory, data: Path = DATA) -> list[set[str]]:
    """The present concepts of each Clotho development clip and of each AudioCaps train caption."""
    units = []
    for clip in read_clotho(data / "clotho" / "clotho_captions_development.csv"):
        counts = inventory.counts(clip.captions)
        units.append({name for name, n in counts.items() if n >= PRESENT})
    with (data / "audiocaps" / "train.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            units.append(inventory.mentions(row["caption"]))
    return units


def cooccurrence_pairs(
    inventory: Inventory, units: Sequence[set[str]], related: set[tuple[str, str]]
) -> list[dict[str, object]]:
    """(A, B) with B often present where A is: joint, P(B|A) and PMI over the thresholds.

    Left out: pairs ``related`` in either order (hypernymy, inclusion) and pairs whose B is
    what A is heard as (``heard_as``: "a motorcycle revving" without "an engine running").
    """
    single: Counter[str] = Counter()
    joint: Counter[tuple[str, str]] = Counter()
    for unit in units:
        single.update(unit)
        for a in unit:
            for b in unit:
                if a != b:
                    joint[(a, b)] += 1
    total = len(units)
    pairs = []
    for (a, b), n_ab in sorted(joint.items()):
        if (a, b) in related or (b, a) in related or b in inventory.concepts[a].heard_as:
            continue
        conditional = n_ab / single[a]
        pmi = math.log2(n_ab * total / (single[a] * single[b]))
        if n_ab >= MIN_JOINT and conditional >= MIN_CONDITIONAL and pmi >= MIN_PMI:
            pairs.append({
                "a": a, "b": b, "relation": "cooccurrence",
                "provenance": {"n_a": single[a], "n_b": single[b], "n_ab": n_ab, "units": total,
                               "p_b_given_a": round(conditional, 4), "pmi": round(pmi, 4)},
            })
    return pairs


def derive_pairs(inventory: Inventory, data: Path = DATA) -> dict[str, object]:
    """Every candidate pair of both relations, less the negation sets' pairs."""
    hyper = hypernymy_pairs(inventory)
    related = {(str(p["a"]), str(p["b"])) for p in hyper}
    related |= {(a, b) for a, members in inventory.closure.items() for b in members if a != b}
    co = cooccurrence_pairs(inventory, development_units(inventory, data), related)
    taken = existing_pairs(data)
    kept, dropped = [], []
    for pair in hyper + co:
        mapped = as_negation_pair(inventory, str(pair["a"]), str(pair["b"]))
        (dropped if mapped in taken else kept).append(pair)
    kept.sort(key=lambda p: (RELATIONS.index(str(p["relation"])), p["a"], p["b"]))
    return {
        "version": 1,
        "about": "candidate pairs of the related-pair exclusion sets (scripts/related_pairs.py "
                 "--derive-pairs); hypernymy from the WordNet senses of concepts.toml, "
                 "cooccurrence from Clotho development clips and AudioCaps train captions",
        "thresholds": {"present": PRESENT, "min_joint": MIN_JOINT,
                       "min_conditional": MIN_CONDITIONAL, "min_pmi": MIN_PMI},
        "dropped_as_negation_set_pairs": sorted(f"{p['a']}|{p['b']}" for p in dropped),
        "pairs": kept,
    }


def load_pairs(path: Path = PAIRS) -> list[dict[str, object]]:
    return json.loads(path.read_text("utf-8"))["pairs"]


def pair_key(pair: Mapping[str, object]) -> str:
    return f"{pair['a']}|{pair['b']}"


def make_split(pairs: Iterable[Mapping[str, object]], seed: int = SEED) -> dict[str, str]:
    """Pair "a|b" -> "development" or "heldout": within each relation, shuffled, alternating.

    The unit drawn is the unordered pair: "A without B" and "B without A" go to the same half.

    Example:
        >>> toy = [{"a": "x", "b": y, "relation": "hypernymy"} for y in "pqrs"]
        >>> toy.append({"a": "p", "b": "x", "relation": "hypernymy"})
        >>> split = make_split(toy)
        >>> split["x|p"] == split["p|x"], sorted(Counter(split.values()).values())
        (True, [2, 3])
    """
    rng = random.Random(seed)
    groups: dict[str, dict[str, list[str]]] = {}
    for pair in pairs:
        unordered = "|".join(sorted((str(pair["a"]), str(pair["b"]))))
        groups.setdefault(str(pair["relation"]), {}).setdefault(unordered, []).append(pair_key(pair))
    split: dict[str, str] = {}
    for relation in sorted(groups):
        units = sorted(groups[relation])
        rng.shuffle(units)
        first = rng.randrange(2)
        for k, unit in enumerate(units):
            for key in groups[relation][unit]:
                split[key] = HALVES[(first + k) % 2]
    return dict(sorted(split.items()))


# --- building a set ----------------------------------------------------------------------------
def query_text(inventory: Inventory, a: str, b: str, seed: int = SEED) -> str:
    """The pair's query in the wording a seeded choice gives it (the same in every set).

    Example:
        >>> inv = load_concepts()
        >>> query_text(inv, "bird", "crow") in (
        ...     "birds calling without crows cawing", "birds calling but no crows cawing",
        ...     "birds calling with no crows cawing")
        True
    """
    template = random.Random(f"{seed}:{a}|{b}").choice(TEMPLATES)
    first, second = inventory.concepts[a], inventory.concepts[b]
    return template.format(a=first.phrase, b=second.phrase, b_bare=second.bare)


@dataclass
class BuiltSet:
    """One set in memory: what build() writes."""

    clips: list[Clip]
    counts: list[Counter[str]]
    queries: list[dict[str, object]]
    relevant: dict[str, list[str]]
    hard: dict[str, list[str]]


def build(
    name: str, inventory: Inventory, pairs: Sequence[Mapping[str, object]], split: Mapping[str, str],
    half: str = "all", data: Path = DATA,
) -> BuiltSet:
    """The queries of the pairs that meet the rule in one collection."""
    clips = read_set(name, data)
    counts = [inventory.counts(clip.captions) for clip in clips]
    queries: list[dict[str, object]] = []
    relevant: dict[str, list[str]] = {}
    hard: dict[str, list[str]] = {}
    for pair in pairs:
        a, b, key = str(pair["a"]), str(pair["b"]), pair_key(pair)
        if key not in split:
            raise SystemExit(f"pair {key} is not in the split {SPLIT}")
        if half not in ("all", split[key]):
            continue
        rel = [c.id for c, n in zip(clips, counts, strict=True) if n[a] >= PRESENT and n[b] == 0]
        neg = [c.id for c, n in zip(clips, counts, strict=True) if n[a] >= PRESENT and n[b] >= PRESENT]
        if len(rel) < MIN_RELEVANT or len(neg) < MIN_HARD:
            continue
        query_id = f"{a}-{b}"
        queries.append({
            "_id": query_id, "text": query_text(inventory, a, b),
            "metadata": {"kind": "without", "a": a, "b": b, "relation": pair["relation"],
                         "pair": key, "half": split[key]},
        })
        relevant[query_id], hard[query_id] = rel, neg
    return BuiltSet(clips, counts, queries, relevant, hard)


def write(built: BuiltSet, target: Path) -> None:
    """Write a built set in the BEIR layout of ../shared/data/negation/<set>/."""
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    with (target / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for clip in built.clips:
            out.write(json.dumps({"_id": clip.id, "title": "", "text": clip.captions[0],
                                  "captions": list(clip.captions)}) + "\n")
    with (target / "queries.jsonl").open("w", encoding="utf-8") as out:
        for query in built.queries:
            out.write(json.dumps(query) + "\n")
    with (target / "qrels" / "test.tsv").open("w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for query in built.queries:
            for clip_id in built.relevant[str(query["_id"])]:
                out.write(f"{query['_id']}\t{clip_id}\t1\n")
    with (target / "meta.jsonl").open("w", encoding="utf-8") as out:
        for query in built.queries:
            meta = dict(query["metadata"])  # type: ignore[call-overload]
            out.write(json.dumps({"qid": query["_id"], **meta,
                                  "relevant": len(built.relevant[str(query["_id"])]),
                                  "hard_negatives": built.hard[str(query["_id"])]}) + "\n")
    used = sorted({str(q["metadata"][k]) for q in built.queries for k in ("a", "b")})  # type: ignore[index]
    with (target / "item_concepts.jsonl").open("w", encoding="utf-8") as out:
        for clip, counts in zip(built.clips, built.counts, strict=True):
            kept = {name: counts[name] for name in used if counts[name]}
            out.write(json.dumps({"_id": clip.id, "concepts": kept}) + "\n")


def summary(name: str, built: BuiltSet) -> str:
    """One line per relation and half: how many pairs survive in the set."""
    table = Counter((str(q["metadata"]["relation"]), str(q["metadata"]["half"]))  # type: ignore[index]
                    for q in built.queries)
    cells = [f"{rel} {table[(rel, HALVES[0])]}+{table[(rel, HALVES[1])]}" for rel in RELATIONS]
    return f"{name}: {len(built.queries)} queries ({', '.join(cells)}; development+heldout)"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the sets go (DIR/<set>/)")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--half", choices=(*HALVES, "all"), default="all")
    parser.add_argument("--data", type=Path, default=DATA, help="the ../shared/data folder")
    parser.add_argument("--derive-pairs", action="store_true", help="write pairs.json once")
    parser.add_argument("--make-split", action="store_true", help="draw split.json once")
    args = parser.parse_args(argv)
    inventory = load_concepts()
    if args.derive_pairs:
        if PAIRS.exists():
            sys.exit(f"{PAIRS} exists: the pairs are derived once, before the split is drawn")
        derived = derive_pairs(inventory, args.data)
        PAIRS.write_text(json.dumps(derived, indent=1) + "\n", "utf-8")
        made = Counter(str(p["relation"]) for p in derived["pairs"])  # type: ignore[attr-defined]
        print(f"{PAIRS}: {dict(made)}; dropped as negation-set pairs: "
              f"{len(derived['dropped_as_negation_set_pairs'])}")  # type: ignore[arg-type]
        return
    pairs = load_pairs()
    if args.make_split:
        if SPLIT.exists():
            sys.exit(f"{SPLIT} exists: the split is drawn once and never redrawn")
        SPLIT.write_text(json.dumps({"seed": SEED, "split": make_split(pairs)}, indent=1) + "\n", "utf-8")
        print(f"split written to {SPLIT}")
        return
    split = json.loads(SPLIT.read_text("utf-8"))["split"]
    for name in args.sets:
        built = build(name, inventory, pairs, split, args.half, args.data)
        write(built, args.out / name)
        print(summary(name, built), "->", args.out / name)


if __name__ == "__main__":
    main()
