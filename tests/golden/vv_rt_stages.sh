#!/usr/bin/env bash
# VibeVoice-Realtime debug stages against upstream's golden 02-07 (tiny checkpoint, preset RA).
# Tolerances: the suggested atol of tests/data/vibevoice-realtime/tolerances.json; BF16 preset
# values, ids and positions exact.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
mkdir -p "$SCRATCH"
D=$DATA/vibevoice-realtime
M=$D/model
P=$D/voices/streaming_model/en-TinyAda_woman.pt

# 02: the preset's flat tensors (BF16 values, stored as transposed views in the .pt)
names=()
for e in lm neg_lm; do for l in 0 1; do names+=("${e}_key_$l:exact" "${e}_value_$l:exact"); done; done
for e in tts_lm neg_tts_lm; do for l in 0 1 2; do names+=("${e}_key_$l:exact" "${e}_value_$l:exact"); done; done
"$VOCIS" debug vv-rt-preset --model "$M" --voice "$P" --out "$SCRATCH/02.safetensors"
"$CMP" "$D/02_voice_preset.safetensors" "$SCRATCH/02.safetensors" "${names[@]}" lm_last_hidden_state:exact \
    tts_lm_last_hidden_state:exact neg_lm_last_hidden_state:exact neg_tts_lm_last_hidden_state:exact

# the converted vocis voice file gives the same tensors
"$VOCIS" voice create --from-preset "$P" -o "$SCRATCH/ada.voice"
"$VOCIS" debug vv-rt-preset --model "$M" --voice "$SCRATCH/ada.voice" --out "$SCRATCH/02b.safetensors"
"$CMP" "$D/02_voice_preset.safetensors" "$SCRATCH/02b.safetensors" "${names[@]}" tts_lm_last_hidden_state:exact

# 03: lower stack on the first text window over the preset cache
"$VOCIS" debug vv-rt-lm-lower --model "$M" --voice "$P" --in "$D/03_lm_lower.safetensors" \
    --out "$SCRATCH/03.safetensors" --threads 2
"$CMP" "$D/03_lm_lower.safetensors" "$SCRATCH/03.safetensors" inputs_embeds:exact position_ids:exact \
    layer0_out:2.2e-5 layer1_out:3.1e-5 last_hidden_state:3.1e-5 kv_key_0:3e-5 kv_value_0:3.1e-5 \
    kv_key_1:3.1e-5 kv_value_1:3.4e-5

# 04: upper stack (text call, speech call, negative call) and the EOS classifier
"$VOCIS" debug vv-rt-lm-upper --model "$M" --voice "$P" --in "$D/04_lm_upper.safetensors" \
    --out "$SCRATCH/04.safetensors" --threads 2
"$CMP" "$D/04_lm_upper.safetensors" "$SCRATCH/04.safetensors" tts_input_types:exact \
    text_position_ids:exact speech_position_ids:exact neg_position_ids:exact \
    text_inputs_embeds:3.6e-5 text_layer0_out:4.4e-5 text_layer1_out:5e-5 text_layer2_out:5.1e-5 \
    text_last_hidden_state:3.1e-5 text_eos_fc1_out:2.3e-5 text_eos_logit:7.8e-5 text_eos_prob:1e-7 \
    speech_inputs_embeds:3e-5 speech_layer0_out:4.2e-5 speech_layer1_out:4.8e-5 speech_layer2_out:5.1e-5 \
    speech_last_hidden_state:2.7e-5 speech_eos_fc1_out:2.4e-5 speech_eos_logit:6.3e-5 speech_eos_prob:1e-7 \
    neg_inputs_embeds:3e-5 neg_layer0_out:4.2e-5 neg_layer1_out:4.5e-5 neg_layer2_out:5.7e-5 \
    neg_last_hidden_state:2.4e-5 neg_eos_fc1_out:2.7e-5 neg_eos_logit:1.6e-4 neg_eos_prob:1e-7

# 05: diffusion head + DPM-Solver++ with the realtime CFG 1.5 (5 and 20 steps)
"$VOCIS" debug vv-diffusion --model "$M" --in "$D/05_diffusion.safetensors" --cfg-scale 1.5 \
    --out "$SCRATCH/05.safetensors" --threads 2
t=(single_eps_t999:3.1e-5 single_eps_t500:3e-5 single_eps_t10:3.2e-5)
for s in 5 20; do
    t+=("s${s}_loop_timesteps:exact" "s${s}_loop_head_input_x:3.4e-5" "s${s}_loop_head_output:2.8e-5"
        "s${s}_loop_guided_eps:3e-5" "s${s}_loop_x0_pred:4.2e-5" "s${s}_loop_sample_in:4.1e-5"
        "s${s}_loop_sample_out:4.2e-5" "s${s}_loop_result:3.4e-5" "s${s}_sched_sigmas:2e-1"
        "s${s}_sched_alphas_cumprod:1e-5")
done
"$CMP" "$D/05_diffusion.safetensors" "$SCRATCH/05.safetensors" "${t[@]}"

# 06: the decoder-only acoustic tokenizer, whole and streaming
"$VOCIS" debug vv-acoustic-decoder --model "$M" --in "$D/06_acoustic_decoder.safetensors" \
    --out "$SCRATCH/06.safetensors" --threads 2
"$CMP" "$D/06_acoustic_decoder.safetensors" "$SCRATCH/06.safetensors" audio_whole:7.2e-6 audio_streaming:6.9e-6

# 07: acoustic connector (the model has no semantic one)
"$VOCIS" debug vv-connectors --model "$M" --in "$D/07_connector.safetensors" --out "$SCRATCH/07.safetensors"
"$CMP" "$D/07_connector.safetensors" "$SCRATCH/07.safetensors" acoustic_out:3.6e-5
