#!/usr/bin/env bash
# `vocis serve` with every family of issue 18 at once (Chatterbox, Multilingual,
# Turbo, VibeVoice-Realtime), against `vocis speak`: the model's own defaults
# (Realtime CFG 1.5 / 5 steps), `language` for Multilingual, full model kinds,
# client mistakes as 4xx without server paths, one table of knob limits for
# the CLI and the server, real token counts in the SSE usage, the streamed WAV
# header and raw pcm, and the seed drawn for a request without one.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH/voices"
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
. "$(dirname "$0")/lib.sh"
CB=$DATA/chatterbox/ckpt
MTL=$DATA/chatterbox-mtl/ckpt
TURBO=$DATA/chatterbox-turbo/ckpt
RT=$DATA/vibevoice-realtime/model
PRESET=$DATA/vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt
RTTEXT="Hello from the tiny realtime model. It speaks in small windows!"
cp "$PRESET" "$SCRATCH/voices/ada.ref" # a saved Realtime voice, as POST /v1/voices stores one
speak() { "$VOCIS" speak --threads 2 -q "$@"; }
# post NAME JSON [CURL_ARGS...]: the speech response into $SCRATCH/body, headers into $SCRATCH/hdr
post() {
    local name=$1 js=$2; shift 2
    req "$name" 200 "" -D "$SCRATCH/hdr" "$S" -d "$js" "$@"
}
hdr() { grep -i "^$1:" "$SCRATCH/hdr" | tr -d '\r' | sed 's/^[^:]*: *//'; }
words() { wc -w <"$1" | tr -d ' '; }

start_server --model "$CB" --model mtl="$MTL" --model turbo="$TURBO" --model rt="$RT" --voices "$SCRATCH/voices" --threads 2
S=$URL/v1/audio/speech

# ---- item 5: model kinds in full (the 16-byte kind cut them), batching on for Multilingual and Turbo
req "GET /v1/models" 200 "" "$URL/v1/models"
cp "$SCRATCH/body" "$SCRATCH/models.json"
for k in '"id":"mtl","object":"model","created":0,"owned_by":"vocis","kind":"chatterbox-multilingual","batch":4' \
         '"id":"turbo","object":"model","created":0,"owned_by":"vocis","kind":"chatterbox-turbo","batch":4' \
         '"id":"rt","object":"model","created":0,"owned_by":"vocis","kind":"vibevoice-realtime","batch":4' \
         '"id":"ckpt","object":"model","created":0,"owned_by":"vocis","kind":"chatterbox","batch":4'; do
    grep -qF "$k" "$SCRATCH/models.json" && ok "models: ${k%%,\"object*}: kind and batch" || bad "models lack $k: $(cat "$SCRATCH/models.json")"
done
grep -q 'model mtl: chatterbox-multilingual, model turbo: chatterbox-turbo, model rt: vibevoice-realtime' "$SCRATCH/server.log" \
    && ok "startup log names the kinds in full" || bad "startup log: $(head -1 "$SCRATCH/server.log")"
# only Multilingual lists languages
langs=$(grep -o '"languages":\[[^]]*\]' "$SCRATCH/models.json")
[ "$(grep -o '"languages"' "$SCRATCH/models.json" | wc -l)" = 1 ] && [ "$(echo "$langs" | grep -o '"[a-z][a-z]"' | wc -l)" = 23 ] \
    && echo "$langs" | grep -q '"fr"' && ok "Multilingual lists its 23 languages" || bad "languages: $langs"

# ---- item 3: Realtime takes its own defaults (CFG 1.5, 5 steps): the samples of vocis speak
speak --model "$RT" --voice "$PRESET" --text "$RTTEXT" --seed 1357 -o "$SCRATCH/rt_cli.wav"
post "Realtime wav seed 1357" "{\"model\":\"rt\",\"voice\":\"ada\",\"input\":\"$RTTEXT\",\"seed\":1357,\"response_format\":\"wav\"}"
cmp -s "$SCRATCH/body" "$SCRATCH/rt_cli.wav" && ok "Realtime WAV equals vocis speak --seed 1357" || bad "Realtime WAV differs from vocis speak"
post "Realtime pcm stream" "{\"model\":\"rt\",\"voice\":\"ada\",\"input\":\"$RTTEXT\",\"seed\":1357,\"response_format\":\"pcm\",\"stream_format\":\"audio\"}" -N
cmp -s "$SCRATCH/body" <(tail -c +45 "$SCRATCH/rt_cli.wav") && ok "Realtime streamed pcm = vocis speak's samples" || bad "Realtime pcm stream differs"
req "Realtime without a voice" 400 voice_required "$S" -d '{"model":"rt","input":"Hi."}'

