#!/usr/bin/env bash
# The main job on the embedded default: parse example formulas into first-order
# logic and print them in every notation. Sets everything up first (idempotent).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
.venv/bin/fortekit parse --file examples/formulas.txt
