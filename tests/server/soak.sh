#!/usr/bin/env bash
# Soak: 200 mixed good and bad requests, 8 at a time, against one `vocis serve` (tiny checkpoint,
# --batch 4, so good requests batch their T3 steps). No crash, every response has an expected
# status, the server still answers, exits 0 on SIGTERM, its peak RSS stays bounded, and (in the
# sanitizer build the CI runs next) no sanitizer report. Bounded: at most 200 requests, 60 s each.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
M=$DATA/chatterbox/ckpt
rm -f "$SCRATCH/server_all.log" "$SCRATCH/server.log"
start_server --model "$M" --batch 4 --max-queue 64 --threads 2 --precision exact
head -c 2000000 /dev/zero | tr '\0' 'a' >"$SCRATCH/big.txt"
one() { # K: one request of kind K % 8; prints "<kind> <status>"
    local k=$1 s
    case $((k % 8)) in
    0|1|2) s=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$URL/v1/audio/speech" \
               -d "{\"model\":\"tts-1\",\"voice\":\"alloy\",\"input\":\"Request number $k.\",\"response_format\":\"wav\",\"seed\":$k,\"max_new_tokens\":30}") ;;
    3) s=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$URL/v1/audio/speech" -d '{"model":') ;;
    4) s=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$URL/v1/audio/speech" -d '{"model":"tts-1","voice":"../x","input":"hi"}') ;;
    5) s=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$URL/v1/audio/speech" --data-binary "@$SCRATCH/big.txt") ;;
    6) s=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$URL/v1/audio/speech" \
               -d "{\"model\":\"tts-1\",\"input\":\"Streamed $k.\",\"response_format\":\"pcm\",\"stream_format\":\"sse\",\"seed\":1,\"max_new_tokens\":20}") ;;
    7) s=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$URL/v1/models") ;;
    esac
    echo "$((k % 8)) $s"
}
export -f one
export URL SCRATCH
seq 0 199 | xargs -P 8 -I{} bash -c 'one {}' >"$SCRATCH/results.txt"
n=$(wc -l <"$SCRATCH/results.txt")
[ "$n" -eq 200 ] && ok "200 responses" || bad "$n responses of 200"
# expected statuses per kind: 200 good, 400 bad JSON, 400 bad voice, 413 too large, 200 SSE, 200 models
while read -r kind status; do
    case $kind in 0|1|2|6|7) want=200 ;; 3|4) want=400 ;; 5) want=413 ;; esac
    [ "$status" = "$want" ] || bad "request kind $kind: status $status, expected $want"
done <"$SCRATCH/results.txt"
[ $fails -eq 0 ] && ok "every status as expected"
health_ok "after the soak"
rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$SRV_PID/status" 2>/dev/null)
if [ -n "$rss_kb" ] && [ "$rss_kb" -lt 4000000 ]; then ok "server peak RSS $((rss_kb / 1024)) MiB"; else bad "server peak RSS ${rss_kb:-?} kB"; fi
stop_server TERM
[ "$SRV_RC" -eq 0 ] && ok "SIGTERM: exit 0" || bad "SIGTERM exit $SRV_RC"
cat "$SCRATCH/server.log" >>"$SCRATCH/server_all.log"
if grep -q "Sanitizer" "$SCRATCH/server_all.log"; then bad "sanitizer report:"; grep -m3 "Sanitizer" "$SCRATCH/server_all.log"; fi
[ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo "soak passed"