# ---- item 4: Multilingual is served with `language`; the error names the JSON field
speak --model "$MTL" --language fr --text "Bonjour tout le monde." --seed 2 -o "$SCRATCH/mtl_cli.wav"
post "Multilingual fr" '{"model":"mtl","language":"fr","input":"Bonjour tout le monde.","seed":2,"response_format":"wav"}'
cmp -s "$SCRATCH/body" "$SCRATCH/mtl_cli.wav" && ok "Multilingual WAV equals vocis speak --language fr" || bad "Multilingual WAV differs"
req "Multilingual without language" 400 missing_required_parameter "$S" -d '{"model":"mtl","input":"Bonjour."}'
grep -q '"param":"language"' "$SCRATCH/body" && grep -q "needs a language: one of ar, da, de" "$SCRATCH/body" \
    && ! grep -q -- '--language' "$SCRATCH/body" && ok "the error names 'language', not a CLI flag" || bad "message: $(cat "$SCRATCH/body")"
req "Multilingual, unknown language" 400 invalid_value "$S" -d '{"model":"mtl","input":"Hi.","language":"xx"}'
req "English model with a language" 400 invalid_value "$S" -d '{"input":"Hi.","language":"fr"}'
req "language of wrong type" 400 invalid_type "$S" -d '{"model":"mtl","input":"Hi.","language":1}'

# ---- item 12: a client's mistake is 4xx, and no server path goes out
req "Chatterbox with a Realtime preset" 400 invalid_voice "$S" -d '{"input":"Hello.","voice":"ada"}'
cp "$SCRATCH/body" "$SCRATCH/preset_err"
grep -qF "$SCRATCH" "$SCRATCH/preset_err" || grep -q 'voices/\|\.ref' "$SCRATCH/preset_err" \
    && bad "server path in the error: $(cat "$SCRATCH/preset_err")" || ok "no server path in: $(head -c 160 "$SCRATCH/preset_err")"
grep -q "failed: voice 'ada': $SCRATCH/voices/ada.ref" "$SCRATCH/server.log" && ok "the log keeps the full message" \
    || bad "full message not logged: $(grep failed "$SCRATCH/server.log")"
req "upload not audio" 400 "" -F name=junk -F "file=@$CB/tokenizer.json" "$URL/v1/voices?model=ckpt"
grep -qF "$SCRATCH" "$SCRATCH/body" || grep -q 'upload-\|voices/' "$SCRATCH/body" \
    && bad "server path in the upload error: $(cat "$SCRATCH/body")" || ok "upload error without paths: $(head -c 160 "$SCRATCH/body")"

# ---- item 16: usage counts the model's tokens (text ids, speech tokens / frames)
T="Hello there, tokens."
ntext=$("$VOCIS" tokenize --model "$CB" --text "$T" | wc -w)
nspeech=$("$VOCIS" tokens --model "$CB" --text "$T" --seed 5 -q --threads 2 | wc -w)
post "SSE usage" "{\"input\":\"$T\",\"seed\":5,\"response_format\":\"pcm\",\"stream_format\":\"sse\"}" -N
done_ev=$(grep '^data: {"type":"speech.audio.done"' "$SCRATCH/body")
echo "$done_ev" | grep -q "\"usage\":{\"input_tokens\":$ntext,\"output_tokens\":$nspeech,\"total_tokens\":$((ntext + nspeech))}" \
    && ok "usage: $ntext text tokens, $nspeech speech tokens (= vocis tokenize / vocis tokens)" || bad "usage: $done_ev (want $ntext / $nspeech)"
post "Realtime SSE usage" "{\"model\":\"rt\",\"voice\":\"ada\",\"input\":\"$RTTEXT\",\"seed\":1357,\"response_format\":\"pcm\",\"stream_format\":\"sse\"}" -N
frames=$(( ($(stat -c %s "$SCRATCH/rt_cli.wav") - 44) / 2 / 3200 ))
grep '^data: {"type":"speech.audio.done"' "$SCRATCH/body" | grep -q "\"input_tokens\":13,\"output_tokens\":$frames," \
    && ok "Realtime usage: 13 text tokens, $frames frames" || bad "Realtime usage: $(grep audio.done "$SCRATCH/body") (want 13 / $frames)"

