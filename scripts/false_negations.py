"""List the false negations of the caption parser on development captions (docs/parser.md).

A **false negation** is a caption whose parse negates a sound (an excluded clause ``¬∃y [..]``
or a denied property of an asserted source) that the caption itself, or another caption of
the same clip, asserts. A denied property that names no sound ("without stopping",
``¬Stopping(x)``; "not loud") negates no sound and is not counted. "Asserts" is decided by
the grounded check of
:mod:`fortekit.fol.violation` (``ViolationCheck.judge_names``, evidence ``holds``): the
caption's asserted predicate symbols, grounded to V_audio, entail every source noun and verb
of the negated sound, with hypernymy in the right direction. Evidence ``source`` (the clip
names the negated source doing something else or something unsaid) is listed apart: it is
no contradiction, but it is where a wrong scope would show.

The captions are the development captions: Clotho development (five per clip) and
AudioCaps train and val (grouped by YouTube id)::

    .venv/bin/python scripts/false_negations.py \\
        --clotho ../shared/data/clotho/clotho_captions_development.csv \\
        --audiocaps ../shared/data/audiocaps/train.csv ../shared/data/audiocaps/val.csv \\
        --out /tmp/false_negations.md

It prints the counts and writes every case (clip, caption, formula, the negated sound,
the evidence and the caption that holds it) as a Markdown list.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from fortekit.fol import predicates
from fortekit.fol.ast import Atom, Not
from fortekit.fol.caption import parse_captions
from fortekit.fol.violation import (
    Evidence,
    ExcludedSound,
    Judgement,
    ViolationCheck,
    asserted_sound_symbols,
    default_check,
    positive_names,
)


@dataclass(frozen=True, slots=True)
class Case:
    """One negated sound of one caption, with what the clip says of it."""

    corpus: str
    clip: str
    caption: str
    formula: str
    sound: str
    evidence: Evidence
    witness: str  # the caption that holds it ("itself" for the caption's own assertions)
    symbols: tuple[str, ...]


def _denies_no_sound(check: ViolationCheck, sound: ExcludedSound) -> bool:
    """A denied property that names no sound ("without stopping": ``¬Stopping(x)``, "not loud")
    negates no sound: the source stays asserted, and the check would judge the source alone."""
    body = sound.formula.body if isinstance(sound.formula, Not) else None
    return isinstance(body, Atom) and check.role(body.predicate) == ""


def read_clips(clotho: Iterable[Path], audiocaps: Iterable[Path]) -> Iterator[tuple[str, str, list[str]]]:
    """(corpus, clip id, its captions) for every clip of the files."""
    for path in clotho:
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                captions = [row[f"caption_{k}"] for k in range(1, 6) if row.get(f"caption_{k}")]
                yield "clotho", row["file_name"], captions
    for path in audiocaps:
        clips: dict[str, list[str]] = {}
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                clips.setdefault(row["youtube_id"], []).append(row["caption"])
        for clip, captions in clips.items():
            yield f"audiocaps/{path.stem}", clip, captions


def cases(clips: list[tuple[str, str, list[str]]], batch_size: int = 256) -> Iterator[Case]:
    """Every negated sound of every caption, judged against the caption and its clip's others."""
    check = default_check()
    texts = [text for _, _, captions in clips for text in captions]
    results = iter(parse_captions(texts, batch_size=batch_size))
    for corpus, clip, captions in clips:
        parsed = [next(results) for _ in captions]
        names = [positive_names(predicates(r.formula)) for r in parsed]
        for k, result in enumerate(parsed):
            sounds = check.excluded(result.formula)
            if not sounds:
                continue
            asserted = asserted_sound_symbols(result.formula, check)
            for sound in sounds:
                if _denies_no_sound(check, sound):
                    continue
                best: tuple[Judgement, str] | None = None
                # the caption itself first: a parse that contradicts its own caption is the parser's error
                for j in [k, *(i for i in range(len(names)) if i != k)]:
                    other = names[j]
                    # the caption's own asserted sound explains what it shares with the negated one
                    judgement = check.judge_names(sound, other, asserted if j == k else ())
                    witness = "itself" if j == k else captions[j]
                    if judgement.evidence is Evidence.HOLDS:
                        best = (judgement, witness)
                        break
                    if judgement.evidence is Evidence.SOURCE and best is None:
                        best = (judgement, witness)
                if best is None:
                    continue
                judgement, witness = best
                yield Case(
                    corpus,
                    clip,
                    captions[k],
                    str(result.formula),
                    str(sound),
                    judgement.evidence,
                    witness,
                    judgement.witnesses,
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clotho", type=Path, nargs="*", default=[], help="Clotho captions CSVs")
    parser.add_argument("--audiocaps", type=Path, nargs="*", default=[], help="AudioCaps captions CSVs")
    parser.add_argument("--out", type=Path, help="write every case here (Markdown)")
    args = parser.parse_args(argv)
    clips = list(read_clips(args.clotho, args.audiocaps))
    found = list(cases(clips))
    holds = [c for c in found if c.evidence is Evidence.HOLDS]
    source = [c for c in found if c.evidence is Evidence.SOURCE]
    own = [c for c in holds if c.witness == "itself"]
    total = sum(len(captions) for _, _, captions in clips)
    print(
        f"{total} captions of {len(clips)} clips; false negations (the clip holds the negated sound): "
        f"{len(holds)}, of which the caption itself holds it (the parse contradicts its caption): "
        f"{len(own)} and another caption of the clip does (the annotators disagree): "
        f"{len(holds) - len(own)}; "
        f"negated source named by the clip (no contradiction): {len(source)}"
    )
    lines = ["# False negations", ""]
    for title, group in (("holds", holds), ("source", source)):
        lines += [f"## Evidence: {title} ({len(group)})", ""]
        for c in group:
            lines.append(
                f'- {c.corpus} `{c.clip}`: "{c.caption}" → `{c.formula}`; negated `{c.sound}`, '
                f"held by {'the caption itself' if c.witness == 'itself' else repr(c.witness)} "
                f"({', '.join(c.symbols)})"
            )
        lines.append("")
    if args.out is not None:
        args.out.write_text("\n".join(lines), encoding="utf-8")
    else:
        sys.stdout.write("\n".join(lines[2:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
