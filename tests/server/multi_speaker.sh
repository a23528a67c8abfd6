#!/usr/bin/env bash
# `vocis serve` with several VibeVoice voices (issue 23 item 4): 'voice' as a JSON list, one
# saved recording per "Speaker N" of the script, gives the audio of `vocis speak --voice A
# --voice B`; a one-name list is the string; a list for another family, an empty list, a
# non-string or unknown element, or more / fewer voices than speakers is a 400 naming the field.
# Concurrent VibeVoice requests batch and give each the bytes it gets alone.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
. "$(dirname "$0")/lib.sh"
D=$DATA/vibevoice
save_vv_voices "$SCRATCH/voices"
SCRIPT='Speaker 1: Hello, welcome back to the show!\nSpeaker 2: Thanks, it is great to be here.'

"$VOCIS" speak --threads 2 -q --model "$D/model" --voice "$D/inputs/voice_0.wav" --voice "$D/inputs/voice_1.wav" \
    --text "$(printf '%b' "$SCRIPT")" --seed 77 -o "$SCRATCH/cli.wav" || bad "vocis speak with two voices failed"
start_server --model vv="$D/model" --model en="$DATA/chatterbox/ckpt" --voices "$SCRATCH/voices" --threads 2
S=$URL/v1/audio/speech
param() { grep -qF "\"param\":\"$1\"" "$SCRATCH/body" && ok "  names '$1': $(sed 's/.*"message":"\([^"]*\)".*/\1/' "$SCRATCH/body")" \
    || bad "  param is not '$1': $(cat "$SCRATCH/body")"; }

req "two voices for a two-speaker script" 200 "" "$S" \
    -d "{\"model\":\"vv\",\"voice\":[\"alice\",\"bob\"],\"input\":\"$SCRIPT\",\"seed\":77,\"response_format\":\"wav\"}"
cmp -s "$SCRATCH/body" "$SCRATCH/cli.wav" && ok "  = vocis speak --voice voice_0.wav --voice voice_1.wav --seed 77" \
    || bad "  the WAV differs from vocis speak's ($(stat -c %s "$SCRATCH/body") / $(stat -c %s "$SCRATCH/cli.wav") bytes)"
req "the voices swapped" 200 "" "$S" \
    -d "{\"model\":\"vv\",\"voice\":[\"bob\",\"alice\"],\"input\":\"$SCRIPT\",\"seed\":77,\"response_format\":\"wav\"}"
cmp -s "$SCRATCH/body" "$SCRATCH/cli.wav" && bad "  swapping the voices changed nothing" || ok "  other audio"
req "two voices, SSE" 200 "" -N "$S" \
    -d "{\"model\":\"vv\",\"voice\":[\"alice\",\"bob\"],\"input\":\"$SCRIPT\",\"seed\":77,\"response_format\":\"pcm\",\"stream_format\":\"sse\"}"
grep -q '^data: {"type":"speech.audio.done"' "$SCRATCH/body" && ok "  the stream ends with speech.audio.done" || bad "  SSE: $(tail -c 300 "$SCRATCH/body")"

req "a one-name list" 200 "" "$S" -d '{"model":"vv","voice":["alice"],"input":"Speaker 1: Hello, welcome back to the show!","seed":77,"response_format":"wav"}'
cp "$SCRATCH/body" "$SCRATCH/list1.wav"
req "the name as a string" 200 "" "$S" -d '{"model":"vv","voice":"alice","input":"Speaker 1: Hello, welcome back to the show!","seed":77,"response_format":"wav"}'
cmp -s "$SCRATCH/body" "$SCRATCH/list1.wav" && ok "  a one-name list = the string" || bad "  a one-name list differs from the string"

req "a list for Chatterbox" 400 invalid_value "$S" -d '{"model":"en","voice":["alice","bob"],"input":"Hi."}'
param voice
req "an empty list" 400 invalid_value "$S" -d "{\"model\":\"vv\",\"voice\":[],\"input\":\"$SCRIPT\"}"
param voice
req "a number in the list" 400 invalid_type "$S" -d "{\"model\":\"vv\",\"voice\":[\"alice\",2],\"input\":\"$SCRIPT\"}"
param 'voice[1]'
req "null in the list" 400 invalid_type "$S" -d "{\"model\":\"vv\",\"voice\":[null,\"bob\"],\"input\":\"$SCRIPT\"}"
param 'voice[0]'
req "an unknown name" 400 voice_not_found "$S" -d "{\"model\":\"vv\",\"voice\":[\"alice\",\"bob\",\"nobody\"],\"input\":\"$SCRIPT\"}"
param 'voice[2]'
req "an invalid name" 400 invalid_voice "$S" -d "{\"model\":\"vv\",\"voice\":[\"../alice\",\"bob\"],\"input\":\"$SCRIPT\"}"
param 'voice[0]'
req "a built-in name" 400 voice_required "$S" -d "{\"model\":\"vv\",\"voice\":[\"alice\",\"alloy\"],\"input\":\"$SCRIPT\"}"
param 'voice[1]'
req "three voices, two speakers" 400 invalid_value "$S" -d "{\"model\":\"vv\",\"voice\":[\"alice\",\"bob\",\"alice\"],\"input\":\"$SCRIPT\"}"
param voice
grep -q "names 3 voices but the input has 2 speakers" "$SCRATCH/body" && ok "  says 3 voices, 2 speakers" || bad "  message: $(cat "$SCRATCH/body")"
req "one voice in a list, two speakers" 400 invalid_value "$S" -d "{\"model\":\"vv\",\"voice\":[\"alice\"],\"input\":\"$SCRIPT\"}"
param voice
req "two voices for plain text" 400 invalid_value "$S" -d '{"model":"vv","voice":["alice","bob"],"input":"Just one person talking."}'
param voice
req "labels without text" 400 invalid_value "$S" -d '{"model":"vv","voice":["alice","bob"],"input":"Speaker 1:\nSpeaker 2:"}'
param input
many=$(printf '"alice",%.0s' $(seq 1 17)); many="[${many%,}]"
req "17 voices" 400 invalid_value "$S" -d "{\"model\":\"vv\",\"voice\":$many,\"input\":\"$SCRIPT\"}"
param voice

# VibeVoice requests batch (issue 23 item 2): three seeded podcasts at once give the bytes each gives alone
curl -s "$URL/v1/models" | grep -qF '"id":"vv","object":"model","created":0,"owned_by":"vocis","kind":"vibevoice","batch":4' \
    && ok "/v1/models: vv batches 4" || bad "vv batch: $(curl -s "$URL/v1/models")"
for sd in 77 78 79; do
    curl -s -o "$SCRATCH/solo$sd.wav" "$S" \
        -d "{\"model\":\"vv\",\"voice\":[\"alice\",\"bob\"],\"input\":\"$SCRIPT\",\"seed\":$sd,\"response_format\":\"wav\"}"
done
curl -s "$URL/metrics" >"$SCRATCH/m0"
pids=()
for sd in 77 78 79; do
    curl -s --max-time 120 -o "$SCRATCH/many$sd.wav" "$S" \
        -d "{\"model\":\"vv\",\"voice\":[\"alice\",\"bob\"],\"input\":\"$SCRIPT\",\"seed\":$sd,\"response_format\":\"wav\"}" &
    pids+=($!)
done
wait "${pids[@]}" # not the server
same=1
for sd in 77 78 79; do cmp -s "$SCRATCH/solo$sd.wav" "$SCRATCH/many$sd.wav" && [ -s "$SCRATCH/solo$sd.wav" ] || same=0; done
[ $same = 1 ] && ok "three concurrent podcasts = each alone (seeds 77-79)" || bad "concurrent VibeVoice audio differs from solo"
curl -s "$URL/metrics" >"$SCRATCH/m1"
steps() { sed -n "s/^vocis_batch_$1{model=\"vv\"} //p" "$2"; }
ds=$(($(steps steps_total "$SCRATCH/m1") - $(steps steps_total "$SCRATCH/m0")))
dr=$(($(steps rows_total "$SCRATCH/m1") - $(steps rows_total "$SCRATCH/m0")))
[ "$ds" -gt 0 ] && [ "$dr" -ge "$ds" ] && [ "$(steps active "$SCRATCH/m1")" = 0 ] \
    && ok "/metrics: the concurrent requests took $ds steps carrying $dr sequences" || bad "vv batch metrics: $ds steps, $dr rows"
stop_server
[ "$SRV_RC" = 0 ] || bad "server exit $SRV_RC"
finish
