#!/usr/bin/env bash
# The main job on the embedded default: parse example captions into first-order
# logic (the caption parser Π, with V_audio grounding) and write each formula back
# as English (the verbaliser G); then the formula notations. Sets everything up
# first (idempotent).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
.venv/bin/fortekit caption --file examples/captions.txt
.venv/bin/fortekit parse --file examples/formulas.txt
