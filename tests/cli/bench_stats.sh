#!/usr/bin/env bash
# `vocis bench t3 | s3gen | speak` print each repeated figure as `name: MEDIAN unit (min A, max B, n=N...)`
# and name the precision; the hot-path figures of t3 and s3gen also print their bytes and FLOPs per
# unit and the fraction of the limit measured first in the same process (`limit_*:` lines);
# `vocis bench quality` refuses bad options. The smallest synthetic shapes; only the format is
# checked, never a timing value (min <= median <= max is a property of the format; a fraction only
# has to be a positive number). bench qwen2 and vibevoice 1.5b need the 1.5B LM (3-5 GB): not run
# here; vibevoice realtime-0.5b (1.5 GB) is.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3
mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"

# stat_line NAME UNIT REPS FILE: the line exists, in the stats format, with n=REPS and min <= median <= max.
stat_line() {
    local name=$1 unit=$2 reps=$3 file=$4 line
    line=$(grep -E "^$name: " "$file" | head -1)
    if ! [[ $line =~ ^$name:\ ([0-9.]+)\ $unit\ \(min\ ([0-9.]+),\ max\ ([0-9.]+),\ n=$reps[\;\)] ]]; then
        echo "FAIL $name: not in the stats format: '$line'"; fails=$((fails + 1)); return
    fi
    if awk -v m="${BASH_REMATCH[1]}" -v a="${BASH_REMATCH[2]}" -v b="${BASH_REMATCH[3]}" 'BEGIN { exit !(a <= m && m <= b) }'; then
        echo "ok   $line"
    else
        echo "FAIL $name: median outside [min, max]: '$line'"; fails=$((fails + 1))
    fi
}

# run NAME CMD...: the bench must succeed; its stdout goes to $SCRATCH/NAME.txt.
run() {
    local name=$1; shift
    if ! timeout 300 "$@" >"$SCRATCH/$name.txt" 2>"$SCRATCH/$name.err"; then
        echo "FAIL $name: $*"; sed 's/^/    /' "$SCRATCH/$name.err" | head -5; fails=$((fails + 1))
    fi
}

# limit_tail NAME UNIT FILE: NAME's line ends in `bytes B/UNIT, flops F/UNIT, P % of X GB/s memory read`
# (or `X GFLOP/s f32|bf16 peak`, or for a sum of parts `its parts' bounds`) with numbers B, F, X and
# a fraction P > 0.
limit_tail() {
    local name=$1 unit=$2 file=$3 line num='[0-9.]+(e[0-9]+)?' re
    local bound="([0-9.]+ GB/s memory read|[0-9.]+ GFLOP/s (f32|bf16) peak|its parts' bounds)"
    re="bytes $num/$unit, flops $num/$unit, ([0-9.]+) % of $bound\\)\$"
    line=$(grep -E "^$name: " "$file" | head -1)
    if ! [[ $line =~ $re ]]; then
        echo "FAIL $name: no limit note: '$line'"; fails=$((fails + 1)); return
    fi
    if awk -v p="${BASH_REMATCH[3]}" 'BEGIN { exit !(p > 0) }'; then echo "ok   $name limit: ${line#*; }"
    else echo "FAIL $name: fraction not > 0: '$line'"; fails=$((fails + 1)); fi
}

has_line() { # NAME REGEX FILE
    if grep -qE "$2" "$3"; then echo "ok   $1"; else echo "FAIL $1: no line matching '$2' in $3"; fails=$((fails + 1)); fi
}

run t3 "$VOCIS" bench t3 --synthetic --variant nano --tokens 3 --text-tokens 2 --reps 2 --threads 2
has_line t3-precision "^precision: exact " "$SCRATCH/t3.txt"
stat_line prefill tokens/s 2 "$SCRATCH/t3.txt"
stat_line decode tokens/s 2 "$SCRATCH/t3.txt"
for f in limit_mem_read:GB/s limit_mem_read_1t:GB/s limit_f32_peak:GFLOP/s; do
    has_line "t3 ${f%%:*}" "^${f%%:*}: [0-9.]+ ${f#*:} " "$SCRATCH/t3.txt"
done
has_line "t3 limit_bf16_peak" "^limit_bf16_peak: ([0-9.]+ GFLOP/s|none) " "$SCRATCH/t3.txt"
limit_tail prefill position "$SCRATCH/t3.txt"
limit_tail decode step "$SCRATCH/t3.txt"

# --context N: the prefill holds N positions (voice prompt made up to fit), the decode steps follow;
# --no-limits: the counts without a fraction
run t3ctx "$VOCIS" bench t3 --synthetic --variant nano --tokens 3 --text-tokens 2 --reps 1 --threads 2 --context 384 \
    --no-limits
has_line t3ctx-no-limits "^limits: not measured" "$SCRATCH/t3ctx.txt"
has_line t3ctx-prefill "^prefill: .*384 positions x 1 row.*bytes [0-9.e]+/position, flops [0-9.e]+/position\)$" \
    "$SCRATCH/t3ctx.txt"
has_line t3ctx-decode "^decode: .*context 385 to 386; bytes [0-9.e]+/step, flops [0-9.e]+/step\)$" "$SCRATCH/t3ctx.txt"
# speculative decoding next to plain decoding: its own lines, and the same tokens
run t3spec "$VOCIS" bench t3 --synthetic --variant nano --tokens 12 --text-tokens 2 --reps 1 --threads 2 \
    --speculate 3 --no-limits
