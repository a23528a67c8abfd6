#!/usr/bin/env bash
# VibeVoice generate() end to end against upstream (golden 08_e2e, tiny model): with the recorded
# noise injected, then with torch.manual_seed(4321) draws only (no injection), as a debug stage and
# through vocis speak (file and streamed raw PCM). Tolerances: the suggested atol of
# tests/data/vibevoice/tolerances.json (08_e2e); token ids exact.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
D=$DATA/vibevoice
M=$D/model
G=$D/golden/08_e2e.safetensors
VOICES=(--voice "$D/inputs/voice_0.wav" --voice "$D/inputs/voice_1.wav")
TOL=(sequences:exact generated_ids:exact prompt_acoustic_features:9.1e-5 prompt_acoustic_embeds:1e-4
     step_valid_logits:3.1e-4 frame_pos_condition:8.1e-5 frame_neg_condition:8.3e-5 frame_latent:6.8e-5
     frame_decoder_input:1.4e-4 frame_audio:7.8e-6 frame_semantic:4.5e-5 frame_acoustic_embed:1e-4
     frame_semantic_embed:1e-4 audio:7.8e-6)

"$VOCIS" debug vv-generate --model "$M" --script "$D/inputs/script.txt" "${VOICES[@]}" --in "$G" \
    --out "$SCRATCH/inj.safetensors" --threads 2
"$CMP" "$G" "$SCRATCH/inj.safetensors" "${TOL[@]}" prompt_sample_std_noise:0 prompt_sample_noise:0 frame_init_noise:0

# seeded: the torch-compatible generator must give the recorded draws in upstream's order
# (randn(V) scalar path, randn_like(mean) on its transposed storage, then randn(2, 64) per frame)
"$VOCIS" debug vv-generate --model "$M" --script "$D/inputs/script.txt" "${VOICES[@]}" --seed 4321 \
    --out "$SCRATCH/seed.safetensors" --threads 2
"$CMP" "$G" "$SCRATCH/seed.safetensors" "${TOL[@]}" prompt_sample_std_noise:0 prompt_sample_noise:0 \
    frame_init_noise:1e-6

"$VOCIS" speak --model "$M" --text-file "$D/inputs/script.txt" "${VOICES[@]}" --seed 4321 --format f32 \
    -o "$SCRATCH/speak.wav" -q --threads 2
"$CMP" --wav "$SCRATCH/speak.wav" "$G" audio 7.8e-6
"$VOCIS" speak --model "$M" --text-file "$D/inputs/script.txt" "${VOICES[@]}" --seed 4321 --format f32 \
    -o - -q --threads 2 >"$SCRATCH/stream.f32"
"$CMP" --raw "$SCRATCH/stream.f32" "$G" audio 7.8e-6

# bad input: one line, non-zero exit, no file (lib.sh counts failures itself)
set +e
. "$(dirname "$0")/../cli/lib.sh"
echo "not audio" >"$SCRATCH/text.wav"
rm -f "$SCRATCH"/bad*.wav
expect_error vv-too-few-voices "voice" "$VOCIS" speak --model "$M" --text-file "$D/inputs/script.txt" \
    --voice "$D/inputs/voice_0.wav" -o "$SCRATCH/bad1.wav" -q
expect_error vv-voice-not-audio "not a readable audio file" "$VOCIS" speak --model "$M" \
    --text "Speaker 1: Hi." --voice "$SCRATCH/text.wav" -o "$SCRATCH/bad2.wav" -q
expect_error vv-steps "diffusion-steps" "$VOCIS" speak --model "$M" --text "Hi." \
    --voice "$D/inputs/voice_0.wav" --diffusion-steps 0 -o "$SCRATCH/bad3.wav" -q
expect_error vv-empty-text "empty" "$VOCIS" speak --model "$M" --text "  " \
    --voice "$D/inputs/voice_0.wav" -o "$SCRATCH/bad4.wav" -q
expect_error vv-missing-voice "cannot open" "$VOCIS" speak --model "$M" --text "Hi." \
    --voice "$SCRATCH/nope.wav" -o "$SCRATCH/bad5.wav" -q
: >"$SCRATCH/empty.wav"
expect_error vv-empty-voice "empty" "$VOCIS" speak --model "$M" --text "Hi." --voice "$SCRATCH/empty.wav" \
    -o "$SCRATCH/bad6.wav" -q
"$(dirname "$CMP")/mkaudio" nan "$D/inputs/voice_0.wav" "$SCRATCH/nan.wav"
expect_error vv-nan-voice "NaN" "$VOCIS" speak --model "$M" --text "Hi." --voice "$SCRATCH/nan.wav" \
    -o "$SCRATCH/bad7.wav" -q
printf 'Speaker 1: Hello.\nSpeaker 3: Hi there.\n' >"$SCRATCH/skip.txt"
expect_error vv-speaker-skip "skip" "$VOCIS" speak --model "$M" --script "$SCRATCH/skip.txt" "${VOICES[@]}" \
    -o "$SCRATCH/bad8.wav" -q
expect_error vv-negative-cfg "cfg-scale" "$VOCIS" speak --model "$M" --text "Hi." --voice "$D/inputs/voice_0.wav" \
    --cfg-scale -1 -o "$SCRATCH/bad9.wav" -q
printf 'just words, no speaker labels\n\n' >"$SCRATCH/nolabel.txt"
printf '\n \n' >"$SCRATCH/blank.txt"
expect_error vv-no-text "empty" "$VOCIS" speak --model "$M" --script "$SCRATCH/blank.txt" \
    --voice "$D/inputs/voice_0.wav" -o "$SCRATCH/bad10.wav" -q
link_model "$M" "$SCRATCH/notok"
rm -f "$SCRATCH/notok/tokenizer.json"
expect_error vv-no-tokenizer "copy tokenizer.json from Qwen" "$VOCIS" speak --model "$SCRATCH/notok" --text "Hi." \
    --voice "$D/inputs/voice_0.wav" -o "$SCRATCH/bad11.wav" -q
no_file vv-bad "$SCRATCH"/bad[1-9].wav "$SCRATCH"/bad1[01].wav
finish
