#!/usr/bin/env bash
# `vocis serve` HTTP surface of issue 18: host names for --host, every listed voice fetchable,
# 409 on re-upload unless overwrite=true, 401 with WWW-Authenticate, /metrics behind --api-key,
# CORS (--cors), uploads checked by their target model before the 201 (Turbo's 5 s minimum,
# Realtime presets), a voice uploaded for one model family re-cloned from its recording for
# another, and /ready + new requests answered 503 while running work finishes after SIGTERM.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
. "$(dirname "$0")/lib.sh"
EN=$DATA/chatterbox/ckpt TURBO=$DATA/chatterbox-turbo/ckpt RT=$DATA/vibevoice-realtime/model
PRESET=$DATA/vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt
REF=$DATA/chatterbox-turbo/golden/ref_24k.wav   # 6.2 s
SHORT=$DATA/chatterbox/golden/ref_24k.wav       # 4.3 s: too short for Turbo
KEY=k-123
A=(-H "Authorization: Bearer $KEY")
hdr() { grep -i "^$1:" "$SCRATCH/hdr" | tr -d '\r' | sed 's/^[^:]*: //'; }

start_server --host localhost --model "$EN" --model "turbo=$TURBO" --model "rt=$RT" --model "vv=$DATA/vibevoice/model" --voices "$SCRATCH/voices" \
    --api-key "$KEY" --threads 2
grep -q 'listening on http://localhost:' "$SCRATCH/server.log" && ok "--host localhost resolved and bound" \
    || bad "--host localhost: $(cat "$SCRATCH/server.log")"
S=$URL/v1/audio/speech

# ---- auth: 401 says how to authenticate; /metrics needs the key too; /health, /ready do not
req "401 without a key" 401 invalid_api_key -D "$SCRATCH/hdr" "$URL/v1/models"
[ "$(hdr WWW-Authenticate)" = Bearer ] && ok "401 has WWW-Authenticate: Bearer" || bad "401 headers: $(cat "$SCRATCH/hdr")"
req "/metrics without the key" 401 invalid_api_key "$URL/metrics"
req "/metrics with the key" 200 "" "${A[@]}" "$URL/metrics"
req "/ready needs no key" 200 "" "$URL/ready"

# ---- no CORS unless asked: no Access-Control-* headers, OPTIONS answered 204 with Allow only
req "OPTIONS without --cors" 204 "" -D "$SCRATCH/hdr" -X OPTIONS -H 'Origin: https://app.example' "$S"
[ "$(hdr Allow)" = POST ] && ! grep -qi '^access-control' "$SCRATCH/hdr" && ok "no CORS headers without --cors" \
    || bad "OPTIONS headers: $(cat "$SCRATCH/hdr")"

# ---- every listed voice is fetchable; built-in ones cannot be deleted
req "GET /v1/voices" 200 "" "${A[@]}" "$URL/v1/voices"
ids=$(grep -o '"id":"[^"]*"' "$SCRATCH/body" | cut -d'"' -f4)
n=0 nok=0
for id in $ids; do
    n=$((n + 1))
    code=$(curl -s -o "$SCRATCH/v" -w '%{http_code}' "${A[@]}" "$URL/v1/voices/$id")
    [ "$code" = 200 ] && grep -q "\"id\":\"$id\"" "$SCRATCH/v" && nok=$((nok + 1)) || echo "     $id: $code $(cat "$SCRATCH/v")"
done
[ $n -ge 14 ] && [ $nok -eq $n ] && ok "all $n listed voices answer GET /v1/voices/{id}" || bad "$nok of $n listed voices fetchable"
req "GET /v1/voices/alloy" 200 "" "${A[@]}" "$URL/v1/voices/alloy"
grep -q '"type":"builtin"' "$SCRATCH/body" && ok "alloy is built-in" || bad "alloy: $(cat "$SCRATCH/body")"
req "DELETE a built-in voice" 400 builtin_voice "${A[@]}" -X DELETE "$URL/v1/voices/alloy"
req "GET an unknown voice" 404 voice_not_found "${A[@]}" "$URL/v1/voices/nobody"

# ---- uploads are checked by their model before the 201
req "Turbo upload of a 4.3 s reference" 400 invalid_voice "${A[@]}" -F name=short -F model=turbo -F "file=@$SHORT" "$URL/v1/voices"
grep -q 'more than 5 s' "$SCRATCH/body" && ok "says Turbo needs more than 5 s" || bad "message: $(cat "$SCRATCH/body")"
req "Realtime upload of a recording" 400 invalid_voice "${A[@]}" -F name=rec -F model=rt -F "file=@$REF" "$URL/v1/voices"
grep -q 'the upload is an audio recording; a VibeVoice-Realtime voice is a preset' "$SCRATCH/body" && ok "says a preset is needed" \
    || bad "message: $(cat "$SCRATCH/body")"
