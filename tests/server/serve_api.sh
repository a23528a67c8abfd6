#!/usr/bin/env bash
# `vocis serve` on the tiny Chatterbox checkpoint, driven with curl: the
# OpenAI surface (every response_format, chunked and SSE streaming, WAV equal
# to `vocis speak` with the same seed), voices, /health /ready /metrics, the
# bad requests of issue 9 (each its status + OpenAI JSON error, /health after
# each), queue limit (429 + Retry-After), per-request time limit, slow and
# vanishing clients, and SIGTERM / SIGINT shutdown (exit 0).
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
. "$(dirname "$0")/lib.sh"
M=$DATA/chatterbox/ckpt
REF=$DATA/chatterbox/golden/ref_24k.wav
KEY=test-key-123
A=(-H "Authorization: Bearer $KEY")
J=(-H "Content-Type: application/json")

start_server --model "$M" --voices "$SCRATCH/voices" --api-key "$KEY" --max-upload-kb 1024 --idle-timeout 2 --threads 2
S=$URL/v1/audio/speech

# ---- the WAV equals vocis speak with the same seed
"$VOCIS" speak --model "$M" --text "Hello world, this is vocis." --seed 7 --threads 2 -q -o "$SCRATCH/ref.wav"
req "speech wav tts-1/alloy" 200 "" "${A[@]}" "${J[@]}" "$S" \
    -d '{"model":"tts-1","voice":"alloy","input":"Hello world, this is vocis.","response_format":"wav","seed":7}'
cmp -s "$SCRATCH/body" "$SCRATCH/ref.wav" && ok "WAV equals vocis speak --seed 7" || bad "WAV differs from vocis speak"
req "speech wav by model name, voice default" 200 "" "${A[@]}" "$S" \
    -d '{"model":"ckpt","voice":"default","input":"Hello world, this is vocis.","response_format":"wav","seed":7,"speed":1.0}'
cmp -s "$SCRATCH/body" "$SCRATCH/ref.wav" && ok "same WAV by model name" || bad "WAV by model name differs"

# ---- every format: its magic bytes; pcm = the WAV's samples
magic() { head -c "$2" "$SCRATCH/body" | od -An -c | tr -d ' \n'; }
req "speech mp3 (default format)" 200 "" "${A[@]}" "$S" -d '{"input":"Hello world, this is vocis.","seed":7}'
m=$(head -c 2 "$SCRATCH/body" | od -An -tx1 | tr -d ' \n'); case $m in fff*|4944*) ok "mp3 frame/ID3 header ($m)";; *) bad "not MP3: $m";; esac
req "speech opus" 200 "" "${A[@]}" "$S" -d '{"input":"Hello world, this is vocis.","seed":7,"response_format":"opus"}'
[ "$(magic x 4)" = OggS ] && grep -qa OpusHead "$SCRATCH/body" && ok "Ogg Opus" || bad "not Ogg Opus"
req "speech flac" 200 "" "${A[@]}" "$S" -d '{"input":"Hello world, this is vocis.","seed":7,"response_format":"flac"}'
[ "$(magic x 4)" = fLaC ] && ok "FLAC" || bad "not FLAC"
req "speech pcm" 200 "" "${A[@]}" "$S" -d '{"input":"Hello world, this is vocis.","seed":7,"response_format":"pcm"}'
cp "$SCRATCH/body" "$SCRATCH/pcm"
tail -c +45 "$SCRATCH/ref.wav" | cmp -s - "$SCRATCH/pcm" && ok "pcm = the WAV's samples" || bad "pcm differs"

# ---- streaming: chunked audio bytes and SSE events carry the same samples (stream_tokens 0: the
# whole-chunk path; by default Chatterbox streams while T3 generates, checked below)
LONGTXT=$(printf 'Hello world, this is vocis streaming one sentence after another. %.0s' 1 2 3 4 5 6 7 8) # > 300 chars: several chunks
curl -s -N --max-time 60 "${A[@]}" "$S" -o "$SCRATCH/stream.wav" -D "$SCRATCH/hdr" \
    -d "{\"input\":\"$LONGTXT\",\"seed\":3,\"response_format\":\"wav\",\"stream_format\":\"audio\",\"stream_tokens\":0}"
