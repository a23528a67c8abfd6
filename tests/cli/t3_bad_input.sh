#!/usr/bin/env bash
# Bad input to `vocis tokens` / the model loaders: every case must end with a
# one-line error on stderr that names the problem and a non-zero exit status
# (never a signal, never a hang).
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
COND=$DATA/chatterbox/golden/06_t3_cond.safetensors
. "$(dirname "$0")/lib.sh"


# A model folder whose t3_cfg.safetensors is replaced by $1 (other files linked).
model_with_t3() {
    local d=$SCRATCH/model_$2
    link_model "$M" "$d"
    rm -f "$d/t3_cfg.safetensors"
    cp "$1" "$d/t3_cfg.safetensors"
    echo "$d"
}

# write_st FILE HEADER_JSON DATA_BYTES [HEADER_LEN]: a safetensors file by hand.
write_st() {
    local file=$1 header=$2 nbytes=$3 len=${4:-${#2}}
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x' \
        $((len & 255)) $(((len >> 8) & 255)) $(((len >> 16) & 255)) $(((len >> 24) & 255)) \
        $(((len >> 32) & 255)) $(((len >> 40) & 255)) $(((len >> 48) & 255)) $(((len >> 56) & 255)))" >"$file"
    printf '%s' "$header" >>"$file"
    head -c "$nbytes" /dev/zero >>"$file"
}

T="Hello world."
run=("$VOCIS" tokens --t3-cond "$COND" --text "$T" --seed 0 -q --model)

# CLI usage
expect_error unknown-flag "unknown option '--frobnicate'" "$VOCIS" tokens --model "$M" --text "$T" --frobnicate
expect_error missing-value "needs a value" "$VOCIS" tokens --model "$M" --text
expect_error bad-number "invalid value 'abc'" "$VOCIS" tokens --model "$M" --text "$T" --temperature abc
expect_error out-of-range "out of range" "$VOCIS" tokens --model "$M" --text "$T" --top-p 2
expect_error bad-speculate "option --speculate: invalid value '17'" "$VOCIS" tokens --model "$M" --text "$T" --speculate 17
expect_error bad-speculate-word "option --speculate: invalid value 'on'" "$VOCIS" tokens --model "$M" --text "$T" --speculate on
expect_error no-model "--model DIR is required" "$VOCIS" tokens --text "$T"
expect_error missing-model-dir "not found" "$VOCIS" tokens --model "$SCRATCH/nope" --text "$T"
expect_error unknown-command "unknown command" "$VOCIS" frobnicate

# Stage harness
expect_error debug-unknown-stage "unknown stage 'nope'" "$VOCIS" debug nope --model "$M" --out "$SCRATCH/x.st"
expect_error debug-needs-in "needs --in FILE" "$VOCIS" debug t3-cond --model "$M" --out "$SCRATCH/x.st"
expect_error debug-bad-option "unknown option '--bogus'" "$VOCIS" debug t3-cond --model "$M" --in "$COND" --out "$SCRATCH/x.st" --bogus
expect_error debug-missing-input "missing input tensor 'inputs_embeds'" "$VOCIS" debug t3-prefill --model "$M" --in "$COND" --out "$SCRATCH/x.st"
no_file debug "$SCRATCH/x.st" "$SCRATCH"/x.st.*.tmp

# Text
expect_error empty-text "text is empty" "$VOCIS" tokens --model "$M" --t3-cond "$COND" --text "" -q
expect_error blank-text "text is empty" "$VOCIS" tokens --model "$M" --t3-cond "$COND" --text "   " -q
big=$(head -c 100000 /dev/zero | tr '\0' 'a' | sed 's/a\{9\}/& /g')
expect_error huge-text "more than the model" "$VOCIS" tokens --model "$M" --t3-cond "$COND" --text "$big" -q

# Model files
head -c 5000 "$M/t3_cfg.safetensors" >"$SCRATCH/trunc.st"
expect_error truncated-safetensors "t3_cfg.safetensors.*truncated" "${run[@]}" "$(model_with_t3 "$SCRATCH/trunc.st" trunc)"
write_st "$SCRATCH/hlen.st" '{}' 0 99999999
expect_error header-past-eof "header length .* exceeds" "${run[@]}" "$(model_with_t3 "$SCRATCH/hlen.st" hlen)"
write_st "$SCRATCH/nojson.st" 'this is not json' 0
expect_error non-json-header "not valid JSON" "${run[@]}" "$(model_with_t3 "$SCRATCH/nojson.st" nojson)"
write_st "$SCRATCH/dtype.st" '{"a":{"dtype":"F8","shape":[2],"data_offsets":[0,2]}}' 2
expect_error unknown-dtype "unknown dtype 'F8'" "${run[@]}" "$(model_with_t3 "$SCRATCH/dtype.st" dtype)"
write_st "$SCRATCH/overlap.st" '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}' 12
expect_error overlapping-spans "overlapping" "${run[@]}" "$(model_with_t3 "$SCRATCH/overlap.st" overlap)"
expect_error missing-tensor "missing tensor 'tfmr.layers.0.input_layernorm.weight'" "${run[@]}" "$(model_with_t3 "$COND" missing)"
write_st "$SCRATCH/shape.st" '{"tfmr.layers.0.input_layernorm.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}' 16
expect_error wrong-shape "input_layernorm.weight': expected shape \[\*\], found \[2, 2\]" "${run[@]}" "$(model_with_t3 "$SCRATCH/shape.st" shape)"

# Hyper-parameter override files
echo '{"dims": {"t3": {"llama": {"num_attention_heads": 3}}}}' >"$SCRATCH/heads.json"
expect_error config-heads "q_proj.weight': expected shape \[192, 128\], found \[128, 128\]" "${run[@]}" "$M" --config "$SCRATCH/heads.json"
echo '{"dims": ' >"$SCRATCH/broken.json"
expect_error config-not-json "broken.json: invalid JSON" "${run[@]}" "$M" --config "$SCRATCH/broken.json"
echo '{"llama_fixed": {"rms_norm_eps": -1}}' >"$SCRATCH/eps.json"
expect_error config-range "rms_norm_eps' = -1 is outside" "${run[@]}" "$M" --config "$SCRATCH/eps.json"

# Voice conditioning
head -c 3000 "$M/conds.pt" >"$SCRATCH/conds_trunc.pt"
expect_error truncated-conds "conds_trunc.pt" "$VOCIS" tokens --model "$M" --t3-cond "$SCRATCH/conds_trunc.pt" --text "$T" -q
head -c 4096 /dev/urandom >"$SCRATCH/garbage.pt"
expect_error garbage-conds "garbage.pt" "$VOCIS" tokens --model "$M" --t3-cond "$SCRATCH/garbage.pt" --text "$T" -q
expect_error missing-cond-file "cannot open" "$VOCIS" tokens --model "$M" --t3-cond "$SCRATCH/none.safetensors" --text "$T" -q

finish