req "Turbo upload of a non-audio file" 400 invalid_voice "${A[@]}" -F name=junk -F model=turbo -F "file=@$EN/tokenizer.json" "$URL/v1/voices"
req "Realtime upload of a preset (.pt)" 201 "" "${A[@]}" -F name=ada -F model=rt -F "file=@$PRESET" "$URL/v1/voices"
grep -q '"model":"rt"' "$SCRATCH/body" && ok "201 names the model" || bad "201 body: $(cat "$SCRATCH/body")"
req "speech with the uploaded preset" 200 "" "${A[@]}" "$S" -d '{"model":"rt","voice":"ada","input":"Hello there.","response_format":"wav","seed":1}'
req "the preset on Chatterbox" 400 "" "${A[@]}" "$S" -d '{"voice":"ada","input":"Hello there.","response_format":"wav"}'
grep -q 'is a VibeVoice-Realtime voice file; Chatterbox takes' "$SCRATCH/body" && ok "says it is a Realtime voice" || bad "message: $(cat "$SCRATCH/body")"
req "VibeVoice upload of a non-audio file" 400 invalid_voice "${A[@]}" -F name=junk -F model=vv -F "file=@$EN/tokenizer.json" "$URL/v1/voices"
grep -q 'not an audio file' "$SCRATCH/body" && ok "says it is not audio" || bad "message: $(cat "$SCRATCH/body")"
req "VibeVoice upload of a voice file" 400 invalid_voice "${A[@]}" -F name=junk -F model=vv -F "file=@$DATA/chatterbox/golden/golden.voice" "$URL/v1/voices"
req "VibeVoice upload of a recording" 201 "" "${A[@]}" -F name=vvrec -F model=vv -F "file=@$DATA/vibevoice/inputs/voice_0.wav" "$URL/v1/voices"
[ -s "$SCRATCH/voices/vvrec.ref" ] && [ ! -e "$SCRATCH/voices/vvrec.voice" ] && ok "VibeVoice keeps the recording only" || bad "vvrec: $(ls "$SCRATCH/voices")"
ls -a "$SCRATCH/voices" | grep -qE '\.tmp$|^(short|rec|junk)\.' && bad "leftovers: $(ls -a "$SCRATCH/voices")" || ok "refused uploads leave nothing"

# ---- re-uploading a name: 409 unless overwrite=true
req "upload bob for Turbo" 201 "" "${A[@]}" -F name=bob -F model=turbo -F "file=@$REF" "$URL/v1/voices"
python3 -c 'import json,struct,sys; d=open(sys.argv[1],"rb").read(); n=struct.unpack("<Q",d[:8])[0]; sys.exit(json.loads(d[8:8+n])["__metadata__"].get("vocis_model_kind")!="chatterbox-turbo")' \
    "$SCRATCH/voices/bob.voice" && ok "bob.voice records chatterbox-turbo" || bad "bob.voice metadata"
req "re-upload bob" 409 voice_exists "${A[@]}" -F name=bob -F "file=@$REF" "$URL/v1/voices"
req "re-upload bob (raw body)" 409 voice_exists "${A[@]}" -H 'Content-Type: audio/wav' --data-binary @"$REF" "$URL/v1/voices?name=bob"
req "overwrite=maybe" 400 invalid_value "${A[@]}" -F name=bob -F overwrite=maybe -F "file=@$REF" "$URL/v1/voices"
cp "$SCRATCH/voices/bob.voice" "$SCRATCH/bob_turbo.voice"
cmp -s "$SCRATCH/voices/bob.voice" "$SCRATCH/bob_turbo.voice" && ok "a refused re-upload keeps the voice" || bad "bob.voice changed"

# ---- a voice made for Turbo speaks on English from its kept recording (cloned with English)
"$VOCIS" speak --model "$EN" --voice "$REF" --text "A cloned voice." --seed 5 --threads 2 -q -o "$SCRATCH/en_ref.wav"
"$VOCIS" speak --model "$TURBO" --voice "$REF" --text "A cloned voice." --seed 5 --threads 2 -q -o "$SCRATCH/turbo_ref.wav"
req "bob on English" 200 "" "${A[@]}" "$S" -d '{"voice":"bob","input":"A cloned voice.","seed":5,"response_format":"wav"}'
cmp -s "$SCRATCH/body" "$SCRATCH/en_ref.wav" && ok "bob on English = vocis speak --model English --voice REF" || bad "bob on English differs"
req "bob on Turbo" 200 "" "${A[@]}" "$S" -d '{"model":"turbo","voice":"bob","input":"A cloned voice.","seed":5,"response_format":"wav"}'
cmp -s "$SCRATCH/body" "$SCRATCH/turbo_ref.wav" && ok "bob on Turbo = vocis speak --model Turbo --voice REF" || bad "bob on Turbo differs"
req "overwrite bob for English" 201 "" "${A[@]}" -F name=bob -F overwrite=true -F "file=@$REF" "$URL/v1/voices"
grep -q '"model":"ckpt"' "$SCRATCH/body" && ok "no model field: the default model clones" || bad "201 body: $(cat "$SCRATCH/body")"
cmp -s "$SCRATCH/voices/bob.voice" "$SCRATCH/bob_turbo.voice" && bad "overwrite kept the old voice" || ok "overwrite=true replaced bob"
req "overwrite (query)" 201 "" "${A[@]}" -H 'Content-Type: audio/wav' --data-binary @"$REF" "$URL/v1/voices?name=bob&overwrite=true"
stop_server TERM

