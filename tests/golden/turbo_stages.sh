#!/usr/bin/env bash
# Chatterbox-Turbo and -Nano stages against upstream's golden outputs (tiny
# checkpoints, tests/data/chatterbox-{turbo,nano}/README.md): cloning front
# ends with Turbo's loudness normalisation (01-05), the GPT-2 T3 (06, 07, 13),
# seeded and greedy tokens (08, 09; speculative decoding auto, off and fixed
# k), MeanFlow S3Gen (10), HiFT (11).
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
DATA=$(cd "$DATA" && pwd)
TEXT="Hi there, this is a tiny Turbo test. [chuckle] Did it work?"
TG=$DATA/chatterbox-turbo/golden
NANO=$DATA/chatterbox-nano/ckpt # complete: the files it shares with Turbo are byte-identical copies


# Front ends (same files for both variants): loudness, resampling, VE, S3 tokens, CAMPPlus, mel.
M=$DATA/chatterbox-turbo/ckpt
A=$TG/01_audio_inputs.safetensors
"$VOCIS" debug loudnorm --model "$M" --in "$A" --out "$SCRATCH/ln.safetensors"
"$CMP" "$A" "$SCRATCH/ln.safetensors" ref_24k_loudnorm:2e-6
"$VOCIS" debug voice-encoder --model "$M" --in "$A" --out "$SCRATCH/ve.safetensors" --threads 2
"$CMP" "$TG/02_voice_encoder.safetensors" "$SCRATCH/ve.safetensors" trim_interval:exact speaker_emb:1e-5
"$VOCIS" debug s3tokenizer --model "$M" --in "$A" --out "$SCRATCH/s3tok.safetensors" --threads 2
"$CMP" "$TG/03_s3tokenizer.safetensors" "$SCRATCH/s3tok.safetensors" s3gen_log_mel:2e-4 t3cond_log_mel:2e-4 \
    s3gen_tokens:exact t3cond_tokens:exact t3cond_prompt_tokens:exact s3gen_prompt_tokens:exact
"$VOCIS" debug campplus --model "$M" --in "$A" --out "$SCRATCH/cam.safetensors" --threads 2
"$CMP" "$TG/04_campplus.safetensors" "$SCRATCH/cam.safetensors" fbank_meannorm:5e-3 xvector:1e-5

for variant in turbo nano; do
    if [ $variant = turbo ]; then M=$DATA/chatterbox-turbo/ckpt; else M=$NANO; fi
    G=$DATA/chatterbox-$variant/golden
    S=$SCRATCH/$variant
    mkdir -p "$S"
    echo "== $variant"
    "$VOCIS" debug t3-cond --model "$M" --in "$G/06_t3_cond.safetensors" --out "$S/cond.safetensors"
    "$CMP" "$G/06_t3_cond.safetensors" "$S/cond.safetensors" cond_prompt_speech_emb:1e-5 cond_emb:1e-4
    "$VOCIS" debug t3-prefill --model "$M" --in "$G/07_t3_prefill.safetensors" --out "$S/prefill.safetensors"
    blocks=$(if [ $variant = turbo ]; then echo 0 1; else echo 0 1 2; fi)
    args=()
    for b in $blocks; do args+=("hidden_after_block$b:1e-4"); done
    "$CMP" "$G/07_t3_prefill.safetensors" "$S/prefill.safetensors" "${args[@]}" final_ln_hidden:1e-4 logits_last:1e-4
    "$VOCIS" debug conds-pt --model "$M" --in "$G/13_conds_pt.safetensors" --out "$S/conds.safetensors"
    "$CMP" "$G/13_conds_pt.safetensors" "$S/conds.safetensors" t3.speaker_emb:0 t3.cond_prompt_speech_tokens:exact \
        gen.prompt_token:exact gen.prompt_feat:0 gen.embedding:0 builtin_prefill_logits_last:1e-4
    seed=$(if [ $variant = turbo ]; then echo 0; else echo 1; fi)
    "$VOCIS" debug t3-generate --model "$M" --in "$G/06_t3_cond.safetensors" --out "$S/sampled.safetensors" \
        --text "$TEXT" --seed $seed --threads 2
    "$CMP" "$G/08_t3_sampled.safetensors" "$S/sampled.safetensors" tokens_sampled:exact tokens_returned:exact logits:1e-4
    "$VOCIS" debug t3-generate --model "$M" --in "$G/06_t3_cond.safetensors" --out "$S/greedy.safetensors" \
        --text "$TEXT" --greedy --threads 1
    "$CMP" "$G/09_t3_greedy.safetensors" "$S/greedy.safetensors" tokens:exact logits:1e-4
    # the same tokens with speculation off and with fixed proposals per round (the default above is auto)
    for k in off 1 3 16; do
        "$VOCIS" debug t3-generate --model "$M" --in "$G/06_t3_cond.safetensors" --out "$S/sampled_$k.safetensors" \
            --text "$TEXT" --seed $seed --threads 2 --speculate $k
        "$CMP" "$G/08_t3_sampled.safetensors" "$S/sampled_$k.safetensors" tokens_sampled:exact tokens_returned:exact \
            logits:1e-4
        "$VOCIS" debug t3-generate --model "$M" --in "$G/06_t3_cond.safetensors" --out "$S/greedy_$k.safetensors" \
            --text "$TEXT" --greedy --threads 1 --speculate $k
        "$CMP" "$G/09_t3_greedy.safetensors" "$S/greedy_$k.safetensors" tokens:exact logits:1e-4
    done
    "$VOCIS" debug s3gen-flow --model "$M" --in "$G/10_s3gen_flow.safetensors" --out "$S/flow.safetensors" --threads 2
    "$CMP" "$G/10_s3gen_flow.safetensors" "$S/flow.safetensors" spks:1e-5 encoder_out:1e-4 noised_mels:0 \
        z_randn_like:0 x0:0 t_span:0 est_t:0 est_r:0 mu:1e-4 cond:0 est_step0_time_mlp_t:1e-4 est_step0_time_mlp_r:1e-4 \
        est_step0_time_embed_mixer:1e-4 est_step0_down0_resnet:1e-4 est_step0_final_block:1e-4 est_out_step0:1e-4 \
        est_out_step1:1e-4 basic_euler_out:1e-4 mel_out:1e-4
    "$VOCIS" debug hift --model "$M" --in "$G/11_hift.safetensors" --out "$S/hift.safetensors" --threads 2
    "$CMP" "$G/11_hift.safetensors" "$S/hift.safetensors" f0:5e-4 source:2e-3 wav_clamped:5e-3 wav_trim_faded:5e-3
    "$VOCIS" debug hift --model "$M" --in "$G/11_hift.safetensors" --out "$S/hift_src.safetensors" --threads 2 --source-in
    "$CMP" "$G/11_hift.safetensors" "$S/hift_src.safetensors" wav_clamped:1e-4 istft_magnitude:2e-4 istft_phase:2e-4
done
