#!/usr/bin/env bash
# The laion_clap package and what it imports, for the LAION-CLAP equivalence test only.
#
#   bash scripts/setup-laion.sh     # installs into .laion-deps/ (git-ignored); safe to re-run
#
# fortekit itself never imports laion_clap: original checkpoints are converted with
# `fortekit convert laion-clap` and run through the hf-clap backbone. The test
# (tests/plugins/test_laion_convert_equivalence.py) compares that path with laion_clap's own
# classes; it puts .laion-deps/ on sys.path beside the project's .venv.
#
# Installed without dependency resolution (--no-deps), on purpose: laion-clap's metadata
# pins numpy<2 and pulls wandb and other training tools, and PyPI has torchvision and
# torchaudio for torch 2.13 only as CUDA builds, which would drag in gigabytes of CUDA
# libraries. The model code laion_clap runs for inference works with the project's numpy 2,
# transformers and CPU torch; of torchvision and torchaudio only pure-Python parts are used
# (Resize, MelSpectrogram), and their CUDA extension libraries are removed here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target=".laion-deps"
python="${PYTHON:-.venv/bin/python}"
stamp="$target/.complete-1"
log() { printf '[setup-laion] %s\n' "$*" >&2; }

if [ -f "$stamp" ]; then
    log "$target is ready"; exit 0
fi
[ -x "$python" ] || { log "no $python: run scripts/setup.sh test first"; exit 1; }
rm -rf "$target"
log "installing laion-clap 1.1.7 and what it imports into $target"
"$python" -m pip install --disable-pip-version-check -q --no-deps --target "$target" \
    "laion-clap==1.1.7" "torchvision==0.28.0" "torchaudio==2.11.0" \
    "ftfy>=6" "wcwidth" "braceexpand" "webdataset>=0.2" "wget" "h5py>=3" "pandas>=2" \
    "python-dateutil" "tzdata" "pytz"
# The rest (torch, transformers, torchlibrosa, librosa, scipy, soundfile, ...) comes from the
# project's environment: scripts/setup.sh test installs it.
"$python" -c "import torchlibrosa, librosa" 2>/dev/null \
    || { log "torchlibrosa or librosa missing from $python's environment: run scripts/setup.sh test"; exit 1; }
# CUDA-linked extension libraries: they cannot load beside the CPU torch, and are not used.
rm -f "$target"/torchaudio/lib/*.so "$target"/torchvision/*.so
rm -rf "$target/tests" "$target/bin"  # laion-clap's wheel ships a top-level 'tests' package
touch "$stamp"
log "done"