# ---- CORS on request: "*" and a list of origins
start_server --model "$EN" --cors '*' --threads 2
req "GET /v1/models, --cors '*'" 200 "" -D "$SCRATCH/hdr" -H 'Origin: https://app.example' "$URL/v1/models"
[ "$(hdr Access-Control-Allow-Origin)" = '*' ] && ok "Access-Control-Allow-Origin: *" || bad "headers: $(cat "$SCRATCH/hdr")"
req "an error, --cors '*'" 404 voice_not_found -D "$SCRATCH/hdr" -H 'Origin: https://app.example' "$URL/v1/audio/speech" \
    -d '{"input":"hi","voice":"nobody"}'
[ "$(hdr Access-Control-Allow-Origin)" = '*' ] && ok "errors carry the CORS header" || bad "headers: $(cat "$SCRATCH/hdr")"
req "preflight" 204 "" -D "$SCRATCH/hdr" -X OPTIONS -H 'Origin: https://app.example' -H 'Access-Control-Request-Method: POST' \
    -H 'Access-Control-Request-Headers: authorization, content-type' "$URL/v1/audio/speech"
[ "$(hdr Access-Control-Allow-Methods)" = POST ] && hdr Access-Control-Allow-Headers | grep -qi authorization \
    && [ "$(hdr Access-Control-Allow-Origin)" = '*' ] && ok "preflight allows POST with Authorization" || bad "preflight: $(cat "$SCRATCH/hdr")"
req "preflight of an unknown route" 404 not_found -X OPTIONS "$URL/v1/nothing"
stop_server TERM
start_server --model "$EN" --cors 'https://a.example, https://b.example' --threads 2
req "listed origin" 200 "" -D "$SCRATCH/hdr" -H 'Origin: https://b.example' "$URL/v1/models"
[ "$(hdr Access-Control-Allow-Origin)" = https://b.example ] && hdr Vary | grep -q Origin && ok "a listed origin is echoed (Vary: Origin)" \
    || bad "headers: $(cat "$SCRATCH/hdr")"
req "other origin" 200 "" -D "$SCRATCH/hdr" -H 'Origin: https://evil.example' "$URL/v1/models"
grep -qi '^access-control-allow-origin' "$SCRATCH/hdr" && bad "an unlisted origin got CORS: $(cat "$SCRATCH/hdr")" || ok "an unlisted origin gets no CORS header"
stop_server TERM

# ---- after SIGTERM: while the running request finishes, /ready and new requests answer 503
LONG=$(printf 'This is a long sentence to make the tiny model work for a while. %.0s' $(seq 1 20)) # ~1.5 s
start_server --model "$EN" --threads 2
curl -s --max-time 60 "$URL/v1/audio/speech" -o /dev/null -w '%{http_code}' \
    -d "{\"input\":\"$LONG\",\"response_format\":\"pcm\"}" >"$SCRATCH/long.code" &
cpid=$!
for _ in $(seq 1 100); do grep -q 'vocis_in_flight 1' <(curl -s "$URL/metrics") && break; sleep 0.05; done
kill -TERM "$SRV_PID"
for _ in $(seq 1 100); do grep -q 'SIGTERM: shutting down' "$SCRATCH/server.log" && break; sleep 0.02; done
if kill -0 "$SRV_PID" 2>/dev/null; then
    req "/ready while shutting down" 503 shutting_down -D "$SCRATCH/hdr" "$URL/ready"
    grep -qi '^connection: close' "$SCRATCH/hdr" && ok "503 closes the connection" || bad "headers: $(cat "$SCRATCH/hdr")"
    req "speech while shutting down" 503 shutting_down "$URL/v1/audio/speech" -d '{"input":"hi"}'
    req "models while shutting down" 503 shutting_down "$URL/v1/models"
else
    bad "the server exited at once: the long request was not running"
fi
wait $cpid
[ "$(cat "$SCRATCH/long.code")" = 200 ] && ok "the running request finished (200)" || bad "running request: $(cat "$SCRATCH/long.code")"
stop_server TERM # a second SIGTERM while shutting down changes nothing
[ "$SRV_RC" = 0 ] && ok "exit 0 after the running request" || bad "exit $SRV_RC"

# ---- a host name that does not resolve: one line, exit 2
"$VOCIS" serve --model "$EN" --host no-such-host.invalid --port 0 2>"$SCRATCH/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$SCRATCH/err")" -eq 1 ] && grep -q 'no-such-host.invalid' "$SCRATCH/err" \
    && ok "unresolvable host refused: $(cat "$SCRATCH/err")" || bad "host: rc=$rc $(cat "$SCRATCH/err")"
finish
