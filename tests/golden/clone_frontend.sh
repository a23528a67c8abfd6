#!/usr/bin/env bash
# Voice-cloning signal front ends against upstream's golden data (01 audio inputs, 05 reference mel):
# librosa's soxr_hq 24 -> 16 kHz resample, torchaudio's sinc resample, and S3Gen's 24 kHz reference mel.
# Tolerances from tests/data/chatterbox/README.md (soxr and the sinc kernel are deterministic: 1e-6;
# the reference mel: abs 1e-3).
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
G=$DATA/chatterbox/golden

"$VOCIS" debug resample --model "$M" --in "$G/01_audio_inputs.safetensors" --out "$SCRATCH/rs.safetensors"
"$CMP" "$G/01_audio_inputs.safetensors" "$SCRATCH/rs.safetensors" ref_16k_soxr:1e-6 ref_16k_torchaudio:1e-6

"$VOCIS" debug ref-mel --model "$M" --in "$G/01_audio_inputs.safetensors" --out "$SCRATCH/mel.safetensors"
"$CMP" "$G/05_ref_mel24k.safetensors" "$SCRATCH/mel.safetensors" mel:1e-3

# A waveform too short for the reflect padding is refused with one line, and no output is left.
. "$(dirname "$0")/../cli/lib.sh" # mkst
mkst "$SCRATCH/short.safetensors" ref_24k "[4]" 16
rm -f "$SCRATCH/bad.safetensors"
if "$VOCIS" debug ref-mel --model "$M" --in "$SCRATCH/short.safetensors" --out "$SCRATCH/bad.safetensors" 2>"$SCRATCH/err.txt"; then
    echo "FAIL: a 4-sample reference was accepted"; exit 1
fi
[ "$(wc -l <"$SCRATCH/err.txt")" -eq 1 ] || { echo "FAIL: expected one line:"; cat "$SCRATCH/err.txt"; exit 1; }
grep -q "too few" "$SCRATCH/err.txt" || { echo "FAIL: unexpected message: $(cat "$SCRATCH/err.txt")"; exit 1; }
[ ! -e "$SCRATCH/bad.safetensors" ] || { echo "FAIL: output left behind"; exit 1; }
echo "ok   clone front ends"
