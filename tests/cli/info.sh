#!/usr/bin/env bash
# vocis info names the model family of every tiny release folder; a bad folder is a one-line error.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
check() { # FOLDER KIND
    if "$VOCIS" info --model "$1" >"$SCRATCH/out" 2>"$SCRATCH/err" && grep -qx "model: $2" "$SCRATCH/out"; then
        echo "ok   $2: $1"
    else
        echo "FAIL $1: expected $2, got: $(cat "$SCRATCH/out" "$SCRATCH/err")"; fails=$((fails + 1))
    fi
}
check "$DATA/chatterbox/ckpt" chatterbox
check "$DATA/chatterbox-mtl/ckpt" chatterbox-multilingual
check "$DATA/chatterbox-turbo/ckpt" chatterbox-turbo
check "$DATA/vibevoice/model" vibevoice
check "$DATA/vibevoice-realtime/model" vibevoice-realtime
VC=$SCRATCH/vc
rm -rf "$VC" && mkdir -p "$VC"
for f in s3gen.safetensors conds.pt chatterbox_tiny_config.json; do ln -sf "$(cd "$DATA/chatterbox/ckpt" && pwd)/$f" "$VC/"; done
check "$VC" chatterbox-vc
grep -q "^languages: ar, da" <("$VOCIS" info --model "$DATA/chatterbox-mtl/ckpt") && echo "ok   languages listed" ||
    { echo "FAIL multilingual languages"; fails=$((fails + 1)); }
expect_error info-missing "model folder not found" "$VOCIS" info --model "$SCRATCH/nope"
expect_error info-empty "not a recognised model folder" "$VOCIS" info --model "$SCRATCH"
finish
