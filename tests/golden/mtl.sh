#!/usr/bin/env bash
# Chatterbox-Multilingual against upstream's golden outputs (tiny folder with the release's file formats:
# t3_mtl23ls_v2.safetensors, s3gen.pt and ve.pt torch pickles): the same debug stages as the English set on
# this folder (02-11, 13), seeded and greedy T3 tokens (exact), and end to end from the seed alone:
# `vocis speak --language fr --voice ref_24k.wav --seed 0` = generate(text, "fr", audio_prompt_path=...)
# (12_e2e wav_out, with the cut of the last token's audio), plus the built-in voice run of 13.
set -euo pipefail
VOCIS=$1 DATA=$2 SCRATCH=$3 CMP=$4
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
M=$DATA/chatterbox-mtl/ckpt
G=$DATA/chatterbox-mtl/golden
IN=$G/01_audio_inputs.safetensors
TEXT="Bonjour tout le monde ! Ceci est un petit essai de Chatterbox multilingue."
dbg() { "$VOCIS" debug "$1" --model "$M" --in "$2" --out "$SCRATCH/$1.safetensors" --threads 2 "${@:3}"; }

# cloning front ends (ve.pt; S3 tokenizer and CAMPPlus from s3gen.pt)
dbg resample "$IN"
"$CMP" "$IN" "$SCRATCH/resample.safetensors" ref_16k_soxr:1e-6 ref_16k_torchaudio:1e-6
dbg voice-encoder "$IN"
"$CMP" "$G/02_voice_encoder.safetensors" "$SCRATCH/voice-encoder.safetensors" trim_interval:exact mel:5e-5 \
    partials:5e-5 partial_embeds:1e-5 utt_embed:1e-5 speaker_emb:1e-5
dbg s3tokenizer "$IN"
"$CMP" "$G/03_s3tokenizer.safetensors" "$SCRATCH/s3tokenizer.safetensors" \
    s3gen_log_mel:2e-4 s3gen_mel_len:exact s3gen_tokens:exact s3gen_token_lens:exact \
    t3cond_log_mel:2e-4 t3cond_mel_len:exact t3cond_tokens:exact t3cond_token_lens:exact \
    t3cond_prompt_tokens:exact s3gen_prompt_tokens:exact
dbg campplus "$IN"
"$CMP" "$G/04_campplus.safetensors" "$SCRATCH/campplus.safetensors" fbank_meannorm:5e-3 xvector:1e-5
dbg ref-mel "$IN"
"$CMP" "$G/05_ref_mel24k.safetensors" "$SCRATCH/ref-mel.safetensors" mel:1e-3

# T3 (text vocabulary 2454)
dbg t3-cond "$G/06_t3_cond.safetensors"
"$CMP" "$G/06_t3_cond.safetensors" "$SCRATCH/t3-cond.safetensors" cond_prompt_speech_emb:1e-5 perceiver_out:1e-4 \
    cond_emb:1e-4
dbg t3-prefill "$G/07_t3_prefill.safetensors"
"$CMP" "$G/07_t3_prefill.safetensors" "$SCRATCH/t3-prefill.safetensors" \
    hidden_after_layer0:1e-4 hidden_after_layer1:1e-4 final_norm_hidden:1e-4 logits_last:1e-4
want=$("$CMP" --print "$G/07_t3_prefill.safetensors" text_tokens)
got=$("$VOCIS" tokenize --model "$M" --text "$TEXT" --language fr)
[ "$got" = "255 $want 0" ] || { echo "FAIL tokenize: got $got, want 255 $want 0"; exit 1; }
echo "ok   tokenize (07 text_tokens)"

expect_tokens() { # name golden-file tokens-line
    local want
    want=$("$CMP" --print "$2" tokens)
    if [ "$3" != "$want" ]; then
        echo "FAIL $1:"; echo "  got:  $3"; echo "  want: $want"; exit 1
    fi
    echo "ok   $1: $(echo "$3" | wc -w) tokens"
}
tok=("$VOCIS" tokens --precision exact --model "$M" --t3-cond "$G/06_t3_cond.safetensors" --text "$TEXT" --language fr
     --exaggeration 0.5 -q)