# ---- item 17: a streamed WAV has the unknown-length header; pcm is the raw samples
post "streamed wav" "{\"input\":\"$T\",\"seed\":5,\"response_format\":\"wav\",\"stream_format\":\"audio\"}" -N
cp "$SCRATCH/body" "$SCRATCH/stream.wav"
[ "$(od -An -tx1 -j4 -N4 "$SCRATCH/stream.wav" | tr -d ' ')" = ffffffff ] && [ "$(od -An -tx1 -j40 -N4 "$SCRATCH/stream.wav" | tr -d ' ')" = ffffffff ] \
    && ok "streamed WAV: RIFF and data lengths 0xFFFFFFFF" || bad "streamed WAV header: $(od -An -tx1 -N44 "$SCRATCH/stream.wav")"
post "streamed pcm" "{\"input\":\"$T\",\"seed\":5,\"response_format\":\"pcm\",\"stream_format\":\"audio\"}" -N
[ "$(hdr content-type)" = audio/pcm ] && cmp -s "$SCRATCH/body" <(tail -c +45 "$SCRATCH/stream.wav") \
    && ok "streamed pcm: audio/pcm, the WAV's samples without a header" || bad "streamed pcm: $(hdr content-type)"

# ---- item 20: a request without a seed is told the seed it got; sending it back repeats the audio
post "no seed" "{\"input\":\"$T\",\"response_format\":\"wav\"}"
seed=$(hdr x-vocis-seed)
cp "$SCRATCH/body" "$SCRATCH/drawn.wav"
post "the drawn seed again" "{\"input\":\"$T\",\"response_format\":\"wav\",\"seed\":$seed}"
[[ $seed =~ ^[0-9]+$ ]] && [ "$(hdr x-vocis-seed)" = "$seed" ] && cmp -s "$SCRATCH/body" "$SCRATCH/drawn.wav" \
    && ok "X-Vocis-Seed $seed gives the same bytes again" || bad "drawn seed '$seed' does not repeat the audio"
speak --model "$CB" --text "$T" --seed "$seed" -o "$SCRATCH/drawn_cli.wav"
cmp -s "$SCRATCH/drawn_cli.wav" "$SCRATCH/drawn.wav" && ok "vocis speak --seed $seed gives the same WAV" || bad "CLI with the drawn seed differs"
grep -q "POST /v1/audio/speech 200 .* seed=$seed\$" "$SCRATCH/server.log" && ok "the log line has seed=$seed" || bad "seed not logged"
post "no seed, SSE" "{\"input\":\"$T\",\"response_format\":\"pcm\",\"stream_format\":\"sse\"}" -N
s2=$(hdr x-vocis-seed)
grep '^data: {"type":"speech.audio.done"' "$SCRATCH/body" | grep -q "\"seed\":$s2}" && [ -n "$s2" ] \
    && ok "SSE done event carries the seed $s2" || bad "SSE seed: $(grep audio.done "$SCRATCH/body") header '$s2'"

# Turbo takes top_k as vocis speak --top-k does
speak --model "$TURBO" --text "$T" --seed 3 --top-k 5 -o "$SCRATCH/turbo_cli.wav"
post "Turbo top_k 5" "{\"model\":\"turbo\",\"input\":\"$T\",\"seed\":3,\"top_k\":5,\"response_format\":\"wav\"}"
cmp -s "$SCRATCH/body" "$SCRATCH/turbo_cli.wav" && ok "Turbo top_k = vocis speak --top-k" || bad "Turbo top_k WAV differs"

# /metrics: each model's batch (issue 23 item 3): the Turbo and Realtime requests above were stepped, none is
# left in them
curl -s "$URL/metrics" >"$SCRATCH/metrics"
tsteps=$(sed -n 's/^vocis_batch_steps_total{model="turbo"} //p' "$SCRATCH/metrics")
trows=$(sed -n 's/^vocis_batch_rows_total{model="turbo"} //p' "$SCRATCH/metrics")
tact=$(sed -n 's/^vocis_batch_active{model="turbo"} //p' "$SCRATCH/metrics")
rtsteps=$(sed -n 's/^vocis_batch_steps_total{model="rt"} //p' "$SCRATCH/metrics")
rtrows=$(sed -n 's/^vocis_batch_rows_total{model="rt"} //p' "$SCRATCH/metrics")
rtact=$(sed -n 's/^vocis_batch_active{model="rt"} //p' "$SCRATCH/metrics")
[ "${tsteps:-0}" -gt 0 ] && [ "${trows:-0}" -ge "${tsteps:-0}" ] && [ "$tact" = 0 ] && [ "${rtsteps:-0}" -gt 0 ] \
    && [ "${rtrows:-0}" -ge "${rtsteps:-0}" ] && [ "$rtact" = 0 ] \
    && ok "/metrics: turbo batch $tsteps steps, $trows rows, $tact active; rt $rtsteps steps, $rtrows rows" \
    || bad "batch metrics: turbo steps='$tsteps' rows='$trows' active='$tact', rt steps='$rtsteps' rows='$rtrows' active='$rtact'"

