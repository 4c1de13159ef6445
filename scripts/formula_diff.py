"""Parse the captions that hold given words and write their formulas; compare two such files.

A parser rule's effect on development captions (docs/negation.md): run this once with a
checkout of the commit before the rule (``PYTHONPATH`` at a folder holding it as ``fortekit``)
and once with the current code, then compare::

    PYTHONPATH=/tmp/old .venv/bin/python scripts/formula_diff.py before.jsonl --words "nor|none|save" \\
        ../shared/data/clotho/clotho_captions_development.csv ../shared/data/audiocaps/val.csv
    .venv/bin/python scripts/formula_diff.py after.jsonl --words "nor|none|save" ...
    .venv/bin/python scripts/formula_diff.py --compare before.jsonl after.jsonl

Example:
    >>> changed({"a dog": "∃x Dog(x)"}, {"a dog": "∃x Dog(x)"})
    []
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path


def captions_with(words: str, paths: list[Path]) -> list[str]:
    """The distinct caption cells of the CSV files that hold one of ``words`` (a regex alternation)."""
    pattern = re.compile(rf"\b({words})\b", re.IGNORECASE)
    found: set[str] = set()
    for path in paths:
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.reader(handle):
                found.update(cell.strip() for cell in row
                             if len(cell) > 15 and " " in cell and pattern.search(cell))
    return sorted(found)


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The captions whose formula differs (or is missing) between two runs."""
    return [caption for caption, formula in before.items() if after.get(caption) != formula]


def _read(path: Path) -> dict[str, str]:
    return {caption: formula for caption, formula in map(json.loads, path.read_text("utf-8").splitlines())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path,
                        help="OUT.jsonl then caption CSVs; or, with --compare, two files")
    parser.add_argument("--words", default="", help="a regex alternation of the words a caption must hold")
    parser.add_argument("--compare", action="store_true", help="compare two files written by this script")
    args = parser.parse_intermixed_args(argv)
    if args.compare:
        before, after = (_read(path) for path in args.paths[:2])
        diff = changed(before, after)
        for caption in diff:
            print(f"{caption}\n    {before[caption]}\n -> {after.get(caption)}")
        print(f"{len(diff)} changed of {len(before)}")
        return 0
    from fortekit.fol.caption import parse_captions

    out, *sources = args.paths
    captions = captions_with(args.words, sources)
    with out.open("w", encoding="utf-8") as handle:
        for caption, result in zip(captions, parse_captions(captions), strict=True):
            handle.write(json.dumps([caption, str(result.formula)], ensure_ascii=False) + "\n")
    print(f"{len(captions)} captions -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
