#!/usr/bin/env bash
# vocis speak --subtitles FILE.srt|FILE.vtt (issue 22): the files are parsed here as a player
# would (SubRip: counter, HH:MM:SS,mmm --> HH:MM:SS,mmm, text, blank line; WebVTT: the header,
# HH:MM:SS.mmm, &amp; &lt; &gt; escapes). Chatterbox long text: one cue per chunk, the cues tile
# the audio (each starts where the previous ended, the first at 0, the last ends at the audio's end
# within one 40 ms chunk join) and their texts, in order, are the text. VibeVoice script: one cue
# per turn with its speaker, tiling the audio; with --split-turns a session's first turn starts
# exactly where its audio starts. --chapters: a subtitle file per chapter file. A kill -9 leaves
# a valid file whose cues end within the audio written. Bad extensions are refused.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
PCM16=$(dirname "$CMP")/pcm16
S=$SCRATCH
M=$DATA/chatterbox/ckpt
speak=("$VOCIS" speak --model "$M" --seed 3 --threads 2)
JOIN_MS=40
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# parse FORMAT FILE > TSV: start_ms end_ms speaker text (speaker 0 = none; text unescaped);
# exit 1 with the reason on stderr when the file is not valid FORMAT (srt | vtt).
parse() {
    awk -v fmt="$1" '
    function ms(t,  a) { split(t, a, /[:,.]/); return ((a[1] * 60 + a[2]) * 60 + a[3]) * 1000 + a[4] }
    function fail(why) { print FILENAME ":" NR ": " why > "/dev/stderr"; bad = 1; exit 1 }
    function cue_end() { if (ntext == 0) fail("cue without text"); print start "\t" end "\t" spk "\t" text }
    BEGIN { state = fmt == "vtt" ? "header" : "index"; n = 0
            tre = fmt == "vtt" ? "^[0-9][0-9]+:[0-5][0-9]:[0-5][0-9]\\.[0-9][0-9][0-9]$" \
                               : "^[0-9][0-9]+:[0-5][0-9]:[0-5][0-9],[0-9][0-9][0-9]$" }
    {
        if (state == "header") { if ($0 != "WEBVTT") fail("no WEBVTT header"); state = "blank"; next }
        if (state == "blank") { if ($0 != "") fail("no blank line after the header"); state = "index"; next }
        if (state == "index") {
            if (fmt == "srt") { if ($0 != n + 1) fail("counter " $0 ", expected " n + 1); state = "time"; next }
            state = "time"
        }
        if (state == "time") {
            if (NF != 3 || $2 != "-->" || $1 !~ tre || $3 !~ tre) fail("not a timing line: " $0)
            start = ms($1); end = ms($3); n++; ntext = 0; text = ""; spk = 0; state = "text"; next
        }
        if ($0 == "") { cue_end(); state = "index"; next }
        line = $0
        if (index(line, "-->")) fail("--> in cue text")
        if (ntext == 0 && fmt == "vtt" && match(line, /^<v Speaker [0-9]+>/)) { spk = substr(line, 12, RLENGTH - 12); line = substr(line, RLENGTH + 1) }
        else if (ntext == 0 && fmt == "srt" && match(line, /^Speaker [0-9]+: /)) { spk = substr(line, 9, RLENGTH - 10); line = substr(line, RLENGTH + 1) }
        if (fmt == "vtt") {
            if (line ~ /[<>]/) fail("unescaped < or > in cue text")
            t = line; gsub(/&(amp|lt|gt);/, "", t); if (t ~ /&/) fail("unescaped & in cue text")
            gsub(/&lt;/, "<", line); gsub(/&gt;/, ">", line); gsub(/&amp;/, "\\&", line)
        }
        text = ntext++ ? text " " line : line
    }
    END { if (!bad && state != "index") fail("the file does not end with a blank line after a cue"); if (!bad && n == 0) fail("no cues") }
    ' "$2"
}

