#!/usr/bin/env bash
# CTest driver of one fuzz target: replays its committed corpus, then fuzzes
# for SECONDS; new inputs and any crash-* artifact go to SCRATCH (emptied first).
#   run_fuzz.sh TARGET CORPUS SCRATCH SECONDS [libFuzzer flags...]
set -euo pipefail
target=$1 corpus=$2 scratch=$3 seconds=$4
shift 4
rm -rf "$scratch"
mkdir -p "$scratch/new"
exec "$target" -max_total_time="$seconds" -timeout=2 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$scratch/" "$@" "$scratch/new" "$corpus"