grep -qi '^transfer-encoding: chunked' "$SCRATCH/hdr" && ok "stream_format audio is chunked" || bad "not chunked: $(cat "$SCRATCH/hdr")"
curl -s --max-time 60 "${A[@]}" "$S" -o "$SCRATCH/whole.wav" -d "{\"input\":\"$LONGTXT\",\"seed\":3,\"response_format\":\"wav\"}"
cmp -s <(tail -c +45 "$SCRATCH/stream.wav") <(tail -c +45 "$SCRATCH/whole.wav") && ok "streamed WAV samples = whole WAV" || bad "streamed WAV differs"
curl -s -N --max-time 60 "${A[@]}" "$S" -o "$SCRATCH/sse" -D "$SCRATCH/hdr" \
    -d "{\"input\":\"$LONGTXT\",\"seed\":3,\"response_format\":\"pcm\",\"stream_format\":\"sse\",\"stream_tokens\":0}"
grep -qi '^content-type: text/event-stream' "$SCRATCH/hdr" || bad "SSE content type: $(cat "$SCRATCH/hdr")"
nd=$(grep -c '^data: {"type":"speech.audio.delta","audio":"' "$SCRATCH/sse")
tail -n 2 "$SCRATCH/sse" | grep -q '^data: {"type":"speech.audio.done"' || bad "no speech.audio.done event last"
grep '^data: {"type":"speech.audio.delta"' "$SCRATCH/sse" | sed 's/.*"audio":"\([^"]*\)".*/\1/' | while read -r b; do
    printf '%s' "$b" | base64 -d; done >"$SCRATCH/sse.pcm"
cmp -s "$SCRATCH/sse.pcm" <(tail -c +45 "$SCRATCH/whole.wav") && ok "SSE: $nd delta events decode to the WAV's samples" \
    || bad "SSE audio differs ($nd deltas)"
# the default streamed path (one text chunk, same seed: the same T3 tokens): the whole response's length
# (one 480-sample hop of slack), in several deltas, the first before T3 is done
ONETXT="Hello world, this is vocis streaming while the speech tokens are still being drawn."
curl -s --max-time 60 "${A[@]}" "$S" -o "$SCRATCH/one.pcm" -d "{\"input\":\"$ONETXT\",\"seed\":3,\"response_format\":\"pcm\"}"
curl -s -N --max-time 60 "${A[@]}" "$S" -o "$SCRATCH/one.sse" \
    -d "{\"input\":\"$ONETXT\",\"seed\":3,\"response_format\":\"pcm\",\"stream_format\":\"sse\",\"stream_tokens\":4}"
nd=$(grep -c '^data: {"type":"speech.audio.delta","audio":"' "$SCRATCH/one.sse")
grep '^data: {"type":"speech.audio.delta"' "$SCRATCH/one.sse" | sed 's/.*"audio":"\([^"]*\)".*/\1/' | while read -r b; do
    printf '%s' "$b" | base64 -d; done >"$SCRATCH/one_sse.pcm"
w=$(stat -c %s "$SCRATCH/one.pcm") s=$(stat -c %s "$SCRATCH/one_sse.pcm")
[ "$w" -gt 0 ] && [ $((w > s ? w - s : s - w)) -le 960 ] && [ "$nd" -gt 1 ] \
    && ok "streamed SSE (stream_tokens 4): $nd deltas, $s bytes (whole: $w)" || bad "streamed SSE: $nd deltas, $s bytes, whole $w"
req "stream_tokens -2" 400 invalid_value "${A[@]}" "$S" -d '{"input": "hi", "stream_format": "sse", "stream_tokens": -2}'

# ---- 8 concurrent seeded requests = 8 sequential ones
for i in 1 2 3 4 5 6 7 8; do
    curl -s --max-time 60 "${A[@]}" "$S" -o "$SCRATCH/seq$i" -d "{\"input\":\"Request number $i.\",\"seed\":$i,\"response_format\":\"wav\"}"
