# Helpers for the --checkpoint / --resume scripts (sourced after lib.sh; SCRATCH and CMP set).
# The kill points are random, drawn from VOCIS_TEST_RANDOM_SEED when set (to repeat a run).
PCM16=$(dirname "$CMP")/pcm16
kill_seed=${VOCIS_TEST_RANDOM_SEED:-$(date +%s)}
RANDOM=$kill_seed
echo "kill points drawn with VOCIS_TEST_RANDOM_SEED=$kill_seed"

# between LO and HI (exclusive) from $RANDOM (30 bits), without a subshell: the draws follow RANDOM's seed.
between() { R=$(($1 + (RANDOM * 32768 + RANDOM) % ($2 - $1))); }

# The samples a checkpoint file records (header offset 56), 0 when there is none.
ckpt_samples() { if [ -s "$1" ]; then od -An -tu8 -j56 -N8 "$1" | tr -d ' '; else echo 0; fi; }

SLICE=0.02
# kill_after_checkpoint CKPT TARGET CMD...: runs CMD in slices of $SLICE s (SIGSTOP / SIGCONT), so
# that even a fast job is caught, and kills it with SIGKILL, wherever the slice left it, once
# CKPT records at least TARGET samples. 0 when it was killed so, 1 when it ended first.
kill_after_checkpoint() {
    local ck=$1 target=$2 pid _
    shift 2
    "$@" &
    pid=$!
    kill -STOP $pid 2>/dev/null
    for _ in $(seq 1 3000); do
        kill -CONT $pid 2>/dev/null || break
        sleep "$SLICE"
        kill -STOP $pid 2>/dev/null || break
        [ "$(ckpt_samples "$ck")" -ge "$target" ] && break
    done
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    [ $? -eq 137 ] && [ "$(ckpt_samples "$ck")" -ge "$target" ]
}

# wav_consistent FILE PCM16: the WAV's data chunk (16-bit or float, as its fmt chunk says) holds exactly
# the samples libsndfile reads from it.
wav_consistent() {
    local at bytes bits got
    at=$(grep -obUa data "$1" | head -1 | cut -d: -f1)
    [ -n "$at" ] || return 1
    bytes=$(od -An -tu4 -j$((at + 4)) -N4 "$1" | tr -d ' ')
    bits=$(od -An -tu2 -j34 -N2 "$1" | tr -d ' ')
    "$2" "$1" >"$SCRATCH/check.s16" 2>/dev/null || return 1
    got=$(( $(stat -c %s "$SCRATCH/check.s16") / 2 ))
    [ "$bytes" -gt 0 ] && [ "$got" -eq $((bytes / (bits / 8))) ] && [ "$(stat -c %s "$1")" -ge $((at + 8 + bytes)) ]
}

# killed_and_resumed NAME FULL OUT CKPT TARGETS CMD...: the job CMD (with -o OUT --checkpoint CKPT
# in it) is killed once its checkpoint passes each of the sample counts TARGETS (ascending,
# space-separated), each time resumed with --resume CKPT; then resumed to the end. Each killed
# file must open; the end result must be FULL, byte for byte; the checkpoint must be gone.
killed_and_resumed() { # a loaded machine may run a tiny job past its kill points in one slice: thinner ones then
    local slice rc=1
    for slice in 0.02 0.005 0.001; do
        SLICE=$slice
        killed_and_resumed_once "$@"
        rc=$?
        [ $rc -eq 2 ] || break
        echo "     $1: the job ended before its first kill point; again with $slice s slices made thinner"
    done
    SLICE=0.02
    [ $rc -eq 0 ] || { [ $rc -eq 2 ] && echo "FAIL $1: the job was never killed midway"; return 1; }
}

killed_and_resumed_once() { # 0 ok, 1 failed (printed), 2 never killed midway
    local name=$1 full=$2 out=$3 ck=$4 targets=$5 t resume=() kills=0
    shift 5
    rm -f "$out" "$ck"
    for t in $targets; do
        if kill_after_checkpoint "$ck" "$t" "$@" "${resume[@]}"; then
            kills=$((kills + 1))
            wav_consistent "$out" "$PCM16" ||
                { echo "FAIL $name: the file killed after $t samples does not open consistently"; return 1; }
            echo "     $name: killed with its checkpoint at $(ckpt_samples "$ck") samples, $(stat -c %s "$out") bytes written"
            resume=(--resume "$ck")
        elif [ ! -e "$ck" ]; then
            break # finished before that point: the rest is checked below
        else
            echo "FAIL $name: the run neither finished nor reached $t samples"; return 1
        fi
    done
    [ $kills -gt 0 ] || return 2
    "$@" "${resume[@]}" || { echo "FAIL $name: the last resume failed"; return 1; }
    cmp -s "$out" "$full" || { echo "FAIL $name: the resumed audio differs from the uninterrupted run's"; return 1; }
    [ ! -e "$ck" ] || { echo "FAIL $name: the finished job left its checkpoint"; return 1; }
    echo "ok   $name: killed $kills times, resumed to the uninterrupted run's bytes"
}

# refuse NAME PATTERN GOOD_OUT OUT CKPT_COPY CMD...: resuming from CKPT_COPY is refused with one
# line; OUT (a copy of GOOD_OUT) and the checkpoint are left as they were.
refuse_resume() {
    local name=$1 pat=$2 kept=$3 out=$4 ck=$5
    shift 5
    cp "$kept" "$out"
    cp "$ck" "$SCRATCH/try.ckpt"
    expect_error "$name" "$pat" "$@" --resume "$SCRATCH/try.ckpt"
    cmp -s "$out" "$kept" || { echo "FAIL $name: the output was changed"; fails=$((fails + 1)); }
    cmp -s "$SCRATCH/try.ckpt" "$ck" || { echo "FAIL $name: the checkpoint was changed"; fails=$((fails + 1)); }
}
