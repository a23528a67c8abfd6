#!/usr/bin/env bash
# VibeVoice KV storage by default (issue 22): a generation whose caches may grow past 16384 positions
# (prompt + upstream's cap of 2 x prompt) keeps them in bf16, one warning saying so; shorter ones stay
# float32. So a short script's default audio is --kv f32's, a long one's is --kv bf16's (and not
# f32's); a --max-seconds preview makes the same choice (its audio is the start of the full run's);
# a script filling the tiny model's whole 65536-position context runs.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
D=$DATA/vibevoice
S=$SCRATCH
SPK=("$VOCIS" speak --model "$D/model" --voice "$D/inputs/voice_0.wav" --voice "$D/inputs/voice_1.wav" --threads 2
     --seed 29 --format f32 -o -)
check() { local name=$1; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi; }
script() { { printf 'Speaker 1:'; for _ in $(seq 1 "$1"); do printf ' the quick brown fox'; done; printf '\nSpeaker 2: Yes.\n'; } >"$2"; }
WARN="KV caches are kept in bf16"

printf 'Speaker 1: So tell us about the book.\nSpeaker 2: It took me three years.\n' >"$S/short.txt"
"${SPK[@]}" --script "$S/short.txt" >"$S/short.f32" 2>"$S/short.err"
"${SPK[@]}" --script "$S/short.txt" --kv f32 >"$S/short_f32.f32" 2>/dev/null
check short-is-f32 cmp -s "$S/short.f32" "$S/short_f32.f32"
check short-no-warning test -s "$S/short.f32" -a "$(grep -c "$WARN" "$S/short.err")" = 0

script 370 "$S/long.txt" # ~5950 prompt tokens: 5950 + 2 x 5950 > 16384
"${SPK[@]}" --script "$S/long.txt" >"$S/long.f32" 2>"$S/long.err"
"${SPK[@]}" --script "$S/long.txt" --kv bf16 >"$S/long_bf16.f32" 2>/dev/null
"${SPK[@]}" --script "$S/long.txt" --kv f32 >"$S/long_f32.f32" 2>"$S/long_f32.err"
check long-is-bf16 cmp -s "$S/long.f32" "$S/long_bf16.f32"
check long-not-f32 test -s "$S/long.f32" -a -s "$S/long_f32.f32" -a "$(cmp -s "$S/long.f32" "$S/long_f32.f32"; echo $?)" = 1
check long-one-warning test "$(grep -c "warning: the generation may reach past 16384 positions: its $WARN" "$S/long.err")" = 1
check long-f32-no-warning test "$(grep -c "$WARN" "$S/long_f32.err")" = 0
"${SPK[@]}" --script "$S/long.txt" --max-seconds 0.2 >"$S/preview.f32" 2>/dev/null
n=$(stat -c %s "$S/preview.f32")
check preview-same-choice test "$n" -gt 0 -a "$(head -c "$n" "$S/long.f32" | cmp -s - "$S/preview.f32"; echo $?)" = 0

script 1355 "$S/full.txt" # ~21780 prompt tokens + 2 x that: 65340 of the 65536 positions
"${SPK[@]}" --script "$S/full.txt" >"$S/full.f32" 2>"$S/full.err"
check full-context-runs test -s "$S/full.f32" -a "$(grep -c "$WARN" "$S/full.err")" = 1
script 1360 "$S/over.txt"
expect_error over-context "needs ~65[0-9]+ positions \(prompt 21[0-9]+ \+ up to 43[0-9]+ generated\), the model's context is 65536" \
    "${SPK[@]}" --script "$S/over.txt"
finish