done
pids=()
for i in 1 2 3 4 5 6 7 8; do
    curl -s --max-time 60 "${A[@]}" "$S" -o "$SCRATCH/par$i" -d "{\"input\":\"Request number $i.\",\"seed\":$i,\"response_format\":\"wav\"}" &
    pids+=($!)
done
wait "${pids[@]}"
same=0; for i in 1 2 3 4 5 6 7 8; do cmp -s "$SCRATCH/seq$i" "$SCRATCH/par$i" && [ -s "$SCRATCH/par$i" ] && same=$((same + 1)); done
[ $same -eq 8 ] && ok "8 concurrent seeded requests = 8 sequential" || bad "only $same of 8 concurrent requests match"

# ---- models
req "GET /v1/models" 200 "" "${A[@]}" "$URL/v1/models"
grep -q '"id":"ckpt"' "$SCRATCH/body" && grep -q '"id":"tts-1"' "$SCRATCH/body" && ok "models list ckpt + tts-1" || bad "models: $(cat "$SCRATCH/body")"
req "GET /v1/models/tts-1-hd" 200 "" "${A[@]}" "$URL/v1/models/tts-1-hd"
req "GET /v1/models/nope" 404 model_not_found "${A[@]}" "$URL/v1/models/nope"

# ---- bad requests
req "malformed JSON" 400 invalid_json "${A[@]}" "$S" -d '{"input": "hi",'
req "not an object" 400 invalid_json "${A[@]}" "$S" -d '[1,2]'
req "empty body" 400 invalid_json "${A[@]}" "$S" -X POST
req "input of wrong type" 400 invalid_type "${A[@]}" "$S" -d '{"input": 5}'
req "seed of wrong type" 400 invalid_type "${A[@]}" "$S" -d '{"input": "hi", "seed": "x"}'
req "negative seed" 400 invalid_value "${A[@]}" "$S" -d '{"input": "hi", "seed": -1}'
req "temperature out of range" 400 invalid_value "${A[@]}" "$S" -d '{"input": "hi", "temperature": 0}'
req "missing input" 400 missing_required_parameter "${A[@]}" "$S" -d '{"model": "tts-1"}'
req "empty input" 400 invalid_value "${A[@]}" "$S" -d '{"input": "   "}'
req "aac" 400 unsupported_response_format "${A[@]}" "$S" -d '{"input": "hi", "response_format": "aac"}'
req "unknown format" 400 invalid_value "${A[@]}" "$S" -d '{"input": "hi", "response_format": "ogg"}'
req "speed 1.5 rejected" 400 unsupported_value "${A[@]}" "$S" -d '{"input": "hi", "speed": 1.5}'
req "bad stream_format" 400 invalid_value "${A[@]}" "$S" -d '{"input": "hi", "stream_format": "ws"}'
head -c 10485760 /dev/zero | tr '\0' 'a' >"$SCRATCH/10mb"
req "10 MB body" 413 request_too_large "${A[@]}" "$S" --data-binary @"$SCRATCH/10mb"
req "10 MB body, chunked upload" 413 request_too_large "${A[@]}" "$S" -H 'Transfer-Encoding: chunked' --data-binary @"$SCRATCH/10mb"
{ printf '{"input":"'; head -c 1000000 /dev/zero | tr '\0' 'a'; printf '"}'; } >"$SCRATCH/1mb.json"
req "1 MB input" 400 input_too_long "${A[@]}" "$S" --data-binary @"$SCRATCH/1mb.json"
req "unknown model" 404 model_not_found "${A[@]}" "$S" -d '{"input": "hi", "model": "tts-9"}'
req "unknown voice" 404 voice_not_found "${A[@]}" "$S" -d '{"input": "hi", "voice": "nobody"}'
req "../ voice name" 400 invalid_voice "${A[@]}" "$S" -d '{"input": "hi", "voice": "../../etc/passwd"}'
req "voice name with /" 400 invalid_voice "${A[@]}" "$S" -d '{"input": "hi", "voice": "a/b"}'
req "wrong method" 405 method_not_allowed "${A[@]}" "$S"
req "DELETE /health" 405 method_not_allowed -X DELETE "$URL/health"
req "unknown route" 404 not_found "${A[@]}" "$URL/v1/audio/transcriptions"
req "missing API key" 401 invalid_api_key "$S" -d '{"input": "hi"}'
req "bad API key" 401 invalid_api_key -H "Authorization: Bearer wrong" "$S" -d '{"input": "hi"}'
req "bad API key, 10 MB body" 401 invalid_api_key -H "Authorization: Bearer wrong" "$S" --data-binary @"$SCRATCH/10mb"
req "health needs no key" 200 "" "$URL/health"

