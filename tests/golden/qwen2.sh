#!/usr/bin/env bash
# VibeVoice Qwen2 LM prefill against upstream's golden outputs (tiny model);
# tolerances are the suggested atol of tests/data/vibevoice/tolerances.json.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
M=$DATA/vibevoice/model
G=$DATA/vibevoice/golden/06_lm_prefill.safetensors
"$VOCIS" debug qwen2-prefill --model "$M" --in "$G" --out "$SCRATCH/prefill.safetensors" --threads 2
"$CMP" "$G" "$SCRATCH/prefill.safetensors" \
    layer0_out:7.0e-5 layer1_out:8.3e-5 hidden_after_layer0:7.0e-5 last_hidden_state:7.1e-5 logits:3.4e-4 \
    kv_layer0_key:4.8e-5 kv_layer0_value:4.4e-5 kv_layer1_key:6.9e-5 kv_layer1_value:6.4e-5 rope_inv_freq:0
