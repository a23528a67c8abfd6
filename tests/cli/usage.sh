#!/usr/bin/env bash
# Command-line conventions (issue 18): --opt=value for every option, a value
# that is itself an option refused, "-" for stdin, progress lines in logs,
# warnings for options another model family reads, `vocis help CMD`.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
M=$DATA/chatterbox/ckpt
TURBO=$DATA/chatterbox-turbo/ckpt
S=$SCRATCH
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else fail "$name"; fi; }
# warned NAME PATTERN|'' CMD...: the command succeeds; its stderr warnings are exactly PATTERN's one line (or none)
warned() {
    local name=$1 pattern=$2; shift 2
    if ! "$@" 2>"$S/warn.err" >/dev/null; then fail "$name: failed: $(head -3 "$S/warn.err")"; return; fi
    local n; n=$(grep -c "warning" "$S/warn.err")
    if [ -z "$pattern" ] && [ "$n" -eq 0 ]; then ok "$name"
    elif [ -n "$pattern" ] && [ "$n" -eq 1 ] && grep -qE -- "$pattern" "$S/warn.err"; then ok "$name: $(grep warning "$S/warn.err")"
    else fail "$name: $n warning line(s):"; sed 's/^/    /' "$S/warn.err" | head -5; fi
}

# --opt=value, for every kind of option and command
check eq-values "$VOCIS" speak --model="$M" --text="Hello world." --seed=7 --cfm-steps=10 --format=wav --out="$S/eq.wav" -q
check eq-same-as-spaced bash -c '"$1" speak --model "$2" --text "Hello world." --seed 7 -q -o "$3" && cmp -s "$3" "$4"' _ "$VOCIS" "$M" "$S/sp.wav" "$S/eq.wav"
check eq-voice-list bash -c '"$1" speak --model "$2" --voice="$2/conds.pt" --text "Hello world." --seed 7 -q -o "$3" && cmp -s "$3" "$4"' _ "$VOCIS" "$M" "$S/v.wav" "$S/eq.wav"
check eq-dash-text "$VOCIS" speak --model "$M" --text=-dash --seed 1 -q -o "$S/dash.wav"
check eq-convert "$VOCIS" convert --model="$M" "$DATA/chatterbox-vc/source.wav" --seed=1 --out="$S/conv.wav" -q
check eq-voice "$VOCIS" voice create --from-conds="$M/conds.pt" --out="$S/eq.voice"
check eq-tokens "$VOCIS" tokens --model="$M" --text=hi --greedy --max-tokens=5 -q
expect_error eq-serve-model-taken "max-queue: value 0 out of range" "$VOCIS" serve --model="$M" --max-queue=0
expect_error eq-unknown "unknown option '--bogus'" "$VOCIS" speak --model "$M" --bogus=1 -o "$S/x.wav"
expect_error eq-flag "option --quiet takes no value" "$VOCIS" speak --model "$M" --quiet=1 -o "$S/x.wav"
expect_error eq-bad-number "option --seed: invalid value 'x'" "$VOCIS" speak --model "$M" --seed=x -o "$S/x.wav"

# a value that is another option of the command is refused
expect_error text-then-option "option --text needs a value" "$VOCIS" speak --model "$M" --text -o "$S/x.wav"
expect_error text-then-alias "option --text needs a value" "$VOCIS" speak --model "$M" -o "$S/x.wav" --text --seed=1
expect_error out-then-help "option --out needs a value" "$VOCIS" speak --model "$M" --text hi --out --help
expect_error tokens-text-then-option "option --text needs a value" "$VOCIS" tokens --model "$M" --text --greedy
no_file refused "$S/x.wav"
check dash-value-kept "$VOCIS" speak --model "$M" --text "-5 apples" --seed 1 -q -o "$S/neg.wav"

