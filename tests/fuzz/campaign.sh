#!/usr/bin/env bash
# A long fuzz campaign on a shared machine, in slices of SLICE seconds (default
# 120): each slice runs the unfinished target closest to its goal -- 10 million
# executions, or one CPU-hour for a target too slow to reach them in one -- so
# that the time available finishes as many targets as it can. The fuzzer runs
# at nice 19 (builds and tests of the same machine take the CPU first) under a
# shared lock on /tmp/vocis-bench.lock, and a per-target lock, so several
# instances started on the same WORK (one per free core) never fuzz the same
# target at once. A benchmark that needs the machine quiet runs as
#   flock -x /tmp/vocis-bench.intent flock -x /tmp/vocis-bench.lock CMD
# and waits at most one slice: a slice passes through the intent lock (shared)
# before it takes the main one, so no new slice starts while a benchmark waits (with
# the main lock alone, the overlapping slices of two instances kept it shared
# for ever).
#   campaign.sh BUILD_FUZZ WORK UNTIL_EPOCH [TARGET...]
# WORK keeps the growing corpora (WORK/corpus/NAME, outside the repository),
# crash/leak/timeout artifacts (WORK/artifacts/NAME/), the slice logs,
# WORK/state ("target executions cpu_seconds" per slice, summed per target) and
# WORK/slices.tsv: target, executions, cov, ft, wall seconds, CPU seconds,
# artifacts after each slice. GOAL_EXECS and GOAL_CPU override the goals.
set -uo pipefail
build=$1 work=$2 until=$3
shift 3
src=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(audio vv_config vv_script torchzip turbo_tokenizer tokenize tokenizer_json
    mtl_text rt_preset pickle server safetensors checkpoint)
slice_s=${SLICE:-120}
goal_execs=${GOAL_EXECS:-10000000}
goal_cpu=${GOAL_CPU:-3600}
state=$work/state
mkdir -p "$work/log" "$work/lock"
touch "$state" "$work/slices.tsv"

max_len_of() {
    case $1 in
    tokenize | vv_script) echo 4096 ;;
    audio | mtl_text | server) echo 8192 ;;
    *) echo "" ;;
    esac
}

# Targets not yet at a goal, nearest first: "remaining-cpu-seconds target".
# The remaining time is the smaller of the CPU-hour's rest and the executions
# left at the rate seen so far (a target not yet run comes first).
by_remaining() {
    for t in "${targets[@]}"; do
        awk -v t="$t" -v ge="$goal_execs" -v gc="$goal_cpu" '
            $1 == t { n += $2; c += $3 }
            END {
                if (n >= ge || c >= gc) exit
                left = gc - c
                if (c > 0 && n > 0 && (ge - n) * c / n < left) left = (ge - n) * c / n
                if (n == 0) left = 0
                printf "%d %s\n", left, t
            }' "$state"
    done | sort -n
}

run_slice() { # target
    local t=$1 bin=$build/tests/fuzz_$1
    [ -x "$bin" ] || { echo "campaign: $bin is missing" >&2; exit 1; }
    mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
    local flags=(-max_total_time="$slice_s" -timeout=1 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/artifacts/$t/")
    [ -f "$src/$t.dict" ] && flags+=(-dict="$src/$t.dict")
    local ml
    ml=$(max_len_of "$t")
    [ -n "$ml" ] && flags+=(-max_len="$ml")
    local log=$work/log/$t.$(date +%s).$$.log
    local start
    flock -s /tmp/vocis-bench.intent true # waits while a benchmark waits for the machine
    start=$(date +%s)
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        flock -n -E 75 "$work/lock/$t" flock -s /tmp/vocis-bench.lock \
        /usr/bin/time -f 'cpu %U %S' -o "$log.time" \
        timeout -s INT $((slice_s + slice_s / 2)) nice -n 19 "$bin" "${flags[@]}" "$work/corpus/$t" \
        "$src/corpus/$t" >"$log" 2>&1
    [ $? -eq 75 ] && { rm -f "$log"; return 75; }
    local secs=$(($(date +%s) - start))
    local cpu
    cpu=$(awk '/^cpu / { printf "%d", $2 + $3 }' "$log.time" 2>/dev/null)
    rm -f "$log.time"
    local execs cov ft arts
    execs=$(awk '/stat::number_of_executed_units:/ { print $2 }' "$log" | tail -1)
    [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#') # cut short: last status line
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    arts=$(find "$work/artifacts/$t" -type f | wc -l)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${execs:-0}" "${cov:-?}" "${ft:-?}" "$secs" "${cpu:-$secs}" "$arts" \
        >>"$work/slices.tsv"
    echo "$t ${execs:-0} ${cpu:-$secs}" >>"$state"
}

while [ "$(date +%s)" -lt $((until - slice_s - 5)) ]; do
    ran=0
    for t in $(by_remaining | cut -d' ' -f2); do
        run_slice "$t" && { ran=1; break; }
    done
    [ $ran -eq 1 ] || { [ -n "$(by_remaining)" ] || break; sleep 5; } # all taken by other instances, or all done
    sleep 2
done
