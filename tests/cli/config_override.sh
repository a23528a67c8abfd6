#!/usr/bin/env bash
# --config FILE overrides keys of the folder's own config (it does not replace it) in every family
# that takes one: a FILE restating a folder value changes nothing, a FILE with another value changes
# the output, and an unknown key or a bad value is a one-line error naming the key and the file.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"

bad() { echo "FAIL $*"; fails=$((fails + 1)); }
# compare NAME same|differs CFG CMD...: CMD's stdout with --config CFG against without it
compare() {
    local name=$1 want=$2 cfg=$3 got; shift 3
    "$@" >"$SCRATCH/base.out" 2>"$SCRATCH/base.err" || { bad "$name: base run: $(cat "$SCRATCH/base.err")"; return; }
    "$@" --config "$cfg" >"$SCRATCH/cfg.out" 2>"$SCRATCH/cfg.err" || { bad "$name: --config: $(cat "$SCRATCH/cfg.err")"; return; }
    [ -s "$SCRATCH/base.out" ] || { bad "$name: no output"; return; }
    if cmp -s "$SCRATCH/base.out" "$SCRATCH/cfg.out"; then got=same; else got=differs; fi
    [ $got = "$want" ] && echo "ok   $name: output $got" || bad "$name: output $got, expected $want"
}
cfg() { printf '%s\n' "$2" >"$SCRATCH/$1.json"; echo "$SCRATCH/$1.json"; }

T="Hello world, this is a tiny test."
CB=$DATA/chatterbox/ckpt MTL=$DATA/chatterbox-mtl/ckpt TURBO=$DATA/chatterbox-turbo/ckpt NANO=$DATA/chatterbox-nano/ckpt
VV=$DATA/vibevoice VRT=$DATA/vibevoice-realtime
PRESET=$VRT/voices/streaming_model/en-TinyAda_woman.pt
ROPE_SAME=$(cfg rope_same '{"llama_fixed": {"rope_theta": 500000}}')
ROPE_OTHER=$(cfg rope_other '{"llama_fixed": {"rope_theta": 10}}')
TOK=(--seed 0 --max-tokens 30 --threads 1 -q)
SPK=(--seed 0 --threads 1 -q --format f32 -o -)

# Chatterbox English and Multilingual (Llama T3): before, a FILE without the tiny folder's head
# counts failed on tensor shapes, because the folder's chatterbox_tiny_config.json was not read.
compare english-same same "$ROPE_SAME" "$VOCIS" tokens --model "$CB" --text "$T" "${TOK[@]}"
compare english-other differs "$ROPE_OTHER" "$VOCIS" tokens --model "$CB" --text "$T" "${TOK[@]}"
FR=(--language fr --text "Bonjour à tous.")
compare mtl-same same "$ROPE_SAME" "$VOCIS" tokens --model "$MTL" "${FR[@]}" "${TOK[@]}"
compare mtl-other differs "$ROPE_OTHER" "$VOCIS" tokens --model "$MTL" "${FR[@]}" "${TOK[@]}"
# Turbo / Nano (GPT-2 T3): the head count of each GPT-2 size
compare turbo-same same "$(cfg gm_same '{"dims": {"t3_gpt2": {"configs": {"GPT2_medium": {"n_head": 2}}}}}')" \
    "$VOCIS" tokens --model "$TURBO" --text "$T" "${TOK[@]}"
compare turbo-other differs "$(cfg gm_other '{"dims": {"t3_gpt2": {"configs": {"GPT2_medium": {"n_head": 4}}}}}')" \
    "$VOCIS" tokens --model "$TURBO" --text "$T" "${TOK[@]}"
compare nano-other differs "$(cfg gs_other '{"dims": {"t3_gpt2": {"configs": {"GPT2_small": {"n_head": 2}}}}}')" \
    "$VOCIS" tokens --model "$NANO" --text "$T" "${TOK[@]}"
# S3Gen (every Chatterbox family; here voice conversion on the English folder): 2 x 64 -> 4 x 32 decoder heads
compare vc-same same "$(cfg flow_same '{"dims": {"flow": {"decoder": {"num_heads": 2}}}}')" \
    "$VOCIS" convert --model "$CB" "$DATA/chatterbox/golden/ref_24k.wav" "${SPK[@]}" --cfm-steps 2
FLOW_OTHER='{"dims": {"flow": {"decoder": {"num_heads": 4, "attention_head_dim": 32}}}}'
compare vc-other differs "$(cfg flow_other "$FLOW_OTHER")" \
    "$VOCIS" convert --model "$CB" "$DATA/chatterbox/golden/ref_24k.wav" "${SPK[@]}" --cfm-steps 2
