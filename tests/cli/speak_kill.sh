#!/usr/bin/env bash
# Crash-safe output (issue 22): vocis speak writes the file as the audio is
# made; a `kill -9` midway leaves, at the output path, a WAV that opens and
# whose header counts exactly the samples it holds; so does a full disk
# (where a small tmpfs can be mounted: root), with one error line.
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

# the header's count (h) == the samples libsndfile reads (got), and the data is there
consistent() {
    h=$(od -An -tu4 -j40 -N4 "$1" | tr -d ' ')
    "$PCM16" "$1" >"$S/check.s16" 2>/dev/null || return 1
    got=$(stat -c %s "$S/check.s16")
    [ "$h" -gt 0 ] && [ "$got" -eq "$h" ] && [ "$(stat -c %s "$1")" -ge $((44 + h)) ]
}

riff=$(od -An -tu4 -j4 -N4 "$S/long.wav" | tr -d ' ')
consistent "$S/long.wav" && [ "$riff" -eq $((36 + h)) ] ||
    { echo "FAIL header (${h:-?} bytes of samples, RIFF size $riff) and samples (${got:-none}) disagree"; exit 1; }
cp "$S/check.s16" "$S/long.s16"
# the samples are a prefix of the whole run's
"$VOCIS" speak --model "$M" --seed 1 -q --chunk-chars 40 --text-file "$S/long.txt" -o - 2>/dev/null |
    head -c "$got" >"$S/full.s16"
cmp -s "$S/long.s16" "$S/full.s16" || { echo "FAIL the killed file is not the start of the full run's audio"; exit 1; }
echo "ok   the killed file opens and holds exactly the $((got / 2)) samples its header counts"

mkdir -p "$S/small"
if mount -t tmpfs -o size=256k tmpfs "$S/small" 2>/dev/null; then
    trap 'umount "$S/small" 2>/dev/null' EXIT
    expect_error disk-full "No space left on device \(.*keeps the audio written before\)" \
        "$VOCIS" speak --model "$M" --seed 1 -q --chunk-chars 40 --text-file "$S/long.txt" -o "$S/small/x.wav"
    if consistent "$S/small/x.wav"; then echo "ok   the file of a full disk opens, its header counting its samples"
    else echo "FAIL the file of a full disk is not consistent"; fails=$((fails + 1)); fi
else
    echo "skip disk-full: cannot mount a small tmpfs here (not root)"
fi
finish
