#!/usr/bin/env bash
# A long fuzz campaign on a shared machine, in 60 s slices: each slice runs the
# target with the fewest executions so far (the totals of earlier campaigns
# come from STATE, a "target executions" file that the script keeps), at
# nice 19 under a shared lock on /tmp/vocis-bench.lock (a benchmark holding it
# exclusively waits at most one slice: 60 s of fuzzing, cut at 70 s when a loaded machine
# makes loading the corpus slow), then sleeps 2 s.
#   campaign.sh BUILD_FUZZ WORK UNTIL_EPOCH [TARGET...]
# WORK keeps the growing corpora (WORK/corpus/NAME, outside the repository),
# crash/leak/timeout artifacts (WORK/artifacts/NAME/), the slice logs and
# WORK/slices.tsv: target, executions, cov, ft, seconds, artifacts of each slice.
set -uo pipefail
build=$1 work=$2 until=$3
shift 3
src=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(audio vv_config vv_script torchzip turbo_tokenizer tokenize tokenizer_json
    mtl_text rt_preset pickle server safetensors)
state=$work/state
mkdir -p "$work/log"
touch "$state" "$work/slices.tsv"

max_len_of() {
    case $1 in
    tokenize | vv_script) echo 4096 ;;
    audio | mtl_text | server) echo 8192 ;;
    *) echo "" ;;
    esac
}

executions_of() { awk -v t="$1" '$1 == t { n = $2 } END { print n + 0 }' "$state"; }

least_run_target() {
    local best="" best_n=""
    for t in "${targets[@]}"; do
        local n
        n=$(executions_of "$t")
        if [ -z "$best_n" ] || [ "$n" -lt "$best_n" ]; then best=$t best_n=$n; fi
    done
    echo "$best"
}

slice=0
while [ "$(date +%s)" -lt $((until - 65)) ]; do
    t=$(least_run_target)
    bin=$build/tests/fuzz_$t
    [ -x "$bin" ] || { echo "campaign: $bin is missing" >&2; exit 1; }
    mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
    flags=(-max_total_time=60 -timeout=1 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/artifacts/$t/")
    [ -f "$src/$t.dict" ] && flags+=(-dict="$src/$t.dict")
    ml=$(max_len_of "$t")
    [ -n "$ml" ] && flags+=(-max_len="$ml")
    log=$work/log/$t.$slice.log
    start=$(date +%s)
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        flock -s /tmp/vocis-bench.lock timeout -s INT 70 nice -n 19 "$bin" "${flags[@]}" "$work/corpus/$t" \
        "$src/corpus/$t" >"$log" 2>&1
    secs=$(($(date +%s) - start))
    execs=$(awk '/stat::number_of_executed_units:/ { print $2 }' "$log" | tail -1)
    [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#') # cut short: last status line
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    arts=$(find "$work/artifacts/$t" -type f | wc -l)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${execs:-0}" "${cov:-?}" "${ft:-?}" "$secs" "$arts" >>"$work/slices.tsv"
    echo "$t $(($(executions_of "$t") + ${execs:-0}))" >>"$state"
    slice=$((slice + 1))
    sleep 2
done
