#!/usr/bin/env bash
# Chatterbox voice encoder against upstream's golden outputs (tiny checkpoint, golden 02_voice_encoder):
# ref_16k_soxr -> silence trim -> mel -> partials -> LSTM -> speaker_emb, then bad inputs.
# Tolerances from tests/data/chatterbox/golden/README.md (VE speaker embedding: abs 1e-5).
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
IN=$DATA/chatterbox/golden/01_audio_inputs.safetensors
G=$DATA/chatterbox/golden/02_voice_encoder.safetensors
. "$(dirname "$0")/../cli/lib.sh"

# mel / partials are linear power spectra (no log): the golden maximum is 4.65, so 5e-5 is ~1e-5
# relative to the largest value (measured: 1e-6; float32 rounding of |X|² alone is ~5e-7 there).
for t in 1 2 3; do
    if "$VOCIS" debug voice-encoder --model "$M" --in "$IN" --out "$SCRATCH/ve$t.safetensors" --threads $t; then
        "$CMP" "$G" "$SCRATCH/ve$t.safetensors" trim_interval:exact mel:5e-5 partials:5e-5 \
            partial_embeds:1e-5 utt_embed:1e-5 speaker_emb:1e-5 || fails=$((fails + 1))
    else
        echo "FAIL voice-encoder stage ($t threads)"; fails=$((fails + 1))
    fi
done
# the same bits for any thread count (fixed LSTM slices, frames split without reductions)
for t in 2 3; do
    "$CMP" "$SCRATCH/ve1.safetensors" "$SCRATCH/ve$t.safetensors" mel:exact partials:exact partial_embeds:exact \
        speaker_emb:exact || fails=$((fails + 1))
done

# write_st FILE NAME SHAPE_JSON NBYTES [BYTE_ESCAPES]: a one-tensor F32 safetensors file whose data is
# BYTE_ESCAPES (a printf pattern of 4 bytes) repeated NBYTES/4 times, or zeros.
write_st() {
    local file=$1 name=$2 shape=$3 nbytes=$4 pat=${5:-}
    local header="{\"$name\":{\"dtype\":\"F32\",\"shape\":$shape,\"data_offsets\":[0,$nbytes]}}"
    local len=${#header}
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x00\\x00\\x00\\x00' \
        $((len & 255)) $(((len >> 8) & 255)) $(((len >> 16) & 255)) $(((len >> 24) & 255)))" >"$file"
    printf '%s' "$header" >>"$file"
    if [ -z "$pat" ]; then
        head -c "$nbytes" /dev/zero >>"$file"
    else
        for ((i = 0; i < nbytes / 4; i++)); do printf "$pat"; done >>"$file"
    fi
}
half='\x00\x00\x00\x3f'  # 0.5f
nan='\x00\x00\xc0\x7f'   # quiet NaN

ve=("$VOCIS" debug voice-encoder --model "$M" --out "$SCRATCH/bad.safetensors" --threads 2 --in)
write_st "$SCRATCH/zeros.st" ref_16k_soxr '[16000]' 64000
expect_error all-zero "reference audio is silent" "${ve[@]}" "$SCRATCH/zeros.st"
write_st "$SCRATCH/short.st" ref_16k_soxr '[150]' 600 "$half"
expect_error few-samples "too short: 150 samples after trimming" "${ve[@]}" "$SCRATCH/short.st"
write_st "$SCRATCH/nan.st" ref_16k_soxr '[1,4000]' 16000 "$nan"
expect_error not-finite "sample 0 is not finite" "${ve[@]}" "$SCRATCH/nan.st"
write_st "$SCRATCH/shape.st" ref_16k_soxr '[2,100]' 800 "$half"
expect_error wrong-shape "expected shape \[L\] or \[1, L\]" "${ve[@]}" "$SCRATCH/shape.st"
write_st "$SCRATCH/other.st" ref_24k '[1000]' 4000 "$half"
expect_error missing-input "missing input tensor 'ref_16k_soxr'" "${ve[@]}" "$SCRATCH/other.st"
expect_error extra-option "unknown option '--bogus'" "${ve[@]}" "$IN" --bogus
no_file bad-output "$SCRATCH/bad.safetensors"

# a model folder whose ve.safetensors lacks the projection
mkdir -p "$SCRATCH/model"
write_st "$SCRATCH/model/ve.safetensors" lstm.weight_ih_l0 '[256,40]' 40960
expect_error missing-weight "missing tensor 'lstm.weight_hh_l0'" \
    "$VOCIS" debug voice-encoder --model "$SCRATCH/model" --in "$IN" --out "$SCRATCH/bad.safetensors"
finish