expect_tokens sampled "$G/08_t3_sampled.safetensors" "$("${tok[@]}" --seed 0 --threads 2)"
expect_tokens greedy "$G/09_t3_greedy.safetensors" "$("${tok[@]}" --greedy --threads 1)"

# S3Gen flow and HiFT (s3gen.pt)
dbg s3gen-flow "$G/10_s3gen_flow.safetensors"
"$CMP" "$G/10_s3gen_flow.safetensors" "$SCRATCH/s3gen-flow.safetensors" \
    spks:1e-5 token_emb_masked_input:1e-6 encoder_out:1e-4 mu:1e-4 cond:1e-6 mask:0 t_span:1e-6 \
    est_t_all_steps:1e-6 est_step0_time_mlp:1e-4 est_step0_down0_resnet:1e-4 est_step0_down0_transformer_last:1e-4 \
    est_step0_down0_downsample:1e-4 est_step0_mid0_resnet:1e-4 est_step0_mid0_transformer_last:1e-4 \
    est_step0_up0_resnet:1e-4 est_step0_up0_transformer_last:1e-4 est_step0_up0_upsample:1e-4 \
    est_step0_final_block:1e-4 est_dxdt_step0:1e-4 est_dxdt_last:1e-4 solve_euler_out:1e-4 mel_out:1e-4
dbg hift "$G/11_hift.safetensors"
"$CMP" "$G/11_hift.safetensors" "$SCRATCH/hift.safetensors" \
    f0:5e-4 source:2e-3 wav_clamped:5e-3 wav_trim_faded:5e-3 trim_fade:1e-6
dbg hift "$G/11_hift.safetensors" --source-in
"$CMP" "$G/11_hift.safetensors" "$SCRATCH/hift.safetensors" \
    wav_clamped:1e-4 wav_trim_faded:1e-4 istft_magnitude:2e-4 istft_phase:2e-4

# end to end from the seed alone, cloning ref_24k.wav: 45 tokens -> 43200 samples, cut to 44 * 960 = 42240
"$VOCIS" speak --precision exact --model "$M" --language fr --voice "$G/ref_24k.wav" --text "$TEXT" --seed 0 \
    --format f32 -o "$SCRATCH/e2e.wav" -q --threads 2
"$CMP" --wav "$SCRATCH/e2e.wav" "$G/12_e2e.safetensors" wav_out 5e-3
"$VOCIS" speak --precision exact --model "$M" --language FR --voice "$G/ref_24k.wav" --text "$TEXT" --seed 0 \
    --format f32 -o - -q --threads 2 >"$SCRATCH/e2e.f32"
[ "$(wc -c <"$SCRATCH/e2e.f32")" -eq $((42240 * 4)) ] || { echo "FAIL: raw output is not 42240 samples"; exit 1; }

# built-in voice (13): conds.pt, T3Cond rebuilt with exaggeration 0.7, German text
dbg conds-pt "$G/13_conds_pt.safetensors"
"$CMP" "$G/13_conds_pt.safetensors" "$SCRATCH/conds-pt.safetensors" \
    t3.speaker_emb:0 t3.cond_prompt_speech_tokens:exact t3.emotion_adv:0 gen.prompt_token:exact \
    gen.prompt_token_len:exact gen.prompt_feat:0 gen.embedding:0 builtin_prefill_logits_last:1e-4
want=$("$CMP" --print "$G/13_conds_pt.safetensors" builtin_text_tokens | cut -d' ' -f1-21)
got=$("$VOCIS" tokenize --model "$M" --text "Guten Tag, eingebaute Stimme." --language de)
[ "$got" = "$want" ] || { echo "FAIL built-in tokenize: got $got, want $want"; exit 1; }
"$VOCIS" speak --precision exact --model "$M" --language de --text "Guten Tag, eingebaute Stimme." \
    --exaggeration 0.7 --seed 0 -o "$SCRATCH/builtin.wav" -q --threads 2
[ -s "$SCRATCH/builtin.wav" ] || { echo "FAIL: no built-in voice output"; exit 1; }
echo "ok   multilingual golden set"
