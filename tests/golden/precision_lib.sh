# Shared by the fast-mode golden scripts (precision_bf16.sh, precision_q8.sh,
# kv_bf16.sh): sourced after VOCIS DATA SCRATCH CMP are set. The tiny
# Chatterbox checkpoint, its goldens, and the stage checks whose tolerances
# each mode chooses.
. "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh" # expect_fail, expect_error, finish
M=$DATA/chatterbox/ckpt
G=$DATA/chatterbox/golden
VM=$DATA/vibevoice/model
VG=$DATA/vibevoice/golden
TEXT="Hello world, this is a tiny test of Chatterbox."

# run CMD...: must succeed, else the script fails at once.
run() { "$@" || { echo "FAIL: $*"; exit 1; }; }

# stage_check STAGE GOLDEN MODEL TOL... : `vocis debug STAGE "${P[@]}"` on the golden's inputs,
# compared with stcompare's TOLs (P holds the mode's flags).
stage_check() {
    local stage=$1 golden=$2 model=$3 out=$SCRATCH/$1.safetensors
    shift 3
    run "$VOCIS" debug "$stage" "${P[@]}" --model "$model" --in "$golden" --out "$out"
    run "$CMP" "$golden" "$out" "$@"
}

# greedy_tokens [FLAGS...]: T3 greedy tokens of the golden conditioning and TEXT.
greedy_tokens() {
    "$VOCIS" tokens "$@" --model "$M" --t3-cond "$G/06_t3_cond.safetensors" --text "$TEXT" --greedy \
        --exaggeration 0.5 -q
}

# greedy_prefix N NAME [FLAGS...]: the first N greedy tokens equal upstream's (golden 09).
greedy_prefix() {
    local n=$1 name=$2 want got
    shift 2
    want=$("$CMP" --print "$G/09_t3_greedy.safetensors" tokens | cut -d' ' -f1-"$n")
    got=$(greedy_tokens "$@" | cut -d' ' -f1-"$n")
    [ "$got" = "$want" ] || { echo "FAIL $name greedy prefix: got $got, want $want"; exit 1; }
    echo "ok   greedy $name: first $n tokens as upstream"
}
