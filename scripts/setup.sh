#!/usr/bin/env bash
# Prepare everything fortekit needs on a fresh Debian machine; safe to re-run.
#
#   bash scripts/setup.sh          # runtime: the package and its dependencies
#   bash scripts/setup.sh test     # plus the test, lint and type-check tools
#
# It installs the Debian packages it needs (when run as root, or with sudo), makes
# a virtual environment in .venv and installs fortekit into it, editable. Only the
# package registries (Debian, PyPI) are contacted.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

extras="${1:-}"
python="${PYTHON:-python3}"

log() { printf '[setup] %s\n' "$*" >&2; }

if ! command -v "$python" >/dev/null 2>&1; then
    log "python3 not found: install it first (apt-get install python3)"; exit 1
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    log "fortekit needs Python >= 3.11; $("$python" --version) found"; exit 1
fi

# Debian packages: venv support for Debian's own python3, WordNet 3.0, which
# fortekit reads through NLTK from /usr/share/wordnet (no download needed), and
# espeak-ng, the speech of the generated benchmark (fortekit bench generate).
apt_packages=()
"$python" -c 'import venv, ensurepip' >/dev/null 2>&1 || apt_packages+=(python3-venv)
[ -f /usr/share/wordnet/data.noun ] || apt_packages+=(wordnet-base)
command -v espeak-ng >/dev/null 2>&1 || apt_packages+=(espeak-ng)
# The browser tests of `fortekit serve`'s pages drive Debian's chromium headless (never a
# browser download); only the test set-up needs it.
if [ "$extras" = "test" ] && ! command -v chromium >/dev/null 2>&1; then apt_packages+=(chromium); fi
if ((${#apt_packages[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    log "installing Debian packages: ${apt_packages[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${apt_packages[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
    log "creating .venv"
    "$python" -m venv .venv
fi
pip=(.venv/bin/python -m pip --disable-pip-version-check -q)
"${pip[@]}" install --upgrade pip wheel >/dev/null
# torch first, pinned: an unpinned torch would pull a multi-GB CUDA build where
# this CPU build is at hand.
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
    log "installing torch==2.13.0"
    "${pip[@]}" install "torch==2.13.0"
fi
target="."
[ -n "$extras" ] && target=".[$extras]"
log "installing fortekit${extras:+ with [$extras]} into .venv"
"${pip[@]}" install -e "$target"
if [ "$extras" = "test" ] && ! .venv/bin/python -c "import msclap" >/dev/null 2>&1; then
    # msclap's metadata pins transformers<5 and torchaudio; its model code needs
    # neither, so the tests install it without its declared dependencies.
    log "installing msclap (no-deps) for its plug-in test"
    "${pip[@]}" install --no-deps "msclap==1.3.4" "torchlibrosa==0.1.0"
    "${pip[@]}" install "librosa>=0.10" "pyyaml>=6"
fi
