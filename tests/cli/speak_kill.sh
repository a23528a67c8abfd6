#!/usr/bin/env bash
# Crash-safe output (issue 22): vocis speak writes the file as the audio is
# made; a `kill -9` midway leaves, at the output path, a WAV that opens and
# whose header counts exactly the samples it holds.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
PCM16=$(dirname "$CMP")/pcm16
M=$DATA/chatterbox/ckpt
S=$SCRATCH
for i in $(seq 1 300); do printf 'Sentence number %d is here. ' "$i"; done >"$S/long.txt"
"$VOCIS" speak --model "$M" --seed 1 -q --threads 1 --chunk-chars 40 --text-file "$S/long.txt" -o "$S/long.wav" &
pid=$!
size=0
for _ in $(seq 1 400); do # up to 20 s for the file to hold 3 s of audio past its 44-byte header
    size=$(stat -c %s "$S/long.wav" 2>/dev/null || echo 0)
    [ "$size" -gt 144044 ] && break
    sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null
if [ "$size" -le 144044 ]; then
    echo "FAIL the output did not grow while speaking ($size bytes)"
    exit 1
fi
echo "ok   killed with $size bytes written"
header=$(od -An -tu4 -j40 -N4 "$S/long.wav" | tr -d ' ')
riff=$(od -An -tu4 -j4 -N4 "$S/long.wav" | tr -d ' ')
size=$(stat -c %s "$S/long.wav")
if ! "$PCM16" "$S/long.wav" >"$S/long.s16" 2>"$S/err"; then
    echo "FAIL the killed file does not open: $(cat "$S/err")"
    exit 1
fi
got=$(stat -c %s "$S/long.s16")
echo "header: $((header / 2)) samples, RIFF size $riff, file $size bytes; read $((got / 2)) samples"
[ "$header" -gt 0 ] && [ "$got" -eq "$header" ] && [ "$size" -ge $((44 + header)) ] &&
    [ "$riff" -eq $((36 + header)) ] || { echo "FAIL header and samples disagree"; exit 1; }
# the samples are a prefix of the whole run's
"$VOCIS" speak --model "$M" --seed 1 -q --chunk-chars 40 --text-file "$S/long.txt" -o - 2>/dev/null |
    head -c "$got" >"$S/full.s16"
cmp -s "$S/long.s16" "$S/full.s16" || { echo "FAIL the killed file is not the start of the full run's audio"; exit 1; }
echo "ok   the killed file opens and holds exactly the $((got / 2)) samples its header counts"
