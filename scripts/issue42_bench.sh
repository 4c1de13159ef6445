#!/usr/bin/env bash
# The held-out checks of issue 42 (docs/results.md, "Exclusion by evidence"), both halves:
#   related-pair exclusions (scripts/related_pairs.py), the cue-class wordings
#   (tests/data/wordings/cue_classes.toml) and the earlier wordings (tests/data/wordings/wordings.toml),
#   each on the three negation collections, the frozen baseline beside the default pipeline.
# Usage: bash scripts/issue42_bench.sh HALF [OUT] [SYSTEMS]    (HALF: development | heldout)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
half="${1:?development or heldout}"
out="${2:-runs/issue42}"
systems="${3:-default}"
py=.venv/bin/python
sets=(audiocaps_val clotho_development audiocaps_test)

"$py" scripts/related_pairs.py --half "$half" --out "$out/related_$half"
for set in "${sets[@]}"; do
    "$py" scripts/reword_queries.py "../shared/data/negation/$set" "$out/cue_$half/$set" \
        --wordings tests/data/wordings/cue_classes.toml --split tests/data/wordings/cue_classes_split.json \
        --half "$half"
    "$py" scripts/reword_queries.py "../shared/data/negation/$set" "$out/wordings_$half/$set" \
        --wordings tests/data/wordings/wordings.toml --half "$half"
done
"$py" scripts/wording_bench.py "${sets[@]/#/$out/related_$half/}" --systems "$systems" \
    --out "$out/bench_related_$half" --by pair
"$py" scripts/wording_bench.py "${sets[@]/#/$out/cue_$half/}" --systems "$systems" \
    --out "$out/bench_cue_$half" --by cue_class
"$py" scripts/wording_bench.py "${sets[@]/#/$out/wordings_$half/}" --systems "$systems" \
    --out "$out/bench_wordings_$half" --by cue_class
