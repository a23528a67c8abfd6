#!/usr/bin/env bash
# Chatterbox HiFT vocoder against upstream's golden outputs (tiny checkpoint, golden 11_hift):
# end to end from mel_in with the injected SineGen phases/noise, then decode given the golden source.
# Tolerances from tests/data/chatterbox/golden/README.md.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
G=$DATA/chatterbox/golden/11_hift.safetensors

"$VOCIS" debug hift --model "$M" --in "$G" --out "$SCRATCH/hift.safetensors" --threads 2
"$CMP" "$G" "$SCRATCH/hift.safetensors" \
    f0:5e-4 source:2e-3 wav_clamped:5e-3 wav_trim_faded:5e-3 trim_fade:1e-6

"$VOCIS" debug hift --model "$M" --in "$G" --out "$SCRATCH/hift_src.safetensors" --threads 2 --source-in
"$CMP" "$G" "$SCRATCH/hift_src.safetensors" \
    wav_clamped:1e-4 wav_trim_faded:1e-4 istft_magnitude:2e-4 istft_phase:2e-4
