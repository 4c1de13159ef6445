#!/usr/bin/env bash
# A held-out wordings file of issue 42 on the three negation sets, the frozen baseline beside the
# default pipeline; then the goal counts per set (scripts/wording_goals.py).
# Usage: bash scripts/issue42_wordings.sh NAME OUT [TAG]   (NAME: tests/data/wordings/NAME.toml with
# NAME_split.json; TAG names the folders OUT/TAG and OUT/bench_TAG, default NAME)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
name="${1:?a wordings file name under tests/data/wordings, e.g. heldout3}"
out="${2:?an output folder}"
tag="${3:-$name}"
py=.venv/bin/python
sets=(audiocaps_val clotho_development audiocaps_test)
for set in "${sets[@]}"; do
    "$py" scripts/reword_queries.py "../shared/data/negation/$set" "$out/$tag/$set" \
        --wordings "tests/data/wordings/$name.toml" --split "tests/data/wordings/${name}_split.json" \
        --half heldout
done
"$py" scripts/wording_bench.py "${sets[@]/#/$out/$tag/}" --systems default --out "$out/bench_$tag" --by wording
"$py" scripts/wording_goals.py "$out/bench_$tag/wording_bench.json"