# VibeVoice 1.5B / Realtime: keys of the folder's config.json
VV_SAME=$(cfg vv_same '{"decoder_config": {"rope_theta": 1000000.0}}')
VV_OTHER=$(cfg vv_other '{"decoder_config": {"rope_theta": 10.0}}')
VVS=(--model "$VV/model" --script "$VV/inputs/script.txt" --voice "$VV/inputs/voice_0.wav"
     --voice "$VV/inputs/voice_1.wav" --max-new-tokens 8 "${SPK[@]}")
compare vibevoice-same same "$VV_SAME" "$VOCIS" speak "${VVS[@]}"
compare vibevoice-other differs "$VV_OTHER" "$VOCIS" speak "${VVS[@]}"
RTS=(--model "$VRT/model" --voice "$PRESET" --text "Hello there, friend." "${SPK[@]}")
RT_THETA=$(sed -n 's/.*"rope_theta": *\([0-9.e+]*\).*/\1/p' "$VRT/model/config.json" | head -1)
compare realtime-same same "$(cfg rt_same "{\"decoder_config\": {\"rope_theta\": $RT_THETA}}")" "$VOCIS" speak "${RTS[@]}"
compare realtime-other differs "$VV_OTHER" "$VOCIS" speak "${RTS[@]}"

# Unknown keys (a typo, or a copy of the tiny folder's own notes) and bad values: one line naming key and file
TYPO=$(cfg typo '{"llama_fixed": {"rope_thetaa": 10}}')
expect_error english-unknown-key "typo.json: unknown key 'llama_fixed.rope_thetaa'" \
    "$VOCIS" tokens --model "$CB" --text "$T" --config "$TYPO" -q
expect_error english-notes-not-keys "chatterbox_tiny_config.json: unknown key 'format'" \
    "$VOCIS" tokens --model "$CB" --text "$T" --config "$CB/chatterbox_tiny_config.json" -q
expect_error english-not-object "dims.json: 'dims' must be an object" \
    "$VOCIS" tokens --model "$CB" --text "$T" --config "$(cfg dims '{"dims": 5}')" -q
expect_error english-array "array.json: expected a JSON object" \
    "$VOCIS" tokens --model "$CB" --text "$T" --config "$(cfg array '[1, 2]')" -q
expect_error english-rope-scaling "rs.json: field 'llama_fixed.rope_scaling' must be an object or null" \
    "$VOCIS" tokens --model "$CB" --text "$T" --config "$(cfg rs '{"llama_fixed": {"rope_scaling": 8}}')" -q
expect_error mtl-unknown-key "typo.json: unknown key 'llama_fixed.rope_thetaa'" \
    "$VOCIS" tokens --model "$MTL" --language fr --text "Bonjour." -q --config "$TYPO"
expect_error turbo-unknown-key "gpt.json: unknown key 'dims.t3_gpt2.configs.GPT2_large'" \
    "$VOCIS" tokens --model "$TURBO" --text "$T" -q --config "$(cfg gpt '{"dims": {"t3_gpt2": {"configs": {"GPT2_large": {"n_head": 2}}}}}')"
expect_error turbo-bad-value "n0.json: field 'dims.t3_gpt2.configs.GPT2_medium.n_head' = 0 is outside" \
    "$VOCIS" tokens --model "$TURBO" --text "$T" -q --config "$(cfg n0 '{"dims": {"t3_gpt2": {"configs": {"GPT2_medium": {"n_head": 0}}}}}')"
expect_error vc-unknown-key "typo.json: unknown key" \
    "$VOCIS" convert --model "$CB" "$DATA/chatterbox/golden/ref_24k.wav" -q -o "$SCRATCH/bad.wav" --config "$TYPO"
VTYPO=$(cfg vtypo '{"decoder_config": {"rope_thetaa": 10}}')
expect_error vibevoice-unknown-key "vtypo.json: unknown key 'decoder_config.rope_thetaa' \\(.*config.json has no such field\\)" \
    "$VOCIS" speak --model "$VV/model" --text hi --voice "$VV/inputs/voice_0.wav" -q -o "$SCRATCH/bad.wav" --config "$VTYPO"
expect_error vibevoice-bad-value "config.json \\+ .*vneg.json: field 'decoder_config.rope_theta' = -1 is outside" \
    "$VOCIS" speak --model "$VV/model" --text hi --voice "$VV/inputs/voice_0.wav" -q -o "$SCRATCH/bad.wav" \
    --config "$(cfg vneg '{"decoder_config": {"rope_theta": -1}}')"
expect_error realtime-unknown-key "vtypo.json: unknown key 'decoder_config.rope_thetaa'" \
    "$VOCIS" speak --model "$VRT/model" --voice "$PRESET" --text hi -q -o "$SCRATCH/bad.wav" --config "$VTYPO"
expect_error missing-file "nope.json: cannot open" "$VOCIS" tokens --model "$CB" --text "$T" -q --config "$SCRATCH/nope.json"
no_file bad-output "$SCRATCH/bad.wav"
finish
