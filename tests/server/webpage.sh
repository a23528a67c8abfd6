#!/usr/bin/env bash
# The web page of `vocis serve` in headless Debian chromium driven by
# puppeteer-core (package.json + lock here). Skips with a message when
# chromium, node/npm or the npm registry is unavailable (the test does not
# install chromium: `apt-get install chromium` is ~300 MB).
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
. "$HERE/lib.sh"
CHROME=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROME" ] || { echo "SKIP: chromium is not installed (apt-get install chromium)"; exit 77; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node / npm are not installed"; exit 77; }
NPM_DIR=${VOCIS_NPM_DIR:-$SCRATCH/../server_npm}
mkdir -p "$NPM_DIR"
if ! cmp -s "$HERE/package-lock.json" "$NPM_DIR/package-lock.json" || [ ! -d "$NPM_DIR/node_modules/puppeteer-core" ]; then
    cp "$HERE/package.json" "$HERE/package-lock.json" "$NPM_DIR/"
    if ! (cd "$NPM_DIR" && timeout 300 npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >npm.log 2>&1); then
        echo "SKIP: npm ci failed (registry unreachable?): $(tail -3 "$NPM_DIR/npm.log")"; rm -f "$NPM_DIR/package-lock.json"; exit 77
    fi
fi
start_server --model "$DATA/chatterbox/ckpt" --model mtl="$DATA/chatterbox-mtl/ckpt" --voices "$SCRATCH/voices" --threads 2
cp "$HERE/webpage.mjs" "$NPM_DIR/"
export HOME=$SCRATCH   # chromium's profile and crash folders
if timeout 240 node "$NPM_DIR/webpage.mjs" "$URL" "$CHROME" "$DATA/chatterbox/golden/ref_24k.wav"; then ok "web page cases"; else bad "web page (rc $?)"; fi
grep -q 'POST /v1/audio/speech 200 .*model=ckpt' "$SCRATCH/server.log" && ok "the page's request reached the server" || bad "no speech request logged"
grep -q 'POST /v1/audio/speech 200 .*model=mtl' "$SCRATCH/server.log" && ok "the page's Multilingual request was served" || bad "no Multilingual request logged"
health_ok "web page"
stop_server TERM
[ "$SRV_RC" = 0 ] || bad "server exit $SRV_RC"

# VibeVoice: a voice picker per speaker of the script, the voices sent as a list
save_vv_voices "$SCRATCH/vv_voices"
start_server --model vv="$DATA/vibevoice/model" --voices "$SCRATCH/vv_voices" --threads 2
if timeout 240 node "$NPM_DIR/webpage.mjs" "$URL" "$CHROME" "" vibevoice; then ok "web page VibeVoice cases"; else bad "web page VibeVoice (rc $?)"; fi
grep -q 'POST /v1/audio/speech 200 .*model=vv' "$SCRATCH/server.log" && ok "the page's two-speaker request was served" || bad "no VibeVoice request logged"
stop_server TERM
finish
