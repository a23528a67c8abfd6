/* Chatterbox voice encoder (VoiceEncoder, `ve.safetensors`): 16 kHz reference → the L2-normalised
 * speaker embedding T3 is conditioned on (T3Cond.speaker_emb). Shared spec chatterbox.md §6.
 *
 *   wav ─ librosa.effects.trim(top_db 20) ─ |STFT(400, hop 160)|² ─ Slaney mel 40 (T × 40, linear power)
 *       ─ partials of 160 frames every 77 (rate 1.3; zero-padded to the window grid)
 *       ─ LSTM (nlayers, hidden H) per partial ─ h_last ─ proj ─ ReLU ─ L2 ─ mean over partials ─ L2
 *
 * Weights are owned float32 (the model is small), so the vx_weights may be closed after loading.
 * Gate rows are stored interleaved per hidden unit (row 4u + g, g = i, f, g, o) rather than in
 * PyTorch's four blocks, so that a contiguous range of units is a contiguous range of rows. */
#ifndef VX_VOICE_ENCODER_H
#define VX_VOICE_ENCODER_H

#include <stdint.h>

#include "base/err.h"
#include "io/safetensors.h"

/* Fixed hyper-parameters (VoiceEncConfig; not stored in the checkpoint). */
#define VX_VE_SR 16000
#define VX_VE_NFFT 400
#define VX_VE_HOP 160
#define VX_VE_PARTIAL 160        /* ve_partial_frames */
#define VX_VE_RATE 1.3           /* partials per second (Resemble's default) */
#define VX_VE_MIN_COVERAGE 0.8
#define VX_VE_TRIM_TOP_DB 20.0
#define VX_VE_TRIM_FRAME 2048
#define VX_VE_TRIM_HOP 512

typedef struct vx_ve_layer {
    int64_t in;      /* input width: n_mels for layer 0, hidden after */
    float *w_ih;     /* [4H][in], unit-interleaved rows */
    float *w_hh;     /* [4H][H], unit-interleaved rows */
    float *bias;     /* [4H] = bias_ih + bias_hh, unit-interleaved */
} vx_ve_layer;

typedef struct vx_ve {
    int64_t n_mels;  /* 40 */
    int64_t hidden;  /* ve_hidden_size: 256 */
    int64_t emb;     /* speaker_embed_size: 256 */
    int nlayers;     /* 3 */
    vx_ve_layer *layers;
    float *proj_w;   /* [emb][hidden] */
    float *proj_b;   /* [emb] */
    float *mel_fb;   /* Slaney filterbank [n_mels][n_fft/2 + 1] */
    float *window;   /* periodic Hann [n_fft] */
} vx_ve;

/* Load from ve.safetensors (opened with vx_weights_open); F32/F16/BF16. Dimensions and the layer
 * count come from the tensor shapes (lstm.weight_ih_l{k}, proj.weight). */
vocis_status vx_ve_load(const vx_weights *w, vx_ve **out, vx_err *err);
/* Random weights (uniform ±1/sqrt(hidden), like torch's init) for benchmarks; real dims: 40, 256, 256, 3. */
vocis_status vx_ve_random(int64_t n_mels, int64_t hidden, int64_t emb, int nlayers, uint64_t seed, vx_ve **out,
                          vx_err *err);
void vx_ve_free(vx_ve *v);

/* Optional intermediates of vx_ve_embed (all malloc'd; release with vx_ve_trace_free). */
typedef struct vx_ve_trace {
    int64_t trim_start, trim_end;  /* samples [start, end) kept by the silence trim */
    int64_t n_frames;              /* T = 1 + (end − start) / 160 */
    float *mel;                    /* [T][n_mels] linear power */
    int64_t n_partials;            /* N */
    float *partials;               /* [N][160][n_mels] (zero-padded to the window grid) */
    float *partial_embeds;         /* [N][emb] */
} vx_ve_trace;
void vx_ve_trace_free(vx_ve_trace *t);

/* embeds_from_wavs([wav16k], 16000) with trim_top_db 20, rate 1.3, min_coverage 0.8:
 * speaker_emb [v->emb] (the utterance embedding = T3Cond.speaker_emb). wav16k: n mono samples at
 * 16 kHz. Fails with VOCIS_E_INVALID when the audio is empty, not finite, all zero, or too short
 * after trimming (≤ 200 samples) for the centred STFT, or when every partial's ReLU output is zero
 * (upstream: NaN; a partial alone with a zero output is kept as zeros in the mean, upstream NaN too).
 * trace (NULL ok) receives the intermediates; it is left empty on failure. Threaded with nthreads. */
vocis_status vx_ve_embed(const vx_ve *v, const float *wav16k, int64_t n, float *speaker_emb, vx_ve_trace *trace,
                         int nthreads, vx_err *err);

/* librosa.effects.trim(y, top_db, frame_length 2048, hop_length 512) interval (exposed for tests). */
void vx_ve_trim(const float *x, int64_t n, double top_db, int64_t *start, int64_t *end);

#endif