stat_line decode_plain tokens/s 1 "$SCRATCH/t3spec.txt"
stat_line decode tokens/s 1 "$SCRATCH/t3spec.txt"
for f in speedup accept_rate tokens_per_verify; do has_line "t3spec $f" "^$f: [0-9.]+ " "$SCRATCH/t3spec.txt"; done
has_line t3spec-identical "^tokens_identical_to_plain: yes \(12 tokens\)" "$SCRATCH/t3spec.txt"
stat_line prefill_ms ms 1 "$SCRATCH/t3spec.txt"
stat_line prefill_cached_ms ms 1 "$SCRATCH/t3spec.txt"
has_line t3spec-decode-per-token "^decode: .*bytes [0-9.e]+/step" "$SCRATCH/t3spec.txt"
expect_error t3spec-bad "--speculate must be off, auto or 1..16" "$VOCIS" bench t3 --synthetic --variant nano --speculate 0
expect_error t3ctx-small "no room for the voice prompt" "$VOCIS" bench t3 --synthetic --variant nano --context 3 \
    --text-tokens 2 --no-limits

run s3gen "$VOCIS" bench s3gen --synthetic --seconds 0.08 --prompt-seconds 0.2 --steps 1 --reps 2 --precision bf16 \
    --threads 2
has_line s3gen-precision "^precision: bf16 " "$SCRATCH/s3gen.txt"
has_line s3gen-flop "^cfm_gflop_per_step: [0-9.]+ GFLOP " "$SCRATCH/s3gen.txt"
for f in encoder:ms cfm_step:ms cfm_gflops:GFLOP/s flow:ms hift:ms hift_ms_per_s:ms; do
    stat_line "${f%%:*}" "${f#*:}" 2 "$SCRATCH/s3gen.txt"
done
has_line s3gen-limit "^limit_mem_read: [0-9.]+ GB/s " "$SCRATCH/s3gen.txt"
limit_tail encoder run "$SCRATCH/s3gen.txt"
limit_tail cfm_step step "$SCRATCH/s3gen.txt"
limit_tail hift_ms_per_s audio_s "$SCRATCH/s3gen.txt"
# rtf has no unit: `rtf: X (min ...`
if grep -qE "^rtf: [0-9.]+ \(min [0-9.]+, max [0-9.]+, n=2;" "$SCRATCH/s3gen.txt"; then echo "ok   s3gen rtf"
else echo "FAIL s3gen rtf: $(grep '^rtf' "$SCRATCH/s3gen.txt")"; fails=$((fails + 1)); fi

run rt "$VOCIS" bench vibevoice --synthetic realtime-0.5b --frames 1 --threads 2
has_line rt-limit "^limit_f32_peak: [0-9.]+ GFLOP/s " "$SCRATCH/rt.txt"
stat_line frame ms 24 "$SCRATCH/rt.txt"
limit_tail frame frame "$SCRATCH/rt.txt"

run speak "$VOCIS" bench speak --synthetic --variant nano --seconds 0.08 --prompt-seconds 0.2 --reps 2 --threads 2
has_line speak-precision "^precision: exact " "$SCRATCH/speak.txt"
for f in t3 s3gen hift total; do stat_line "$f" s 2 "$SCRATCH/speak.txt"; done

# bench peak: every limit is printed as `name: VALUE unit` (a small buffer keeps it quick)
run peak "$VOCIS" bench peak --mib 64 --threads 2
for f in "mem_read_1t:GB/s" "mem_read:GB/s" "f32_fma_peak:GFLOP/s" "gemm_f32:GFLOP/s" "gemm_bf16:GFLOP/s"; do
    has_line "peak ${f%%:*}" "^${f%%:*}: [0-9.]+ ${f#*:} " "$SCRATCH/peak.txt"
done
expect_error peak-bad-mib "--mib" "$VOCIS" bench peak --mib 1

# --context lists (bench vibevoice --synthetic 1.5b --context 1024,...,65000 needs the 1.5B LM: refused
# lists only, before any weights are made)
expect_error vv-context-list-bad "--context: 1 to 8 comma-separated positions in 1..65536" \
    "$VOCIS" bench vibevoice --synthetic 1.5b --context 1024,,2048
expect_error vv-context-list-big "--context: 1 to 8 comma-separated positions in 1..65536" \
    "$VOCIS" bench vibevoice --synthetic 1.5b --context 1024,65537
expect_error qwen2-context-list-bad "--context: 1 to 8 comma-separated positions" \
    "$VOCIS" bench qwen2 --synthetic 1.5b --context 0
expect_error quality-no-synthetic "--synthetic is required" "$VOCIS" bench quality
expect_error quality-bad-mode "not a fast mode" "$VOCIS" bench quality --synthetic --modes exact
expect_error quality-bad-part "unknown part 'hift'" "$VOCIS" bench quality --synthetic --parts hift
expect_error reps-zero "reps" "$VOCIS" bench t3 --synthetic --reps 0
expect_error no-cfg-gpt2 "always runs one row" "$VOCIS" bench t3 --synthetic --variant nano --no-cfg
finish
