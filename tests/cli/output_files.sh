#!/usr/bin/env bash
# What `-o PATH` does to what is at PATH (issue 18): devices, pipes and symlink
# targets are written to, not replaced; a regular file is replaced through a
# unique temporary (an unrelated PATH.tmp survives) keeping its permission
# bits; the format follows the extension; same seed -> same bytes, and the same
# samples in every 16-bit format.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
PCM16=$(dirname "$CMP")/pcm16
M=$DATA/chatterbox/ckpt
S=$SCRATCH
speak=("$VOCIS" speak --model "$M" --text "Hello world." --seed 7 -q)
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else fail "$name"; fi; }
no_temp() { ! ls -a "$S" | grep -E '\.[a-z0-9]{6}\.tmp$' >/dev/null; }

"${speak[@]}" -o "$S/ref.wav" || fail "reference run"

# a device: a null device (mknod needs root, as in CI; a node of our own, so that a
# regression cannot replace the machine's /dev/null) stays a character device
if mknod "$S/null" c 1 3 2>/dev/null && echo probe >"$S/null" 2>/dev/null; then
    check device-written "${speak[@]}" -o "$S/null"
    check device-still-device test -c "$S/null"
else
    echo "skip device: cannot make a device node here (not root, or a nodev mount)"
fi

# a named pipe: its reader gets the whole file, the pipe stays a pipe
mkfifo "$S/pipe.wav"
timeout 60 cat "$S/pipe.wav" >"$S/from_pipe.wav" &
reader=$!
check fifo-written timeout 60 "${speak[@]}" -o "$S/pipe.wav"
wait $reader
check fifo-still-fifo test -p "$S/pipe.wav"
check fifo-reader-got-file cmp -s "$S/from_pipe.wav" "$S/ref.wav"

# /dev/stdout (a link through /proc to a pipe, or to the redirected file) is written through
check dev-stdout-pipe bash -c '"$@" -o /dev/stdout | cat >"'"$S"'/stdout_pipe.wav" && cmp -s "'"$S"'/stdout_pipe.wav" "'"$S"'/ref.wav"' _ "${speak[@]}"
check dev-stdout-file bash -c '"$@" -o /dev/stdout >"'"$S"'/stdout_file.wav" && cmp -s "'"$S"'/stdout_file.wav" "'"$S"'/ref.wav"' _ "${speak[@]}"

# symlinks: the target is written (relative, into another folder; dangling: created), the link stays
mkdir -p "$S/sub"
echo old >"$S/sub/target.wav"
ln -s sub/target.wav "$S/link.wav"
check symlink-written "${speak[@]}" -o "$S/link.wav"
check symlink-still-link test -L "$S/link.wav"
check symlink-target-replaced cmp -s "$S/sub/target.wav" "$S/ref.wav"
ln -s "$S/sub/new.wav" "$S/dangling.wav"
check dangling-written "${speak[@]}" -o "$S/dangling.wav"
check dangling-target-created cmp -s "$S/sub/new.wav" "$S/ref.wav"
check dangling-still-link test -L "$S/dangling.wav"

# a regular file: an unrelated PATH.tmp survives; permission bits kept; new files get 0666 & ~umask
echo unrelated >"$S/out.wav.tmp"
echo old >"$S/out.wav"
chmod 640 "$S/out.wav"
check replace-written "${speak[@]}" -o "$S/out.wav"
check unrelated-tmp-kept grep -qx unrelated "$S/out.wav.tmp"
check mode-kept test "$(stat -c %a "$S/out.wav")" = 640
check replaced cmp -s "$S/out.wav" "$S/ref.wav"
check new-file-umask bash -c 'umask 027 && "$@" -o "'"$S"'/umask.wav" && test "$(stat -c %a "'"$S"'/umask.wav")" = 640' _ "${speak[@]}"
check no-temp-left no_temp
expect_error folder-refused "is a directory" "${speak[@]}" -o "$S/sub"
check no-temp-after-failure no_temp

# voice files go through the same writer
COND=$M/conds.pt
ln -s sub/target.voice "$S/link.voice"
check voice-through-symlink bash -c '"$@" 2>/dev/null' _ "$VOCIS" voice create --from-conds "$COND" -o "$S/link.voice"
check voice-link-kept test -L "$S/link.voice" -a -s "$S/sub/target.voice"
echo x >"$S/mode.voice"; chmod 600 "$S/mode.voice"
check voice-mode-kept bash -c '"$1" voice create --from-conds "$2" -o "$3" 2>/dev/null && test "$(stat -c %a "$3")" = 600' _ "$VOCIS" "$COND" "$S/mode.voice"

