#!/usr/bin/env bash
# Voice cloning inputs: bad recordings get one-line errors, a non-zero exit and no voice file;
# valid but odd recordings (8/24-bit, float, stereo, FLAC, Ogg, MP3, 8 and 48 kHz, 0.5 s, two hours)
# are handled, the long one in bounded time because only its first minute is read.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
MK=$(dirname "$4")/mkaudio
mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
M=$DATA/chatterbox/ckpt
REF=$DATA/chatterbox/golden/ref_24k.wav
A=$SCRATCH/audio
mkdir -p "$A"

CREATE=("$VOCIS" voice create --model "$M" --threads 2)

echo "this is not audio" >"$A/text.wav"
: >"$A/empty.wav"
head -c 4096 /dev/urandom >"$A/noise.bin"
for k in headeronly one nan inf pcm8 pcm24 float stereo flac ogg mp3 r8k r48k short05; do
    "$MK" "$k" "$REF" "$A/$k" || { echo "FAIL: mkaudio $k"; exit 1; }
done

expect_error not_audio "not a readable audio file" "${CREATE[@]}" "$A/text.wav" -o "$SCRATCH/o1.voice"
expect_error empty_file "empty" "${CREATE[@]}" "$A/empty.wav" -o "$SCRATCH/o2.voice"
expect_error header_only "no audio samples" "${CREATE[@]}" "$A/headeronly" -o "$SCRATCH/o3.voice"
expect_error one_sample "too short" "${CREATE[@]}" "$A/one" -o "$SCRATCH/o4.voice"
expect_error nan_sample "NaN" "${CREATE[@]}" "$A/nan" -o "$SCRATCH/o5.voice"
expect_error inf_sample "infinite" "${CREATE[@]}" "$A/inf" -o "$SCRATCH/o6.voice"
expect_error unsupported_container "not a readable audio file" "${CREATE[@]}" "$A/noise.bin" -o "$SCRATCH/o7.voice"
expect_error missing_file "cannot open" "${CREATE[@]}" "$A/nope.wav" -o "$SCRATCH/o8.voice"
expect_error speak_not_audio "not a readable audio file" \
    "$VOCIS" speak --model "$M" --voice "$A/text.wav" --text "Hi." -o "$SCRATCH/o9.wav" -q
no_file bad_inputs "$SCRATCH"/o[1-9].voice "$SCRATCH/o9.wav"

# valid but odd: each makes a voice
for k in pcm8 pcm24 float stereo flac ogg mp3 r8k r48k; do
    rm -f "$SCRATCH/$k.voice"
    if "${CREATE[@]}" "$A/$k" -o "$SCRATCH/$k.voice" 2>"$SCRATCH/err" && [ -s "$SCRATCH/$k.voice" ]; then
        echo "ok   $k"
    else
        echo "FAIL $k: $(cat "$SCRATCH/err")"; fails=$((fails + 1))
    fi
done
if "${CREATE[@]}" "$A/short05" -o "$SCRATCH/short.voice" 2>"$SCRATCH/err" && grep -q "warning: .*0.5 s" "$SCRATCH/err"; then
    echo "ok   0.5 s reference: $(grep warning "$SCRATCH/err")"
else
    echo "FAIL short05: $(cat "$SCRATCH/err")"; fails=$((fails + 1))
fi

# two hours at 8 kHz (57.6 MB): bounded time and memory
"$MK" long2h "$REF" "$A/long.wav" || { echo "FAIL: mkaudio long2h"; exit 1; }
start=$(date +%s)
if /usr/bin/time -f "%M" -o "$SCRATCH/rss" timeout 120 "$VOCIS" voice create --model "$M" "$A/long.wav" \
        -o "$SCRATCH/long.voice" --threads 2 2>"$SCRATCH/err"; then
    rss_kb=$(tail -1 "$SCRATCH/rss")
    secs=$(( $(date +%s) - start ))
    # the metadata records the whole recording and the part cloned
    if [ "$rss_kb" -lt 1000000 ] && grep -q "first 60 s" "$SCRATCH/err" &&
        grep -aqE '"source_seconds":"72[0-9]{2}\.[0-9]{3}"' "$SCRATCH/long.voice" && grep -aq '"used_seconds":"60.000"' "$SCRATCH/long.voice"; then
        echo "ok   two-hour recording: ${secs} s, peak RSS $((rss_kb / 1024)) MiB"
    else
        echo "FAIL long: rss ${rss_kb} kB: $(cat "$SCRATCH/err")"; fails=$((fails + 1))
    fi
else
    echo "FAIL long: $(cat "$SCRATCH/err")"; fails=$((fails + 1))
fi
rm -f "$A/long.wav"
finish
