#!/usr/bin/env bash
# VibeVoice-Realtime generate() end to end from the seed alone (torch.manual_seed(1357), CFG 1.5,
# 5 DPM-Solver steps as the demo): 08_e2e (EOS classifier stops at speech step 21; the window runs
# out silently) and 09_e2e_length_cap (max_new_tokens 26), as a debug stage (every per-step tensor)
# and through vocis speak (WAV, raw PCM on stdout, --stream-text from a pipe in pieces).
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
D=$DATA/vibevoice-realtime
M=$D/model
P=$D/voices/streaming_model/en-TinyAda_woman.pt
TXT=$D/inputs/text.txt
TOL=(frame_init_noise:1e-6 tts_text_ids:exact sequences:exact frame_audio_appended:exact
     window_lower_hidden:3.1e-5 frame_pos_condition:4.6e-5 frame_neg_condition:5.2e-5 frame_latent:6e-5
     frame_decoder_input:1.3e-4 frame_acoustic_embed:3.6e-5 step_eos_logit:1.2e-4 step_eos_hidden:4.6e-5
     frame_audio:2e-4 audio:2e-4)

for g in 08_e2e:0 09_e2e_length_cap:26; do
    name=${g%%:*} cap=${g##*:}
    extra=()
    [ "$cap" = 0 ] || extra=(--max-new-tokens "$cap")
    G=$D/$name.safetensors
    "$VOCIS" debug vv-rt-generate --model "$M" --voice "$P" --text-file "$TXT" --seed 1357 "${extra[@]}" \
        --out "$SCRATCH/$name.safetensors" --threads 2
    "$CMP" "$G" "$SCRATCH/$name.safetensors" "${TOL[@]}"
    "$VOCIS" speak --model "$M" --voice "$P" --text-file "$TXT" --seed 1357 "${extra[@]}" --format f32 \
        -o "$SCRATCH/$name.wav" -q --threads 2
    "$CMP" --wav "$SCRATCH/$name.wav" "$G" audio 2e-4
    "$VOCIS" speak --model "$M" --voice "$P" --text-file "$TXT" --seed 1357 "${extra[@]}" --format f32 \
        -o - -q --threads 2 >"$SCRATCH/$name.f32"
    "$CMP" --raw "$SCRATCH/$name.f32" "$G" audio 2e-4
done

# --stream-text: the text arrives on stdin in pieces with pauses; same samples, first audio
# written before the text is complete
G=$D/08_e2e.safetensors
( printf 'Hello from the ti'; sleep 0.3; printf 'ny realtime model. It sp'; sleep 0.3; printf 'eaks in small'
  sleep 0.3; printf ' windows!' ) |
    "$VOCIS" speak --model "$M" --voice "$P" --stream-text --seed 1357 --format f32 -o - -q --threads 2 \
        >"$SCRATCH/stream.f32"
"$CMP" --raw "$SCRATCH/stream.f32" "$G" audio 2e-4
( printf 'Hello from the tiny realtime model. It speaks in small windows! '; sleep 2; ) |
    "$VOCIS" speak --model "$M" --voice "$P" --stream-text --seed 1357 --format f32 -o - -q --threads 2 \
        >"$SCRATCH/early.f32" &
sleep 1.6
early=$(stat -c %s "$SCRATCH/early.f32")
wait
[ "$early" -gt 0 ] || { echo "FAIL stream-text: no audio before the end of the text"; exit 1; }
echo "ok   stream-text: $early bytes of audio before the text was finished"
"$CMP" --raw "$SCRATCH/early.f32" "$G" audio 2e-4
# the converted voice file speaks the same
"$VOCIS" voice create --from-preset "$P" -o "$SCRATCH/ada.voice"
"$VOCIS" speak --model "$M" --voice "$SCRATCH/ada.voice" --text-file "$TXT" --seed 1357 --format f32 \
    -o "$SCRATCH/voicefile.wav" -q --threads 2
"$CMP" --wav "$SCRATCH/voicefile.wav" "$G" audio 2e-4