# vocis serve --port-file goes through the same writer: a FIFO's reader gets the port
mkfifo "$S/port.fifo"
timeout 60 head -n 1 "$S/port.fifo" >"$S/port.got" &
reader=$!
"$VOCIS" serve --model "$M" --host 127.0.0.1 --port 0 --port-file "$S/port.fifo" -q 2>"$S/serve.log" &
server=$!
wait $reader
kill -TERM $server 2>/dev/null; wait $server 2>/dev/null
check port-file-fifo-read grep -qE '^[0-9]+$' "$S/port.got"
check port-file-still-fifo test -p "$S/port.fifo"

# the extension picks the format unless --format says otherwise; a contradiction is refused
magic() { head -c "$2" "$1" | od -An -c | tr -d ' \n'; }
for ext in flac ogg mp3 opus wav; do "${speak[@]}" -o "$S/x.$ext" || fail "write .$ext"; done
check ext-flac test "$(magic "$S/x.flac" 4)" = fLaC
check ext-ogg bash -c 'head -c 64 "$1" | grep -aq vorbis' _ "$S/x.ogg"
check ext-opus bash -c 'head -c 64 "$1" | grep -aq OpusHead' _ "$S/x.opus"
check ext-mp3 bash -c 'case $(head -c 3 "$1" | od -An -tx1 | tr -d " ") in 494433|fff*|ffe*) ;; *) exit 1;; esac' _ "$S/x.mp3"
check ext-wav test "$(magic "$S/x.wav" 4)" = RIFF
check ext-unknown-is-wav bash -c '"$@" -o "'"$S"'/x.raw" && test "$(head -c 4 "'"$S"'/x.raw")" = RIFF' _ "${speak[@]}"
check format-overrides-unknown-ext bash -c '"$@" --format flac -o "'"$S"'/y.audio" && test "$(head -c 4 "'"$S"'/y.audio")" = fLaC' _ "${speak[@]}"
check f32-suits-wav "${speak[@]}" --format f32 -o "$S/f.wav"
expect_error contradiction "--format flac contradicts the extension of .*c\.wav" "${speak[@]}" --format flac -o "$S/c.wav"
expect_error contradiction-mp3 "--format wav contradicts" "${speak[@]}" --format wav -o "$S/c.mp3"
expect_error bad-format "--format must be" "${speak[@]}" --format aiff -o "$S/c.wav"
no_file contradiction "$S/c.wav" "$S/c.mp3"

# same seed, same options -> same bytes; the same samples in WAV, FLAC and raw s16le
for ext in wav flac ogg mp3 opus; do
    "${speak[@]}" -o "$S/again.$ext" || fail "rewrite .$ext"
    check "same-bytes-$ext" cmp -s "$S/x.$ext" "$S/again.$ext"
done
"${speak[@]}" --format f32 -o "$S/f2.wav" && check same-bytes-f32 cmp -s "$S/f.wav" "$S/f2.wav"
"$PCM16" "$S/x.wav" >"$S/wav.s16" && "$PCM16" "$S/x.flac" >"$S/flac.s16" || fail "pcm16"
"${speak[@]}" -o - >"$S/raw.s16" || fail "raw run"
check wav-flac-same-samples cmp -s "$S/wav.s16" "$S/flac.s16"
check wav-raw-same-samples cmp -s "$S/wav.s16" "$S/raw.s16"
check wav-data-is-raw bash -c 'tail -c +45 "$1" | cmp -s - "$2"' _ "$S/x.wav" "$S/raw.s16"

# without --seed the seed drawn is printed, and giving it back reproduces the take
"$VOCIS" speak --model "$M" --text "Hello world." -o "$S/drawn.wav" 2>"$S/drawn.err" || fail "unseeded run"
seed=$(sed -n 's/^vocis speak: seed \([0-9][0-9]*\)$/\1/p' "$S/drawn.err")
check seed-printed test -n "$seed"
"$VOCIS" speak --model "$M" --text "Hello world." --seed "${seed:-0}" -o "$S/reseeded.wav" 2>"$S/reseeded.err"
check seed-reproduces cmp -s "$S/drawn.wav" "$S/reseeded.wav"
check no-seed-line-when-given bash -c '! grep -q "^vocis speak: seed" "$1"' _ "$S/reseeded.err"
"$VOCIS" tokens --model "$M" --text "Hello world." 2>"$S/tokens.err" >/dev/null
check tokens-seed-printed grep -qE '^vocis tokens: seed [0-9]+$' "$S/tokens.err"
"$VOCIS" convert --model "$M" "$DATA/chatterbox-vc/source.wav" -o "$S/conv.flac" 2>"$S/convert.err"
check convert-seed-printed grep -qE '^vocis convert: seed [0-9]+$' "$S/convert.err"
check convert-ext-flac test "$(magic "$S/conv.flac" 4)" = fLaC

# -o - on a terminal is refused (script gives the command a tty)
script -qec "$(printf '%q ' "${speak[@]}") -o -" /dev/null >"$S/tty.out" 2>&1
check tty-refused grep -q "stdout is a terminal" "$S/tty.out"

finish
