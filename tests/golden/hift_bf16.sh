#!/usr/bin/env bash
# Chatterbox HiFT under --precision bf16 (the upsamplers' and ResBlocks' matrices as bf16, activations
# rounded to bf16 in the products where the CPU has AVX512_BF16) against upstream's golden 11_hift on
# the tiny checkpoint, with tolerances of its own. The f0 predictor and the source branch stay float32,
# so f0 and source keep the exact mode's bounds. Measured on this checkpoint (SNR vs golden, dB):
# wav 27.7 (27.9 given the golden source), istft magnitude 32.8, phase 29.5; bf16 weights with
# float32 activations (CPUs without AVX512_BF16) lose about as much: HiFT's ~75 stacked convs, Snake
# and exp/sin of conv_post amplify the 2^-9 weight rounding more than a transformer does. The bounds
# leave ~10 dB for other checkpoints.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
G=$DATA/chatterbox/golden/11_hift.safetensors

"$VOCIS" debug hift --precision bf16 --model "$M" --in "$G" --out "$SCRATCH/hift_bf16.safetensors" --threads 2
"$CMP" "$G" "$SCRATCH/hift_bf16.safetensors" \
    f0:5e-4 source:2e-3 wav_clamped:snr18 wav_trim_faded:snr18 trim_fade:1e-6

"$VOCIS" debug hift --precision bf16 --model "$M" --in "$G" --out "$SCRATCH/hift_bf16_src.safetensors" --threads 1 \
    --source-in
"$CMP" "$G" "$SCRATCH/hift_bf16_src.safetensors" \
    wav_clamped:snr18 wav_trim_faded:snr18 istft_magnitude:snr23 istft_phase:snr20
