/* VibeVoice σ-VAE speech tokenizers (modular_vibevoice_tokenizer.py): the
 * acoustic tokenizer (encoder 24 kHz audio -> vae_dim latents at hop 3200,
 * and the decoder back) and the semantic tokenizer (encoder only).
 *
 *   encoder: stem SConv1d(1 -> C0, k 7) | stage 0 | down 1 (k 2r, stride r) | stage 1 | ... | stage n
 *            [| final norm] | head SConv1d(Cn -> vae_dim, k 7)      (ratios applied REVERSED: 2,2,4,5,5,8)
 *   decoder: stem SConv1d(vae_dim -> C0, k 7) | stage 0 | up 1 (ConvTranspose k 2r, stride r) | ...
 *            | stage n [| final norm] | head SConv1d(Cn -> 1, k 7)  (ratios in file order 8,5,5,4,2,2)
 *   stage:   Block1D × depth:  x += gamma ⊙ DWConv(norm(x));  x += ffn_gamma ⊙ FFN(ffn_norm(x))
 *
 * Every conv is causal. The port keeps activations time-major ([T][C]) so that
 * the norms, the FFN and the convs (packed once at load as [Cout][K·Cin]
 * GEMM weights in their file dtype) all run through vx_linear; depthwise
 * convs are a direct loop over channels.
 *
 * Whole-sequence and streaming calls share one code path: a sequence is fed
 * through per-layer states (the last k − s inputs of each conv, the k − s
 * overlap-add tail of each transposed conv) in chunks of whole frames, the
 * last chunk zero-padded per layer exactly as upstream's non-streaming
 * padding; a fresh (zero) state equals upstream's empty cache. Streaming
 * steps therefore never recompute history.
 *
 * Channel counts, kernel sizes and block widths come from the tensor shapes;
 * strides and depths from the config (cross-checked with the shapes). */
#ifndef VX_VV_VAE_H
#define VX_VV_VAE_H

#include <stdint.h>

#include "base/err.h"
#include "io/safetensors.h"
#include "models/vibevoice/config.h"

typedef struct vx_vv_vae vx_vv_vae; /* one tokenizer: encoder (+ decoder for acoustic) */

/* Which halves to load (with_decoder): */
#define VX_VV_VAE_ENCODER 0         /* encoder only (semantic; acoustic for voice prompts) */
#define VX_VV_VAE_ENCODER_DECODER 1 /* acoustic encoder + decoder */
#define VX_VV_VAE_DECODER 2         /* decoder only (Realtime-0.5B ships no acoustic encoder) */

/* Weights under prefix ("model.acoustic_tokenizer." / "model.semantic_tokenizer."):
 * `encoder.*` and/or `decoder.*` as with_decoder says. The vae keeps views
 * into w (FFN matrices): w must stay open until vx_vv_vae_free. */
vocis_status vx_vv_vae_load(const vx_weights *w, const char *prefix, const vx_vv_tokenizer_config *cfg,
                            int with_decoder, vx_vv_vae **out, vx_err *err);
/* Random BF16 weights (vectors F32) at the dims of cfg, channels n_filters·2^i
 * as upstream builds them (1.5B: acoustic vae_dim 64, semantic 128, n_filters
 * 32, ratios [8,5,5,4,2,2], depths 3-3-3-3-3-3-8), for benchmarks; loaded
 * under `precision` (kernels/precision.h; 0 = as stored). */
vocis_status vx_vv_vae_random(const vx_vv_tokenizer_config *cfg, int with_decoder, uint64_t seed, int precision,
                              vx_vv_vae **out, vx_err *err);
void vx_vv_vae_free(vx_vv_vae *v);

int vx_vv_vae_hop(const vx_vv_vae *v);     /* audio samples per latent frame (3200) */
int vx_vv_vae_dim(const vx_vv_vae *v);     /* latent width (64 / 128) */
int vx_vv_vae_has_decoder(const vx_vv_vae *v);
int vx_vv_vae_has_encoder(const vx_vv_vae *v);

/* Encoder intermediates of batch row 0 for the debug stage: downsample_k_out
 * (k = 0: stem), stage_k_out, head_out, each [1][C][T'] channel-first as
 * upstream, T' = keep(ctx, name, T) (NULL keep: T). */
