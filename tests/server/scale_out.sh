#!/usr/bin/env bash
# deploy/scale-out.sh: two replicas behind nginx, 8 requests spread over both.
# Skips with a message when nginx is not installed.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
{ command -v nginx || [ -x /usr/sbin/nginx ]; } >/dev/null || { echo "SKIP: nginx is not installed (apt-get install nginx-light)"; exit 0; }
for try in 1 2 3; do
    port=$((20000 + RANDOM % 30000))
    timeout 300 "$HERE/../../deploy/scale-out.sh" --model "$DATA/chatterbox/ckpt" --vocis "$VOCIS" --port "$port" \
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
