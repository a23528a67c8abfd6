#!/usr/bin/env bash
# `vocis serve` logs the library's advisories (on_warning) with the request id: a VibeVoice
# script line that cannot be used is named in the log, and the request still succeeds.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH/voices"
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
. "$(dirname "$0")/lib.sh"
D=$DATA/vibevoice
save_vv_voices "$SCRATCH/voices"

start_server --model "$D/model" --voices "$SCRATCH/voices" --threads 2
req "speech with an unusable script line" 200 "" "$URL/v1/audio/speech" -d \
    '{"model":"model","voice":"alice","input":"Intro before the labels\nSpeaker 1: Hello, welcome\nback to the show!","response_format":"wav","seed":4321}'
stop_server
id=$(sed -n 's/^vocis serve: req=\([0-9]*\) POST \/v1\/audio\/speech 200.*/\1/p' "$SCRATCH/server.log")
if [ -n "$id" ] && grep -q "^vocis serve: req=$id warning: script line 1 comes before the first 'Speaker N:' line and is skipped: 'Intro before the labels'$" "$SCRATCH/server.log"; then
    ok "warning logged with the request id ($id)"
else
    bad "no warning line for request '$id' in the log:"; sed 's/^/    /' "$SCRATCH/server.log"
fi
[ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo "all cases passed"
