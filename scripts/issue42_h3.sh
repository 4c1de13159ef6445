#!/usr/bin/env bash
# The third held-out wordings of issue 42 (tests/data/wordings/heldout3.toml, committed before any
# run) on the three negation sets, the frozen baseline beside the default pipeline; then the goal
# counts per set (scripts/wording_goals.py). docs/results.md, "A third held-out set of wordings".
# Usage: bash scripts/issue42_h3.sh [OUT]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec bash scripts/issue42_wordings.sh heldout3 "${1:-runs/issue42_h3}" h3
