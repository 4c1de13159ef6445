#!/usr/bin/env bash
# The main job on the embedded default: refine the example search queries with
# fol-refine (Stage 1: lexical elaborator, caption parser Π, beam search, verbaliser G,
# the bundled MiniLM encoder), show each query with its refinement, and explain the
# search tree of one query. Sets everything up first (idempotent).
#
# examples/queries.txt has two bad lines on purpose (an empty one, a pasted paragraph):
# fol-refine reports them with their line numbers, refines the rest and exits with 1.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
out="$(mktemp -d)/refined.tsv"
status=0
.venv/bin/fol-refine examples/queries.txt -o "$out" --format tsv --no-progress || status=$?
if [ "$status" -gt 1 ]; then exit "$status"; fi
echo
echo "query -> refined query (G(φ*)); every field in $out"
cut -f2,3 "$out" | tail -n +2 | sed 's/\t/  ->  /'
echo
.venv/bin/fol-refine --explain "a person talking"
