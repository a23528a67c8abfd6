#!/usr/bin/env bash
# Chatterbox S3Gen token -> mel (flow encoder + CFM, 10 Euler steps with CFG) against
# upstream's golden outputs (tiny checkpoint, golden 10_s3gen_flow) with the recorded
# initial noise z_noise injected. Tolerances from tests/data/chatterbox/golden/README.md
# (flow mu / mel: abs 1e-4); intermediates of the first estimator call get the same bound.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
G=$DATA/chatterbox/golden/10_s3gen_flow.safetensors

"$VOCIS" debug s3gen-flow --model "$M" --in "$G" --out "$SCRATCH/flow.safetensors" --threads 2
"$CMP" "$G" "$SCRATCH/flow.safetensors" \
    spks:1e-5 token_emb_masked_input:1e-6 encoder_out:1e-4 mu:1e-4 cond:1e-6 mask:0 t_span:1e-6 \
    est_t_all_steps:1e-6 est_step0_time_mlp:1e-4 \
    est_step0_down0_resnet:1e-4 est_step0_down0_transformer_last:1e-4 est_step0_down0_downsample:1e-4 \
    est_step0_mid0_resnet:1e-4 est_step0_mid0_transformer_last:1e-4 \
    est_step0_mid1_resnet:1e-4 est_step0_mid1_transformer_last:1e-4 \
    est_step0_up0_resnet:1e-4 est_step0_up0_transformer_last:1e-4 est_step0_up0_upsample:1e-4 \
    est_step0_final_block:1e-4 est_dxdt_step0:1e-4 est_dxdt_last:1e-4 solve_euler_out:1e-4 mel_out:1e-4

# An empty speech-token list is refused with a one-line message.
"$VOCIS" debug s3gen-flow --model "$M" --in "$G" --out "$SCRATCH/flow_bad.safetensors" --steps 0 2>"$SCRATCH/err.txt" \
    && { echo "FAIL: --steps 0 accepted"; exit 1; }
grep -q "steps" "$SCRATCH/err.txt" || { echo "FAIL: unexpected message: $(cat "$SCRATCH/err.txt")"; exit 1; }
echo "ok   s3gen-flow"
