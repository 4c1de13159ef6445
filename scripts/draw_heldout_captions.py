"""Draw the 150 captions of the blind held-out parser gold set.

The set (``tests/data/parser_gold_heldout.jsonl``) is annotated by hand with
``docs/annotation.md`` *before* the caption parser is ever run on it; this script
only draws the captions and prints JSONL stubs to fill in.

Procedure (pure standard library, deterministic):

1. Read AudioCaps val (``../shared/data/audiocaps/val.csv``: audiocap_id,
   youtube_id, start_time, caption) and Clotho development
   (``../shared/data/clotho/clotho_captions_development.csv``: file_name,
   caption_1..caption_5), relative to the repository root (override with
   ``--audiocaps`` / ``--clotho``).
2. Exclusions: every Clotho clip whose ``file_name`` is in
   ``tests/data/parser_gold.jsonl`` or ``tests/data/parser_gold_negation.jsonl``
   is dropped, and so is every caption (either source) whose text, stripped, is
   already a caption of either gold file. Empty captions are dropped.
3. One generator, ``random.Random(20261124)`` (the seed is the date the set was
   drawn, 2026-11-24), used in this order:
   a. ``rng.sample`` of 75 AudioCaps val rows (in file order, after exclusions);
   b. ``rng.sample`` of 75 Clotho development clips (in file order, after
      exclusions), then for each sampled clip, in sample order, ``rng.randrange(5)``
      picks one of its five captions.
   Duplicate caption texts are not drawn twice: a repeated text is skipped and
   the draw goes on (never happened with this seed; the script asserts 150
   distinct texts).
4. Print 150 lines ``{"source": "audiocaps_val", "id": <audiocap_id>,
   "caption": ...}`` (AudioCaps first) then ``{"source": "clotho_development",
   "id": "<file_name>#caption_<k>", "caption": ...}``.

Usage: ``python scripts/draw_heldout_captions.py > stubs.jsonl``
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from pathlib import Path

SEED = 20261124
N_AUDIOCAPS = 75
N_CLOTHO = 75
ROOT = Path(__file__).resolve().parent.parent
GOLD_FILES = (
    ROOT / "tests" / "data" / "parser_gold.jsonl",
    ROOT / "tests" / "data" / "parser_gold_negation.jsonl",
)


def _gold_exclusions() -> tuple[set[str], set[str]]:
    names: set[str] = set()
    texts: set[str] = set()
    for path in GOLD_FILES:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                row = json.loads(line)
                names.add(row["file_name"])
                texts.add(row["caption"].strip())
    return names, texts


def draw(audiocaps_csv: Path, clotho_csv: Path) -> list[dict]:
    names, texts = _gold_exclusions()
    rng = random.Random(SEED)

    with audiocaps_csv.open(encoding="utf-8", newline="") as fh:
        ac_rows = [
            r for r in csv.DictReader(fh)
            if r["caption"].strip() and r["caption"].strip() not in texts
        ]
    with clotho_csv.open(encoding="utf-8", newline="") as fh:
        cl_rows = [r for r in csv.DictReader(fh) if r["file_name"] not in names]

    out: list[dict] = []
    seen: set[str] = set()
    for r in rng.sample(ac_rows, N_AUDIOCAPS):
        cap = r["caption"].strip()
        if cap in seen:
            continue
        seen.add(cap)
        out.append({"source": "audiocaps_val", "id": int(r["audiocap_id"]), "caption": cap})

    for r in rng.sample(cl_rows, N_CLOTHO):
        k = rng.randrange(5) + 1
        cap = (r.get(f"caption_{k}") or "").strip()
        if not cap or cap in texts or cap in seen:
            continue
        seen.add(cap)
        out.append({
            "source": "clotho_development",
            "id": f"{r['file_name']}#caption_{k}",
            "caption": cap,
        })
    assert len(out) == N_AUDIOCAPS + N_CLOTHO, f"drew {len(out)} distinct captions"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--audiocaps", type=Path,
                    default=ROOT.parent / "shared" / "data" / "audiocaps" / "val.csv")
    ap.add_argument("--clotho", type=Path,
                    default=ROOT.parent / "shared" / "data" / "clotho"
                    / "clotho_captions_development.csv")
    args = ap.parse_args(argv)
    for row in draw(args.audiocaps, args.clotho):
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
