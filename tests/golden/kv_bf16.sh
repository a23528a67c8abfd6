#!/usr/bin/env bash
# --kv bf16 (keys after RoPE and values rounded to bf16 as they are cached,
# float32 attention arithmetic) against upstream's goldens on the tiny
# checkpoints, and --kv f32 (the default) still upstream's exact output.
# Why these bounds: each cached element carries a relative rounding error of
# at most 2^-9; attention scores q·k and the weighted value sums average those
# errors over head_dim / the keys, so the attention output moves by ~1e-3
# relative at most, far less than bf16 weights do (--precision bf16). Measured
# here: the tiny T3's greedy and seed-0 sampled tokens are all identical to
# upstream's (44 and 46 tokens); VibeVoice end-to-end audio is 68 dB SNR from
# the f32-cache audio (max |diff| 2.7e-4). The bounds leave room for other
# checkpoints: the first 20 greedy tokens, and 50 dB.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
. "$(dirname "$0")/precision_lib.sh" # M, G, TEXT, run, greedy_tokens

want=$("$CMP" --print "$G/09_t3_greedy.safetensors" tokens)
got=$(greedy_tokens --kv bf16 --threads 1) || { echo "FAIL: tokens --kv bf16"; exit 1; }
[ "$(echo "$got" | cut -d' ' -f1-20)" = "$(echo "$want" | cut -d' ' -f1-20)" ] ||
    { echo "FAIL greedy prefix: got $got, want $want"; exit 1; }
same=0
read -r -a g <<<"$got"; read -r -a w <<<"$want"
for i in "${!w[@]}"; do [ "${g[$i]:-}" = "${w[$i]}" ] || break; same=$((same + 1)); done
echo "ok   T3 greedy --kv bf16: $same of ${#w[@]} tokens as upstream before the first difference"

# --kv f32 (explicit) and no --kv: upstream's sampled tokens exactly.
want=$("$CMP" --print "$G/08_t3_sampled.safetensors" tokens)
for kv in "--kv f32" ""; do
    # shellcheck disable=SC2086
    got=$("$VOCIS" tokens $kv --model "$M" --t3-cond "$G/06_t3_cond.safetensors" --text "$TEXT" --seed 0 \
          --exaggeration 0.5 --threads 2 -q)
    [ "$got" = "$want" ] || { echo "FAIL sampled tokens with '${kv:-no --kv}'"; exit 1; }
done
echo "ok   T3 sampled --kv f32 / default: upstream's tokens"

# VibeVoice end to end: --kv f32 = golden audio; --kv bf16 within 50 dB of it.
D=$DATA/vibevoice
VOICES=(--voice "$D/inputs/voice_0.wav" --voice "$D/inputs/voice_1.wav")
for kv in f32 bf16; do
    run "$VOCIS" speak --kv $kv --model "$D/model" --text-file "$D/inputs/script.txt" "${VOICES[@]}" --seed 4321 \
        --format f32 -o "$SCRATCH/vv_$kv.wav" -q --threads 2
done
run "$CMP" --wav "$SCRATCH/vv_f32.wav" "$D/golden/08_e2e.safetensors" audio 7.8e-6
run "$CMP" --snr-wav "$SCRATCH/vv_f32.wav" "$SCRATCH/vv_bf16.wav" 50

# Refusals: one line, non-zero exit, no output left behind.
expect_error bad-kv "invalid value 'fp8'" "$VOCIS" speak --kv fp8 --model "$M" --text "Hi." -o "$SCRATCH/x.wav"
expect_error tokens-bad-kv "option --kv" "$VOCIS" tokens --kv 16 --model "$M" --text "Hi."
expect_error turbo-kv "not available" "$VOCIS" speak --kv bf16 --model "$DATA/chatterbox-turbo/ckpt" --text "Hi." \
    -o "$SCRATCH/x.wav"
expect_error bench-kv "invalid value" "$VOCIS" bench qwen2 --synthetic 1.5b --kv half
[ ! -e "$SCRATCH/x.wav" ] || { echo "FAIL: output left behind"; exit 1; }
finish
