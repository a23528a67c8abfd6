#!/usr/bin/env bash
# VibeVoice processor (script + voices -> prompt ids, masks, normalised
# voices) against upstream VibeVoiceProcessor's 01_processor output, and its
# bad-input cases: each must exit non-zero with a one-line message.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
D=$DATA/vibevoice
M=$D/model
G=$D/golden/01_processor.safetensors
V0=$D/inputs/voice_0.wav V1=$D/inputs/voice_1.wav

# The stage needs only the configs and the tokenizer: run it on a folder without weights.
NW=$SCRATCH/noweights
mkdir -p "$NW"
cp "$M/config.json" "$M/preprocessor_config.json" "$M/tokenizer.json" "$NW/"

"$VOCIS" debug vv-processor --model "$NW" --script "$D/inputs/script.txt" --voice "$V0" --voice "$V1" \
    --out "$SCRATCH/proc.safetensors"
"$CMP" "$G" "$SCRATCH/proc.safetensors" input_ids:exact attention_mask:exact speech_input_mask:exact \
    speech_masks:exact speech_tensors:1e-6

# A third voice for a two-speaker script is ignored (upstream keeps the first K).
"$VOCIS" debug vv-processor --model "$NW" --script "$D/inputs/script.txt" --voice "$V0" --voice "$V1" \
    --voice "$V0" --out "$SCRATCH/proc3.safetensors"
"$CMP" "$G" "$SCRATCH/proc3.safetensors" input_ids:exact speech_masks:exact speech_tensors:1e-6

# Qwen2.5-sized ids: the same vocabulary with its 22 added tokens moved to
# Qwen's ids (151643..151664) and vocab_size 151936; special ids are looked up
# by name, so the prompt is the golden one with ids >= 438 shifted by 151205.
QW=$SCRATCH/qwenids
mkdir -p "$QW"
cp "$NW/preprocessor_config.json" "$QW/"
sed 's/"vocab_size": 512/"vocab_size": 151936/' "$M/config.json" > "$QW/config.json"
SEDS=()
for i in $(seq 438 459); do SEDS+=(-e "s/\"id\": $i\([,}]\)/\"id\": $((i + 151205))\1/"); done
sed "${SEDS[@]}" "$M/tokenizer.json" > "$QW/tokenizer.json"
"$VOCIS" debug vv-processor --model "$QW" --script "$D/inputs/script.txt" --voice "$V0" --voice "$V1" \
    --out "$SCRATCH/qwen.safetensors"
want=$("$CMP" --print "$G" input_ids | tr ' ' '\n' | awk 'NF { print ($1 >= 438 ? $1 + 151205 : $1) }' | tr '\n' ' ')
got=$("$CMP" --print "$SCRATCH/qwen.safetensors" input_ids | tr ' ' '\n' | awk 'NF' | tr '\n' ' ')
if [ "$got" != "$want" ]; then echo "FAIL qwen-sized ids:"; echo "  got:  $got"; echo "  want: $want"; exit 1; fi
echo "ok   qwen-sized ids ($(echo "$got" | wc -w) tokens, speech start $((447 + 151205)))"

expect_fail() { # name expected-substring command...
    local name=$1 want=$2; shift 2
    local out rc=0
    out=$("$@" 2>&1 >/dev/null) || rc=$?
    if [ "$rc" -eq 0 ]; then echo "FAIL $name: exit status 0"; exit 1; fi
    if [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then echo "FAIL $name: not one line:"; echo "$out"; exit 1; fi
    case "$out" in *"$want"*) ;; *) echo "FAIL $name: '$out' lacks '$want'"; exit 1 ;; esac
    echo "ok   $name: $out"
}

printf 'Hello there.\nNo speakers here.\n' > "$SCRATCH/nospeaker.txt"
expect_fail "no speaker lines" "script has no 'Speaker N:' lines" \
    "$VOCIS" debug vv-processor --model "$NW" --script "$SCRATCH/nospeaker.txt" --voice "$V0" --out "$SCRATCH/x.safetensors"
expect_fail "more speakers than voices" "2 speakers" \
    "$VOCIS" debug vv-processor --model "$NW" --script "$D/inputs/script.txt" --voice "$V0" --out "$SCRATCH/x.safetensors"
expect_fail "missing voice file" "missing_voice.wav" \
    "$VOCIS" debug vv-processor --model "$NW" --script "$D/inputs/script.txt" --voice "$V0" \
    --voice "$SCRATCH/missing_voice.wav" --out "$SCRATCH/x.safetensors"
head -c 3000 /dev/urandom > "$SCRATCH/garbage.wav"
expect_fail "garbage voice file" "garbage.wav" \
    "$VOCIS" debug vv-processor --model "$NW" --script "$D/inputs/script.txt" --voice "$V0" \
    --voice "$SCRATCH/garbage.wav" --out "$SCRATCH/x.safetensors"
expect_fail "missing script" "nope.txt" \
    "$VOCIS" debug vv-processor --model "$NW" --script "$SCRATCH/nope.txt" --voice "$V0" --out "$SCRATCH/x.safetensors"

BAD=$SCRATCH/badconfig
mkdir -p "$BAD"
cp "$NW"/* "$BAD/"
printf '{"decoder_config": {"hidden_size": 64,' > "$BAD/config.json"
expect_fail "config.json not JSON" "config.json" \
    "$VOCIS" debug vv-processor --model "$BAD" --script "$D/inputs/script.txt" --voice "$V0" --voice "$V1" \
    --out "$SCRATCH/x.safetensors"
sed 's/"num_attention_heads": 4/"num_attention_heads": 5/' "$M/config.json" > "$BAD/config.json"
expect_fail "heads not dividing hidden" "num_attention_heads" \
    "$VOCIS" debug vv-processor --model "$BAD" --script "$D/inputs/script.txt" --voice "$V0" --voice "$V1" \
    --out "$SCRATCH/x.safetensors"
grep -v '"num_hidden_layers"' "$M/config.json" > "$BAD/config.json"
expect_fail "missing field" "decoder_config.num_hidden_layers" \
    "$VOCIS" debug vv-processor --model "$BAD" --script "$D/inputs/script.txt" --voice "$V0" --voice "$V1" \
    --out "$SCRATCH/x.safetensors"
[ ! -e "$SCRATCH/x.safetensors" ] || { echo "FAIL: a failed run left an output file"; exit 1; }
echo "vv_processor: all checks passed"
