/* S3 speech tokenizer V2 (see s3tokenizer.h; spec chatterbox.md §7). Reads top to bottom like
 * upstream: weights → log-mel → AudioEncoderV2 (convs, FSMN attention blocks) → FSQ → windows.
 *
 * Upstream facts this file mirrors (S3Tokenizer model_v2.py / model.py / utils.py):
 *  - conv1/conv2: k 3, stride 2, padding 1, bias, exact (erf) GELU; the padding mask is all ones
 *    for one utterance, so masking is a no-op here (windows of a long mel are encoded one by one,
 *    which equals upstream's padded+masked batch: padded keys get bias −1e10 → weight 0, and the
 *    convs and FSMN see zeros past the true length either way).
 *  - attn_ln eps 1e-6, mlp_ln eps 1e-5; key projection without bias.
 *  - rotary "rotate half" on q and k (head dim split in halves), θ = 10000, positions 0…T−1,
 *    angles float32; then q and k are each scaled by hd^−1/4 and the softmax runs in float32.
 *  - FSMN on the un-rotated v: depthwise Conv1d (K taps, no bias) with (K−1)/2 zeros on the
 *    left and K−1−(K−1)/2 on the right, plus v; added to the attention output projection.
 *  - FSQ: project_down (8) in float32, tanh, ×0.999 (float32 0.9990000128746033), round half to
 *    even, +1, token = Σ h_i·3^i. */
#include "models/chatterbox/s3tokenizer.h"

#include "base/rng.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/spectral.h"
#include "base/pool.h"
#include "kernels/conv.h"
#include "kernels/kernels.h"

#define FSQ_DIM 8
#define FSQ_LEVEL 3
#define ROPE_THETA 10000.0f
#define LN_ATTN_EPS 1e-6f
#define LN_MLP_EPS 1e-5f
#define WIN_STRIDE 2600   /* frames between 30 s windows (4 s overlap) */
#define WIN_DROP 50       /* tokens dropped on each inner side: (4 s / 2) · 25 Hz */

typedef struct s3t_block {
    const float *attn_ln_w, *attn_ln_b, *mlp_ln_w, *mlp_ln_b;
    vx_mat q, k, v, out, fc1, fc2;             /* [out][in] */
    const float *q_b, *v_b, *out_b, *fc1_b, *fc2_b;
    float *fsmn;                               /* [K][state] (transposed, owned f32) */
} s3t_block;

struct vx_s3tok {
    int64_t n_mels, state, mlp, fsmn_k;
    int n_heads, head_dim, n_layers;
    vx_mat conv1, conv2;                       /* (state, n_mels·3), (state, state·3) */
    const float *conv1_b, *conv2_b;
    s3t_block *blocks;
    vx_mat proj;                               /* project_down (8, state) */
    const float *proj_b;
    float *inv_freq;                           /* [head_dim / 2] */
    void **owned;
    int n_owned, cap_owned;
};

/* ================================================================ weights */

/* Kinds of synthetic tensors (random constructor). */
enum { K_MAT, K_BIAS, K_GAMMA, K_BETA };

typedef struct ldr {
    const vx_weights *w; /* NULL → synthetic */
    vx_s3tok *t;
    uint64_t rng;
    vx_err *err;
} ldr;

static vocis_status own(vx_s3tok *t, void *p, vx_err *err) {
    if (t->n_owned == t->cap_owned) {
        int cap = t->cap_owned ? 2 * t->cap_owned : 64;
        void **n = realloc(t->owned, (size_t)cap * sizeof *n);
        if (!n) {
            free(p);
            return vx_fail(err, VOCIS_E_NOMEM, "out of memory (S3 tokenizer weights)");
        }
        t->owned = n;
        t->cap_owned = cap;
    }
    t->owned[t->n_owned++] = p;
    return VOCIS_OK;
}

static float *own_f32(vx_s3tok *t, size_t n, vx_err *err, const char *what) {
    float *p = vx_malloc(err, n * sizeof(float), what);
    if (!p) return NULL;
    if (own(t, p, err) != VOCIS_OK) return NULL;
    return p;
}

