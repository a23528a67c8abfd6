#!/usr/bin/env bash
# VibeVoice scripts as upstream's demo prepares them (tiny model): continuation lines join the turn
# (the audio is that of the joined script), what cannot be used is a warning naming the line
# (silent under -q), and scripts, voices or results that give no speech are refused with one line.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
D=$DATA/vibevoice
M=$D/model
V0=$D/inputs/voice_0.wav V1=$D/inputs/voice_1.wav
SPK=("$VOCIS" speak --model "$M" --seed 4321)

# expect_warnings NAME N PATTERN... -- CMD...: exit 0, exactly N "warning:" lines, each PATTERN among them.
expect_warnings() {
    local name=$1 n=$2 rc=0 got p; shift 2
    local pats=()
    while [ "$1" != "--" ]; do pats+=("$1"); shift; done
    shift
    timeout 120 "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
    got=$(grep -c "warning:" "$SCRATCH/err")
    local bad=$((rc != 0 || got != n))
    for p in "${pats[@]}"; do grep -qE -- "$p" "$SCRATCH/err" || bad=1; done
    if [ $bad -ne 0 ]; then
        echo "FAIL $name: rc=$rc, $got warning(s):"; sed 's/^/    /' "$SCRATCH/err" | head -8
        fails=$((fails + 1))
    else
        echo "ok   $name: $(grep -c . "$SCRATCH/err") stderr line(s)"
    fi
}

# A continuation line joins its turn: the audio equals the joined script's, not the one without it.
printf 'Intro before any label\nSpeaker 1: Hello, welcome\nback to the show!\nSpeaker2: glued label\nSpeaker 2:\n' \
    >"$SCRATCH/messy.txt"
printf 'Speaker 1: Hello, welcome back to the show!\n' >"$SCRATCH/joined.txt"
printf 'Speaker 1: Hello, welcome\n' >"$SCRATCH/cut.txt"
expect_warnings vv-messy-script 4 "script line 1 comes before the first 'Speaker N:' line.*'Intro before any label'" \
    "script line 4 is not a 'Speaker N:' label.*'Speaker2: glued label'" \
    "script line 5 has no text after the label.*'Speaker 2:'" "2 voices were given for 1 speaker: voice 2 is not used" \
    -- "${SPK[@]}" --script "$SCRATCH/messy.txt" --voice "$V0" --voice "$V1" -o "$SCRATCH/messy.wav"
"${SPK[@]}" --script "$SCRATCH/joined.txt" --voice "$V0" -q -o "$SCRATCH/joined.wav" || fails=$((fails + 1))
"${SPK[@]}" --script "$SCRATCH/cut.txt" --voice "$V0" -q -o "$SCRATCH/cut.wav" 2>/dev/null # may give no audio
if cmp -s "$SCRATCH/messy.wav" "$SCRATCH/joined.wav" && ! cmp -s "$SCRATCH/messy.wav" "$SCRATCH/cut.wav"; then
    echo "ok   vv-continuation-joined"
else
    echo "FAIL vv-continuation-joined: the continuation line was not spoken as part of its turn"; fails=$((fails + 1))
fi
expect_warnings vv-quiet 0 -- "${SPK[@]}" --script "$SCRATCH/messy.txt" --voice "$V0" -q -o "$SCRATCH/q.wav"
[ ! -s "$SCRATCH/err" ] || { echo "FAIL vv-quiet: stderr not empty under -q"; fails=$((fails + 1)); }
# no voice: upstream's prompt without a voice section, with a warning
expect_warnings vv-no-voice 1 "no voice was given" -- "${SPK[@]}" --text "Speaker 1: Hi." -o "$SCRATCH/novoice.wav"

# a voice over 600 s: its first 600 s are used, with a warning (not silently)
"$(dirname "$CMP")/mkaudio" long2h "$V0" "$SCRATCH/long.wav"
expect_warnings vv-long-voice 1 "long.wav: only the first 600 s of the voice are used" -- \
    "${SPK[@]}" --text "Hi there." --voice "$SCRATCH/long.wav" --max-seconds 0.1 --threads 2 -o "$SCRATCH/long_out.wav"
rm -f "$SCRATCH/long.wav"

# refusals: one line, non-zero exit, no file
rm -f "$SCRATCH"/bad*.wav
expect_error vv-two-voices-plain-text "^vocis speak: 2 voices were given but the text has no 'Speaker N:' lines: write one line per turn as 'Speaker 1: \.\.\.'$" \
    "${SPK[@]}" --text "Just plain words." --voice "$V0" --voice "$V1" -q -o "$SCRATCH/bad1.wav"
printf 'Speaker1: hi\nSpeaker2: there\n' >"$SCRATCH/glued.txt"
expect_error vv-glued-labels-only "1 voice was given but the text has no 'Speaker N:' lines" \
    "${SPK[@]}" --script "$SCRATCH/glued.txt" --voice "$V0" -q -o "$SCRATCH/bad2.wav"
expect_error vv-labels-without-text "'Speaker N:' lines have no text" \
    "${SPK[@]}" --text "Speaker 1:" --voice "$V0" -q -o "$SCRATCH/bad3.wav"
expect_error vv-skip-grammar "need 2 voice slots, 1 voice was given" \
    "${SPK[@]}" --text "Speaker 2: hi" --voice "$V0" -q -o "$SCRATCH/bad4.wav"
"$(dirname "$CMP")/mkaudio" short005 "$V0" "$SCRATCH/short.wav"
expect_error vv-short-voice "short.wav: the voice is 0.05 s long; VibeVoice needs at least 0.5 s" \
    "${SPK[@]}" --text "Hi there." --voice "$SCRATCH/short.wav" -q -o "$SCRATCH/bad5.wav"
# 1 s of digital silence, 16-bit mono 24 kHz
{ printf 'RIFF\x84\xbb\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\xc0\x5d\x00\x00\x80\xbb\x00\x00\x02\x00\x10\x00'
  printf 'data\x80\xbb\x00\x00'; head -c 48000 /dev/zero; } >"$SCRATCH/silent.wav"
expect_error vv-silent-voice "silent.wav: the voice is silent" \
    "${SPK[@]}" --text "Hi there." --voice "$SCRATCH/silent.wav" -q -o "$SCRATCH/bad6.wav"
# this script makes the tiny model end the speech before its first frame: no audio is no success
printf 'Speaker 1: Hi.\nSpeaker 2: Yo.\n' >"$SCRATCH/mute.txt"
expect_error vv-no-audio "VibeVoice produced no audio" \
    "${SPK[@]}" --script "$SCRATCH/mute.txt" --voice "$V0" --voice "$V1" -q -o "$SCRATCH/bad7.wav"
no_file vv-script-bad "$SCRATCH"/bad[1-7].wav
finish
