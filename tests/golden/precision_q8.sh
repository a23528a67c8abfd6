#!/usr/bin/env bash
# The q8 precision mode (transformer linears of T3, Qwen2 and the diffusion
# head as int8 with one scale per 32 weights, everything else as in bf16)
# against upstream's goldens on the tiny checkpoints, with tolerances of its
# own. Why these bounds: a block's step is max|w|/127 and rounding to nearest
# leaves a uniform error of step/sqrt(12) rms; for normal-ish weights max|w| of
# 32 is ~2.1 sigma, so the error is ~0.5 % of a weight's rms (~46 dB per layer,
# ~13 dB below bf16's 2^-9). Measured on these checkpoints (dB, and max |diff|
# as a fraction of max |golden|): T3 cond 49.1 (bf16 path), T3 logits 39.8
# (1.05 %), final norm 1.43 %, layer 1 41.7; Qwen2 logits 37.2 (1.99 %),
# hidden 37.3; diffusion 48.1 / 51.3; greedy T3 tokens equal upstream's for
# the first 38 of 44. The bounds leave ~8-10 dB for other checkpoints.
# Decode steps also quantize x per block (two int8 parts, ~16 bits): the
# same 38 of 44 greedy tokens; one int8 part (llama.cpp Q8_0-like) kept
# only the first 2, which is why the decode kernels use two.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
. "$(dirname "$0")/precision_lib.sh" # M, G, VM, VG, TEXT, run, stage_check, greedy_prefix
P=(--precision q8)

stage_check t3-cond "$G/06_t3_cond.safetensors" "$M" perceiver_out:snr38 cond_emb:snr38
stage_check t3-prefill "$G/07_t3_prefill.safetensors" "$M" \
    logits_last:rel0.05 logits_last:snr30 final_norm_hidden:rel0.05 hidden_after_layer1:snr32
stage_check s3gen-flow "$G/10_s3gen_flow.safetensors" "$M" \
    encoder_out:snr38 mu:snr38 est_dxdt_step0:snr45 mel_out:snr45 mel_out:rel0.02

# Greedy T3: the q8 logits pick upstream's tokens for most of the run; require the first 20.
greedy_prefix 20 q8 "${P[@]}" --threads 1

# T3's q8 decode does not depend on the thread split (each output is one
# tile's sum): greedy tokens on 1 and 2 threads are the same.
[ "$(greedy_tokens "${P[@]}" --threads 2)" = "$(greedy_tokens "${P[@]}" --threads 1)" ] ||
    { echo "FAIL: q8 greedy tokens differ between 1 and 2 threads"; exit 1; }
echo "ok   greedy q8: same tokens on 1 and 2 threads"

# End to end: speaks.
run "$VOCIS" speak "${P[@]}" --model "$M" --voice "$G/golden.voice" --text "$TEXT" --seed 0 --format f32 -q \
    -o "$SCRATCH/q8.wav"
[ -s "$SCRATCH/q8.wav" ] || { echo "FAIL: no q8 audio"; exit 1; }
echo "ok   speak q8 runs"

# VibeVoice (tiny checkpoint stored as F32): LM and diffusion head in q8.
stage_check qwen2-prefill "$VG/06_lm_prefill.safetensors" "$VM" logits:rel0.06 logits:snr28 last_hidden_state:snr28
stage_check vv-diffusion "$VG/07_diffusion.safetensors" "$VM" single_eps_t500:snr38 s10_loop_result:snr38
finish
