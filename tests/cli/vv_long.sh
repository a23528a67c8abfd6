#!/usr/bin/env bash
# VibeVoice scripts against the context (tiny model, its context cut to 400 positions with --config):
# a script whose prompt + upstream's generation cap (2 x prompt) does not fit is refused before any
# work with the numbers; --split-turns speaks it in sessions of whole turns, session k seeded with
# seed + k, so its audio is exactly the sessions' audio run one by one, concatenated.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
D=$DATA/vibevoice
CTX="$SCRATCH/ctx400.json"
echo '{"decoder_config": {"max_position_embeddings": 400}}' >"$CTX"
SPK=("$VOCIS" speak --model "$D/model" --voice "$D/inputs/voice_0.wav" --voice "$D/inputs/voice_1.wav" --threads 2)

# 154 prompt tokens (two voices, four turns): 154 + 308 > 400. Each half (both speakers in it) fits.
printf 'Speaker 1: So tell us about the book.\nSpeaker 2: It took me three years.\n' >"$SCRATCH/a.txt"
printf 'Speaker 1: Hello, welcome back to the show!\nSpeaker 2: Thanks, it is great to be here.\n' >"$SCRATCH/b.txt"
cat "$SCRATCH/a.txt" "$SCRATCH/b.txt" >"$SCRATCH/four.txt"

rm -f "$SCRATCH"/bad*.wav
expect_error vv-context-overflow "^vocis speak: the script needs ~462 positions \(prompt 154 \+ up to 308 generated\), the model's context is 400; shorten the script or split it at speaker turns \(--split-turns\)$" \
    "${SPK[@]}" --config "$CTX" --script "$SCRATCH/four.txt" --seed 29 -o "$SCRATCH/bad1.wav"
# before any work: streamed raw PCM (each frame as decoded) gets not one byte
expect_error vv-context-overflow-stream "the script needs ~462 positions" \
    "${SPK[@]}" --config "$CTX" --script "$SCRATCH/four.txt" --seed 29 -o -
[ ! -s "$SCRATCH/out" ] || { echo "FAIL vv-context-overflow-stream: audio was made"; fails=$((fails + 1)); }
# --max-new-tokens lowers the cap the rule counts: 154 + 300 still does not fit
expect_error vv-context-overflow-cap "needs ~454 positions \(prompt 154 \+ up to 300 generated\)" \
    "${SPK[@]}" --config "$CTX" --script "$SCRATCH/four.txt" --seed 29 --max-new-tokens 300 -o "$SCRATCH/bad2.wav"
# one turn that cannot fit on its own is refused even with --split-turns
printf 'Speaker 1: Hi.\nSpeaker 2: %s\n' "$(printf 'word %.0s' $(seq 1 40))" >"$SCRATCH/longturn.txt"
expect_error vv-split-turn-too-long "^vocis speak: turn 2 of 2 \('word word word word word word word word \.\.\.'\) needs ~636 positions on its own \(prompt 212 \+ up to 424 generated\), the model's context is 400; split that turn into shorter ones$" \
    "${SPK[@]}" --config "$CTX" --script "$SCRATCH/longturn.txt" --seed 29 --split-turns -o "$SCRATCH/bad3.wav"
no_file vv-context-refused "$SCRATCH"/bad[1-3].wav

# --split-turns: two sessions, exactly the halves spoken alone with seeds 29 and 30, one after the other
"${SPK[@]}" --config "$CTX" --script "$SCRATCH/four.txt" --seed 29 --split-turns --format f32 -o - -q >"$SCRATCH/split.f32" &&
"${SPK[@]}" --config "$CTX" --script "$SCRATCH/a.txt" --seed 29 --format f32 -o - -q >"$SCRATCH/a.f32" &&
"${SPK[@]}" --config "$CTX" --script "$SCRATCH/b.txt" --seed 30 --format f32 -o - -q >"$SCRATCH/b.f32" ||
    { echo "FAIL vv-split-turns: a run failed"; fails=$((fails + 1)); }
na=$(stat -c %s "$SCRATCH/a.f32") nb=$(stat -c %s "$SCRATCH/b.f32") ns=$(stat -c %s "$SCRATCH/split.f32")
if [ "$na" -gt 0 ] && [ "$nb" -gt 0 ] && [ "$ns" -eq $((na + nb)) ] && cat "$SCRATCH/a.f32" "$SCRATCH/b.f32" | cmp -s - "$SCRATCH/split.f32"; then
    echo "ok   vv-split-turns: $((ns / 4)) samples = $((na / 4)) + $((nb / 4)), the sessions' own audio"
else
    echo "FAIL vv-split-turns: split $ns bytes, sessions $na + $nb, or the samples differ"; fails=$((fails + 1))
fi

# a script that fits is one session: --split-turns changes nothing (the model's own 65536 context)
"${SPK[@]}" --script "$SCRATCH/four.txt" --seed 29 --format f32 -o - -q >"$SCRATCH/whole.f32"
"${SPK[@]}" --script "$SCRATCH/four.txt" --seed 29 --split-turns --format f32 -o - -q >"$SCRATCH/whole_split.f32"
if [ -s "$SCRATCH/whole.f32" ] && cmp -s "$SCRATCH/whole.f32" "$SCRATCH/whole_split.f32"; then
    echo "ok   vv-split-turns-fits"
else
    echo "FAIL vv-split-turns-fits: --split-turns changed a script that fits"; fails=$((fails + 1))
fi

# --max-seconds bounds the generation the rule counts (3 frames + 2 per turn + 2 here): the long script runs
if "${SPK[@]}" --config "$CTX" --script "$SCRATCH/four.txt" --seed 29 --max-seconds 0.3 -o "$SCRATCH/short.wav" -q &&
    [ -s "$SCRATCH/short.wav" ]; then
    echo "ok   vv-context-max-seconds"
else
    echo "FAIL vv-context-max-seconds: a 0.3 s preview of the script was refused"; fails=$((fails + 1))
fi
finish
