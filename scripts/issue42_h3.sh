#!/usr/bin/env bash
# The third held-out wordings of issue 42 (tests/data/wordings/heldout3.toml, committed before any
# run) on the three negation sets, the frozen baseline beside the default pipeline; then the goal
# counts per set (scripts/wording_goals.py). docs/results.md, "A third held-out set of wordings".
# Usage: bash scripts/issue42_h3.sh [OUT]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-runs/issue42_h3}"
py=.venv/bin/python
sets=(audiocaps_val clotho_development audiocaps_test)
for set in "${sets[@]}"; do
    "$py" scripts/reword_queries.py "../shared/data/negation/$set" "$out/h3/$set" \
        --wordings tests/data/wordings/heldout3.toml --split tests/data/wordings/heldout3_split.json \
        --half heldout
done
"$py" scripts/wording_bench.py "${sets[@]/#/$out/h3/}" --systems default --out "$out/bench_h3" --by wording
"$py" scripts/wording_goals.py "$out/bench_h3/wording_bench.json"
