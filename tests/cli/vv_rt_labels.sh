#!/usr/bin/env bash
# VibeVoice-Realtime is single-speaker: a "Speaker N:" label at a line start is removed (one warning),
# whole or streamed in pieces that split the label, so the audio equals that of the text without labels;
# text that is only labels is refused as empty.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
D=$DATA/vibevoice-realtime
SPK=("$VOCIS" speak --model "$D/model" --voice "$D/voices/streaming_model/en-TinyAda_woman.pt" --seed 1357 --threads 2)

printf 'Hello from the tiny\nrealtime model.' >"$SCRATCH/plain.txt"
printf 'Speaker 1:  Hello from the tiny\nspeaker 2 : realtime model.' >"$SCRATCH/labels.txt"
"${SPK[@]}" --text-file "$SCRATCH/plain.txt" -q -o "$SCRATCH/plain.wav" || fails=$((fails + 1))
"${SPK[@]}" --text-file "$SCRATCH/labels.txt" -o "$SCRATCH/labels.wav" 2>"$SCRATCH/err" || fails=$((fails + 1))
if cmp -s "$SCRATCH/plain.wav" "$SCRATCH/labels.wav" && [ "$(grep -c warning: "$SCRATCH/err")" -eq 1 ] &&
    grep -q "warning: VibeVoice-Realtime speaks with one voice: 'Speaker N:' labels are removed, not read aloud (the first on line 1: 'Speaker 1:')" "$SCRATCH/err"; then
    echo "ok   rt-labels-removed"
else
    echo "FAIL rt-labels-removed:"; sed 's/^/    /' "$SCRATCH/err"; fails=$((fails + 1))
fi
(printf 'Spea'; sleep 0.2; printf 'ker 1'; sleep 0.2; printf ':  Hello from the tiny\nspeak'; sleep 0.2
 printf 'er 2 : realtime model.') | "${SPK[@]}" --stream-text -q -o "$SCRATCH/stream.wav" || fails=$((fails + 1))
if cmp -s "$SCRATCH/plain.wav" "$SCRATCH/stream.wav"; then echo "ok   rt-labels-removed-streamed"
else echo "FAIL rt-labels-removed-streamed: audio differs from the text without labels"; fails=$((fails + 1)); fi
# not a label: "Speaker" in running text, a label without a number
printf 'Speaker one: the Speaker 1: stays.' >"$SCRATCH/keep.txt"
"${SPK[@]}" --text-file "$SCRATCH/keep.txt" -o "$SCRATCH/keep.wav" 2>"$SCRATCH/err" || fails=$((fails + 1))
if grep -q warning: "$SCRATCH/err"; then echo "FAIL rt-no-label: warned:"; cat "$SCRATCH/err"; fails=$((fails + 1))
else echo "ok   rt-no-label"; fi
expect_error rt-only-labels "text is empty" "${SPK[@]}" --text $'Speaker 1:\nSpeaker 2:  ' -q -o "$SCRATCH/bad1.wav"
no_file rt-labels-bad "$SCRATCH/bad1.wav"
finish
