#!/usr/bin/env bash
# Chatterbox S3 speech tokenizer against upstream's golden outputs (tiny checkpoint, golden 03_s3tokenizer):
# both calls of prepare_conditionals (S3Gen reference on ref_16k_torchaudio, T3 prompt on
# ref_16k_soxr[:96000] with max_len 150) from 01_audio_inputs. Tokens and lengths exact, log-mels 2e-4
# (tolerances from tests/data/chatterbox/golden/README.md). Then bad input: audio too short for one frame.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
IN=$DATA/chatterbox/golden/01_audio_inputs.safetensors
G=$DATA/chatterbox/golden/03_s3tokenizer.safetensors

"$VOCIS" debug s3tokenizer --model "$M" --in "$IN" --out "$SCRATCH/s3tok.safetensors" --threads 2
"$CMP" "$G" "$SCRATCH/s3tok.safetensors" \
    s3gen_log_mel:2e-4 s3gen_mel_len:exact s3gen_tokens:exact s3gen_token_lens:exact \
    t3cond_log_mel:2e-4 t3cond_mel_len:exact t3cond_tokens:exact t3cond_token_lens:exact \
    t3cond_prompt_tokens:exact s3gen_prompt_tokens:exact
# the same bits with 1 and 3 threads as with 2 (fixed chunks, each output written by one of them)
for t in 1 3; do
    "$VOCIS" debug s3tokenizer --model "$M" --in "$IN" --out "$SCRATCH/s3tok$t.safetensors" --threads $t
    "$CMP" "$SCRATCH/s3tok.safetensors" "$SCRATCH/s3tok$t.safetensors" s3gen_log_mel:exact s3gen_tokens:exact \
        t3cond_log_mel:exact t3cond_tokens:exact
done

# write_st FILE HEADER_JSON DATA_BYTES: a safetensors file by hand (zero-filled data).
write_st() {
    local file=$1 header=$2 nbytes=$3 len=${#2}
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x' \
        $((len & 255)) $(((len >> 8) & 255)) $(((len >> 16) & 255)) $(((len >> 24) & 255)) 0 0 0 0)" >"$file"
    printf '%s' "$header" >>"$file"
    head -c "$nbytes" /dev/zero >>"$file"
}

. "$(dirname "$0")/../cli/lib.sh" # expect_error (counts failures in $fails)

# 100 samples at 16 kHz: not even one 10 ms frame
write_st "$SCRATCH/short.st" '{"ref_16k_torchaudio":{"dtype":"F32","shape":[1,100],"data_offsets":[0,400]},"ref_16k_soxr":{"dtype":"F32","shape":[100],"data_offsets":[400,800]},"ref_24k":{"dtype":"F32","shape":[1500],"data_offsets":[800,6800]}}' 6800
expect_error too-short "ref_16k_torchaudio: S3 tokenizer: audio of 100 samples is too short" \
    "$VOCIS" debug s3tokenizer --model "$M" --in "$SCRATCH/short.st" --out "$SCRATCH/x.st"
# a 2-D input that is not [1, L]
write_st "$SCRATCH/stereo.st" '{"ref_16k_torchaudio":{"dtype":"F32","shape":[2,400],"data_offsets":[0,3200]},"ref_16k_soxr":{"dtype":"F32","shape":[400],"data_offsets":[3200,4800]},"ref_24k":{"dtype":"F32","shape":[1500],"data_offsets":[4800,10800]}}' 10800
expect_error not-mono "'ref_16k_torchaudio': expected shape \[L\] or \[1, L\].*found \[2, 400\]" \
    "$VOCIS" debug s3tokenizer --model "$M" --in "$SCRATCH/stereo.st" --out "$SCRATCH/x.st"
[ ! -e "$SCRATCH/x.st" ] || { echo "FAIL: $SCRATCH/x.st was left behind"; fails=$((fails + 1)); }
[ $fails -eq 0 ] || { echo "$fails bad-input case(s) failed"; exit 1; }