# tiles NAME TSV AUDIO_MS: cues in order, each from where the previous ended (the first from 0),
# start <= end, the last ending at AUDIO_MS within one chunk join.
tiles() {
    if awk -F'\t' -v total="$3" -v join=$JOIN_MS '
        { if ($1 != (NR == 1 ? 0 : prev) || $2 < $1) { print "cue " NR ": " $1 "-" $2 " after " prev > "/dev/stderr"; exit 1 } prev = $2 }
        END { d = prev - total; if (d < 0) d = -d; if (d > join) { print "last cue ends at " prev " ms, audio " total " ms" > "/dev/stderr"; exit 1 } }' "$2"
    then echo "ok   $1: $(wc -l <"$2") cues tile the $3 ms of audio"
    else bad "$1: the cues do not tile the audio"; fi
}
ms_of() { echo $((($1 * 1000 + 12000) / 24000)); } # samples -> ms as the writer rounds
squash() { tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//'; }

# ---- Chatterbox long text: one cue per chunk -----------------------------------------------------
printf 'It was a dark and stormy night. The rain fell in torrents, except at occasional intervals.\nThen it was checked by a violent gust of wind & <noise> --> that swept up the streets.' >"$S/text.txt"
"${speak[@]}" --text-file "$S/text.txt" --chunk-chars 40 --format f32 -o - --subtitles "$S/cb.srt" \
    >"$S/cb.f32" 2>"$S/cb.err" || bad "chatterbox srt run: $(cat "$S/cb.err")"
"${speak[@]}" --text-file "$S/text.txt" --chunk-chars 40 -q -o "$S/cb.wav" --subtitles "$S/cb.vtt" ||
    bad "chatterbox vtt run"
chunks=$(grep -o '\[1/[0-9]*\]' "$S/cb.err" | head -1 | tr -dc 0-9 | cut -c2-)
cb_ms=$(ms_of $(($(stat -c %s "$S/cb.f32") / 4)))
for f in srt vtt; do
    if parse $f "$S/cb.$f" >"$S/cb_$f.tsv"; then echo "ok   chatterbox $f parses"; else bad "chatterbox $f does not parse"; continue; fi
    [ "$(wc -l <"$S/cb_$f.tsv")" = "${chunks:-?}" ] && echo "ok   chatterbox $f: one cue per chunk ($chunks)" ||
        bad "chatterbox $f: $(wc -l <"$S/cb_$f.tsv") cues for ${chunks:-?} chunks"
    tiles "chatterbox $f" "$S/cb_$f.tsv" "$cb_ms"
    want=$(squash <"$S/text.txt")
    [ $f = srt ] && want=${want//-->/->} # SubRip has no escapes: its "-->" is written "->"
    [ "$(cut -f4 "$S/cb_$f.tsv" | squash)" = "$want" ] &&
        echo "ok   chatterbox $f: the cues' texts are the text's chunks in order" || bad "chatterbox $f: cue texts differ from the text"
done
cmp -s "$S/cb_srt.tsv" <(sed 's/-->/->/' "$S/cb_vtt.tsv") && echo "ok   srt and vtt hold the same cues" || bad "srt and vtt cues differ"
# the WAV of the same run is as long as the raw stream whose length the cues were checked against
"$PCM16" "$S/cb.wav" >"$S/cb.s16" && [ $(($(stat -c %s "$S/cb.s16") / 2)) -eq $(($(stat -c %s "$S/cb.f32") / 4)) ] ||
    bad "the WAV and the raw run differ in length"

# ---- --chapters: one subtitle file per chapter, numbered as the audio files ----------------------
printf 'A few words first.\n\nChapter 1\nIt was a dark night. The wind howled.\n\n# The Second Part\nMorning came.\n' >"$S/book.txt"
"${speak[@]}" -q --text-file "$S/book.txt" --chapters --chunk-chars 30 -o "$S/book.flac" --subtitles "$S/book.vtt" ||
    bad "chapters run"
[ "$(cd "$S" && ls book-*.vtt | tr '\n' ' ')" = "book-01.vtt book-02.vtt book-03.vtt " ] &&
    echo "ok   chapters: book-01.vtt .. book-03.vtt" || bad "chapters: subtitle files $(cd "$S" && ls book-*)"
for k in 01 02 03; do
    "$PCM16" "$S/book-$k.flac" >"$S/ch.s16" || bad "chapter $k audio"
    parse vtt "$S/book-$k.vtt" >"$S/ch$k.tsv" && tiles "chapter $k" "$S/ch$k.tsv" "$(ms_of $(($(stat -c %s "$S/ch.s16") / 2)))" ||
        bad "chapter $k subtitles do not parse"
done
grep -q 'Morning came' "$S/ch03.tsv" && echo "ok   chapter 3's cues hold its text" || bad "chapter 3's text"

# ---- kill -9: the file holds whole cues, each within the audio written ---------------------------
for i in $(seq 1 200); do printf 'Sentence number %d is here. ' "$i"; done >"$S/long.txt"
"$VOCIS" speak --model "$M" --seed 1 -q --threads 1 --chunk-chars 40 --text-file "$S/long.txt" -o "$S/long.wav" \
    --subtitles "$S/long.srt" &
pid=$!
for _ in $(seq 1 400); do # up to 20 s for three cues
    [ "$(grep -c -- '-->' "$S/long.srt" 2>/dev/null)" -ge 3 ] 2>/dev/null && break
    sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null
"$PCM16" "$S/long.wav" >"$S/long.s16" 2>/dev/null || bad "killed run: the WAV does not open"
if parse srt "$S/long.srt" >"$S/long.tsv" && [ "$(wc -l <"$S/long.tsv")" -ge 3 ]; then
    last=$(tail -1 "$S/long.tsv" | cut -f2) audio=$(ms_of $(($(stat -c %s "$S/long.s16") / 2)))
    [ "$last" -le $((audio + JOIN_MS)) ] && echo "ok   killed: $(wc -l <"$S/long.tsv") whole cues, the last ending at $last ms of $audio ms written" ||
        bad "killed: a cue ends at $last ms, past the $audio ms of audio written"
else
    bad "killed: the subtitle file is not valid SRT with 3 cues"
fi

# ---- VibeVoice script: one cue per turn ----------------------------------------------------------
D=$DATA/vibevoice
SPK=("$VOCIS" speak --model "$D/model" --voice "$D/inputs/voice_0.wav" --voice "$D/inputs/voice_1.wav" --threads 2 -q)
printf 'Speaker 1: So tell us about the book.\nSpeaker 2: It took me three years.\n' >"$S/a.txt"
printf 'Speaker 1: Hello, welcome back to the show!\nSpeaker 2: Thanks, it is great to be here.\n' >"$S/b.txt"
cat "$S/a.txt" "$S/b.txt" >"$S/four.txt"
turns() { sed 's/^Speaker \([0-9]*\): /\1\t/' "$@"; }
for f in srt vtt; do
    "${SPK[@]}" --script "$S/four.txt" --seed 29 --format f32 -o - --subtitles "$S/vv.$f" >"$S/vv.f32" || bad "vibevoice $f run"
    if parse $f "$S/vv.$f" >"$S/vv_$f.tsv"; then echo "ok   vibevoice $f parses"; else bad "vibevoice $f does not parse"; continue; fi
    tiles "vibevoice $f" "$S/vv_$f.tsv" "$(ms_of $(($(stat -c %s "$S/vv.f32") / 4)))"
    cmp -s <(cut -f3,4 "$S/vv_$f.tsv") <(turns "$S/four.txt") && echo "ok   vibevoice $f: a cue per turn, speakers and texts in order" ||
        bad "vibevoice $f: cues $(cut -f3,4 "$S/vv_$f.tsv" | tr '\n\t' '| ')"
done
# --split-turns (context cut to 400): two sessions; the third turn starts where session 2's audio does
echo '{"decoder_config": {"max_position_embeddings": 400}}' >"$S/ctx400.json"
"${SPK[@]}" --config "$S/ctx400.json" --script "$S/four.txt" --seed 29 --split-turns --format f32 -o - \
    --subtitles "$S/split.srt" >"$S/split.f32" || bad "split run"
"${SPK[@]}" --config "$S/ctx400.json" --script "$S/a.txt" --seed 29 --format f32 -o - >"$S/a.f32" || bad "session 1 run"
if parse srt "$S/split.srt" >"$S/split.tsv"; then
    tiles "split-turns" "$S/split.tsv" "$(ms_of $(($(stat -c %s "$S/split.f32") / 4)))"
    s3=$(sed -n 3p "$S/split.tsv" | cut -f1) a_ms=$(ms_of $(($(stat -c %s "$S/a.f32") / 4)))
    [ "$s3" = "$a_ms" ] && echo "ok   split-turns: turn 3 starts at $s3 ms, where session 2's audio starts" ||
        bad "split-turns: turn 3 starts at $s3 ms, session 2 at $a_ms ms"
else
    bad "split-turns srt does not parse"
fi

# ---- refusals ------------------------------------------------------------------------------------
expect_error bad-extension "--subtitles .*out.txt: the extension must be .srt \(SubRip\) or .vtt \(WebVTT\)" \
    "${speak[@]}" --text "Hi." -o "$S/x.wav" --subtitles "$S/out.txt"
expect_error no-extension "the extension must be .srt" "${speak[@]}" --text "Hi." -o "$S/x.wav" --subtitles "$S/srt"
expect_error cannot-write "$S/none/x.srt: cannot write: No such file or directory" \
    "${speak[@]}" --text "Hi." -o "$S/y.wav" --subtitles "$S/none/x.srt"
no_file no-audio-left "$S/x.wav" "$S/y.wav"
R=$DATA/vibevoice-realtime
expect_error realtime "--subtitles: VibeVoice-Realtime reports no cues" \
    "$VOCIS" speak --model "$R/model" --text "Hi." -o "$S/r.wav" --subtitles "$S/r.srt"
expect_error stream-text "--subtitles is not available with --stream-text" \
    "$VOCIS" speak --model "$R/model" --stream-text -o "$S/r.wav" --subtitles "$S/r.srt"
# a run refused before its first cue leaves no subtitle file
expect_error vv-too-long "the script needs" "${SPK[@]}" --config "$S/ctx400.json" --script "$S/four.txt" --seed 29 \
    -o "$S/z.wav" --subtitles "$S/z.srt"
no_file no-subtitles-left "$S/z.srt" "$S/r.srt"
finish
