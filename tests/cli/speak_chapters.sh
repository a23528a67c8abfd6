#!/usr/bin/env bash
# vocis speak --chapters (issue 22): a file per chapter, named in order
# (book.wav -> book-01.wav, ...); text before the first heading is the first
# file, headings are spoken, form feeds start chapters, blank chapters are
# skipped; each file is what a separate run on that chapter's text (heading
# first, closed with a '.') writes with the same seed.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
M=$DATA/chatterbox/ckpt
S=$SCRATCH
speak=("$VOCIS" speak --model "$M" --seed 5 -q)
check() { local name=$1; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi; }

printf 'A few words first.\n\nChapter 1\nIt was a dark night.\n\n# The Second Part\nMorning came.\f\n\fLast words.\n' >"$S/book.txt"
check chapters-run "${speak[@]}" --text-file "$S/book.txt" --chapters -o "$S/book.flac"
check four-files test "$(cd "$S" && ls book-*)" = "$(printf 'book-01.flac\nbook-02.flac\nbook-03.flac\nbook-04.flac')"
i=1
for text in 'A few words first.' $'Chapter 1.\nIt was a dark night.' $'The Second Part.\nMorning came.' 'Last words.'; do
    "${speak[@]}" --text "$text" -o "$S/one-0$i.flac" || fail "single run $i"
    check "chapter-$i-in-order" cmp -s "$S/book-0$i.flac" "$S/one-0$i.flac"
    i=$((i + 1))
done

# more than 99 chapters: three digits, so that the names sort; no extension: the number at the end
for k in $(seq 1 100); do printf '\f%d.' "$k"; done >"$S/many.txt"
check many-run "${speak[@]}" --text-file "$S/many.txt" --chapters --format wav -o "$S/many" --max-tokens 4 --cfm-steps 1
check many-names test "$(ls "$S" | grep -c '^many-[0-9][0-9][0-9]$')" = 100
check many-first-last test -s "$S/many-001" -a -s "$S/many-100"

expect_error no-stdout "--chapters .*-o -" "${speak[@]}" --text "x." --chapters -o -
expect_error empty-text "text is empty" "${speak[@]}" --text $' \f\n' --chapters -o "$S/empty.wav"
no_file no-empty-file "$S/empty-01.wav"
finish
