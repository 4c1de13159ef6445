"""Write a copy of a BEIR exclusion/conjunction set whose queries use other wordings.

The negation sets word exclusions as "A without B", "A but no B", "A with no B",
"A, and no B at all" and conjunctions as "A and B", "A together with B". To see whether
formula scoring works from the parse rather than from those templates, this script
splits each query into its two phrases and rewrites it with wordings the sets do not
use (the corpus and the relevance judgements are copied unchanged)::

    python scripts/reword_queries.py ../shared/data/negation/audiocaps_test /tmp/reworded_test
    fortekit eval --beir /tmp/reworded_test --out runs/reworded_test

Exclusions: "A, excluding B", "A with no sound of B", "only A, not B", "A and nothing
like B", "A, but there is no B"; conjunctions: "A as well as B", "A along with B",
"both A and B", "A while B". Each query gets the wording of its position in the file,
cycling through the list.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
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
    "without": ["{a}, excluding {b}", "{a} with no sound of {bare}", "only {a}, not {b}",
                "{a} and nothing like {b}", "{a}, but there is no {bare}"],
    "and": ["{a} as well as {b}", "{a} along with {b}", "both {a} and {b}", "{a} while {b}"],
}
_ARTICLE = re.compile(r"^(?:a|an) ")


def reword(text: str, position: int) -> str | None:
    """The query in another wording, or None when its two phrases are not found.

    Example:
        >>> reword("a dog barking without people talking", 0)
        'a dog barking, excluding people talking'
        >>> reword("rain falling and thunder rumbling", 1)
        'rain falling along with thunder rumbling'
    """
    for pattern, kind in SPLITS:
        found = pattern.match(text)
        if found:
            a, b = found["a"], found["b"]
            choices = REWORDINGS[kind]
            return choices[position % len(choices)].format(a=a, b=b, bare=_ARTICLE.sub("", b))
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="a BEIR-layout folder")
    parser.add_argument("target", type=Path, help="where to write the reworded copy")
    args = parser.parse_args()
    args.target.mkdir(parents=True, exist_ok=True)
    for name in ("corpus.jsonl", "item_concepts.jsonl"):
        if (args.source / name).is_file():
            shutil.copyfile(args.source / name, args.target / name)
    shutil.copytree(args.source / "qrels", args.target / "qrels", dirs_exist_ok=True)
    rows = [json.loads(line) for line in (args.source / "queries.jsonl").read_text("utf-8").split("\n")
            if line.strip()]
    kept = 0
    with (args.target / "queries.jsonl").open("w", encoding="utf-8") as out:
        for position, row in enumerate(rows):
            text = reword(row["text"], position)
            if text is None:
                continue
            kept += 1
            out.write(json.dumps({**row, "text": text, "metadata": {**row.get("metadata", {}),
                                                                  "original": row["text"]}}) + "\n")
    print(f"{kept} of {len(rows)} queries reworded into {args.target}")


if __name__ == "__main__":
    main()
