#!/usr/bin/env bash
# VibeVoice-Realtime bad input: missing / corrupt / wrong-kind presets, presets whose shapes do not
# fit the model, empty text, --diffusion-steps 0, no voice, text streaming on a non-Realtime
# model: one stderr line, non-zero exit, no output file left behind.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
D=$DATA/vibevoice-realtime
M=$D/model
P=$D/voices/streaming_model/en-TinyAda_woman.pt
rm -f "$SCRATCH"/bad*.wav "$SCRATCH"/bad*.voice

# mkpreset FILE H KV HD T LOWER UPPER: a flat preset (zeros) with these dims
mkpreset() {
    local f=$1 H=$2 kv=$3 hd=$4 T=$5 lo=$6 up=$7 hdr="{" off=0 e l n
    add() { local name=$1 shape=$2 cnt=$3; [ "$hdr" = "{" ] || hdr+=","
        hdr+="\"$name\":{\"dtype\":\"F32\",\"shape\":$shape,\"data_offsets\":[$off,$((off + 4 * cnt))]}"
        off=$((off + 4 * cnt)); }
    for e in lm:$lo tts_lm:$up neg_lm:$lo neg_tts_lm:$up; do
        n=${e##*:} e=${e%%:*}
        add "${e}_last_hidden_state" "[1,$T,$H]" $((T * H))
        for ((l = 0; l < n; l++)); do
            add "${e}_key_$l" "[1,$kv,$T,$hd]" $((kv * T * hd))
            add "${e}_value_$l" "[1,$kv,$T,$hd]" $((kv * T * hd))
        done
    done
    hdr+="}"
    local len=${#hdr}
    printf "$(printf '\\x%02x\\x%02x\\x00\\x00\\x00\\x00\\x00\\x00' $((len & 255)) $((len >> 8)))" >"$f"
    printf '%s' "$hdr" >>"$f"
    head -c "$off" /dev/zero >>"$f"
}

SPK=("$VOCIS" speak --model "$M" --text "Hello there, friend." -q)

expect_error rt-missing-preset "nope.pt: cannot open" "${SPK[@]}" --voice "$SCRATCH/nope.pt" -o "$SCRATCH/bad1.wav"
printf 'PK\003\004 this is not a zip' >"$SCRATCH/corrupt.pt"
expect_error rt-corrupt-preset "corrupt.pt" "${SPK[@]}" --voice "$SCRATCH/corrupt.pt" -o "$SCRATCH/bad2.wav"
head -c 20000 "$P" >"$SCRATCH/truncated.pt"
expect_error rt-truncated-preset "truncated.pt" "${SPK[@]}" --voice "$SCRATCH/truncated.pt" -o "$SCRATCH/bad3.wav"
echo "hello" >"$SCRATCH/text.pt"
expect_error rt-text-preset "text.pt" "${SPK[@]}" --voice "$SCRATCH/text.pt" -o "$SCRATCH/bad4.wav"
expect_error rt-conds-as-preset "conds.pt" "${SPK[@]}" --voice "$DATA/chatterbox/ckpt/conds.pt" -o "$SCRATCH/bad5.wav"
mkpreset "$SCRATCH/wide.voice" 32 2 16 3 2 3
expect_error rt-preset-hidden "hidden 32.*model.*64" "${SPK[@]}" --voice "$SCRATCH/wide.voice" -o "$SCRATCH/bad6.wav"
mkpreset "$SCRATCH/heads.voice" 64 4 16 3 2 3
expect_error rt-preset-heads "4 KV heads" "${SPK[@]}" --voice "$SCRATCH/heads.voice" -o "$SCRATCH/bad7.wav"
mkpreset "$SCRATCH/layers.voice" 64 2 16 3 2 2
expect_error rt-preset-layers "tts_lm.*2 cache layers.*3" "${SPK[@]}" --voice "$SCRATCH/layers.voice" -o "$SCRATCH/bad8.wav"
expect_error rt-preset-layers-convert "tts_lm.*2 cache layers" "$VOCIS" voice create --from-preset \
    "$SCRATCH/layers.voice" --model "$M" -o "$SCRATCH/bad1.voice"
expect_error rt-empty-text "empty" "$VOCIS" speak --model "$M" --voice "$P" --text "  " -q -o "$SCRATCH/bad9.wav"
expect_error rt-empty-stream "empty" "$VOCIS" speak --model "$M" --voice "$P" --stream-text -q \
    -o "$SCRATCH/bad10.wav" </dev/null
expect_error rt-steps "diffusion-steps" "${SPK[@]}" --voice "$P" --diffusion-steps 0 -o "$SCRATCH/bad11.wav"
expect_error rt-no-voice "voice preset" "${SPK[@]}" -o "$SCRATCH/bad12.wav"
expect_error rt-stream-not-realtime "VibeVoice-Realtime" "$VOCIS" speak --model "$DATA/vibevoice/model" \
    --voice "$DATA/vibevoice/inputs/voice_0.wav" --stream-text --text "Hi." -q -o "$SCRATCH/bad13.wav"
expect_error rt-missing-preset-convert "nope.pt" "$VOCIS" voice create --from-preset "$SCRATCH/nope.pt" \
    -o "$SCRATCH/bad2.voice"
expect_error rt-stage-no-voice "voice" "$VOCIS" debug vv-rt-lm-lower --model "$M" \
    --in "$D/03_lm_lower.safetensors" --out "$SCRATCH/bad.safetensors"
no_file rt-no-output "$SCRATCH"/bad*.wav "$SCRATCH"/bad*.voice "$SCRATCH/bad.safetensors"
finish