# slowloris: a client that sends half a request and stalls is dropped after
# --idle-timeout (2 s) while others are served.
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
printf 'POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthoriz' >&3 # headers never finished
health_ok "slow client connected"
t0=$(ms)
timeout 10 cat <&3 >"$SCRATCH/slow" ; rc=$?
el=$(( $(ms) - t0 ))
exec 3<&- 3>&-
[ $rc -eq 0 ] && [ $el -ge 1000 ] && [ $el -lt 8000 ] && ok "stalled client dropped after $el ms" || bad "stalled client kept (rc=$rc, $el ms)"
health_ok "slow client"

# abrupt disconnect mid-stream: the work is cancelled and the next request is served at once
LONG=$(printf 'This is a long sentence to make the tiny model work for a while. %.0s' $(seq 1 60))
curl -s -N --max-time 60 "${A[@]}" "$S" -d "{\"input\":\"$LONG\",\"response_format\":\"pcm\",\"stream_format\":\"audio\"}" | head -c 1000 >/dev/null
t0=$(ms)
req "request after a vanished client" 200 "" "${A[@]}" "$S" -d '{"input":"Hi.","response_format":"pcm"}'
el=$(( $(ms) - t0 ))
[ $el -lt 15000 ] && ok "next request served in $el ms (the abandoned one was cancelled)" || bad "next request took $el ms"
curl -s --max-time 60 "${A[@]}" "$S" -d "{\"input\":\"$LONG\",\"response_format\":\"wav\"}" -o /dev/null --max-time 0.5
# the log line appears once the cancelled work has stopped (at its next progress callback): poll, bounded
for _ in $(seq 1 50); do grep -q 'client aborted\| 499 ' "$SCRATCH/server.log" && break; sleep 0.1; done
grep -q 'client aborted\| 499 ' "$SCRATCH/server.log" && ok "disconnect logged" || bad "no disconnect in the log"
health_ok "disconnect"

# ---- voices
req "GET /v1/voices" 200 "" "${A[@]}" "$URL/v1/voices"
grep -q '"id":"alloy","object":"voice","type":"builtin"' "$SCRATCH/body" && ok "built-in voices listed" || bad "voices: $(cat "$SCRATCH/body")"
req "upload voice (raw body)" 201 "" "${A[@]}" -H 'Content-Type: audio/wav' --data-binary @"$REF" "$URL/v1/voices?name=bob"
[ -s "$SCRATCH/voices/bob.voice" ] && [ -s "$SCRATCH/voices/bob.ref" ] && ok "bob.voice + bob.ref saved" || bad "voice files missing"
"$VOCIS" voice create --model "$M" "$REF" -o "$SCRATCH/bob_cli.voice" --threads 2 2>/dev/null
"$VOCIS" speak --model "$M" --voice "$SCRATCH/bob_cli.voice" --text "A cloned voice." --seed 5 --threads 2 -q -o "$SCRATCH/bob_cli.wav"
req "speech with saved voice" 200 "" "${A[@]}" "$S" -d '{"input":"A cloned voice.","voice":"bob","seed":5,"response_format":"wav"}'
cmp -s "$SCRATCH/body" "$SCRATCH/bob_cli.wav" && ok "saved voice speaks as vocis voice create + speak" || bad "saved voice audio differs"
req "upload voice (multipart)" 201 "" "${A[@]}" -F name=alice -F exaggeration=0.7 -F "file=@$REF" "$URL/v1/voices"
req "saved voice overrides an OpenAI name" 201 "" "${A[@]}" -F name=nova -F "file=@$REF" "$URL/v1/voices"
req "GET /v1/voices/alice" 200 "" "${A[@]}" "$URL/v1/voices/alice"
req "GET /v1/voices lists saved" 200 "" "${A[@]}" "$URL/v1/voices"
grep -q '"id":"alice","object":"voice","type":"saved"' "$SCRATCH/body" && grep -q '"id":"nova","object":"voice","type":"saved"' "$SCRATCH/body" \
    && ! grep -q '"id":"nova","object":"voice","type":"builtin"' "$SCRATCH/body" && ok "saved voices listed" || bad "voices: $(cat "$SCRATCH/body")"
