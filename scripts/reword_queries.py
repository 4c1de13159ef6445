"""Write a copy of a BEIR exclusion/conjunction set whose queries use other wordings.

The negation sets word exclusions as "A without B", "A but no B", "A with no B",
"A, and no B at all" and conjunctions as "A and B", "A together with B". To see whether
formula scoring works from the parse rather than from those templates, this script
splits each query into its two phrases and rewrites it (the corpus and the relevance
judgements are copied, one judgement row per reworded query).

Two modes:

* the earlier fixed list (no ``--wordings``): every query gets one wording, cycling
  through "A, excluding B", "A with no sound of B", "only A, not B", "A and nothing like
  B", "A, but there is no B" and "A as well as B", "A along with B", "both A and B",
  "A while B"::

      python scripts/reword_queries.py ../shared/data/negation/audiocaps_test /tmp/reworded_test

* the wording benchmark (``--wordings tests/data/wordings/wordings.toml``): every query
  is written in **every** wording of its kind (docs/negation.md, "The wording benchmark");
  ``--half development|heldout|named|all`` picks the wordings by the committed split
  (``tests/data/wordings/split.json``). Each query's metadata names its ``wording``,
  ``cue_class``, ``construction`` and ``half``::

      python scripts/reword_queries.py ../shared/data/negation/audiocaps_val /tmp/wd_val \\
          --wordings tests/data/wordings/wordings.toml --half development

``--make-split`` draws the split once (seed 30, stratified by kind and cue class, named
wordings left out) and refuses to overwrite an existing one. Another wordings file has its own
split, by default beside it as ``<name>_split.json`` (``tests/data/wordings/cue_classes.toml``:
``cue_classes_split.json``); ``wordings.toml`` keeps ``split.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# The sets' own wordings, to find the two phrases of a query (order matters: longest first).
SPLITS = [
    (re.compile(r"^(?P<a>.+?), and no (?P<b>.+?) at all$"), "without"),
    (re.compile(r"^(?P<a>.+?) without (?P<b>.+)$"), "without"),
    (re.compile(r"^(?P<a>.+?) but no (?P<b>.+)$"), "without"),
    (re.compile(r"^(?P<a>.+?) with no (?P<b>.+)$"), "without"),
    (re.compile(r"^(?P<a>.+?) together with (?P<b>.+)$"), "and"),
    (re.compile(r"^(?P<a>.+?) and (?P<b>.+)$"), "and"),
]
REWORDINGS = {  # {b}: the phrase with its article, {bare}: without
    "without": [
        "{a}, excluding {b}",
        "{a} with no sound of {bare}",
        "only {a}, not {b}",
        "{a} and nothing like {b}",
        "{a}, but there is no {bare}",
    ],
    "and": ["{a} as well as {b}", "{a} along with {b}", "both {a} and {b}", "{a} while {b}"],
}
_ARTICLE = re.compile(r"^(?:a|an) ")
SPLIT_SEED = 30
HALVES = ("development", "heldout")


_LAST_AND = re.compile(r"^(?P<a>.+) and (?P<b>.+)$")


def split_phrases(text: str, *, last_and: bool = False) -> tuple[str, str, str] | None:
    """The kind and the two phrases of a query in one of the sets' wordings, or None.

    ``last_and`` splits "A and B" at its last "and" ("a door opening and closing and
    water flowing": the door is the first phrase), as the wording benchmark does.

    Example:
        >>> split_phrases("a dog barking but no birds chirping")
        ('without', 'a dog barking', 'birds chirping')
        >>> split_phrases("a door opening and closing and water flowing", last_and=True)
        ('and', 'a door opening and closing', 'water flowing')
    """
    for pattern, kind in SPLITS:
        found = pattern.match(text)
        if found:
            if last_and and kind == "and" and pattern.pattern.endswith(" and (?P<b>.+)$"):
                found = _LAST_AND.match(text) or found
            return kind, found["a"], found["b"]
    return None


def reword(text: str, position: int) -> str | None:
    """The query in another wording of the fixed list, or None when its two phrases are not found.

    Example:
        >>> reword("a dog barking without people talking", 0)
        'a dog barking, excluding people talking'
        >>> reword("rain falling and thunder rumbling", 1)
        'rain falling along with thunder rumbling'
    """
    parts = split_phrases(text)
    if parts is None:
        return None
    kind, a, b = parts
    choices = REWORDINGS[kind]
    return choices[position % len(choices)].format(a=a, b=b, bare=_ARTICLE.sub("", b))


# --- the wording benchmark -------------------------------------------------------------------
_PLURAL_NOUNS = frozenset({"people", "children", "men", "women", "geese", "mice", "feet", "sheep"})
_KEEP_DOUBLE = frozenset("szl")  # buzz-ing, pass-ing, fall-ing keep their double letter


@dataclass(frozen=True)
class Phrase:
    """A sound phrase split into its noun phrase and its verb phrase ("a dog" + "barking")."""

    text: str
    noun_phrase: str
    verb_phrase: str | None

    @property
    def plural(self) -> bool:
        if _ARTICLE.match(self.noun_phrase):
            return False
        noun = self.noun_phrase.split()[-1]
        return noun in _PLURAL_NOUNS or (noun.endswith("s") and not noun.endswith("ss"))


def phrase_of(text: str) -> Phrase:
    """Split a sound phrase at its first -ing word after the first word.

    Example:
        >>> phrase_of("an aircraft flying overhead")
        Phrase(text='an aircraft flying overhead', noun_phrase='an aircraft', verb_phrase='flying overhead')
        >>> phrase_of("a crowd").verb_phrase is None
        True
    """
    words = text.split()
    for k in range(1, len(words)):
        if words[k].endswith("ing") and len(words[k]) > 4:
            return Phrase(text, " ".join(words[:k]), " ".join(words[k:]))
    return Phrase(text, text, None)


def base_form(gerund: str) -> str:
    """The base form of an -ing verb by English spelling rules.

    Example:
        >>> [base_form(w) for w in ("barking", "running", "buzzing", "crackling", "flying", "falling")]
        ['bark', 'run', 'buzz', 'crackle', 'fly', 'fall']
    """
    stem = gerund[:-3]
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in _KEEP_DOUBLE and stem[-1] not in "aeiou":
        return stem[:-1]
    if len(stem) >= 3 and stem[-1] == "l" and stem[-2] in "bcdfgkptz":  # crackl-ing, rumbl-ing
        return stem + "e"
    return stem


def third_person(base: str) -> str:
    """The third person singular of a base form ("fly" -> "flies", "buzz" -> "buzzes")."""
    if base.endswith(("s", "z", "x", "ch", "sh")):
        return base + "es"
    if base.endswith("y") and len(base) > 1 and base[-2] not in "aeiou":
        return base[:-1] + "ies"
    return base + "s"


def slots(a: str, b: str) -> dict[str, str | None]:
    """The template slots for the phrases ``a`` and ``b`` (verb slots None without a verb).

    Example:
        >>> s = slots("rain falling", "a dog barking")
        >>> s["b_the"], s["b_finite"], s["b_be"], s["a_be"]
        ('the dog', 'barks', 'is', 'is')
    """
    first, second = phrase_of(a), phrase_of(b)
    plural = second.plural
    verb = second.verb_phrase
    if verb is not None:
        head, *rest = verb.split()
        base = " ".join([base_form(head), *rest])
        finite = base if plural else " ".join([third_person(base_form(head)), *rest])
    else:
        base = finite = None
    return {
        "a": a,
        "b": b,
        "b_bare": _ARTICLE.sub("", b),
        "b_np": second.noun_phrase,
        "b_the": "the " + _ARTICLE.sub("", second.noun_phrase),
        "b_noun": _ARTICLE.sub("", second.noun_phrase),
        "b_ving": verb,
        "b_base": base,
        "b_finite": finite,
        "b_be": "are" if plural else "is",
        "b_have": "have" if plural else "has",
        "b_do": "do" if plural else "does",
        "a_be": "are" if first.plural else "is",
    }


def fill(template: str, values: Mapping[str, str | None]) -> str | None:
    """The template filled, or None when it needs a slot the phrases do not have."""
    needed = re.findall(r"{(\w+)}", template)
    if any(values.get(name) is None for name in needed):
        return None
    return template.format(**{name: values[name] for name in needed})


def load_wordings(path: Path) -> list[dict[str, str]]:
    """The ``[[wording]]`` tables of a wordings file, each checked."""
    data = tomllib.loads(path.read_text("utf-8"))
    wordings = data.get("wording", [])
    seen: set[str] = set()
    for row in wordings:
        for key in ("id", "kind", "cue_class", "construction", "template"):
            if key not in row:
                raise SystemExit(f"{path}: wording {row.get('id', '?')} has no {key!r}")
        if row["id"] in seen:
            raise SystemExit(f"{path}: wording {row['id']!r} is there twice")
        seen.add(row["id"])
    return wordings


def make_split(wordings: list[dict[str, str]], seed: int = SPLIT_SEED) -> dict[str, str]:
    """Wording id -> "development" or "heldout": within each (kind, cue class), shuffled, alternating.

    Named wordings are left out. A class of odd size gives its last wording to the half
    that a draw of the same generator picks.
    """
    rng = random.Random(seed)
    groups: dict[tuple[str, str], list[str]] = {}
    for row in wordings:
        if row.get("named"):
            continue
        groups.setdefault((row["kind"], row["cue_class"]), []).append(row["id"])
    split: dict[str, str] = {}
    for key in sorted(groups):
        ids = sorted(groups[key])
        rng.shuffle(ids)
        first = rng.randrange(2)
        for k, wording in enumerate(ids):
            split[wording] = HALVES[(first + k) % 2]
    return dict(sorted(split.items()))


def default_split_path(wordings: Path) -> Path:
    """The split file of a wordings file: split.json for wordings.toml, else <name>_split.json.

    Example:
        >>> default_split_path(Path("tests/data/wordings/cue_classes.toml")).name
        'cue_classes_split.json'
        >>> default_split_path(Path("tests/data/wordings/wordings.toml")).name
        'split.json'
    """
    return wordings.with_name("split.json" if wordings.stem == "wordings" else f"{wordings.stem}_split.json")


def half_of(row: Mapping[str, str], split: Mapping[str, str]) -> str:
    return "named" if row.get("named") else split[row["id"]]


def write_benchmark(
    source: Path, target: Path, wordings: list[dict[str, str]], split: Mapping[str, str], half: str
) -> tuple[int, int]:
    """Write ``target``: every query of ``source`` in every chosen wording of its kind."""
    chosen = [row for row in wordings if half in ("all", half_of(row, split))]
    rows = [
        json.loads(line)
        for line in (source / "queries.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    ]
    qrels = (source / "qrels" / "test.tsv").read_text("utf-8").splitlines()
    header, body = (qrels[0], qrels[1:]) if qrels and qrels[0].startswith("query-id") else ("", qrels)
    judged: dict[str, list[list[str]]] = {}
    for line in body:
        parts = line.split("\t")
        if len(parts) >= 3:
            judged.setdefault(parts[0], []).append(parts)
    target.mkdir(parents=True, exist_ok=True)
    for name in ("corpus.jsonl", "item_concepts.jsonl"):
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    (target / "qrels").mkdir(exist_ok=True)
    written = skipped = 0
    with (
        (target / "queries.jsonl").open("w", encoding="utf-8") as out,
        (target / "qrels" / "test.tsv").open("w", encoding="utf-8") as qrel_out,
    ):
        if header:
            qrel_out.write(header + "\n")
        for row in rows:
            parts = split_phrases(row["text"], last_and=True)
            if parts is None:
                skipped += 1
                continue
            kind, a, b = parts
            values = slots(a, b)
            for wording in chosen:
                if wording["kind"] != kind:
                    continue
                text = fill(wording["template"], values)
                if text is None:
                    skipped += 1
                    continue
                query_id = f"{row['_id']}-{wording['id']}"
                metadata = {
                    **row.get("metadata", {}),
                    "original": row["text"],
                    "wording": wording["id"],
                    "cue_class": wording["cue_class"],
                    "construction": wording["construction"],
                    "half": half_of(wording, split),
                }
                out.write(json.dumps({"_id": query_id, "text": text, "metadata": metadata}) + "\n")
                for judgement in judged.get(row["_id"], []):
                    qrel_out.write("\t".join([query_id, *judgement[1:]]) + "\n")
                written += 1
    return written, skipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, nargs="?", help="a BEIR-layout folder")
    parser.add_argument("target", type=Path, nargs="?", help="where to write the reworded copy")
    parser.add_argument("--wordings", type=Path, help="a wordings file (tests/data/wordings/wordings.toml)")
    parser.add_argument(
        "--split", type=Path,
        help="the split file (default beside --wordings: split.json for wordings.toml, "
        "else <name>_split.json)",
    )
    parser.add_argument("--half", choices=(*HALVES, "named", "all"), default="all")
    parser.add_argument("--make-split", action="store_true", help="draw the split once and write it")
    args = parser.parse_args()
    if args.wordings is not None:
        wordings = load_wordings(args.wordings)
        split_path = args.split or default_split_path(args.wordings)
        if args.make_split:
            if split_path.exists():
                sys.exit(f"{split_path} exists: the split is drawn once and never redrawn")
            split_path.write_text(
                json.dumps({"seed": SPLIT_SEED, "split": make_split(wordings)}, indent=1) + "\n", "utf-8"
            )
            print(f"split written to {split_path}")
            return
        split = json.loads(split_path.read_text("utf-8"))["split"]
        missing = [row["id"] for row in wordings if not row.get("named") and row["id"] not in split]
        if missing:
            sys.exit(f"wordings not in the split {split_path}: {', '.join(missing)}")
        if args.source is None or args.target is None:
            parser.error("source and target are needed")
        written, skipped = write_benchmark(args.source, args.target, wordings, split, args.half)
        print(f"{written} queries written into {args.target} ({skipped} wordings skipped: no verb phrase)")
        return
    if args.source is None or args.target is None:
        parser.error("source and target are needed")
    args.target.mkdir(parents=True, exist_ok=True)
    for name in ("corpus.jsonl", "item_concepts.jsonl"):
        if (args.source / name).is_file():
            shutil.copyfile(args.source / name, args.target / name)
    shutil.copytree(args.source / "qrels", args.target / "qrels", dirs_exist_ok=True)
    rows = [
        json.loads(line)
        for line in (args.source / "queries.jsonl").read_text("utf-8").split("\n")
        if line.strip()
    ]
    kept = 0
    with (args.target / "queries.jsonl").open("w", encoding="utf-8") as out:
        for position, row in enumerate(rows):
            text = reword(row["text"], position)
            if text is None:
                continue
            kept += 1
            out.write(
                json.dumps(
                    {**row, "text": text, "metadata": {**row.get("metadata", {}), "original": row["text"]}}
                )
                + "\n"
            )
    print(f"{kept} of {len(rows)} queries reworded into {args.target}")


if __name__ == "__main__":
    main()
