#!/usr/bin/env bash
# Starts N `vocis serve` replicas (default 2) on 127.0.0.1 behind Debian's nginx
# (deploy/nginx.conf), waits until every replica's /ready answers, sends a few
# speech requests through nginx and shows how they spread over the replicas,
# then stops everything (or keeps it running with --keep until Ctrl-C).
#   deploy/scale-out.sh --model DIR [--replicas N] [--port 8080] [--requests 8] [--keep] [--vocis PATH]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MODEL="" REPLICAS=2 PORT=8080 REQUESTS=8 KEEP=0 VOCIS=${VOCIS:-$HERE/../build/vocis} EXTRA=()
while [ $# -gt 0 ]; do
    case $1 in
    --model) MODEL=$2; shift 2 ;;
    --replicas) REPLICAS=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --requests) REQUESTS=$2; shift 2 ;;
    --vocis) VOCIS=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --) shift; EXTRA=("$@"); break ;;   # further `vocis serve` options for every replica
    *) echo "scale-out.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$MODEL" ] || { echo "usage: $0 --model DIR [--replicas N] [--port P] [--requests N] [--keep] [-- serve options]" >&2; exit 2; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "scale-out.sh: nginx is not installed (apt-get install nginx-light)" >&2; exit 3; }
command -v curl >/dev/null || { echo "scale-out.sh: curl is not installed" >&2; exit 3; }
WORK=$(mktemp -d /tmp/vocis-scale.XXXXXX)
mkdir -p "$WORK"/{body,proxy,fastcgi,uwsgi,scgi}
PIDS=()
cleanup() {
    [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
    [ -n "${SLEEPER:-}" ] && kill "$SLEEPER" 2>/dev/null || true
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; done
    [ "${KEEP_WORK:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

ups=""
for i in $(seq 1 "$REPLICAS"); do
    "$VOCIS" serve --model "$MODEL" --host 127.0.0.1 --port 0 --port-file "$WORK/port$i" "${EXTRA[@]}" 2>"$WORK/replica$i.log" &
    PIDS+=($!)
done
for i in $(seq 1 "$REPLICAS"); do
    for _ in $(seq 1 600); do [ -s "$WORK/port$i" ] && break; sleep 0.1; done
    [ -s "$WORK/port$i" ] || { echo "replica $i did not start:"; cat "$WORK/replica$i.log"; exit 1; }
    p=$(cat "$WORK/port$i")
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$p/ready" >/dev/null && break; sleep 0.1; done
    curl -sf "http://127.0.0.1:$p/ready" >/dev/null || { echo "replica $i is not ready"; exit 1; }
    echo "replica $i: http://127.0.0.1:$p (ready)"
    ups+="        server 127.0.0.1:$p max_fails=2 fail_timeout=5s;"$'\n'
done
sed -e "s|@PREFIX@|$WORK|g" -e "s|@LISTEN@|127.0.0.1:$PORT|g" "$HERE/nginx.conf" |
    awk -v ups="$ups" '{ if ($0 == "@UPSTREAMS@") printf "%s", ups; else print }' >"$WORK/nginx.conf"
"$NGINX" -t -q -p "$WORK" -c "$WORK/nginx.conf" -g 'daemon on;' 2>&1 | grep -v 'could not open error log' >&2 || true
"$NGINX" -p "$WORK" -c "$WORK/nginx.conf" -g 'daemon on;' 2>&1 | grep -v 'could not open error log' >&2 || true
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
echo "nginx: http://127.0.0.1:$PORT -> $REPLICAS replicas"

# concurrent requests through nginx; least_conn sends each to the least busy replica
rpids=()
for k in $(seq 1 "$REQUESTS"); do
    curl -s -o "$WORK/out$k.wav" -w "%{http_code}\n" --max-time 300 "http://127.0.0.1:$PORT/v1/audio/speech" \
        -H 'Content-Type: application/json' \
        -d "{\"model\":\"tts-1\",\"input\":\"Request $k through nginx.\",\"response_format\":\"wav\",\"seed\":$k}" >"$WORK/code$k" &
    rpids+=($!)
done
[ ${#rpids[@]} -eq 0 ] || wait "${rpids[@]}" # (a bare wait would wait for the replicas too)
okn=$(cat "$WORK"/code* | grep -c '^200$' || true)
# streaming passes through unbuffered
curl -s -N -o /dev/null --max-time 300 "http://127.0.0.1:$PORT/v1/audio/speech" \
    -d '{"input":"Streaming through nginx.","response_format":"pcm","stream_format":"sse"}'
echo "$okn of $REQUESTS requests answered 200"
for i in $(seq 1 "$REPLICAS"); do
    echo "replica $i served $(grep -c 'POST /v1/audio/speech 200' "$WORK/replica$i.log" || true) speech requests"
done
if [ "$KEEP" = 1 ]; then
    echo "running; Ctrl-C stops nginx and the replicas"
    while :; do sleep 3600 & SLEEPER=$!; wait "$SLEEPER"; done # wait, unlike a foreground sleep, lets INT / TERM in
fi
[ "$okn" -eq "$REQUESTS" ]
