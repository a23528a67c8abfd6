#!/usr/bin/env bash
# Chatterbox CAMPPlus speaker x-vector against upstream's golden outputs (tiny checkpoint, golden 04_campplus):
# Kaldi fbank minus time-mean and the x-vector of ref_16k_torchaudio. Tolerances from
# tests/data/chatterbox/golden/README.md. Then bad input: too-short audio and a wrong input shape must end
# with a non-zero exit and a one-line message.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
IN=$DATA/chatterbox/golden/01_audio_inputs.safetensors
G=$DATA/chatterbox/golden/04_campplus.safetensors

"$VOCIS" debug campplus --model "$M" --in "$IN" --out "$SCRATCH/campplus.safetensors" --threads 2
"$CMP" "$G" "$SCRATCH/campplus.safetensors" fbank_meannorm:5e-3 xvector:1e-5

# write_st FILE NAME SHAPE_JSON NFLOATS: a safetensors file with one zero-filled F32 tensor.
write_st() {
    local header="{\"$2\":{\"dtype\":\"F32\",\"shape\":$3,\"data_offsets\":[0,$(($4 * 4))]}}"
    while [ $(((${#header} + 8) % 8)) -ne 0 ]; do header="$header "; done
    local len=${#header}
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x00\\x00\\x00\\x00' \
        $((len & 255)) $(((len >> 8) & 255)) $(((len >> 16) & 255)) $(((len >> 24) & 255)))" >"$1"
    printf '%s' "$header" >>"$1"
    head -c $(($4 * 4)) /dev/zero >>"$1"
}

fails=0
# expect_error NAME PATTERN FILE: the stage must fail (not by a signal) with one stderr line matching PATTERN.
expect_error() {
    local rc=0
    timeout 120 "$VOCIS" debug campplus --model "$M" --in "$3" --out "$SCRATCH/bad.safetensors" \
        >/dev/null 2>"$SCRATCH/err" || rc=$?
    local lines; lines=$(wc -l <"$SCRATCH/err")
    if [ $rc -eq 0 ] || [ $rc -ge 124 ] || [ "$lines" -ne 1 ] || ! grep -qE -- "$2" "$SCRATCH/err"; then
        echo "FAIL $1: rc=$rc, $lines stderr line(s):"; sed 's/^/    /' "$SCRATCH/err" | head -5
        fails=$((fails + 1))
    else
        echo "ok   $1: $(cat "$SCRATCH/err")"
    fi
    if [ -e "$SCRATCH/bad.safetensors" ]; then echo "FAIL $1: output file left behind"; fails=$((fails + 1)); fi
}

write_st "$SCRATCH/short.safetensors" ref_16k_torchaudio "[1,300]" 300
expect_error too-short "too short" "$SCRATCH/short.safetensors"
write_st "$SCRATCH/short2.safetensors" ref_16k_torchaudio "[719]" 719
expect_error too-short-for-tdnn "too short" "$SCRATCH/short2.safetensors"
write_st "$SCRATCH/shape.safetensors" ref_16k_torchaudio "[2,1000]" 2000
expect_error bad-shape "expected shape" "$SCRATCH/shape.safetensors"
write_st "$SCRATCH/noname.safetensors" ref_24k "[1000]" 1000
expect_error missing-input "missing input tensor 'ref_16k_torchaudio'" "$SCRATCH/noname.safetensors"
[ $fails -eq 0 ] || { echo "$fails bad-input case(s) failed"; exit 1; }