# ---- item 15: one table of limits: the CLI and the server refuse and accept the same values.
# json-name cli-flag just-below min max just-above ("accepted" = got past the option checks:
# the CLI then misses the model folder, the server the model)
# other_cli FLAG: the other sampling commands that take the knob, as "NAME ARGS..." lines
other_cli() {
    case $1 in
    --cfg-scale | --diffusion-steps) ;;
    --cfm-steps) echo "convert $SCRATCH/src.wav -o $SCRATCH/x.wav" ;;
    --seed) echo "tokens --text hi"; echo "convert $SCRATCH/src.wav -o $SCRATCH/x.wav" ;;
    *) echo "tokens --text hi" ;;
    esac
}
# other_cli_agrees FLAG VALUE accepted|refused: every other command takes or refuses VALUE as speak does
other_cli_agrees() {
    local cmd rest rc
    while read -r cmd rest; do
        [ -n "$cmd" ] || continue
        # shellcheck disable=SC2086
        "$VOCIS" "$cmd" --model "$SCRATCH/nomodel" $rest "$1" "$2" 2>"$SCRATCH/err2"; rc=$?
        if [ "$3" = accepted ]; then
            grep -q 'model folder not found' "$SCRATCH/err2" || { bad "vocis $cmd $1 $2: $(cat "$SCRATCH/err2")"; continue; }
        else
            [ $rc = 2 ] && grep -q "^vocis $cmd: option $1: " "$SCRATCH/err2" \
                || { bad "vocis $cmd $1 $2 not refused: rc=$rc $(cat "$SCRATCH/err2")"; continue; }
        fi
        ok "vocis $cmd $1 $2 $3 as by speak and the server"
    done <<<"$(other_cli "$1")"
}
while read -r js flag below lo hi above; do
    for v in "$lo" "$hi"; do
        other_cli_agrees "$flag" "$v" accepted
        "$VOCIS" speak --model "$SCRATCH/nomodel" --text hi -o "$SCRATCH/x.wav" "$flag" "$v" 2>"$SCRATCH/err"
        c=$(curl -s -o "$SCRATCH/body" -w '%{http_code}' "$S" -d "{\"model\":\"nomodel\",\"input\":\"hi\",\"$js\":$v}")
        grep -q 'model folder not found' "$SCRATCH/err" && [ "$c" = 404 ] && ok "$js / $flag $v accepted by both" \
            || bad "$js / $flag $v: CLI '$(cat "$SCRATCH/err")', server $c $(cat "$SCRATCH/body")"
    done
    for v in "$below" "$above"; do
        other_cli_agrees "$flag" "$v" refused
        "$VOCIS" speak --model "$SCRATCH/nomodel" --text hi -o "$SCRATCH/x.wav" "$flag" "$v" 2>"$SCRATCH/err"; rc=$?
        c=$(curl -s -o "$SCRATCH/body" -w '%{http_code}' "$S" -d "{\"model\":\"nomodel\",\"input\":\"hi\",\"$js\":$v}")
        [ $rc = 2 ] && grep -q "^vocis speak: option $flag: " "$SCRATCH/err" && [ "$c" = 400 ] && grep -q "\"param\":\"$js\"" "$SCRATCH/body" \
            && ok "$js / $flag $v refused by both" || bad "$js / $flag $v: CLI rc=$rc '$(cat "$SCRATCH/err")', server $c $(cat "$SCRATCH/body")"
    done
done <<'EOF'
seed --seed -1 0 9007199254740991 9007199254740992
temperature --temperature 0.0099 0.01 5 5.001
exaggeration --exaggeration -0.001 0 2 2.001
cfg_weight --cfg-weight -0.001 0 5 5.001
min_p --min-p -0.001 0 1 1.001
top_p --top-p -0.001 0 1 1.001
top_k --top-k -1 0 1000000 1000001
repetition_penalty --repetition-penalty 0.499 0.5 5 5.001
max_new_tokens --max-tokens 0 1 4096 4097
cfm_steps --cfm-steps 0 1 100 101
cfg_scale --cfg-scale -0.001 0 10 10.001
diffusion_steps --diffusion-steps 0 1 100 101
EOF

stop_server TERM
[ "$SRV_RC" = 0 ] || bad "server exit $SRV_RC"
finish