/* A tensor by name with the expected shape (−1 = any, checkpoint only), or a synthetic f32 one. */
static vocis_status get(ldr *L, vx_tensor *t, int kind, int ndim, const int64_t *shape, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static vocis_status get(ldr *L, vx_tensor *t, int kind, int ndim, const int64_t *shape, const char *fmt, ...) {
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    if (L->w) return vx_weights_expect(L->w, VX_FLOATS, ndim, shape, t, L->err, "tokenizer.%s", name);
    memset(t, 0, sizeof *t);
    t->dtype = VX_F32;
    t->ndim = ndim;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (t->shape[i] = shape[i]);
    float *p = own_f32(L->t, (size_t)n, L->err, name);
    if (!p) return L->err->code;
    float a = kind == K_MAT ? sqrtf(3.0f / (float)(n / shape[0])) : kind == K_GAMMA ? 0.1f : 0.05f;
    for (int64_t i = 0; i < n; i++) p[i] = a * vx_rand_pm1(&L->rng) + (kind == K_GAMMA ? 1.0f : 0.0f);
    t->data = p;
    return VOCIS_OK;
}

/* Float32 view of a vector: into the file when it is F32, else an owned converted copy. */
static vocis_status vec(ldr *L, const float **out, int kind, int64_t n, const char *fmt, const char *a) {
    vx_tensor t;
    VX_TRY(get(L, &t, kind, VX_DIMS(n), fmt, a));
    if (t.dtype == VX_F32) {
        *out = t.data;
        return VOCIS_OK;
    }
    float *p = own_f32(L->t, (size_t)n, L->err, "S3 tokenizer vector");
    if (!p) return L->err->code;
    vx_to_f32(p, t.data, t.dtype, (size_t)n);
    *out = p;
    return VOCIS_OK;
}

/* Linear weight [rows][cols] (or conv weight [rows][cols/k][k] when k > 0) as a vx_mat view. */
static vocis_status mat(ldr *L, vx_mat *m, int64_t rows, int64_t cols, int64_t k, const char *fmt, const char *a) {
    vx_tensor t;
    if (k > 0) VX_TRY(get(L, &t, K_MAT, VX_DIMS(rows, cols, k), fmt, a));
    else VX_TRY(get(L, &t, K_MAT, VX_DIMS(rows, cols), fmt, a));
    *m = (vx_mat){t.dtype, t.shape[0], t.shape[1] * (k > 0 ? t.shape[2] : 1), t.data};
    return VOCIS_OK;
}

static vocis_status load_block(ldr *L, int i) {
    vx_s3tok *t = L->t;
    s3t_block *b = &t->blocks[i];
    const int64_t C = t->state;
    char p[64];
    snprintf(p, sizeof p, "encoder.blocks.%d", i);
    VX_TRY(vec(L, &b->attn_ln_w, K_GAMMA, C, "%s.attn_ln.weight", p));
    VX_TRY(vec(L, &b->attn_ln_b, K_BETA, C, "%s.attn_ln.bias", p));
    VX_TRY(mat(L, &b->q, C, C, 0, "%s.attn.query.weight", p));
    VX_TRY(vec(L, &b->q_b, K_BIAS, C, "%s.attn.query.bias", p));
    VX_TRY(mat(L, &b->k, C, C, 0, "%s.attn.key.weight", p));
    VX_TRY(mat(L, &b->v, C, C, 0, "%s.attn.value.weight", p));
    VX_TRY(vec(L, &b->v_b, K_BIAS, C, "%s.attn.value.bias", p));
    VX_TRY(mat(L, &b->out, C, C, 0, "%s.attn.out.weight", p));
    VX_TRY(vec(L, &b->out_b, K_BIAS, C, "%s.attn.out.bias", p));

    /* FSMN depthwise filter (state, 1, K): K read from block 0, transposed to [K][state]. */
    vx_tensor f;
    VX_TRY(get(L, &f, K_MAT, VX_DIMS(C, 1, i == 0 && L->w ? -1 : t->fsmn_k), "%s.attn.fsmn_block.weight", p));
    if (i == 0) t->fsmn_k = f.shape[2];
    const int64_t K = t->fsmn_k;
    float *tmp = vx_malloc(L->err, (size_t)(C * K) * sizeof(float), "FSMN weight");
    if (!tmp) return L->err->code;
    vx_to_f32(tmp, f.data, f.dtype, (size_t)(C * K));
    if (!(b->fsmn = own_f32(t, (size_t)(C * K), L->err, "FSMN weight"))) {
        free(tmp);
        return L->err->code;
    }
    for (int64_t c = 0; c < C; c++)
        for (int64_t j = 0; j < K; j++) b->fsmn[j * C + c] = tmp[c * K + j];
    free(tmp);

    VX_TRY(vec(L, &b->mlp_ln_w, K_GAMMA, C, "%s.mlp_ln.weight", p));
    VX_TRY(vec(L, &b->mlp_ln_b, K_BETA, C, "%s.mlp_ln.bias", p));
    VX_TRY(mat(L, &b->fc1, i == 0 && L->w ? -1 : t->mlp, C, 0, "%s.mlp.0.weight", p));
    if (i == 0) t->mlp = b->fc1.rows;
    VX_TRY(vec(L, &b->fc1_b, K_BIAS, t->mlp, "%s.mlp.0.bias", p));
    VX_TRY(mat(L, &b->fc2, C, t->mlp, 0, "%s.mlp.2.weight", p));
    VX_TRY(vec(L, &b->fc2_b, K_BIAS, C, "%s.mlp.2.bias", p));
    return VOCIS_OK;
}

/* Shared by load and random: dims not known in advance are −1 (read from the checkpoint). */
static vocis_status s3tok_build(ldr *L, int n_heads, int n_layers) {
    vx_s3tok *t = L->t;
    const char *src = L->w ? vx_weights_path(L->w) : "random S3 tokenizer";
    VX_TRY(mat(L, &t->conv1, t->state, t->n_mels, 3, "%s", "encoder.conv1.weight"));
    t->state = t->conv1.rows;
    t->n_mels = t->conv1.cols / 3;
    const int64_t C = t->state;
    if (n_heads < 1 || C % n_heads || (C / n_heads) % 2)
        return vx_fail(L->err, VOCIS_E_SHAPE,
                       "%s: S3 tokenizer width %lld (tokenizer.encoder.conv1.weight rows) is not divisible into %d "
                       "heads of an even head dim (check s3tokenizer.n_audio_head in the config)",
                       src, (long long)C, n_heads);
    t->n_heads = n_heads;
    t->head_dim = (int)(C / n_heads);
    VX_TRY(vec(L, &t->conv1_b, K_BIAS, C, "%s", "encoder.conv1.bias"));
    VX_TRY(mat(L, &t->conv2, C, C, 3, "%s", "encoder.conv2.weight"));
    VX_TRY(vec(L, &t->conv2_b, K_BIAS, C, "%s", "encoder.conv2.bias"));

    if (L->w) { /* probe blocks.{i}; block 0 must exist (its absence is reported as a missing tensor) */
        n_layers = 1;
        char name[128];
        for (;; n_layers++) {
            snprintf(name, sizeof name, "tokenizer.encoder.blocks.%d.attn.query.weight", n_layers);
            if (!vx_weights_has(L->w, name)) break;
        }
    }
    t->blocks = vx_calloc(L->err, (size_t)n_layers, sizeof *t->blocks, "S3 tokenizer blocks");
    if (!t->blocks) return L->err->code;
    t->n_layers = n_layers;
    for (int i = 0; i < n_layers; i++) VX_TRY(load_block(L, i));

    VX_TRY(mat(L, &t->proj, FSQ_DIM, C, 0, "%s", "quantizer._codebook.project_down.weight"));
    VX_TRY(vec(L, &t->proj_b, K_BIAS, FSQ_DIM, "%s", "quantizer._codebook.project_down.bias"));

    /* Rotary frequencies 1 / 10000^(2i/hd) (upstream: precompute_freqs_cis(64, 2048); hd = 64 there). */
    if (!(t->inv_freq = own_f32(t, (size_t)(t->head_dim / 2), L->err, "rotary table"))) return L->err->code;
    vx_rope_freqs(t->inv_freq, t->head_dim, ROPE_THETA);
    return VOCIS_OK;
}

void vx_s3tok_free(vx_s3tok *t) {
    if (!t) return;
    for (int i = 0; i < t->n_owned; i++) free(t->owned[i]);
    free(t->owned);
    free(t->blocks);
    free(t);
}

vocis_status vx_s3tok_load(const vx_weights *w, int n_heads, vx_s3tok **out, vx_err *err) {
    *out = NULL;
    vx_s3tok *t = vx_calloc(err, 1, sizeof *t, "S3 tokenizer");
    if (!t) return VOCIS_E_NOMEM;
    t->state = t->n_mels = -1;
    ldr L = {w, t, 0, err};
    vocis_status st = s3tok_build(&L, n_heads, 0);
    if (st != VOCIS_OK) {
        vx_s3tok_free(t);
        return st;
    }
    *out = t;
    return VOCIS_OK;
}

vocis_status vx_s3tok_random(int64_t n_mels, int64_t state, int n_heads, int n_layers, uint64_t seed,
                             vx_s3tok **out, vx_err *err) {
    *out = NULL;
    if (n_mels < 1 || state < 1 || n_layers < 1)
        return vx_fail(err, VOCIS_E_ARG, "S3 tokenizer: invalid random dims (n_mels %lld, state %lld, layers %d)",
                       (long long)n_mels, (long long)state, n_layers);
    vx_s3tok *t = vx_calloc(err, 1, sizeof *t, "S3 tokenizer");
    if (!t) return VOCIS_E_NOMEM;
    t->n_mels = n_mels;
    t->state = state;
    t->mlp = 4 * state;
    t->fsmn_k = 31;
    ldr L = {NULL, t, seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL, err};
    vocis_status st = s3tok_build(&L, n_heads, n_layers);
    if (st != VOCIS_OK) {
        vx_s3tok_free(t);
        return st;
    }
    *out = t;
    return VOCIS_OK;
}

int64_t vx_s3tok_state(const vx_s3tok *t) { return t->state; }
int64_t vx_s3tok_n_mels(const vx_s3tok *t) { return t->n_mels; }
int vx_s3tok_layers(const vx_s3tok *t) { return t->n_layers; }

/* ================================================================ log-mel (§7.1) */

vocis_status vx_s3tok_log_mel(const float *wav, int64_t n, float **mel, int64_t *frames, int nthreads,
                              vx_err *err) {
    *mel = NULL;
    *frames = 0;
    if (n < VX_S3TOK_MIN_SAMPLES)
        return vx_fail(err, VOCIS_E_INVALID,
                       "S3 tokenizer: audio of %lld samples is too short (need at least %d at 16 kHz: one 10 ms "
                       "frame and more than the 200-sample STFT reflect padding)",
                       (long long)n, VX_S3TOK_MIN_SAMPLES);
    const int nb = VX_S3TOK_NFFT / 2 + 1, nm = VX_S3TOK_NMELS;
    const int64_t F = n / VX_S3TOK_HOP; /* centred STFT gives F + 1 frames; the last is dropped */
    float window[VX_S3TOK_NFFT];
    vx_window_hann(window, VX_S3TOK_NFFT, 1);
    float *fb = vx_malloc(err, sizeof(float) * (size_t)(nm * nb), "S3 tokenizer mel filterbank");
    float *spec = vx_malloc(err, sizeof(float) * (size_t)(F * nb), "S3 tokenizer spectrum");
    float *mt = vx_malloc(err, sizeof(float) * (size_t)(F * nm), "S3 tokenizer mel");
    float *out = vx_malloc(err, sizeof(float) * (size_t)(F * nm), "S3 tokenizer log-mel");
    vocis_status st = VOCIS_E_NOMEM;
    if (!fb || !spec || !mt || !out) goto done;
    if ((st = vx_mel_slaney(fb, VX_S3TOK_SR, VX_S3TOK_NFFT, nm, 0.0, VX_S3TOK_SR / 2.0, err))) goto done;
    vx_frames_spec fs = {VX_S3TOK_NFFT, VX_S3TOK_NFFT, VX_S3TOK_HOP, 1, 0, window};
    if ((st = vx_spectrum(wav, n, &fs, VX_SPEC_POWER, 0, F, spec, nthreads, err))) goto done;
    vx_mel_apply(mt, spec, F, fb, nm, nb, nthreads); /* mt: [F][128] */

    /* log10(clamp(·, 1e-10)), transposed to [128][F]; then max(x, max − 8) and (x + 4) / 4 in float32 */
    float gmax = -INFINITY;
    for (int64_t f = 0; f < F; f++)
        for (int m = 0; m < nm; m++) {
            float v = log10f(fmaxf(mt[f * nm + m], 1e-10f));
            out[(int64_t)m * F + f] = v;
            if (v > gmax) gmax = v;
        }
    const float floor_ = gmax - 8.0f;
    for (int64_t i = 0; i < F * nm; i++) out[i] = (fmaxf(out[i], floor_) + 4.0f) / 4.0f;
    *mel = out;
    *frames = F;
    out = NULL;
    st = VOCIS_OK;
done:
    free(fb), free(spec), free(mt), free(out);
    return st;
}

/* ================================================================ encoder (§7.2) */

/* Fixed pieces (not thread-count dependent ones): the same vector/tail split for any thread count. */
typedef struct {
    float *y;
    const float *x, *w, *b;
    int64_t n, dim;
    float eps;
} piece_job;

enum { GELU_PIECE = 16384, LN_PIECE = 16 };

static void gelu_piece(void *ctx, int64_t c) {
    const piece_job *j = ctx;
    int64_t a = c * GELU_PIECE, b = a + GELU_PIECE < j->n ? a + GELU_PIECE : j->n;
    vx_gelu(j->y + a, b - a);
}

/* Exact GELU over n values, split over threads. */
static void gelu_par(float *x, int64_t n, int nthreads) {
    piece_job j = {.y = x, .n = n};
    vx_pool_run(nthreads, (n + GELU_PIECE - 1) / GELU_PIECE, gelu_piece, &j);
}

static void layernorm_piece(void *ctx, int64_t c) {
    const piece_job *j = ctx;
    int64_t a = c * LN_PIECE, e = a + LN_PIECE < j->n ? a + LN_PIECE : j->n;
    vx_layernorm(j->y + a * j->dim, j->x + a * j->dim, j->w, j->b, e - a, j->dim, j->eps);
}

static void layernorm_par(float *y, const float *x, const float *w, const float *b, int64_t rows, int64_t dim,
                          float eps, int nthreads) {
    piece_job j = {y, x, w, b, rows, dim, eps};
    vx_pool_run(nthreads, (rows + LN_PIECE - 1) / LN_PIECE, layernorm_piece, &j);
}

/* rows [i0, i1) of the block's rotary + scale on q, k and FSMN memory m (block_forward) */
typedef struct {
    const vx_s3tok *t;
    const s3t_block *b;
    float *q, *k, *m;
    const float *v;
    int64_t T;
    float s;
} rope_fsmn_job;

static void rope_fsmn_rows(void *ctx, int64_t i0, int64_t i1) {
    const rope_fsmn_job *j = ctx;
    const vx_s3tok *t = j->t;
    const int64_t C = t->state, K = t->fsmn_k, pl = (K - 1) / 2, T = j->T;
    const int H = t->n_heads, hd = t->head_dim;
    const float s = j->s;
    for (int64_t i = i0; i < i1; i++) {
        float *qi = j->q + i * C, *ki = j->k + i * C, *mi = j->m + i * C;
        vx_rope_apply(qi, H, hd, t->inv_freq, i);
        vx_rope_apply(ki, H, hd, t->inv_freq, i);
        for (int64_t c = 0; c < C; c++) {
            qi[c] *= s;
            ki[c] *= s;
        }
        memset(mi, 0, sizeof(float) * (size_t)C);
        for (int64_t jj = 0; jj < K; jj++) {
            int64_t src = i + jj - pl;
            if (src < 0 || src >= T) continue;
            const float *vs = j->v + src * C, *wj = j->b->fsmn + jj * C;
            for (int64_t c = 0; c < C; c++) mi[c] += wj[c] * vs[c];
        }
        const float *vi = j->v + i * C;
        for (int64_t c = 0; c < C; c++) mi[c] += vi[c];
    }
}

typedef struct {
    float *x;
    const float *y;
    int64_t T, C;
} transpose_job;

/* rows [i0, i1) of x [T][C] = y [C][T] transposed */
static void transpose_rows(void *ctx, int64_t i0, int64_t i1) {
    const transpose_job *j = ctx;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t c = 0; c < j->C; c++) j->x[i * j->C + c] = j->y[c * j->T + i];
}

