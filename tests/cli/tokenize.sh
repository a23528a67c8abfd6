#!/usr/bin/env bash
# vocis tokenize: golden ids, bad input, long input.
# Args: $1 vocis binary, $2 tests/data, $3 scratch dir, $4 stcompare (unused).
set -u
vocis=$1 data=$2 scratch=$3
model=$data/chatterbox/ckpt
mkdir -p "$scratch"
fail=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }

# expect_error NAME EXPECTED_STDERR_FRAGMENT -- ARGS...: non-zero exit, empty
# stdout, exactly one line on stderr containing the fragment.
expect_error() {
    local name=$1 frag=$2
    shift 3
    "$vocis" tokenize "$@" >"$scratch/out" 2>"$scratch/err"
    local rc=$?
    local lines
    lines=$(wc -l <"$scratch/err")
    if [ "$rc" -eq 0 ]; then bad "$name: exit 0"; return; fi
    if [ -s "$scratch/out" ]; then bad "$name: wrote to stdout"; return; fi
    if [ "$lines" -ne 1 ]; then bad "$name: $lines stderr lines: $(cat "$scratch/err")"; return; fi
    if ! grep -qF -- "$frag" "$scratch/err"; then bad "$name: stderr lacks '$frag': $(cat "$scratch/err")"; return; fi
    ok
}

# 1. golden case 0: the t3_text_tokens line
want="255 348 2 225 157 18 2 317 2 136 2 68 2 87 116 92 2 158 123 2 140 2 41 75 129 87 119 451 91 20 0"
got=$("$vocis" tokenize --model "$model" --text "Hello world, this is a tiny test of Chatterbox." 2>"$scratch/err")
rc=$?
if [ "$rc" -ne 0 ] || [ "$got" != "$want" ] || [ -s "$scratch/err" ]; then
    bad "golden case 0: rc=$rc got '$got' stderr '$(cat "$scratch/err")'"
else ok; fi

# golden case 1 (punctuation, quotes, ellipsis, dash) through the CLI too
want1="255 228 13 86 2 25 18 26 27 2 83 80 18 2 2 126 2 152 13 118 2 8 79 235 8 2 19 2 159 395 7 0"
got=$("$vocis" tokenize -m "$model" -t "it's 3:45 pm… and we're “late” — again!")
[ "$got" = "$want1" ] && ok || bad "golden case 1: got '$got'"

# --help: exit 0, usage on stdout
if "$vocis" tokenize --help >"$scratch/out" 2>&1 && grep -q "usage: vocis tokenize" "$scratch/out"; then ok
else bad "--help"; fi

# 2. bad input
expect_error "unknown flag" "unknown option '--bogus'" -- --bogus 1 --model "$model" --text hi
expect_error "missing --model" "missing --model" -- --text hi
expect_error "missing --text" "missing --text" -- --model "$model"
expect_error "empty text" "vocis tokenize: text is empty" -- --model "$model" --text ""
# whitespace only (Unicode spaces too) is refused as speak refuses it, with the same message
for blank in "  " $'\t\n' $'\u3000\u00a0'; do
    expect_error "blank text" "vocis tokenize: text is empty" -- --model "$model" --text "$blank"
    "$vocis" speak --model "$model" --text "$blank" -q -o "$scratch/blank.wav" 2>"$scratch/err"
    if [ $? -ne 0 ] && [ "$(cat "$scratch/err")" = "vocis speak: text is empty" ]; then ok
    else bad "speak of blank text: $(cat "$scratch/err")"; fi
done
expect_error "missing model dir" "no/such/dir/tokenizer.json" -- --model "$scratch/no/such/dir" --text hi
expect_error "invalid utf-8" "invalid UTF-8 at byte offset 2" -- --model "$model" --text $'ab\xff'
mkdir -p "$scratch/vv"
cp "$data/vibevoice/model/tokenizer.json" "$scratch/vv/"
expect_error "not chatterbox" "[START]/[STOP]" -- --model "$scratch/vv" --text hi
mkdir -p "$scratch/broken"
printf '{"model": {' >"$scratch/broken/tokenizer.json"
expect_error "broken json" "invalid JSON" -- --model "$scratch/broken" --text hi

# emoji: ids as upstream ([UNK] = 1), with a warning naming the characters the vocabulary lacks
got=$("$vocis" tokenize --model "$model" --text "Hi 😀 there 🎉 😀" 2>"$scratch/err")
if [ "$got" = "255 46 76 2 1 2 223 2 1 2 1 20 0" ] &&
    [ "$(cat "$scratch/err")" = "vocis tokenize: warning: the tokenizer has no token for '😀' (U+1F600), '🎉' (U+1F389): they are read as [UNK]" ]; then ok
else bad "emoji: got '$got', stderr '$(cat "$scratch/err")'"; fi
got=$("$vocis" tokenize --model "$data/chatterbox-mtl/ckpt" --language en --text "Hi 😀" 2>"$scratch/err")
if [ -n "$got" ] && grep -qx "vocis tokenize: warning: the tokenizer has no token for '😀' (U+1F600): it is read as \[UNK\]" "$scratch/err"; then ok
else bad "emoji (multilingual): got '$got', stderr '$(cat "$scratch/err")'"; fi
# ... and through speak (on_warning): the same line, then the audio
"$vocis" speak --model "$model" --text "Hi 😀 there 🎉" --seed 1 --max-tokens 5 -o "$scratch/emoji.wav" 2>"$scratch/err"
if [ $? -eq 0 ] && grep -qx "vocis speak: warning: the tokenizer has no token for '😀' (U+1F600), '🎉' (U+1F389): they are read as \[UNK\]" "$scratch/err"; then ok
else bad "emoji through speak: $(cat "$scratch/err")"; fi

# 3. 100k characters: a 100k-letter word, then 100k characters of words.
# Both succeed (exit 0, one line of ids) with a one-line warning that T3
# cannot take that many text tokens.
long_word=$(head -c 100000 /dev/zero | tr '\0' 'a')
long_text=$(yes "hello world, this is a long text." | head -c 100000)
i=0
for text in "$long_word" "$long_text"; do
    i=$((i + 1))
    start=$(date +%s)
    "$vocis" tokenize --model "$model" --text "$text" >"$scratch/out" 2>"$scratch/err"
    rc=$?
    secs=$(($(date +%s) - start))
    nlines=$(wc -l <"$scratch/out")
    nerr=$(wc -l <"$scratch/err")
    first=$(cut -d' ' -f1 "$scratch/out")
    last=$(awk '{print $NF}' "$scratch/out")
    if [ "$rc" -ne 0 ] || [ "$nlines" -ne 1 ] || [ "$first" != 255 ] || [ "$last" != 0 ] || [ "$nerr" -ne 1 ] ||
        ! grep -q "exceed T3" "$scratch/err" || [ "$secs" -gt 20 ]; then
        bad "long text $i: rc=$rc lines=$nlines stderr='$(head -c 300 "$scratch/err")' ${secs}s"
    else ok; fi
done

echo "cli_tokenize: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
