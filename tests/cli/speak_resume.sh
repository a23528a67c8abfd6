#!/usr/bin/env bash
# Resumable jobs (issue 22 item 4), Chatterbox long text: a run with --checkpoint
# is killed (SIGKILL, at a random point of a 20 ms slice) once its checkpoint
# passes a random sample count, resumed with --resume, killed again past the
# next count, ..., then resumed to the end: the final WAV is byte-identical to
# one uninterrupted run with the same seed, and each file a kill left opens
# with a header counting exactly its samples. Then the
# refusals: another text / seed / option / model, a truncated, corrupted,
# foreign, other-version checkpoint: one error line, non-zero, output untouched.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
M=$DATA/chatterbox/ckpt
S=$SCRATCH
for i in $(seq 1 24); do printf 'Sentence number %d is here. ' "$i"; done >"$S/book.txt"
JOB=("$VOCIS" speak --model "$M" --seed 7 -q --threads 1 --chunk-chars 40 --text-file "$S/book.txt")
job() { "${JOB[@]}" "$@"; }

job -o "$S/full.wav" --subtitles "$S/full.srt" || { echo "FAIL the uninterrupted run"; exit 1; }

N=$(( ($(stat -c %s "$S/full.wav") - 44) / 2 ))
targets() { # three ascending random sample counts within the job's audio
    local a b
    between $((N / 10)) $((N / 3)); a=$R
    between $((a + 1)) $((a + N / 4)); b=$R
    between $((b + 1)) $((b + N / 4))
    echo "$a $b $R"
}
for round in 1 2; do
    targets >"$S/targets"; t=$(cat "$S/targets")
    echo "     round $round: kills after checkpoints at $t of $N samples"
    subs=() # round 2 also writes subtitles: the resumed job's file is the uninterrupted run's
    [ $round -eq 2 ] && subs=(--subtitles "$S/job.srt") && rm -f "$S/job.srt"
    killed_and_resumed "round-$round" "$S/full.wav" "$S/job.wav" "$S/job.ckpt" "$t" \
        "${JOB[@]}" -o "$S/job.wav" --checkpoint "$S/job.ckpt" --checkpoint-every 0.5 "${subs[@]}" || exit 1
    if [ $round -eq 2 ]; then
        cmp -s "$S/job.srt" "$S/full.srt" || { echo "FAIL round-2: the resumed job's subtitles differ"; diff "$S/job.srt" "$S/full.srt" | head; exit 1; }
        echo "ok   round-2: the resumed job's subtitles are the uninterrupted run's ($(grep -c -- '-->' "$S/full.srt") cues)"
    fi
done

# A checkpoint to refuse: kill a job once it has one.
rm -f "$S/job.ckpt" "$S/job.wav"
kill_after_checkpoint "$S/job.ckpt" 1 "${JOB[@]}" -o "$S/job.wav" --checkpoint "$S/job.ckpt" --checkpoint-every 0.5 ||
    { echo "FAIL the job for the refusals was not killed midway"; exit 1; }
cp "$S/job.ckpt" "$S/good.ckpt"
cp "$S/job.wav" "$S/kept.wav"
refuse() { refuse_resume "$1" "$2" "$S/kept.wav" "$S/job.wav" "${@:3}"; }
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