# --text-file - and --script - read stdin
printf 'Hello world.\n' >"$S/t.txt"
"$VOCIS" speak --model "$M" --text-file "$S/t.txt" --seed 7 -q -o "$S/file.wav" || fail "text-file run"
check text-file-stdin bash -c '"$1" speak --model "$2" --text-file - --seed 7 -q -o "$3" <"$4" && cmp -s "$3" "$5"' _ "$VOCIS" "$M" "$S/stdin.wav" "$S/t.txt" "$S/file.wav"
check script-stdin bash -c '"$1" speak --model "$2" --script=- --seed 7 -q -o "$3" <"$4" && cmp -s "$3" "$5"' _ "$VOCIS" "$M" "$S/script.wav" "$S/t.txt" "$S/file.wav"

# progress in a log: plain lines every 100 T3 tokens, no carriage returns
long=(--text "Hello world, this is a much longer sentence." --seed 1 --temperature 5 --min-p 0 --max-tokens 300) # 137 tokens
"$VOCIS" speak --model "$M" "${long[@]}" -o "$S/long.wav" 2>"$S/speak.log" || fail "long speak"
check speak-log-lines grep -qx "vocis speak: t3: 100 speech tokens" "$S/speak.log"
check speak-log-few test "$(grep -c "t3:" "$S/speak.log")" -le 3
check speak-log-no-cr bash -c '! grep -q $'"'"'\r'"'"' "$1"' _ "$S/speak.log"
# long text in a log: one summary line per chunk after the first (audio so far, speed, ETA)
printf 'One sentence here. Another one there. And a third one.' >"$S/three.txt"
"$VOCIS" speak --model "$M" --text-file "$S/three.txt" --chunk-chars 20 --seed 1 -o "$S/three.wav" 2>"$S/three.log" ||
    fail "chunked speak"
check speak-log-chunk-summary grep -Eqx "vocis speak: \[3/3\] [0-9.]+ s of audio, [0-9.]+x real time, ETA [0-9]+ s" "$S/three.log"
check speak-log-chunk-summaries test "$(grep -c "of audio" "$S/three.log")" -eq 2
"$VOCIS" tokens --model "$M" "${long[@]}" 2>"$S/tokens.log" >/dev/null || fail "long tokens"
check tokens-log-lines grep -qx "vocis tokens: 100 tokens" "$S/tokens.log"
check tokens-log-no-cr bash -c '! grep -q $'"'"'\r'"'"' "$1"' _ "$S/tokens.log"

# options another family reads: one warning line each, only for options given
base=(--text "Hello world." --seed 1 -o "$S/w.wav")
warned top-k-on-english "warning: --top-k is ignored by chatterbox models" "$VOCIS" speak --model "$M" "${base[@]}" --top-k=5
warned diffusion-on-english "warning: --diffusion-steps is ignored by chatterbox models" "$VOCIS" speak --model "$M" "${base[@]}" --diffusion-steps 3
warned cfg-weight-on-turbo "warning: --cfg-weight is ignored by chatterbox-turbo models" "$VOCIS" speak --model "$TURBO" "${base[@]}" --cfg-weight 0.3
warned top-k-on-turbo "" "$VOCIS" speak --model "$TURBO" "${base[@]}" --top-k 50
warned english-own-options "" "$VOCIS" speak --model "$M" "${base[@]}" --cfg-weight 0.3 --min-p 0.1 --exaggeration 0.6
warned tokens-top-k "warning: --top-k is ignored by chatterbox models" "$VOCIS" tokens --model "$M" --text hi --greedy --max-tokens 5 --top-k 5
"$VOCIS" speak --model "$M" "${base[@]}" --top-k 5 --min-p 0.1 --cfg-scale 2 2>"$S/two.err" >/dev/null
check two-warnings test "$(grep -c warning "$S/two.err")" -eq 2

# vocis help CMD is vocis CMD --help; --version is listed
for c in speak convert voice tokens serve; do
    "$VOCIS" "$c" --help >"$S/h1" 2>&1; "$VOCIS" help "$c" >"$S/h2" 2>&1
    check "help-$c" bash -c 'cmp -s "$1" "$2" && grep -q "^usage: vocis '"$c"'" "$1"' _ "$S/h1" "$S/h2"
done
check help-lists-version bash -c '"$1" --help | grep -q -- "--version"' _ "$VOCIS"
expect_error help-unknown "unknown command 'bogus'" "$VOCIS" help bogus

finish
