#!/usr/bin/env bash
# `vocis serve` holds under slow and stalled clients (issue 23 item 5): a request whose
# headers (or body) trickle in a byte at a time is closed at --header-timeout
# (--body-timeout) although each byte would reset the idle timeout; 200 slow-loris
# clients do not keep /health from answering while a synthesis runs; headers larger than
# --max-header-kb are answered 431; --max-connections-per-ip refuses what is over it.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 SLOW=$4
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
. "$(dirname "$0")/lib.sh"
EN=$DATA/chatterbox/ckpt

start_server --model "$EN" --threads 2 --batch 1 --max-connections 32 --header-timeout 1 --body-timeout 1.5 \
    --idle-timeout 30 --quiet

# stalled clients are dropped at the deadline measured from their start, not an idle timeout
if "$SLOW" drop "$PORT" 5 1 1.5 >"$SCRATCH/drop.out" 2>&1; then ok "$(cat "$SCRATCH/drop.out")"
else bad "stalled clients:"; sed 's/^/    /' "$SCRATCH/drop.out"; fi
health_ok "stalled clients"

# 200 slow-loris clients while the model is busy: /health answers every 100 ms probe within 2 s
LONG=$(printf 'This is a long sentence to make the tiny model work for a while. %.0s' $(seq 1 20))
(for _ in 1 2 3 4; do curl -s --max-time 60 -o /dev/null -w '%{http_code}\n' "$URL/v1/audio/speech" \
    -d "{\"input\":\"$LONG\",\"response_format\":\"pcm\"}"; done >"$SCRATCH/busy.codes") &
busy=$!
for _ in $(seq 1 100); do grep -q 'vocis_in_flight 1' <(curl -s "$URL/metrics") && break; sleep 0.05; done
if "$SLOW" flood "$PORT" 200 5 2000 >"$SCRATCH/flood.out" 2>&1; then ok "$(tail -1 "$SCRATCH/flood.out")"
else bad "slow-loris flood:"; sed 's/^/    /' "$SCRATCH/flood.out"; fi
wait $busy
[ "$(sort -u "$SCRATCH/busy.codes")" = 200 ] && ok "the speech requests during the flood all answered 200" \
    || bad "speech during the flood: $(tr '\n' ' ' <"$SCRATCH/busy.codes")"
curl -s "$URL/metrics" >"$SCRATCH/metrics"
slow=$(sed -n 's/^vocis_connections_dropped_total{reason="slow"} //p' "$SCRATCH/metrics")
full=$(sed -n 's/^vocis_connections_dropped_total{reason="full"} //p' "$SCRATCH/metrics")
[ "${slow:-0}" -ge 10 ] && [ "${full:-0}" -ge 1 ] && ok "/metrics counts the dropped connections: $slow slow, $full for new ones" \
    || bad "dropped counters: slow='$slow' full='$full'"
req "speech after the flood" 200 "" "$URL/v1/audio/speech" -d '{"input":"Still here.","response_format":"wav"}'

# headers over --max-header-kb (32): 431
big=$(head -c 40000 /dev/zero | tr '\0' a)
req "40 KB of headers" 431 "" -H "X-Big: $big" "$URL/health"
req "20 KB of headers" 200 "" -H "X-Big: ${big:0:20000}" "$URL/health"
stop_server

# normal traffic beside 200 slow-loris clients (issue 23's target: within 1.5 x its idle latency;
# the test fails past 3 x, which only a server that lets slow clients hold it can reach): the same
# short request, five times idle, then five times during the flood (defaults, one worker)
start_server --model "$EN" --threads 2 --quiet
lat() { # prints the median wall ms of 5 identical requests
    for _ in 1 2 3 4 5; do
        curl -s -o /dev/null -w '%{time_total}\n' --max-time 60 "$URL/v1/audio/speech" \
            -d '{"input":"Short and sweet.","response_format":"wav","seed":5,"max_new_tokens":20}'
    done | sort -n | awk 'NR == 3 { printf "%d", $1 * 1000 }'
}
idle=$(lat)
"$SLOW" flood "$PORT" 200 12 5000 >"$SCRATCH/flood2.out" 2>&1 &
fl=$!
sleep 2
busy=$(lat)
wait $fl
if [ -n "$idle" ] && [ -n "$busy" ] && [ "$idle" -gt 0 ] && [ "$busy" -le $((idle * 3)) ]; then
    ok "a short request: median $idle ms idle, $busy ms beside 200 slow clients ($(awk -v a="$busy" -v b="$idle" 'BEGIN {printf "%.2f", a / b}') x)"
else
    bad "a short request: median ${idle:-?} ms idle, ${busy:-?} ms beside 200 slow clients (over 3 x)"
fi
stop_server

# --max-connections-per-ip 2: a third connection from 127.0.0.1 is refused while two are open
start_server --model "$EN" --threads 2 --max-connections-per-ip 2 --quiet
exec 3<>"/dev/tcp/127.0.0.1/$PORT" 4<>"/dev/tcp/127.0.0.1/$PORT"
sleep 0.2
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/health")
[ "$code" = 000 ] && ok "a third connection from one address is refused" || bad "third connection: $code"
exec 3>&- 4>&-
sleep 0.2
health_ok "closing the two connections"
stop_server
finish
