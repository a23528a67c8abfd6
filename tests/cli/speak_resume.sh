#!/usr/bin/env bash
# Resumable jobs (issue 22 item 4), Chatterbox long text: a run with --checkpoint
# is killed (SIGKILL) at random points after a checkpoint exists, resumed with
# --resume (itself killed once more, then resumed to the end): the final WAV is
# byte-identical to one uninterrupted run with the same seed, and each file a
# kill left opens with a header counting exactly its samples. Then the
# refusals: another text / seed / option / model, a truncated, corrupted,
# foreign, other-version checkpoint: one error line, non-zero, output untouched.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
PCM16=$(dirname "$CMP")/pcm16
M=$DATA/chatterbox/ckpt
S=$SCRATCH
seed=${VOCIS_TEST_RANDOM_SEED:-$(date +%s)}
RANDOM=$seed
echo "kill points drawn with RANDOM=$seed"
for i in $(seq 1 24); do printf 'Sentence number %d is here. ' "$i"; done >"$S/book.txt"
JOB=("$VOCIS" speak --model "$M" --seed 7 -q --threads 1 --chunk-chars 40 --text-file "$S/book.txt")
job() { "${JOB[@]}" "$@"; }

job -o "$S/full.wav" || { echo "FAIL the uninterrupted run"; exit 1; }

# the header's sample count == what libsndfile reads, and the bytes are there
consistent() {
    local h got
    h=$(od -An -tu4 -j40 -N4 "$1" | tr -d ' ')
    "$PCM16" "$1" >"$S/check.s16" 2>/dev/null || return 1
    got=$(stat -c %s "$S/check.s16")
    [ "$h" -gt 0 ] && [ "$got" -eq "$h" ] && [ "$(stat -c %s "$1")" -ge $((44 + h)) ]
}
ckpt_samples() { od -An -tu8 -j56 -N8 "$1" | tr -d ' '; }

