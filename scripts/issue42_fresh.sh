#!/usr/bin/env bash
# The fresh held-out wordings of issue 42 (tests/data/wordings/fresh_heldout.toml, committed before
# any run) on the three negation sets, the frozen baseline beside the default pipeline; then the
# goal counts per set (scripts/wording_goals.py). docs/results.md, "A fresh held-out set of wordings".
# Usage: bash scripts/issue42_fresh.sh [OUT]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-runs/issue42_fresh}"
py=.venv/bin/python
sets=(audiocaps_val clotho_development audiocaps_test)
for set in "${sets[@]}"; do
    "$py" scripts/reword_queries.py "../shared/data/negation/$set" "$out/fresh/$set" \
        --wordings tests/data/wordings/fresh_heldout.toml --split tests/data/wordings/fresh_heldout_split.json \
        --half heldout
done
"$py" scripts/wording_bench.py "${sets[@]/#/$out/fresh/}" --systems default --out "$out/bench_fresh" --by wording
"$py" scripts/wording_goals.py "$out/bench_fresh/wording_bench.json"
