#!/usr/bin/env bash
# Set up (idempotent), then lint, type-check and run the whole test suite.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k parser`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh test

echo "== ruff"
.venv/bin/ruff check .

echo "== mypy"
# The repository root is the package `fortekit`; mypy finds it through a link
# named fortekit, since an editable install maps the name with an import hook.
shadow="$(mktemp -d)"
trap 'rm -rf "$shadow"' EXIT
ln -s "$PWD" "$shadow/fortekit"
MYPYPATH="$shadow" .venv/bin/mypy -m fortekit -m fortekit.errors -m fortekit.textio -m fortekit.collection_reader \
    -m fortekit._lazy -m fortekit._checks -m fortekit._top_k -m fortekit._threads -m fortekit._hf_progress -m fortekit.safe_write \
    -p fortekit.fol -p fortekit.grammars -p fortekit.vocab -p fortekit.verbalise \
    -p fortekit.plugins -p fortekit.search

echo "== pytest"
.venv/bin/pytest --durations=25 "$@"