/* Working buffers of one encoder pass over T tokens. */
typedef struct s3t_work {
    float *x, *a, *q, *k, *v, *o, *m, *u; /* [T][C] each, u [T][mlp] */
} s3t_work;

/* One ResidualAttentionBlock on x [T][C] (time-major). */
static void block_forward(const vx_s3tok *t, const s3t_block *b, s3t_work *w, int64_t T, int nthreads) {
    const int64_t C = t->state;
    const int H = t->n_heads, hd = t->head_dim;
    float *x = w->x, *a = w->a, *q = w->q, *k = w->k, *v = w->v, *o = w->o, *m = w->m, *u = w->u;

    /* a = attn_ln(x); q, k (no bias), v */
    layernorm_par(a, x, b->attn_ln_w, b->attn_ln_b, T, C, LN_ATTN_EPS, nthreads);
    vx_linear(q, a, T, &b->q, b->q_b, nthreads);
    vx_linear(k, a, T, &b->k, NULL, nthreads);
    vx_linear(v, a, T, &b->v, b->v_b, nthreads);

    /* per token i: rotary on q, k (position i), each then scaled by hd^(−1/4) as upstream; and the FSMN
     * memory of the un-rotated v: m[i] = Σ_j w[j] ⊙ v[i + j − pl] (zeros outside [0, T)) + v[i] */
    const float s = (float)pow((double)hd, -0.25);
    rope_fsmn_job rj = {t, b, q, k, m, v, T, s};
    vx_pool_for(nthreads, T, 1, rope_fsmn_rows, &rj);

    /* softmax(q kᵀ) v over all keys (scales already applied), heads concatenated */
    vx_attention(o, q, k, v, T, T, H, H, hd, C, 1.0f, 0, nthreads);

    /* x += out(o) + m */
    vx_linear(a, o, T, &b->out, b->out_b, nthreads);
    for (int64_t i = 0; i < T * C; i++) x[i] += a[i] + m[i]; /* memory-bound: one thread is enough */

    /* x += mlp(mlp_ln(x)) */
    layernorm_par(a, x, b->mlp_ln_w, b->mlp_ln_b, T, C, LN_MLP_EPS, nthreads);
    vx_linear(u, a, T, &b->fc1, b->fc1_b, nthreads);
    gelu_par(u, T * t->mlp, nthreads);
    vx_linear(a, u, T, &b->fc2, b->fc2_b, nthreads);
    for (int64_t i = 0; i < T * C; i++) x[i] += a[i];
}

