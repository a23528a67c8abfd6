/* Stage harness (`vocis debug STAGE`): each stage reads its inputs by their
 * golden tensor names from `in` and adds every output tensor, under golden
 * names and shapes, to `out`. Stages load what they need from model_dir. */
#ifndef VX_STAGES_H
#define VX_STAGES_H

#include "io/safetensors.h"

typedef struct vx_stage_args {
    const char *model_dir;
    const vx_st_file *in;  /* may be NULL for stages that take no tensor input */
    vx_st_writer *out;
    int nthreads;
    int argc;              /* stage-specific extra options (e.g. --script FILE) */
    char **argv;
    int precision;         /* --precision (kernels/precision.h), resolved; 0 = exact (as debug's default).
                            * A stage sets it on the weight sets it opens: vx_weights_set_precision. */
} vx_stage_args;

typedef vocis_status (*vx_stage_fn)(const vx_stage_args *a, vx_err *err);

/* Input helpers: copy a tensor of `in` by golden name, checking rank/shape
 * (-1 = any; ndim < 0 = any rank). Floats accept F32/F16/BF16, integers
 * I64/I32. *data is malloc'd; *t (optional) receives the stored shape. */
vocis_status vx_stage_in_f32(const vx_stage_args *a, const char *name, int ndim, const int64_t *shape,
                             float **data, vx_tensor *t, vx_err *err);
vocis_status vx_stage_in_i64(const vx_stage_args *a, const char *name, int ndim, const int64_t *shape,
                             int64_t **data, vx_tensor *t, vx_err *err);
/* A mono waveform stored as [L] or [1, L] (L >= 1). */
vocis_status vx_stage_in_wave(const vx_stage_args *a, const char *name, float **data, int64_t *n, vx_err *err);
/* For stages whose one option is --steps N (1..1000): *steps keeps its default unless given. */
vocis_status vx_stage_opt_steps(const vx_stage_args *a, int *steps, vx_err *err);
/* For stages without options of their own: any extra argument is an error. */
vocis_status vx_stage_no_options(const vx_stage_args *a, vx_err *err);
/* Output helpers (data copied). */
vocis_status vx_stage_out_f32(const vx_stage_args *a, const char *name, int ndim, const int64_t *shape,
                              const float *data, vx_err *err);
vocis_status vx_stage_out_i64(const vx_stage_args *a, const char *name, int ndim, const int64_t *shape,
                              const int64_t *data, vx_err *err);

