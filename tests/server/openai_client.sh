#!/usr/bin/env bash
# The official openai npm client (package.json + package-lock.json here,
# installed with npm ci into the scratch folder) against `vocis serve` on the
# tiny checkpoint; its WAV must equal `vocis speak` with the same seed.
# Skips (exit 0 with a message) when node/npm or the npm registry is unavailable.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
. "$HERE/lib.sh"
command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node / npm are not installed"; exit 77; }
NPM_DIR=${VOCIS_NPM_DIR:-$SCRATCH/../server_npm}   # shared by the server tests, kept between runs
mkdir -p "$NPM_DIR"
if ! cmp -s "$HERE/package-lock.json" "$NPM_DIR/package-lock.json" || [ ! -d "$NPM_DIR/node_modules/openai" ]; then
    cp "$HERE/package.json" "$HERE/package-lock.json" "$NPM_DIR/"
    if ! (cd "$NPM_DIR" && timeout 300 npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >npm.log 2>&1); then
        echo "SKIP: npm ci failed (registry unreachable?): $(tail -3 "$NPM_DIR/npm.log")"; rm -f "$NPM_DIR/package-lock.json"; exit 77
    fi
fi
M=$DATA/chatterbox/ckpt
"$VOCIS" speak --model "$M" --text "Hello world, this is vocis." --seed 7 --threads 2 -q -o "$SCRATCH/ref.wav"
start_server --model "$M" --api-key sk-test --threads 2
cp "$HERE/openai_client.mjs" "$NPM_DIR/"
if timeout 120 node "$NPM_DIR/openai_client.mjs" "$URL" sk-test "$SCRATCH"; then ok "openai client cases"; else bad "openai client (rc $?)"; fi
cmp -s "$SCRATCH/npm.wav" "$SCRATCH/ref.wav" && ok "openai client WAV equals vocis speak --seed 7" || bad "openai client WAV differs"
health_ok "openai client"
stop_server TERM
[ "$SRV_RC" = 0 ] || bad "server exit $SRV_RC"
finish