static int64_t half_up(int64_t n) { return (n - 1) / 2 + 1; } /* (n + 2·1 − 3)/2 + 1 */

/* Encoder + FSQ of one pass: mel [n_mels][ld] (first `frames` columns), tokens [ceil(ceil(frames/2)/2)]. */
static vocis_status encode_pass(const vx_s3tok *t, const float *mel, int64_t frames, int64_t ld, int64_t *tokens,
                                int nthreads, vx_err *err) {
    const int64_t C = t->state, F1 = half_up(frames), T = half_up(F1);
    float *x0 = NULL, *y1 = NULL, *y2 = NULL, *h = NULL;
    s3t_work w = {0};
    vocis_status st = VOCIS_E_NOMEM;

    /* contiguous input [n_mels][frames] */
    const float *xin = mel;
    if (ld != frames) {
        if (!(x0 = vx_malloc(err, sizeof(float) * (size_t)(t->n_mels * frames), "S3 tokenizer input"))) goto done;
        for (int64_t c = 0; c < t->n_mels; c++) memcpy(x0 + c * frames, mel + c * ld, sizeof(float) * (size_t)frames);
        xin = x0;
    }
    y1 = vx_malloc(err, sizeof(float) * (size_t)(C * F1), "S3 tokenizer conv1");
    y2 = vx_malloc(err, sizeof(float) * (size_t)(C * T), "S3 tokenizer conv2");
    const size_t tc = sizeof(float) * (size_t)(T * C);
    w.x = vx_malloc(err, tc, "S3 tokenizer activations");
    w.a = vx_malloc(err, tc, "S3 tokenizer activations");
    w.q = vx_malloc(err, tc, "S3 tokenizer activations");
    w.k = vx_malloc(err, tc, "S3 tokenizer activations");
    w.v = vx_malloc(err, tc, "S3 tokenizer activations");
    w.o = vx_malloc(err, tc, "S3 tokenizer activations");
    w.m = vx_malloc(err, tc, "S3 tokenizer activations");
    w.u = vx_malloc(err, sizeof(float) * (size_t)(T * t->mlp), "S3 tokenizer MLP");
    h = vx_malloc(err, sizeof(float) * (size_t)(T * FSQ_DIM), "S3 tokenizer FSQ");
    if (!y1 || !y2 || !w.x || !w.a || !w.q || !w.k || !w.v || !w.o || !w.m || !w.u || !h) goto done;

    /* conv1, GELU, conv2, GELU (channel-major), then x = [T][C] */
    vx_conv1d_params p1 = {t->n_mels, C, 3, 2, 1, 1, 1, 1};
    vx_conv1d(y1, xin, 1, frames, &p1, &t->conv1, t->conv1_b, nthreads);
    gelu_par(y1, C * F1, nthreads);
    vx_conv1d_params p2 = {C, C, 3, 2, 1, 1, 1, 1};
    vx_conv1d(y2, y1, 1, F1, &p2, &t->conv2, t->conv2_b, nthreads);
    gelu_par(y2, C * T, nthreads);
    transpose_job tj = {w.x, y2, T, C};
    vx_pool_for(nthreads, T, 1, transpose_rows, &tj);

    for (int l = 0; l < t->n_layers; l++) block_forward(t, &t->blocks[l], &w, T, nthreads);

    /* FSQ (§7.3) */
    vx_linear(h, w.x, T, &t->proj, t->proj_b, nthreads);
    /* NaN / infinite weights reach here as non-finite projections: refuse them (a NaN token index
     * would be an undefined conversion and a garbage voice) */
    for (int64_t i = 0; i < T * FSQ_DIM; i++)
        if (!isfinite(h[i])) {
            st = vx_fail(err, VOCIS_E_INVALID,
                         "S3 speech tokenizer: non-finite activation at frame %lld (NaN or infinite weights?)",
                         (long long)(i / FSQ_DIM));
            goto done;
        }
    for (int64_t i = 0; i < T; i++) {
        float tok = 0.0f, pw = 1.0f;
        for (int d = 0; d < FSQ_DIM; d++) {
            float v = tanhf(h[i * FSQ_DIM + d]) * 0.9990000128746033f;
            v = rintf(v) + 1.0f; /* round half to even (default rounding mode) */
            tok += v * pw;
            pw *= (float)FSQ_LEVEL;
        }
        tokens[i] = (int64_t)tok;
    }
    st = VOCIS_OK;
done:
    free(x0), free(y1), free(y2), free(h);
    free(w.x), free(w.a), free(w.q), free(w.k), free(w.v), free(w.o), free(w.m), free(w.u);
    return st;
}

