#!/usr/bin/env bash
# VibeVoice speech connectors (golden 05_connectors) and diffusion head + DPM-Solver++ CFG
# sampler (golden 07_diffusion, 10 and 20 steps, injected noise and --seed) against upstream's
# outputs on the tiny model. Tolerances: suggested atol of tests/data/vibevoice/tolerances.json;
# timesteps exact, schedule tables and injected noise bit-exact.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
M=$DATA/vibevoice/model
G5=$DATA/vibevoice/golden/05_connectors.safetensors
G7=$DATA/vibevoice/golden/07_diffusion.safetensors

"$VOCIS" debug vv-connectors --model "$M" --in "$G5" --out "$SCRATCH/conn.safetensors" --threads 2
"$CMP" "$G5" "$SCRATCH/conn.safetensors" acoustic_out:3.8e-5 semantic_out:2.9e-5

SINGLE="single_eps_t999:2.9e-5 single_eps_t500:2.9e-5 single_eps_t10:3.4e-5"
loop_tols() { # N tol(head_input_x head_output guided_eps x0_pred sample_in sample_out result)
    local n=$1
    shift
    local names=(head_input_x head_output guided_eps x0_pred sample_in sample_out result) i=0
    for t in "$@"; do
        echo "s${n}_loop_${names[$i]}:$t"
        i=$((i + 1))
    done
    echo "s${n}_loop_timesteps:exact s${n}_sched_sigmas:0 s${n}_sched_alphas_cumprod:0"
}
T10=$(loop_tols 10 6.1e-5 3.6e-5 4.4e-5 6.6e-5 6.1e-5 6.6e-5 6.6e-5)
T20=$(loop_tols 20 4.5e-5 2.5e-5 3.3e-5 4.6e-5 4.5e-5 4.6e-5 4.5e-5)

# injected initial noise (the golden's sN_loop_init_noise): without --steps, one run per
# sNN_loop_init_noise of the input (here 10 and 20 steps)
"$VOCIS" debug vv-diffusion --model "$M" --in "$G7" --out "$SCRATCH/d10.safetensors" --threads 2
# shellcheck disable=SC2086
"$CMP" "$G7" "$SCRATCH/d10.safetensors" $SINGLE $T10 $T20 s10_loop_init_noise:0 s20_loop_init_noise:0
"$VOCIS" debug vv-diffusion --model "$M" --in "$G7" --out "$SCRATCH/d20.safetensors" --threads 2 --steps 20 \
    --cfg-scale 1.3
# shellcheck disable=SC2086
"$CMP" "$G7" "$SCRATCH/d20.safetensors" $SINGLE $T20 s20_loop_init_noise:0

# noise drawn by the torch-compatible rng after manual_seed (seeds of 07_diffusion.json); the vector
# randn path may differ from torch's SLEEF transforms by a few ulp
"$VOCIS" debug vv-diffusion --model "$M" --in "$G7" --out "$SCRATCH/s10.safetensors" --threads 2 --seed 1247
# shellcheck disable=SC2086
"$CMP" "$G7" "$SCRATCH/s10.safetensors" s10_loop_init_noise:1e-6 $T10
"$VOCIS" debug vv-diffusion --model "$M" --in "$G7" --out "$SCRATCH/s20.safetensors" --threads 2 --steps 20 \
    --seed 1257
# shellcheck disable=SC2086
"$CMP" "$G7" "$SCRATCH/s20.safetensors" s20_loop_init_noise:1e-6 $T20

# bad inputs: non-zero exit and a one-line message naming the problem
. "$(dirname "$0")/../cli/lib.sh" # mkst, expect_fail
mkst "$SCRATCH/bad_cond.safetensors" pos_condition "[1,5]" 20
mkst "$SCRATCH/bad_ac.safetensors" acoustic_in "[1,2,5]" 40
expect_fail "--steps 0" "--steps" \
    "$VOCIS" debug vv-diffusion --model "$M" --in "$G7" --out "$SCRATCH/x.safetensors" --steps 0
expect_fail "condition of wrong width" "pos_condition" \
    "$VOCIS" debug vv-diffusion --model "$M" --in "$SCRATCH/bad_cond.safetensors" --out "$SCRATCH/x.safetensors"
expect_fail "no init noise for 7 steps" "seed" \
    "$VOCIS" debug vv-diffusion --model "$M" --in "$G7" --out "$SCRATCH/x.safetensors" --steps 7
expect_fail "connector input of wrong width" "acoustic_in" \
    "$VOCIS" debug vv-connectors --model "$M" --in "$SCRATCH/bad_ac.safetensors" --out "$SCRATCH/x.safetensors"
