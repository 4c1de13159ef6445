#!/usr/bin/env bash
# FORTE on waveforms, end to end, on a generated sound collection (docs/results.md,
# "Audio, end to end (generated collection)"):
#   1. generate N captioned 5-second clips (fortekit bench generate, docs/soundgen.md);
#   2. train the small CLAP and its tagger captioner on the training clips (bench train-clap,
#      docs/soundclap.md);
#   3. Stage 2: (caption, clip) pairs of the TRAINING clips through the small CLAP
#      (bench stage2-data), then the head h_psi (train-projection);
#   4. fortekit eval --beir on the test clips' audio: every system, by query kind; Stage 3 reads
#      captions the tagger writes from the waveforms, never the generator's captions.
#
# Usage: scripts/audio_bench.sh [N] [OUT]      (default N=20000, OUT=runs/audio_gen$N)
# Environment: FORTEKIT (the command, default: fortekit, else .venv/bin/fortekit);
#   SPEECH=1 keeps the speech class (needs espeak-ng; default: --no-speech, as measured);
#   EPOCHS / BATCH for train-clap (default 12 / 64 below 10,000 clips, else 8 / 128);
#   SEED (default 0); WORKERS, processes rendering clips (default 2: the output does not depend
#   on it). Each step skips what a finished earlier run left in OUT, so a stopped run resumes;
#   times.txt in OUT holds each step's wall seconds, cpu.txt its wall, user and system CPU seconds
#   (the CPU figures say what a step costs when the machine is shared).
set -euo pipefail
n="${1:-20000}"
out="${2:-runs/audio_gen$n}"
seed="${SEED:-0}"
workers="${WORKERS:-2}"
if [ -n "${FORTEKIT:-}" ]; then
    read -r -a fk <<< "$FORTEKIT"
elif command -v fortekit > /dev/null; then
    fk=(fortekit)
else
    fk=("$(dirname "${BASH_SOURCE[0]}")/../.venv/bin/fortekit")
fi
if [ "$n" -lt 10000 ]; then epochs="${EPOCHS:-12}"; batch="${BATCH:-64}"; else epochs="${EPOCHS:-8}"; batch="${BATCH:-128}"; fi
speech=(--no-speech)
if [ "${SPEECH:-0}" = 1 ]; then speech=(); fi
mkdir -p "$out"
times="$out/times.txt"
step() {  # step NAME COMMAND...: run it, append its wall seconds to times.txt, its CPU to cpu.txt
    local name="$1" start
    shift
    start=$(date +%s)
    echo "== $name: $*"
    local TIMEFORMAT="$name %R %U %S"
    # The command's stderr goes to fd 3 (the terminal); only the time report reaches cpu.txt.
    { time "$@" 2>&3; } 3>&2 2>> "$out/cpu.txt"
    echo "$name $(( $(date +%s) - start ))" >> "$times"
}
start_all=$(date +%s)
step generate "${fk[@]}" bench generate --n "$n" -o "$out/gen" --seed "$seed" "${speech[@]}" \
    --workers "$workers" --quiet
step train-clap "${fk[@]}" bench train-clap --data "$out/gen" -o "$out/clap" --epochs "$epochs" \
    --batch-size "$batch" --seed "$seed" --quiet
step stage2-data "${fk[@]}" bench stage2-data --data "$out/gen" --backbone small-clap \
    --backbone-option model="$out/clap" -o "$out/stage2/train.safetensors"
step stage2-train "${fk[@]}" train-projection --train "$out/stage2/train.safetensors" -o "$out/stage2" \
    --seed "$seed" --quiet
step eval "${fk[@]}" eval --beir "$out/gen/test" --backbone small-clap --backbone-option model="$out/clap" \
    --captioner tagger --captioner-option model="$out/clap" --projection "$out/stage2" \
    --systems baseline,S1,S2,S3-paper,S3-polarity,S3-default,formula,default,default+order,S1+formula,full,formula+evidence,default+evidence \
    --by kind,heldout -o "$out/eval"
echo "total $(( $(date +%s) - start_all ))" >> "$times"
echo "== done: $out/eval/results.md, $out/eval/metrics.json, $out/eval/modality_gap.png; $out/clap/result.json"
cat "$times" "$out/cpu.txt"
