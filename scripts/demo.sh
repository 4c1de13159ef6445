#!/usr/bin/env bash
# The main job on the embedded default (the bundled MiniLM encoder), end to end:
#   1. index a collection of 3,000 human-captioned sounds (AudioCaps train captions,
#      MIT licence: examples/AUDIOCAPS_LICENSE; caption-indexed, as no audio ships);
#   2. refine the example search queries with fol-refine (Stage 1: caption parser Π,
#      the corpus elaborator over the index's captions, feedback anchors from the first
#      pass judged by each query's formula, beam search, verbaliser G), and show each
#      query with its refinement and the nearest human caption that satisfies it;
#   3. explain the search tree of one query;
#   4. search the collection with the whole pipeline (Stage 1, formula scoring, Stage 3)
#      with `fortekit search`: a hit whose caption names an excluded sound is marked '!'.
# Sets everything up first (idempotent).
#
# examples/queries.txt has two bad lines on purpose (an empty one, a pasted paragraph):
# fol-refine reports them with their line numbers, refines the rest and exits with 1.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
work="$(mktemp -d)"
index="$work/sounds.index"
.venv/bin/fortekit index build --captions examples/audiocaps_train_sample.csv --id-column youtube_id \
    --text-column caption -o "$index" --quiet
status=0
.venv/bin/fol-refine --queries examples/queries.txt --index "$index" -k 3 -o "$work/refined.jsonl" --no-progress \
    || status=$?
if [ "$status" -gt 1 ]; then exit "$status"; fi
.venv/bin/fol-refine --queries examples/queries.txt --index "$index" -k 3 -o "$work/plain.jsonl" --no-progress \
    --anchors none --quiet || true
echo
echo "Each query: its refinement G(φ*) (or 'unchanged'), the nearest human captions that satisfy"
echo "its formula (q* moved toward them), and the first hit without and with the feedback anchors."
.venv/bin/python - "$work/refined.jsonl" "$work/plain.jsonl" <<'EOF'
import json, sys

def rows(path):
    return {row["query"]: row for row in map(json.loads, open(path, encoding="utf-8")) if "phi0" in row}

refined, plain = rows(sys.argv[1]), rows(sys.argv[2])
moved = 0
for query, row in refined.items():
    same = row["refined_text"] == row["query"] or row["phi_star"] == row["phi0"]
    before = plain[query]["ranking"][0]["caption"] if query in plain else "?"
    after = row["ranking"][0]["caption"]
    moved += before != after
    print(f"{query}")
    print(f"    refined:  {'unchanged' if same else row['refined_text']}")
    toward = [text for text in row["positives"][:2] if text != query]
    print(f"    toward:   {' | '.join(toward) or 'no caption in the index satisfies the formula'}")
    print(f"    first hit without feedback: {before}")
    print(f"    first hit with feedback:    {after}{'' if before != after else '   (the same)'}")
print(f"\n{moved} of {len(refined)} first hits changed; G(φ*) differs from the query for "
      f"{sum(r['phi_star'] != r['phi0'] for r in refined.values())}: docs/refine.md says why most formulas stay.")
EOF
echo
.venv/bin/fol-refine --query "a person talking" --explain --index "$index"
echo
.venv/bin/fortekit search --index "$index" --stage1 online -k 5 \
    "a dog barking without people talking" "rain falling on a roof and thunder"