typedef struct vx_vv_vae_probe {
    vx_st_writer *out;
    int64_t (*keep)(void *ctx, const char *name, int64_t T);
    void *ctx;
} vx_vv_vae_probe;

/* Whole-sequence encode of B rows of L samples (one zero-padded batch, rows
 * independent): mean [B][F][vae_dim], F = ceil(L / hop). L >= 1. */
vocis_status vx_vv_vae_encode(const vx_vv_vae *v, const float *audio, int64_t B, int64_t L, float *mean,
                              int nthreads, const vx_vv_vae_probe *debug, vx_err *err);
/* Whole-sequence decode: latents [F][vae_dim] (raw acoustic latent space,
 * i.e. feature / scaling − bias) -> audio [F·hop]. F >= 1. */
vocis_status vx_vv_vae_decode(const vx_vv_vae *v, const float *latents, int64_t F, float *audio, int nthreads,
                              vx_err *err);

/* Latent sampling of upstream's VibeVoiceTokenizerEncoderOutput.sample(cfg std_dist_type):
 *   gaussian: std[b] = std_noise[b] · fix_std / 0.8, out = mean + std[b] · noise
 *   fix:      std[b] = fix_std,                      out = mean + fix_std · noise
 *   none:     std[b] = 0,                            out = mean
 * mean, noise, out: [B][n]; std_noise [B] (gaussian only; noise unused for none); std [B] optional. */
void vx_vv_vae_sample(const vx_vv_tokenizer_config *cfg, const float *mean, int64_t B, int64_t n,
                      const float *std_noise, const float *noise, float *out, float *std);

/* Streaming state of one sequence: every causal conv's last k − s inputs and
 * every transposed conv's overlap tail, for the encoder and (when present)
 * the decoder, plus the scratch of one frame. Reset zeroes it (upstream
 * zeroes its caches on every generated speech_end; equal to a fresh state). */
typedef struct vx_vv_vae_stream vx_vv_vae_stream;
vocis_status vx_vv_vae_stream_new(const vx_vv_vae *v, vx_vv_vae_stream **out, vx_err *err);
void vx_vv_vae_stream_reset(vx_vv_vae_stream *s);
void vx_vv_vae_stream_free(vx_vv_vae_stream *s);
/* The stream's whole state (its encoder's and decoder's caches, n_enc / n_dec floats), in place:
 * what a checkpoint saves and restores between frames. */
void vx_vv_vae_stream_state(vx_vv_vae_stream *s, float **enc, size_t *n_enc, float **dec, size_t *n_dec);

/* One latent frame [vae_dim] -> audio [hop] (the decoder's causal output for
 * the new frame given all frames since the last reset). */
vocis_status vx_vv_vae_decode_step(const vx_vv_vae *v, vx_vv_vae_stream *s, const float *latent, float *audio,
                                   int nthreads, vx_err *err);
/* One chunk of hop samples [hop] -> the encoder's frame [vae_dim] (the
 * semantic encoder fed each decoded chunk). */
vocis_status vx_vv_vae_encode_step(const vx_vv_vae *v, vx_vv_vae_stream *s, const float *audio, float *mean,
                                   int nthreads, vx_err *err);
/* One step of each of n streams at once (continuous batching: the wide, few-row layers read their
 * weights once for all streams); each stream's output and state equal its own *_step call's. */
vocis_status vx_vv_vae_decode_steps(const vx_vv_vae *v, vx_vv_vae_stream *const *s, int n, const float *const *latent,
                                    float *const *audio, int nthreads, vx_err *err);
vocis_status vx_vv_vae_encode_steps(const vx_vv_vae *v, vx_vv_vae_stream *const *s, int n, const float *const *audio,
                                    float *const *mean, int nthreads, vx_err *err);

/* The work of one decode step (decoder = 1) or encode step (0), for benchmarks: *bytes = the
 * weights read (once per column tile, as the step reads them) and the streaming state (conv caches
 * and overlap tails) read; *macs = multiply-adds of the convs and feed-forwards. *bf16 = 1 when the
 * dense convs compute in bf16 (act_bf16). Counted from the loaded tensors. */
void vx_vv_vae_step_work(const vx_vv_vae *v, int decoder, double *bytes, double *macs, int *bf16);

#endif
