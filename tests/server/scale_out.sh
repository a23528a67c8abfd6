#!/usr/bin/env bash
# deploy/scale-out.sh: two replicas behind nginx, 8 requests spread over both; then, with one
# replica full (its queue taken by requests sent to it directly), concurrent speech POSTs
# through nginx must all succeed: the full replica's 429 is passed on to the free one.
# Skips with a message when nginx is not installed.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
{ command -v nginx || [ -x /usr/sbin/nginx ]; } >/dev/null || { echo "SKIP: nginx is not installed (apt-get install nginx-light)"; exit 77; }
M=$DATA/chatterbox/ckpt
for try in 1 2 3; do
    port=$((20000 + RANDOM % 30000))
    timeout 300 "$HERE/../../deploy/scale-out.sh" --model "$M" --vocis "$VOCIS" --port "$port" \
        --requests 8 -- --threads 1 >"$SCRATCH/out" 2>&1
    rc=$?
    cat "$SCRATCH/out"
    grep -q 'Address already in use' "$SCRATCH/out" || break
done
[ $rc -eq 0 ] || { echo "FAIL scale-out.sh exit $rc"; exit 1; }
n1=$(sed -n 's/^replica 1 served \([0-9]*\) speech.*/\1/p' "$SCRATCH/out")
n2=$(sed -n 's/^replica 2 served \([0-9]*\) speech.*/\1/p' "$SCRATCH/out")
[ "${n1:-0}" -ge 1 ] && [ "${n2:-0}" -ge 1 ] || { echo "FAIL requests not spread: $n1 / $n2"; exit 1; }
echo "ok   requests spread over both replicas ($n1 / $n2)"

# ---- one replica full: POSTs through nginx go to the other one
SPID="" FILL=()
stop_all() {
    for p in "${FILL[@]}"; do kill "$p" 2>/dev/null; done
    if [ -n "$SPID" ]; then kill -TERM "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""; fi
}
trap stop_all EXIT
fail() { echo "FAIL $*"; stop_all; exit 1; }
for try in 1 2 3; do
    port=$((20000 + RANDOM % 30000))
    "$HERE/../../deploy/scale-out.sh" --model "$M" --vocis "$VOCIS" --port "$port" --requests 0 --keep \
        -- --threads 1 --max-queue 2 >"$SCRATCH/keep" 2>&1 &
    SPID=$!
    for _ in $(seq 1 1200); do grep -q '^running; Ctrl-C\|Address already in use' "$SCRATCH/keep" && break
        kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
    grep -q 'Address already in use' "$SCRATCH/keep" || break
    stop_all
done
grep -q '^running; Ctrl-C' "$SCRATCH/keep" || fail "scale-out.sh --keep did not come up: $(cat "$SCRATCH/keep")"
R1=http://127.0.0.1:$(sed -n 's|^replica 1: http://127.0.0.1:\([0-9]*\) .*|\1|p' "$SCRATCH/keep")
LONG=$(printf 'This is a long sentence to keep the first replica busy for a while. %.0s' $(seq 1 60))
for k in 1 2; do # one running, one waiting: --max-queue 2 is reached
    curl -s -o /dev/null --max-time 120 "$R1/v1/audio/speech" -d "{\"input\":\"$LONG\",\"response_format\":\"pcm\"}" &
    FILL+=($!)
done
for _ in $(seq 1 100); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$R1/ready")" = 503 ] && break; sleep 0.05; done
[ "$(curl -s -o /dev/null -w '%{http_code}' "$R1/ready")" = 503 ] || fail "replica 1 did not fill up"
for round in 1 2; do # least_conn sees both replicas idle (the filling requests bypass nginx): some go to replica 1
    pids=()
    for k in 1 2; do
        curl -s -o "$SCRATCH/full$round$k.wav" -w '%{http_code}\n' --max-time 120 "http://127.0.0.1:$port/v1/audio/speech" \
            -d "{\"input\":\"Round $round, request $k.\",\"response_format\":\"wav\",\"seed\":$k}" >"$SCRATCH/full$round$k.code" &
        pids+=($!)
    done
    wait "${pids[@]}"
done
codes=$(cat "$SCRATCH"/full*.code | tr '\n' ' ')
n429=$(curl -s "$R1/metrics" | sed -n 's/^vocis_requests_total{route="speech",status="429"} \([0-9]*\)$/\1/p')
[ "$(cat "$SCRATCH"/full*.code | grep -c '^200$')" -eq 4 ] || fail "with replica 1 full, POSTs through nginx answered: $codes"
[ "${n429:-0}" -ge 1 ] || fail "no request reached the full replica (nothing was retried): the case did not happen"
echo "ok   replica 1 full: 4 concurrent POSTs through nginx all 200 ($n429 answered 429 by replica 1 and resent)"
stop_all