req "upload ../ name" 400 invalid_voice "${A[@]}" -F 'name=../evil' -F "file=@$REF" "$URL/v1/voices"
req "upload .hidden name" 400 invalid_voice "${A[@]}" -H 'Content-Type: audio/wav' --data-binary @"$REF" "$URL/v1/voices?name=.x"
req "upload without name" 400 missing_required_parameter "${A[@]}" -F "file=@$REF" "$URL/v1/voices"
req "upload without audio" 400 missing_required_parameter "${A[@]}" -F name=carol "$URL/v1/voices"
req "upload not audio" 400 "" "${A[@]}" -F name=carol -F "file=@$M/tokenizer.json" "$URL/v1/voices"
req "upload over the cap" 413 request_too_large "${A[@]}" -F name=big -F "file=@$SCRATCH/10mb" "$URL/v1/voices"
req "malformed multipart" 400 invalid_multipart "${A[@]}" -H 'Content-Type: multipart/form-data; boundary=xyz' --data-binary 'garbage' "$URL/v1/voices"
ls -a "$SCRATCH/voices" | grep -q 'tmp\|carol\|big\|evil' && bad "leftovers in voices/: $(ls -a "$SCRATCH/voices")" || ok "no leftovers in the voices folder"
req "DELETE voice" 200 "" "${A[@]}" -X DELETE "$URL/v1/voices/bob"
req "DELETE voice again" 404 voice_not_found "${A[@]}" -X DELETE "$URL/v1/voices/bob"
req "DELETE ../ name" 400 invalid_voice "${A[@]}" -X DELETE "$URL/v1/voices/..%2F..%2Fetc"
req "speech with deleted voice" 404 voice_not_found "${A[@]}" "$S" -d '{"input":"hi","voice":"bob"}'

# ---- operations
req "GET /ready" 200 "" "$URL/ready"
req "GET /metrics" 200 "" "${A[@]}" "$URL/metrics"
grep -q '^vocis_requests_total{route="speech",status="200"} [1-9]' "$SCRATCH/body" && grep -q '^vocis_rtf_bucket{le="+Inf"} [1-9]' "$SCRATCH/body" \
    && grep -q '^vocis_queue_depth{model="ckpt"} 0' "$SCRATCH/body" && grep -q '^vocis_audio_seconds_total [1-9]' "$SCRATCH/body" \
    && ok "metrics: requests, RTF histogram, queue depth, audio seconds" || bad "metrics: $(head -40 "$SCRATCH/body")"
# many speech requests with few voices: the voices' conditioning prefixes were computed once and reused
hits=$(sed -n 's/^vocis_voice_cache{model="ckpt",counter="hits"} \([0-9]*\)$/\1/p' "$SCRATCH/body")
misses=$(sed -n 's/^vocis_voice_cache{model="ckpt",counter="misses"} \([0-9]*\)$/\1/p' "$SCRATCH/body")
[ -n "$hits" ] && [ -n "$misses" ] && [ "$misses" -ge 1 ] && [ "$hits" -gt "$misses" ] \
    && ok "metrics: voice cache $hits hits, $misses misses" || bad "voice cache metrics: hits '$hits' misses '$misses'"