/* ================================================================ windows (§7.5) and API */

int64_t vx_s3tok_num_tokens(int64_t frames) {
    if (frames < 1) return 0;
    if (frames <= VX_S3TOK_WINDOW) return half_up(half_up(frames));
    int64_t n = 0;
    for (int64_t start = 0; start < frames; start += WIN_STRIDE) {
        int64_t end = start + VX_S3TOK_WINDOW < frames ? start + VX_S3TOK_WINDOW : frames;
        int64_t nt = half_up(half_up(end - start));
        int first = start == 0, last = start + WIN_STRIDE >= frames;
        int64_t l = first ? 0 : WIN_DROP, r = last ? nt : nt - WIN_DROP; /* python tokens[l:r] */
        if (r > l) n += r - l;
    }
    return n;
}

vocis_status vx_s3tok_quantize(const vx_s3tok *t, const float *mel, int64_t frames, int64_t ld, int64_t **tokens,
                               int64_t *ntok, int nthreads, vx_err *err) {
    *tokens = NULL;
    *ntok = 0;
    if (frames < 1)
        return vx_fail(err, VOCIS_E_INVALID, "S3 tokenizer: the mel has %lld frames; at least 1 is needed",
                       (long long)frames);
    if (ld < frames)
        return vx_fail(err, VOCIS_E_ARG, "S3 tokenizer: mel row stride %lld is smaller than its %lld frames",
                       (long long)ld, (long long)frames);
    const int64_t n = vx_s3tok_num_tokens(frames);
    int64_t *out = vx_malloc(err, sizeof(int64_t) * (size_t)n, "S3 tokens");
    if (!out) return VOCIS_E_NOMEM;
    vocis_status st = VOCIS_OK;
    if (frames <= VX_S3TOK_WINDOW) {
        st = encode_pass(t, mel, frames, ld, out, nthreads, err);
    } else {
        /* windows of 3000 frames every 2600; drop 50 tokens at each inner window edge */
        int64_t *win = vx_malloc(err, sizeof(int64_t) * (size_t)half_up(half_up(VX_S3TOK_WINDOW)), "S3 tokens");
        if (!win) st = VOCIS_E_NOMEM;
        int64_t pos = 0;
        for (int64_t start = 0; st == VOCIS_OK && start < frames; start += WIN_STRIDE) {
            int64_t end = start + VX_S3TOK_WINDOW < frames ? start + VX_S3TOK_WINDOW : frames;
            int64_t nt = half_up(half_up(end - start));
            if ((st = encode_pass(t, mel + start, end - start, ld, win, nthreads, err))) break;
            int first = start == 0, last = start + WIN_STRIDE >= frames;
            int64_t l = first ? 0 : WIN_DROP, r = last ? nt : nt - WIN_DROP;
            for (int64_t i = l; i < r; i++) out[pos++] = win[i];
        }
        free(win);
    }
    if (st != VOCIS_OK) {
        free(out);
        return st;
    }
    *tokens = out;
    *ntok = n;
    return VOCIS_OK;
}

vocis_status vx_s3tok_tokenize(const vx_s3tok *t, const float *wav16k, int64_t n, int64_t max_len,
                               int64_t **tokens, int64_t *ntok, int nthreads, vx_err *err) {
    *tokens = NULL;
    *ntok = 0;
    if (t->n_mels != VX_S3TOK_NMELS)
        return vx_fail(err, VOCIS_E_SHAPE, "S3 tokenizer: conv1 takes %lld mel bins; the log-mel front end gives %d",
                       (long long)t->n_mels, VX_S3TOK_NMELS);
    float *mel = NULL;
    int64_t F = 0;
    VX_TRY(vx_s3tok_log_mel(wav16k, n, &mel, &F, nthreads, err));
    int64_t keep = max_len > 0 && 4 * max_len < F ? 4 * max_len : F;
    vocis_status st = vx_s3tok_quantize(t, mel, keep, F, tokens, ntok, nthreads, err);
    free(mel);
    return st;
}

int64_t vx_s3tok_s3gen_prompt_len(int64_t ntok, int64_t mel24_frames) {
    if (mel24_frames == 2 * ntok) return ntok;
    int64_t half = mel24_frames / 2;
    return half < ntok ? (half > 0 ? half : 0) : ntok;
}
