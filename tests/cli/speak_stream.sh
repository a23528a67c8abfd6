#!/usr/bin/env bash
# vocis speak --stream (issue 21): raw PCM on stdout and a WAV file with the length of the path
# without --stream (the same seed draws the same T3 tokens; one 480-sample hop of slack), on the
# English and Turbo tiny checkpoints; --help tells it; option misuse is one error line.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
S=$SCRATCH
T="Hello there, this is a somewhat longer sentence to test streaming."
for model in chatterbox chatterbox-turbo; do
    M=$DATA/$model/ckpt
    "$VOCIS" speak --model "$M" --seed 4 --temperature 1.5 -q --text "$T" -o - >"$S/whole.pcm" || fails=$((fails + 1))
    "$VOCIS" speak --model "$M" --seed 4 --temperature 1.5 -q --text "$T" --stream --stream-first 2 -o - \
        >"$S/stream.pcm" || fails=$((fails + 1))
    "$VOCIS" speak --model "$M" --seed 4 --temperature 1.5 -q --text "$T" --stream -o "$S/stream.wav" ||
        fails=$((fails + 1))
    w=$(stat -c %s "$S/whole.pcm") s=$(stat -c %s "$S/stream.pcm") f=$(($(stat -c %s "$S/stream.wav") - 44))
    d=$((w > s ? w - s : s - w)) df=$((w > f ? w - f : f - w))
    if [ "$w" -gt 0 ] && [ $d -le 960 ] && [ $df -le 960 ]; then
        echo "ok   $model: $w bytes whole, $s streamed to stdout, $f streamed to a WAV"
    else
        echo "FAIL $model: $w bytes whole, $s streamed to stdout, $f streamed to a WAV"
        fails=$((fails + 1))
    fi
done
"$VOCIS" speak --help >"$S/help" 2>&1
if grep -q -- "--stream-first" "$S/help" && grep -q "sample-identical" "$S/help"; then
    echo "ok   --help explains --stream"
else
    echo "FAIL --help does not explain --stream"
    fails=$((fails + 1))
fi
M=$DATA/chatterbox/ckpt
expect_error stream-first-alone "needs --stream" "$VOCIS" speak --model "$M" --text hi --stream-first 5 -o "$S/x.wav"
expect_error stream-first-zero "stream-first" "$VOCIS" speak --model "$M" --text hi --stream --stream-first 0 -o "$S/x.wav"
exit $((fails > 0))
