#!/usr/bin/env bash
# VibeVoice σ-VAE tokenizers against upstream's outputs on the tiny model: acoustic encoder
# (golden 02: mean, every downsample/stage/head intermediate of voice 0, gaussian sampling with the
# injected noise), acoustic decoder (golden 03: whole sequence and frame by frame with the
# streaming caches) and semantic encoder (golden 04: whole and in hop-sized chunks).
# Tolerances: suggested atol of tests/data/vibevoice/tolerances.json.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
M=$DATA/vibevoice/model
G2=$DATA/vibevoice/golden/02_acoustic_encoder.safetensors
G3=$DATA/vibevoice/golden/03_acoustic_decoder.safetensors
G4=$DATA/vibevoice/golden/04_semantic_encoder.safetensors

"$VOCIS" debug vv-acoustic-encoder --model "$M" --in "$G2" --out "$SCRATCH/enc.safetensors" --threads 2
"$CMP" "$G2" "$SCRATCH/enc.safetensors" mean:9.1e-5 \
    downsample_0_out:1.4e-6 stage_0_out:5.1e-6 downsample_1_out:5.8e-6 stage_1_out:1.4e-5 \
    downsample_2_out:1.1e-5 stage_2_out:1.7e-5 downsample_3_out:1.5e-5 stage_3_out:2.0e-5 \
    downsample_4_out:1.6e-5 stage_4_out:1.7e-5 downsample_5_out:1.9e-5 stage_5_out:2.3e-5 \
    downsample_6_out:2.0e-5 stage_6_out:2.3e-5 head_out:5.0e-5 sampled:9.1e-5 sample_std:1.2e-5

"$VOCIS" debug vv-acoustic-decoder --model "$M" --in "$G3" --out "$SCRATCH/dec.safetensors" --threads 2
"$CMP" "$G3" "$SCRATCH/dec.safetensors" audio_whole:6.2e-6 audio_streaming:8.1e-6

"$VOCIS" debug vv-semantic-encoder --model "$M" --in "$G4" --out "$SCRATCH/sem.safetensors" --threads 2
"$CMP" "$G4" "$SCRATCH/sem.safetensors" features_whole:6.3e-5 features_streaming:5.5e-5

# bad inputs: non-zero exit and a one-line message naming the problem
. "$(dirname "$0")/../cli/lib.sh" # mkst, expect_fail
mkst "$SCRATCH/bad_lat.safetensors" latents "[1,5,63]" 1260
mkst "$SCRATCH/empty_sem.safetensors" input_audio "[0]" 0
mkst "$SCRATCH/empty_ac.safetensors" input_audio "[2,0]" 0
rm -f "$SCRATCH/x.safetensors"
expect_fail "latents of wrong width" "latents" \
    "$VOCIS" debug vv-acoustic-decoder --model "$M" --in "$SCRATCH/bad_lat.safetensors" --out "$SCRATCH/x.safetensors"
expect_fail "empty semantic input" "input_audio" \
    "$VOCIS" debug vv-semantic-encoder --model "$M" --in "$SCRATCH/empty_sem.safetensors" --out "$SCRATCH/x.safetensors"
expect_fail "empty acoustic input" "empty" \
    "$VOCIS" debug vv-acoustic-encoder --model "$M" --in "$SCRATCH/empty_ac.safetensors" --out "$SCRATCH/x.safetensors"
[ ! -e "$SCRATCH/x.safetensors" ] || { echo "FAIL: a failed run left an output file"; exit 1; }
echo "vv_vae: all checks passed"
