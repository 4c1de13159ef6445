#!/usr/bin/env bash
# The fresh held-out wordings of issue 42 (tests/data/wordings/fresh_heldout.toml, committed before
# any run) on the three negation sets, the frozen baseline beside the default pipeline; then the
# goal counts per set (scripts/wording_goals.py). docs/results.md, "A fresh held-out set of wordings".
# Usage: bash scripts/issue42_fresh.sh [OUT]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec bash scripts/issue42_wordings.sh fresh_heldout "${1:-runs/issue42_fresh}" fresh
