# Helpers for the `vocis serve` tests (sourced). Expects VOCIS and SCRATCH set.
# Every wait is bounded; the server only ever binds 127.0.0.1.
fails=0
SRV_PID=""

# start_server ARGS...: starts `vocis serve --port 0` in the background, sets
# PORT and URL; the server's stderr goes to $SCRATCH/server.log.
start_server() {
    rm -f "$SCRATCH/port"
    [ -f "$SCRATCH/server.log" ] && cat "$SCRATCH/server.log" >>"$SCRATCH/server_all.log"
    "$VOCIS" serve --host 127.0.0.1 --port 0 --port-file "$SCRATCH/port" "$@" 2>"$SCRATCH/server.log" &
    SRV_PID=$!
    for _ in $(seq 1 200); do
        [ -s "$SCRATCH/port" ] && break
        kill -0 "$SRV_PID" 2>/dev/null || { echo "FAIL server exited at start:"; cat "$SCRATCH/server.log"; exit 1; }
        sleep 0.05
    done
    [ -s "$SCRATCH/port" ] || { echo "FAIL server did not start in 10 s"; cat "$SCRATCH/server.log"; stop_server; exit 1; }
    PORT=$(cat "$SCRATCH/port")
    URL="http://127.0.0.1:$PORT"
}

# stop_server [SIGNAL]: SIGTERM (default) and wait at most 20 s; sets SRV_RC.
stop_server() {
    [ -n "$SRV_PID" ] || return 0
    kill -"${1:-TERM}" "$SRV_PID" 2>/dev/null
    for _ in $(seq 1 200); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$SRV_PID" 2>/dev/null; then
        echo "FAIL server still running 20 s after SIG${1:-TERM}"; fails=$((fails + 1))
        kill -KILL "$SRV_PID" 2>/dev/null
    fi
    wait "$SRV_PID" 2>/dev/null
    SRV_RC=$?
    SRV_PID=""
}
trap 'if [ -n "$SRV_PID" ]; then kill -KILL "$SRV_PID" 2>/dev/null; fi' EXIT

# save_vv_voices DIR: the tiny VibeVoice fixture's two recordings as the saved voices alice and
# bob (a VibeVoice voice is the recording NAME.ref)
save_vv_voices() {
    mkdir -p "$1"
    cp "$DATA/vibevoice/inputs/voice_0.wav" "$1/alice.ref"
    cp "$DATA/vibevoice/inputs/voice_1.wav" "$1/bob.ref"
}

ms() { echo $(( $(date +%s%N) / 1000000 )); }
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# req NAME EXPECT_STATUS EXPECT_CODE CURL_ARGS...: the response must have the
# status, and for errors OpenAI's JSON error shape with that code; /health must
# still answer afterwards.
req() {
    local name=$1 want=$2 code=$3; shift 3
    local got
    got=$(curl -s -o "$SCRATCH/body" -w '%{http_code}' --max-time 60 "$@")
    if [ "$got" != "$want" ]; then
        bad "$name: status $got, expected $want: $(head -c 300 "$SCRATCH/body")"
    elif [ -n "$code" ] && ! grep -qE "^\{\"error\":\{\"message\":\"[^\"]+\",\"type\":\"[a-z_]+\",\"param\":[^,]+,\"code\":\"$code\"\}\}$" "$SCRATCH/body"; then
        bad "$name: status $got but not an OpenAI error with code $code: $(head -c 300 "$SCRATCH/body")"
    else
        ok "$name: $got${code:+ $code}"
    fi
    health_ok "$name"
}

health_ok() {
    local h
    h=$(curl -s --max-time 10 "$URL/health")
    [ "$h" = '{"status":"ok"}' ] || bad "/health after $1 answered '$h'"
}

finish() {
    [ -f "$SCRATCH/server.log" ] && cat "$SCRATCH/server.log" >>"$SCRATCH/server_all.log"
    if grep -qE 'Sanitizer|runtime error:' "$SCRATCH/server_all.log" 2>/dev/null; then
        bad "sanitizer report in the server log:"; grep -m5 -E 'Sanitizer|runtime error:' "$SCRATCH/server_all.log"
    fi
    [ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
    echo "all server cases passed"
}
