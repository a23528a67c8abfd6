#!/usr/bin/env bash
# Bad input to `vocis speak` / `vocis voice`: one-line error, non-zero exit,
# never a signal, and no partial output file left behind.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
M=$DATA/chatterbox/ckpt
G=$DATA/chatterbox/golden
. "$(dirname "$0")/lib.sh"


le64() { local v=$1; printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x' \
    $((v & 255)) $(((v >> 8) & 255)) $(((v >> 16) & 255)) $(((v >> 24) & 255)) 0 0 0 0)"; }
# voice FILE SPEAKER_DIM FILL: a voice with a T3 and an S3Gen part; FILL is the
# 4-byte pattern (printf escapes) of every speaker_emb value.
voice() {
    local file=$1 dim=$2 fill=$3 sb=$(($2 * 4))
    local h="{\"speaker_emb\":{\"dtype\":\"F32\",\"shape\":[1,$dim],\"data_offsets\":[0,$sb]},"
    h+="\"cond_prompt_speech_tokens\":{\"dtype\":\"I64\",\"shape\":[1,2],\"data_offsets\":[$sb,$((sb + 16))]},"
    h+="\"emotion_adv\":{\"dtype\":\"F32\",\"shape\":[1,1,1],\"data_offsets\":[$((sb + 16)),$((sb + 20))]},"
    h+="\"prompt_token\":{\"dtype\":\"I64\",\"shape\":[1,2],\"data_offsets\":[$((sb + 20)),$((sb + 36))]},"
    h+="\"prompt_feat\":{\"dtype\":\"F32\",\"shape\":[1,4,80],\"data_offsets\":[$((sb + 36)),$((sb + 1316))]},"
    h+="\"embedding\":{\"dtype\":\"F32\",\"shape\":[1,192],\"data_offsets\":[$((sb + 1316)),$((sb + 2084))]}}"
    { le64 ${#h}; printf '%s' "$h"; for _ in $(seq "$dim"); do printf "$fill"; done; head -c 2084 /dev/zero; } >"$file"
}

T="Hello world."
speak=("$VOCIS" speak --model "$M" --text "$T" --seed 0 -q)

# Voices
voice "$SCRATCH/shape.voice" 128 '\x00\x00\x00\x00'
expect_error voice-wrong-shape "speaker_emb.*expected shape \[1, 256\], found \[1, 128\]" "${speak[@]}" --voice "$SCRATCH/shape.voice" -o "$SCRATCH/a.wav"
voice "$SCRATCH/nan.voice" 256 '\x00\x00\xc0\x7f'
expect_error voice-nan "speaker_emb.*(NaN|finite)" "${speak[@]}" --voice "$SCRATCH/nan.voice" -o "$SCRATCH/a.wav"
expect_error voice-t3-only "no S3Gen reference" "${speak[@]}" --voice "$G/06_t3_cond.safetensors" -o "$SCRATCH/a.wav"
expect_error voice-missing "cannot open" "${speak[@]}" --voice "$SCRATCH/none.voice" -o "$SCRATCH/a.wav"
no_file voices "$SCRATCH/a.wav" "$SCRATCH"/a.wav.*.tmp

# Missing S3Gen tensors: s3gen.safetensors replaced by another checkpoint file
link_model "$M" "$SCRATCH/model"
rm "$SCRATCH/model/s3gen.safetensors"; ln -s "$(cd "$M" && pwd)/ve.safetensors" "$SCRATCH/model/s3gen.safetensors"
expect_error s3gen-missing-tensors "s3gen.safetensors: missing tensor 'flow\." "$VOCIS" speak --model "$SCRATCH/model" --text "$T" -q -o "$SCRATCH/b.wav"
no_file s3gen "$SCRATCH/b.wav" "$SCRATCH"/b.wav.*.tmp

# Output
expect_error unwritable-path "cannot|No such file" "${speak[@]}" -o "$SCRATCH/no/such/dir/c.wav"
no_file unwritable "$SCRATCH/no/such/dir/c.wav"
expect_error write-failure "writing to stdout failed|No space" bash -c '"$@" -o - >/dev/full' _ "${speak[@]}"
expect_error bad-format "--format must be" "${speak[@]}" --format aiff -o "$SCRATCH/d.wav"
expect_error flac-to-stdout "raw PCM" "${speak[@]}" --format flac -o -
expect_error no-output "-o FILE is required" "$VOCIS" speak --model "$M" --text "$T"
no_file output "$SCRATCH/d.wav"

# Text
expect_error empty-text "text is empty" "$VOCIS" speak --model "$M" --text "" -q -o "$SCRATCH/e.wav"
expect_error empty-stdin "text is empty" bash -c '"$@" </dev/null' _ "$VOCIS" speak --model "$M" -q -o "$SCRATCH/e.wav"
expect_error missing-text-file "cannot open" "$VOCIS" speak --model "$M" --text-file "$SCRATCH/none.txt" -q -o "$SCRATCH/e.wav"
expect_error both-texts "not both" "$VOCIS" speak --model "$M" --text a --text-file b -o "$SCRATCH/e.wav"
expect_error bad-cfm-steps "out of range" "${speak[@]}" --cfm-steps 0 -o "$SCRATCH/e.wav"
no_file text "$SCRATCH/e.wav" "$SCRATCH"/e.wav.*.tmp

# voice create
expect_error create-no-input "reference recording or --from-conds" "$VOCIS" voice create -o "$SCRATCH/f.voice"
head -c 2000 "$M/conds.pt" >"$SCRATCH/trunc.pt"
expect_error create-truncated "trunc.pt" "$VOCIS" voice create --from-conds "$SCRATCH/trunc.pt" -o "$SCRATCH/f.voice"
no_file create "$SCRATCH/f.voice" "$SCRATCH"/f.voice.*.tmp

finish
