#!/usr/bin/env bash
# Voices of one model family used by another (issue 18, items 7 and 11): a voice file records
# the kind of model that cloned it (metadata vocis_model_kind) and a model of another cloning
# recipe refuses it by name; English and Multilingual share voices, so do Turbo and Nano; files
# without the key keep loading. Wrong-kind files say what they are, told by their contents.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
EN=$DATA/chatterbox/ckpt MTL=$DATA/chatterbox-mtl/ckpt TURBO=$DATA/chatterbox-turbo/ckpt
RT=$DATA/vibevoice-realtime/model
PRESET=$DATA/vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt
REF=$DATA/chatterbox-turbo/golden/ref_24k.wav # 6.2 s: long enough for Turbo
NANO=$DATA/chatterbox-nano/ckpt

meta() { # FILE: the safetensors metadata as one JSON line
    python3 -c 'import json,struct,sys; d=open(sys.argv[1],"rb").read(); n=struct.unpack("<Q",d[:8])[0]; print(json.dumps(json.loads(d[8:8+n]).get("__metadata__",{})))' "$1"
}
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
speaks() { # NAME ARGS...: vocis speak must succeed
    local name=$1; shift
    if "$VOCIS" speak --text "Hi there." --seed 1 --threads 2 -q -o "$SCRATCH/ok.wav" "$@" 2>"$SCRATCH/err"; then ok "$name"
    else bad "$name: $(cat "$SCRATCH/err")"; fi
}

"$VOCIS" voice create --model "$EN" "$REF" -o "$SCRATCH/en.voice" --threads 2 2>/dev/null || bad "clone with English"
"$VOCIS" voice create --model "$TURBO" "$REF" -o "$SCRATCH/turbo.voice" --threads 2 2>/dev/null || bad "clone with Turbo"
"$VOCIS" voice create --from-conds "$EN/conds.pt" -o "$SCRATCH/conds.voice" 2>/dev/null || bad "convert conds.pt"
"$VOCIS" voice create --from-preset "$PRESET" -o "$SCRATCH/preset.voice" 2>/dev/null || bad "convert preset"
meta "$SCRATCH/en.voice" | grep -q '"vocis_model_kind": "chatterbox"' && ok "English clone records vocis_model_kind chatterbox" \
    || bad "English clone metadata: $(meta "$SCRATCH/en.voice")"
meta "$SCRATCH/turbo.voice" | grep -q '"vocis_model_kind": "chatterbox-turbo"' && ok "Turbo clone records chatterbox-turbo" \
    || bad "Turbo clone metadata: $(meta "$SCRATCH/turbo.voice")"
meta "$SCRATCH/conds.voice" | grep -q vocis_model_kind && bad "a converted conds.pt claims a model kind" \
    || ok "a converted conds.pt (no model) records no kind"

SPK=("$VOCIS" speak --text "Hi there." -q -o "$SCRATCH/bad.wav")
expect_error turbo-voice-on-english "turbo.voice was made for chatterbox-turbo; this model is chatterbox: clone the recording again" \
    "${SPK[@]}" --model "$EN" --voice "$SCRATCH/turbo.voice"
expect_error english-voice-on-turbo "en.voice was made for chatterbox; this model is chatterbox-turbo" \
    "${SPK[@]}" --model "$TURBO" --voice "$SCRATCH/en.voice"
expect_error english-voice-on-nano "en.voice was made for chatterbox; this model is chatterbox-nano" \
    "${SPK[@]}" --model "$NANO" --voice "$SCRATCH/en.voice"
if "$VOCIS" tokens --model "$EN" --t3-cond "$SCRATCH/turbo.voice" --text "Hi." >/dev/null 2>"$SCRATCH/err"; then
    bad "tokens --t3-cond with a Turbo voice succeeded"
else
    grep -q "turbo.voice was made for chatterbox-turbo" "$SCRATCH/err" && ok "tokens --t3-cond refuses the Turbo voice" \
        || bad "tokens --t3-cond: $(cat "$SCRATCH/err")"
fi
speaks "English voice on Multilingual" --model "$MTL" --language fr --voice "$SCRATCH/en.voice"
speaks "Turbo voice on Nano" --model "$NANO" --voice "$SCRATCH/turbo.voice"
speaks "voice file without the key (golden.voice) on English" --model "$EN" --voice "$DATA/chatterbox/golden/golden.voice"
speaks "converted conds.pt on Turbo (no key: shapes checked)" --model "$TURBO" --voice "$SCRATCH/conds.voice"

# ---- wrong-kind files say what they are (by contents: a WAV named .pt is still a recording)
cp "$REF" "$SCRATCH/rec.pt"
expect_error preset-on-chatterbox "en-TinyAda_woman.pt is a VibeVoice-Realtime voice preset; Chatterbox takes a recording, a .voice file or a conds.pt" \
    "${SPK[@]}" --model "$EN" --voice "$PRESET"
expect_error preset-file-on-chatterbox "preset.voice is a VibeVoice-Realtime voice file; Chatterbox takes" \
    "${SPK[@]}" --model "$TURBO" --voice "$SCRATCH/preset.voice"
expect_error wav-on-realtime "ref_24k.wav is an audio recording; a VibeVoice-Realtime voice is a preset .pt \(demo/voices/streaming_model/NAME.pt\)" \
    "${SPK[@]}" --model "$RT" --voice "$REF"
expect_error wav-named-pt-on-realtime "rec.pt is an audio recording" "${SPK[@]}" --model "$RT" --voice "$SCRATCH/rec.pt"
expect_error conds-on-realtime "conds.pt is a Chatterbox conds.pt; a VibeVoice-Realtime voice is a preset" \
    "${SPK[@]}" --model "$RT" --voice "$EN/conds.pt"
expect_error voice-on-realtime "en.voice is a Chatterbox voice file; a VibeVoice-Realtime voice" \
    "${SPK[@]}" --model "$RT" --voice "$SCRATCH/en.voice"
expect_error wav-as-preset "ref_24k.wav is an audio recording" "$VOCIS" voice create --from-preset "$REF" -o "$SCRATCH/bad.voice"
expect_error two-voices-chatterbox "^vocis speak: Chatterbox speaks with one voice: 2 --voice options were given$" \
    "${SPK[@]}" --model "$EN" --voice "$REF" --voice "$REF"
expect_error two-voices-realtime "VibeVoice-Realtime speaks with one voice: 2 --voice" \
    "${SPK[@]}" --model "$RT" --voice "$PRESET" --voice "$PRESET"
no_file wrong-kind-output "$SCRATCH/bad.wav" "$SCRATCH/bad.voice"
finish