/* Chatterbox */
vocis_status vx_stage_t3_cond(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_t3_prefill(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_conds_pt(const vx_stage_args *a, vx_err *err);
/* Shared by the conds-pt stages of every family: loads DIR/conds.pt into *c (freed on failure)
 * and writes its t3.* / gen.* tensors. */
struct vx_cb_conds;
vocis_status vx_stage_conds_pt_out(const vx_stage_args *a, struct vx_cb_conds *c, vx_err *err);
vocis_status vx_stage_hift(const vx_stage_args *a, vx_err *err);
/* campplus: ref_16k_torchaudio [1, L] -> fbank_meannorm [1, m, 80], xvector [1, emb] (DIR/s3gen.safetensors) */
vocis_status vx_stage_campplus(const vx_stage_args *a, vx_err *err);
/* s3tokenizer: ref_16k_torchaudio, ref_16k_soxr, ref_24k -> s3gen_log_mel/_mel_len/_tokens/_token_lens,
 * t3cond_log_mel/_mel_len/_tokens/_token_lens, t3cond_prompt_tokens, s3gen_prompt_tokens */
vocis_status vx_stage_s3tokenizer(const vx_stage_args *a, vx_err *err);
/* voice-encoder: ref_16k_soxr [L] -> trim_interval, mel, partials, partial_embeds, utt_embed, speaker_emb */
vocis_status vx_stage_voice_encoder(const vx_stage_args *a, vx_err *err);
/* s3gen-flow: speech_tokens, prompt_token, prompt_feat, embedding, z_noise (optional) [--steps N] ->
 * spks, encoder_out, mu, cond, solve_euler_out, mel_out, est_dxdt_step0/last, est_step0_* */
vocis_status vx_stage_s3gen_flow(const vx_stage_args *a, vx_err *err);

/* Voice cloning front ends: resample (ref_24k -> ref_16k_soxr, ref_16k_torchaudio),
 * ref-mel (ref_24k -> mel [1, 80, M]) */
vocis_status vx_stage_resample(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_ref_mel(const vx_stage_args *a, vx_err *err);
/* Voice conversion: source-long-tokenizer --source FILE -> 07_source_long_tokenizer tensors */
vocis_status vx_stage_source_long_tokenizer(const vx_stage_args *a, vx_err *err);

/* VibeVoice */
/* vv-processor: --script FILE --voice FILE [--voice FILE ...]; no --in ->
 * input_ids, attention_mask, speech_input_mask, speech_tensors, speech_masks */
vocis_status vx_stage_vv_processor(const vx_stage_args *a, vx_err *err);
/* vv-acoustic-encoder: input_audio [B, L] (+ sample_std_noise, sample_noise) -> mean, downsample_k_out,
 * stage_k_out, head_out (row 0, time prefix), sample_std, sampled;
 * vv-acoustic-decoder: latents [1, F, vae_dim] -> audio_whole, audio_streaming;
 * vv-semantic-encoder: input_audio [L] -> features_whole, features_streaming */
vocis_status vx_stage_vv_acoustic_encode(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_vv_acoustic_decode(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_vv_semantic_encode(const vx_stage_args *a, vx_err *err);

vocis_status vx_stage_qwen2_prefill(const vx_stage_args *a, vx_err *err);
/* vv-generate: --script FILE --voice FILE... [--in recorded noise | --seed N] -> 08_e2e tensors */
vocis_status vx_stage_vv_generate(const vx_stage_args *a, vx_err *err);
/* vv-connectors: acoustic_in [.., 64] and/or semantic_in [.., 128] -> acoustic_out, semantic_out [.., H] */
vocis_status vx_stage_vv_connectors(const vx_stage_args *a, vx_err *err);
/* vv-diffusion [--steps N (10)] [--cfg-scale F (1.3)] [--seed N]: pos_condition, neg_condition,
 * sN_loop_init_noise (unless --seed), optional single_x + single_condition -> single_eps_t999/t500/t10,
 * sN_loop_* (timesteps, head_input_x, head_output, guided_eps, x0_pred, sample_in, sample_out, result,
 * init_noise), sN_sched_sigmas, sN_sched_alphas_cumprod */
vocis_status vx_stage_vv_diffusion(const vx_stage_args *a, vx_err *err);
/* VibeVoice-Realtime (realtime.h), each --voice PRESET (.pt or vocis voice file):
 * vv-rt-preset -> <entry>_last_hidden_state, <entry>_key_K, <entry>_value_K (entry lm, tts_lm, neg_lm, neg_tts_lm);
 * vv-rt-lm-lower: window_ids -> inputs_embeds, position_ids, layerK_out, last_hidden_state, kv_key_K, kv_value_K;
 * vv-rt-lm-upper: lm_hidden_in, speech_embed_in -> {text,speech,neg}_{inputs_embeds,position_ids,layerK_out,
 *   last_hidden_state,eos_fc1_out,eos_logit,eos_prob}, tts_input_types;
 * vv-rt-generate: --text T | --text-file F, --seed N | --in frame_init_noise [--steps N] [--cfg-scale F]
 *   [--max-new-tokens N] -> 08_e2e tensors */
vocis_status vx_stage_vv_rt_preset(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_vv_rt_lm_lower(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_vv_rt_lm_upper(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_vv_rt_generate(const vx_stage_args *a, vx_err *err);

#endif
