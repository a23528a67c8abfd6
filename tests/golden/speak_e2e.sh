#!/usr/bin/env bash
# End to end with NO noise injected: vocis speak with a voice made of the
# golden conditioning tensors, seed 0, must equal upstream's generate()
# output (12_e2e wav_out) within the golden README's end-to-end tolerance.
# This proves the whole random stream (T3 multinomial -> CFM randn -> SineGen
# rand/randn -> the discarded randn) is replicated.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
G=$DATA/chatterbox/golden
"$VOCIS" speak --model "$M" --voice "$G/golden.voice" --text "Hello world, this is a tiny test of Chatterbox." \
    --seed 0 --exaggeration 0.5 --format f32 -o "$SCRATCH/e2e.wav" -q
"$CMP" --wav "$SCRATCH/e2e.wav" "$G/12_e2e.safetensors" wav_out 5e-3

# Stage tests of the two S3Gen halves with the golden noises injected.
"$VOCIS" debug s3gen-flow --model "$M" --in "$G/10_s3gen_flow.safetensors" --out "$SCRATCH/flow.safetensors"
"$CMP" "$G/10_s3gen_flow.safetensors" "$SCRATCH/flow.safetensors" \
    spks:1e-5 encoder_out:1e-4 mu:1e-4 solve_euler_out:1e-4 mel_out:1e-4 est_dxdt_step0:1e-4
"$VOCIS" debug hift --model "$M" --in "$G/11_hift.safetensors" --out "$SCRATCH/hift.safetensors"
"$CMP" "$G/11_hift.safetensors" "$SCRATCH/hift.safetensors" f0:5e-4 source:2e-3 wav_clamped:5e-3 wav_trim_faded:5e-3

# The built-in voice converts to a voice file that speaks the same audio.
"$VOCIS" voice create --from-conds "$M/conds.pt" -o "$SCRATCH/builtin.voice"
"$VOCIS" speak --model "$M" --text "Built-in voice." --seed 3 -q -o "$SCRATCH/a.wav"
"$VOCIS" speak --model "$M" --voice "$SCRATCH/builtin.voice" --text "Built-in voice." --seed 3 -q -o "$SCRATCH/b.wav"
cmp "$SCRATCH/a.wav" "$SCRATCH/b.wav"
echo "ok   built-in voice file speaks identically"

# Raw PCM on stdout equals the WAV file's samples.
"$VOCIS" speak --model "$M" --text "Built-in voice." --seed 3 -q -o - >"$SCRATCH/raw.s16"
[ "$(stat -c %s "$SCRATCH/raw.s16")" -eq $(( $(stat -c %s "$SCRATCH/a.wav") - 44 )) ]
tail -c +45 "$SCRATCH/a.wav" | cmp - "$SCRATCH/raw.s16"
echo "ok   raw PCM stream"
