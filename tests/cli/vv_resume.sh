#!/usr/bin/env bash
# Resumable jobs (issue 22 item 4), VibeVoice (tiny 1.5B-shaped model): a
# two-speaker script with --checkpoint every 0.2 s of audio (several
# checkpoints in one job) is killed (SIGKILL, at a random point of a 20 ms
# slice) once its checkpoint passes a random sample count, resumed, killed
# again, ..., resumed to the end: the WAV is byte-identical to one
# uninterrupted run with the same seed; each killed file opens with a header
# counting exactly its samples. The same for 16-bit and float WAV, and for a
# --split-turns job of 12 sessions (a checkpoint names its session). Then the
# refusals: another script / seed / voice / option / model, a Chatterbox
# checkpoint, a truncated or other-version one.
set -uo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
D=$DATA/vibevoice
S=$SCRATCH
for i in 1 2 3 4 5 6; do
    printf 'Speaker 1: So tell us about the book number %d, and what happened.\n' "$i"
    printf 'Speaker 2: It took me three years to write it, and then more.\n'
done >"$S/script.txt"
echo '{"decoder_config": {"max_position_embeddings": 400}}' >"$S/ctx400.json"
SPK=("$VOCIS" speak --model "$D/model" --voice "$D/inputs/voice_0.wav" --voice "$D/inputs/voice_1.wav" --threads 1 -q
     --script "$S/script.txt")

round() { # NAME SEED FORMAT SUBTITLE-EXTENSION EXTRA...: the resumed job's audio and subtitles are the uninterrupted run's
    local name=$1 sd=$2 fmt=$3 ext=$4 n a b
    shift 4
    rm -f "$S/full.$ext" "$S/job.$ext"
    "${SPK[@]}" --seed "$sd" --format "$fmt" "$@" -o "$S/full.wav" --subtitles "$S/full.$ext" ||
        { echo "FAIL $name: the uninterrupted run"; return 1; }
    n=$(( $("$PCM16" "$S/full.wav" | wc -c) / 2 ))
    between $((n / 10)) $((n / 3)); a=$R
    between $((a + 1)) $((a + n / 4)); b=$R
    between $((b + 1)) $((b + n / 4))
    echo "     $name: kills after checkpoints at $a $b $R of $n samples"
    killed_and_resumed "$name" "$S/full.wav" "$S/job.wav" "$S/job.ckpt" "$a $b $R" \
        "${SPK[@]}" --seed "$sd" --format "$fmt" "$@" -o "$S/job.wav" --checkpoint "$S/job.ckpt" \
        --checkpoint-every 0.2 --subtitles "$S/job.$ext" || return 1
    cmp -s "$S/job.$ext" "$S/full.$ext" ||
        { echo "FAIL $name: the resumed job's subtitles differ"; diff "$S/job.$ext" "$S/full.$ext" | head; return 1; }
    echo "ok   $name: the resumed job's subtitles are the uninterrupted run's ($(grep -c -- '-->' "$S/full.$ext") cues)"
}
round vv-wav16 7 wav srt || fails=$((fails + 1))
round vv-f32 7 f32 vtt || fails=$((fails + 1))
round vv-split-turns 17 wav srt --config "$S/ctx400.json" --split-turns || fails=$((fails + 1))

# refusals, from a checkpoint of the first job
J=("${SPK[@]}" --seed 7 -o "$S/job.wav")
rm -f "$S/job.ckpt" "$S/job.wav"
kill_after_checkpoint "$S/job.ckpt" 1 "${J[@]}" --checkpoint "$S/job.ckpt" --checkpoint-every 0.2 ||
    { echo "FAIL the job for the refusals was not killed midway"; exit 1; }
cp "$S/job.ckpt" "$S/good.ckpt"
echo "     a checkpoint of the tiny model at $(ckpt_samples "$S/good.ckpt") samples: $(stat -c %s "$S/good.ckpt") bytes"
cp "$S/job.wav" "$S/kept.wav"
refuse() { refuse_resume "$1" "$2" "$S/kept.wav" "$S/job.wav" "${@:3}"; }
head -n 4 "$S/script.txt" >"$S/other.txt"
refuse vv-another-script "another text" "$S/good.ckpt" "${J[@]}" --script "$S/other.txt"
refuse vv-another-seed "another seed" "$S/good.ckpt" "${SPK[@]}" --seed 8 -o "$S/job.wav"
refuse vv-another-voice "another voice" "$S/good.ckpt" \
    "$VOCIS" speak --model "$D/model" --voice "$D/inputs/voice_1.wav" --voice "$D/inputs/voice_0.wav" --threads 1 -q \
    --script "$S/script.txt" --seed 7 -o "$S/job.wav"
refuse vv-another-option "another options" "$S/good.ckpt" "${J[@]}" --cfg-scale 1.5
echo '{"decoder_config": {"max_position_embeddings": 60000}}' >"$S/ctx60k.json"
refuse vv-another-context "written with another model" "$S/good.ckpt" "${J[@]}" --config "$S/ctx60k.json"
mkdir -p "$S/model2"
link_model "$D/model" "$S/model2"
rm "$S/model2/tokenizer_config.json"
{ cat "$D/model/tokenizer_config.json"; echo; } >"$S/model2/tokenizer_config.json"
refuse vv-another-model "written with another model" "$S/good.ckpt" \
    "$VOCIS" speak --model "$S/model2" --voice "$D/inputs/voice_0.wav" --voice "$D/inputs/voice_1.wav" --threads 1 -q \
    --script "$S/script.txt" --seed 7 -o "$S/job.wav"
n=$(stat -c %s "$S/good.ckpt")
head -c $((n / 2)) "$S/good.ckpt" >"$S/trunc.ckpt"
refuse vv-truncated "is truncated" "$S/trunc.ckpt" "${J[@]}"
cp "$S/good.ckpt" "$S/v9.ckpt"
printf '\x09' | dd of="$S/v9.ckpt" bs=1 seek=8 conv=notrunc 2>/dev/null
refuse vv-other-version "format version 9; this vocis reads version 1" "$S/v9.ckpt" "${J[@]}"
# a Chatterbox job's checkpoint
C=("$VOCIS" speak --model "$DATA/chatterbox/ckpt" --seed 7 -q --threads 1 --chunk-chars 20
   --text "One sentence here. Another one there. And a third one.")
rm -f "$S/cb.ckpt"
kill_after_checkpoint "$S/cb.ckpt" 1 "${C[@]}" -o "$S/cb.wav" --checkpoint "$S/cb.ckpt" --checkpoint-every 0.1 ||
    { echo "FAIL the Chatterbox job was not killed midway"; exit 1; }
refuse vv-chatterbox-checkpoint "written with another model" "$S/cb.ckpt" "${J[@]}"
finish