n=$(grep -c 'vocis serve: req=' "$SCRATCH/server.log")
[ "$n" -ge 80 ] && ok "one log line per request ($n)" || bad "only $n log lines"
grep -m1 'req=.* POST /v1/audio/speech 200 model=ckpt chars=[0-9]* audio=[0-9.]*s wait=[0-9.]*s rtf=[0-9.]* time=' "$SCRATCH/server.log" >/dev/null \
    && ok "log line has id, route, status, chars, audio, wait, RTF" || bad "log line format"
stop_server TERM
[ "$SRV_RC" = 0 ] && grep -q 'SIGTERM: shutting down' "$SCRATCH/server.log" && ok "SIGTERM: clean exit 0" || bad "SIGTERM exit $SRV_RC"

# ---- queue bound (429 + Retry-After), /ready, per-request time limit (503), SIGINT mid-request
# (a text four times LONG: its synthesis outlasts the 1.5 s limit even on a fast idle machine)
start_server --model "$M" --max-queue 1 --request-timeout 1.5 --max-chars 20000 --threads 2
S=$URL/v1/audio/speech
LONG4="$LONG$LONG$LONG$LONG"
curl -s --max-time 30 "$S" -o "$SCRATCH/slow.json" -w '%{http_code}' -d "{\"input\":\"$LONG4\",\"response_format\":\"pcm\"}" >"$SCRATCH/slow.code" &
cpid=$!
sleep 0.5
req "queue full" 429 queue_full -D "$SCRATCH/hdr" "$S" -d '{"input":"hi"}'
grep -qi '^retry-after: [0-9]' "$SCRATCH/hdr" && ok "429 has Retry-After" || bad "no Retry-After: $(cat "$SCRATCH/hdr")"
req "ready while full" 503 queue_full "$URL/ready"
wait $cpid
[ "$(cat "$SCRATCH/slow.code")" = 503 ] && grep -q '"code":"timeout"' "$SCRATCH/slow.json" && ok "per-request time limit: 503 timeout" \
    || bad "time limit: $(cat "$SCRATCH/slow.code") $(cat "$SCRATCH/slow.json")"
req "ready again" 200 "" "$URL/ready"
# a timed-out SSE stream ends with an error event and a clean end of the chunked body (curl exit 0)
curl -s -N --max-time 30 "$S" -o "$SCRATCH/slow.sse" \
    -d "{\"input\":\"$LONG4\",\"stream_format\":\"sse\",\"response_format\":\"pcm\"}"; rc=$?
last=$(grep '^data: ' "$SCRATCH/slow.sse" | tail -1)
[ $rc -eq 0 ] && [[ $last == *'"type":"error"'*'"code":"timeout"'* ]] && ok "timed-out SSE stream: error event, clean end" \
    || bad "timed-out SSE stream: curl rc=$rc, last event: $(head -c 300 <<<"$last")"
curl -s -N --max-time 30 "$S" -o /dev/null -d "{\"input\":\"$LONG\",\"stream_format\":\"audio\",\"response_format\":\"pcm\"}" &
cpid=$!
sleep 0.5
stop_server INT
wait $cpid 2>/dev/null
[ "$SRV_RC" = 0 ] && grep -q 'SIGINT: shutting down' "$SCRATCH/server.log" && grep -q 'stopped' "$SCRATCH/server.log" \
    && ok "SIGINT during a stream: clean exit 0" || bad "SIGINT exit $SRV_RC: $(tail -3 "$SCRATCH/server.log")"

# ---- refused configurations
"$VOCIS" serve --model "$DATA/nonexistent" --port 0 2>"$SCRATCH/err"; rc=$?
[ $rc -ne 0 ] && [ "$(wc -l <"$SCRATCH/err")" -eq 1 ] && ok "missing model: exit $rc, $(cat "$SCRATCH/err")" || bad "missing model: rc=$rc $(cat "$SCRATCH/err")"
"$VOCIS" serve --model "$M" --host 999.1.1.1 --port 0 2>"$SCRATCH/err"; rc=$?
[ $rc -ne 0 ] && ok "unusable host refused: $(tail -1 "$SCRATCH/err")" || bad "host: rc=$rc"
finish