# run_and_kill ARGS...: starts the job, waits for a checkpoint and a random 0-1.5 s more, kill -9.
# 0 when it was killed midway, 1 when it finished first (or never checkpointed).
run_and_kill() {
    "${JOB[@]}" "$@" & # not through job(): $! must be vocis itself
    local pid=$! _
    for _ in $(seq 1 600); do [ -s "$S/job.ckpt" ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.05; done
    local delay=$((RANDOM % 16)); sleep "$((delay / 10)).$((delay % 10))"; echo "     (killed $delay/10 s after the first checkpoint)"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    [ $? -eq 137 ] && [ -s "$S/job.ckpt" ]
}

for round in 1 2; do
    rm -f "$S/job.ckpt" "$S/job.wav"
    run_and_kill -o "$S/job.wav" --checkpoint "$S/job.ckpt" --checkpoint-every 0.5 ||
        { echo "FAIL round $round: the job was not killed midway after a checkpoint"; exit 1; }
    consistent "$S/job.wav" || { echo "FAIL round $round: the killed file's header and samples disagree"; exit 1; }
    echo "ok   round $round: killed at $(stat -c %s "$S/job.wav") bytes, checkpoint at $(ckpt_samples "$S/job.ckpt") samples, the file opens"
    first=$(ckpt_samples "$S/job.ckpt")
    # resume, and kill that one too after its own next checkpoint (when it gets there)
    "${JOB[@]}" -o "$S/job.wav" --checkpoint "$S/job.ckpt" --checkpoint-every 0.5 --resume "$S/job.ckpt" &
    pid=$!
    for _ in $(seq 1 600); do
        [ -s "$S/job.ckpt" ] && [ "$(ckpt_samples "$S/job.ckpt")" != "$first" ] && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.05
    done
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    if [ -s "$S/job.ckpt" ]; then
        consistent "$S/job.wav" || { echo "FAIL round $round: the file of the killed resume disagrees"; exit 1; }
        echo "ok   round $round: the resumed run killed too, checkpoint now at $(ckpt_samples "$S/job.ckpt") samples"
        job -o "$S/job.wav" --checkpoint "$S/job.ckpt" --checkpoint-every 0.5 --resume "$S/job.ckpt" ||
            { echo "FAIL round $round: the last resume"; exit 1; }
    fi
    cmp -s "$S/job.wav" "$S/full.wav" ||
        { echo "FAIL round $round: the resumed audio differs from the uninterrupted run's"; exit 1; }
    no_file "round $round: the finished job's checkpoint" "$S/job.ckpt"
    echo "ok   round $round: resumed to the same bytes as the uninterrupted run"
done

# A checkpoint to refuse: kill a job once it has one.
rm -f "$S/job.ckpt"
run_and_kill -o "$S/job.wav" --checkpoint "$S/job.ckpt" --checkpoint-every 0.5 ||
    { echo "FAIL the job for the refusals was not killed midway"; exit 1; }
cp "$S/job.ckpt" "$S/good.ckpt"
cp "$S/job.wav" "$S/kept.wav"
refuse() { # NAME PATTERN CHECKPOINT ARGS...: resuming is refused, the output and checkpoint untouched
    local name=$1 pat=$2 ck=$3
    shift 3
    cp "$S/kept.wav" "$S/job.wav"
    cp "$ck" "$S/try.ckpt"
    expect_error "$name" "$pat" "$@" --resume "$S/try.ckpt"
    cmp -s "$S/job.wav" "$S/kept.wav" || { echo "FAIL $name: the output was changed"; fails=$((fails + 1)); }
    cmp -s "$S/try.ckpt" "$ck" || { echo "FAIL $name: the checkpoint was changed"; fails=$((fails + 1)); }
}
J=("${JOB[@]}" -o "$S/job.wav")
refuse another-text "is of another job: this run has another text" "$S/good.ckpt" \
    "$VOCIS" speak --model "$M" --seed 7 -q --threads 1 --chunk-chars 40 --text "Another text. Quite another one." \
    -o "$S/job.wav"
refuse another-seed "another seed" "$S/good.ckpt" \
    "$VOCIS" speak --model "$M" --seed 8 -q --threads 1 --chunk-chars 40 --text-file "$S/book.txt" -o "$S/job.wav"
refuse another-option "another options" "$S/good.ckpt" "${J[@]}" --cfm-steps 5
refuse another-exaggeration "another options" "$S/good.ckpt" "${J[@]}" --exaggeration 0.9
"$VOCIS" voice create --model "$M" "$DATA/vibevoice/inputs/voice_0.wav" -o "$S/other.voice" 2>/dev/null ||
    { echo "FAIL cloning another voice"; exit 1; }
refuse another-voice "another voice" "$S/good.ckpt" "${J[@]}" --voice "$S/other.voice"
mkdir -p "$S/model2"
link_model "$M" "$S/model2"
rm "$S/model2/tokenizer.json"
{ cat "$M/tokenizer.json"; echo; } >"$S/model2/tokenizer.json" # same vocabulary, other file
refuse another-model "written with another model" "$S/good.ckpt" \
    "$VOCIS" speak --model "$S/model2" --seed 7 -q --threads 1 --chunk-chars 40 --text-file "$S/book.txt" \
    -o "$S/job.wav"
n=$(stat -c %s "$S/good.ckpt")
head -c $((n - 100)) "$S/good.ckpt" >"$S/trunc.ckpt"
refuse truncated "is truncated" "$S/trunc.ckpt" "${J[@]}"
head -c 40 "$S/good.ckpt" >"$S/stub.ckpt"
refuse truncated-header "is truncated" "$S/stub.ckpt" "${J[@]}"
cp "$S/good.ckpt" "$S/v2.ckpt"
printf '\x02' | dd of="$S/v2.ckpt" bs=1 seek=8 conv=notrunc 2>/dev/null
refuse other-version "format version 2; this vocis reads version 1" "$S/v2.ckpt" "${J[@]}"
cp "$S/good.ckpt" "$S/bad.ckpt"
printf '\xff' | dd of="$S/bad.ckpt" bs=1 seek=$((n / 2)) conv=notrunc 2>/dev/null
refuse corrupted "checksum mismatch" "$S/bad.ckpt" "${J[@]}"
head -c 5000 /dev/urandom >"$S/garbage.ckpt"
refuse garbage "is not a vocis checkpoint" "$S/garbage.ckpt" "${J[@]}"
refuse foreign "is not a vocis checkpoint" "$M/conds.pt" "${J[@]}"
expect_error missing "nothere.ckpt: cannot open" "${J[@]}" --resume "$S/nothere.ckpt"
head -c 1000 "$S/kept.wav" >"$S/job.wav"
expect_error short-output "holds [0-9]+ samples, the checkpoint [0-9]+: it is not the output" "${J[@]}" --resume "$S/good.ckpt"
cp "$S/kept.wav" "$S/job.wav"

# command lines that cannot be resumed exactly
expect_error no-seed "need --seed N" "$VOCIS" speak --model "$M" -q --text hi -o "$S/x.wav" --checkpoint "$S/x.ckpt"
expect_error lossy "need a WAV output .*not ogg" "$VOCIS" speak --model "$M" -q --seed 1 --text hi -o "$S/x.ogg" \
    --checkpoint "$S/x.ckpt"
expect_error stdout "need -o FILE" "$VOCIS" speak --model "$M" -q --seed 1 --text hi -o - --resume "$S/good.ckpt"
expect_error chapters "not available with --chapters" "$VOCIS" speak --model "$M" -q --seed 1 --text hi \
    -o "$S/x.wav" --chapters --checkpoint "$S/x.ckpt"
no_file "refused command lines" "$S/x.wav" "$S/x.ckpt"
finish
