/* S3Gen flow encoder (UpsampleConformerEncoder, spec §9.4): token embedding,
 * Linear+LayerNorm+√E embed, pre-lookahead convs, conformer layers with
 * relative-position attention, nearest ×stride upsampling + causal conv,
 * a second embed and conformer stack, final LayerNorm. Activations are
 * time-major [frames][channels] throughout; no masks (one utterance). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops_extra.h"
#include "models/chatterbox/s3gen_flow_impl.h"

typedef struct enc_ws {
    float *n, *q, *k, *v, *a, *tmp, *ff, *R, *P, *col, *att;
} enc_ws;

/* ESPnet relative table R_L [2L − 1][E]: row c encodes distance r = L − 1 − c,
 * R[c][2κ] = sin(r·ω_κ), R[c][2κ+1] = cos(r·ω_κ), ω_κ = exp(2κ · −ln(10000)/E) (float32 like torch). */
static void rel_table(float *R, int64_t L, int64_t E) {
    const float neg = (float)-(log(10000.0) / (double)E);
    for (int64_t c = 0; c < 2 * L - 1; c++) {
        float r = (float)(L - 1 - c);
        float *row = R + c * E;
        for (int64_t i = 0; i < E / 2; i++) {
            float w = expf((float)(2 * i) * neg);
            row[2 * i] = sinf(r * w);
            row[2 * i + 1] = cosf(r * w);
        }
    }
}

/* x [L][E] in place: x += MHSA_rel(LN(x)); x += FFN(LN(x)). */
static void conformer(const vx_s3gen_flow *f, const fl_conformer *c, float *x, int64_t L, const float *R, enc_ws *w,
                      int nth) {
    const int64_t E = f->d.enc_dim, H = f->d.enc_heads, F = f->d.enc_ffn;
    vx_layernorm(w->n, x, c->norm_mha.w, c->norm_mha.b, L, E, 1e-12f);
    vx_linear(w->q, w->n, L, &c->q.w, c->q.b, nth);
    vx_linear(w->k, w->n, L, &c->k.w, c->k.b, nth);
    vx_linear(w->v, w->n, L, &c->v.w, c->v.b, nth);
    vx_linear(w->P, R, 2 * L - 1, &c->pos.w, NULL, nth); /* P [2L−1][E] */
    vx_relpos_attention(w->a, w->q, w->k, w->v, w->P, c->pos_u, c->pos_v, L, (int)H, (int)(E / H), w->att, nth);
    vx_linear(w->tmp, w->a, L, &c->out.w, c->out.b, nth);
    vx_add(x, w->tmp, L * E);
    vx_layernorm(w->n, x, c->norm_ff.w, c->norm_ff.b, L, E, 1e-12f);
    vx_linear(w->ff, w->n, L, &c->w1.w, c->w1.b, nth); /* [L][F] */
    vx_silu(w->ff, L * F);
    vx_linear(w->tmp, w->ff, L, &c->w2.w, c->w2.b, nth);
    vx_add(x, w->tmp, L * E);
}

/* LinearNoSubsampling + EspnetRelPositionalEncoding: y = LN(x·Wᵀ + b) · √E. */
static void embed(const vx_s3gen_flow *f, const fl_lin *lin, const fl_norm *ln, float *y, const float *x, int64_t L,
                  float *tmp, int nth) {
    const int64_t E = f->d.enc_dim;
    vx_linear(tmp, x, L, &lin->w, lin->b, nth);
    vx_layernorm(y, tmp, ln->w, ln->b, L, E, 1e-5f);
    vx_scale(y, (float)sqrt((double)E), L * E);
}

vocis_status vx_s3gen_encoder_forward(const vx_s3gen_flow *f, const int64_t *tokens, int64_t T, float *h,
                                      float *emb_out, int nthreads, vx_err *err) {
    const vx_s3gen_flow_dims *d = &f->d;
    const int64_t E = d->enc_dim, IN = d->input_size, S = d->up_stride, L2 = S * T, F = d->enc_ffn;
    const int64_t H = d->enc_heads;
    for (int64_t i = 0; i < T; i++)
        if (tokens[i] < 0 || tokens[i] >= d->vocab)
            return vx_fail(err, VOCIS_E_ARG,
                           "s3gen flow: speech token %lld at position %lld is outside [0, %lld) (filter special "
                           "tokens before S3Gen)",
                           (long long)tokens[i], (long long)i, (long long)d->vocab);
    int64_t kmax = d->lookahead + 1;
    if (kmax < 3) kmax = 3;
    if (2 * S + 1 > kmax) kmax = 2 * S + 1;
    const int64_t wide = E > IN ? E : IN;
    enc_ws w = {0};
    float *emb = NULL, *x = NULL, *up = NULL;
    vocis_status st = VOCIS_OK;
#define ALLOC(p, n)                                                                                                    \
    do {                                                                                                           \
        p = vx_malloc(err, (size_t)(n) * sizeof(float), "s3gen encoder activations");                              \
        if (!p) {                                                                                                  \
            st = err->code;                                                                                        \
            goto done;                                                                                             \
        }                                                                                                          \
    } while (0)
    ALLOC(emb, T * IN);
    ALLOC(x, L2 * E);
    ALLOC(up, L2 * E);
    ALLOC(w.n, L2 * wide);
    ALLOC(w.q, L2 * E);
    ALLOC(w.k, L2 * E);
    ALLOC(w.v, L2 * E);
    ALLOC(w.a, L2 * E);
    ALLOC(w.tmp, L2 * E);
    ALLOC(w.ff, L2 * F);
    ALLOC(w.R, (2 * L2 - 1) * E);
    ALLOC(w.P, (2 * L2 - 1) * E);
    ALLOC(w.col, L2 * E * kmax);
    ALLOC(w.att, vx_relpos_attention_scratch(L2, E / H, nthreads));
#undef ALLOC

    /* token embedding (× all-ones mask): emb [T][IN] */
    {
        const vx_tensor *te = &f->input_embedding;
        size_t esz = vx_dtype_size(te->dtype);
        for (int64_t i = 0; i < T; i++)
            vx_to_f32(emb + i * IN, (const char *)te->data + (size_t)(tokens[i] * IN) * esz, te->dtype, (size_t)IN);
        if (emb_out) memcpy(emb_out, emb, (size_t)(T * IN) * sizeof(float));
    }
    /* embed: x [T][E] */
    embed(f, &f->embed_lin, &f->embed_ln, x, emb, T, w.tmp, nthreads);
    /* pre-lookahead: right-pad la, conv k la+1, LeakyReLU(0.01), left-pad 2, conv k3, + residual */
    vx_conv1d_tm(w.tmp, x, 1, T, E, d->lookahead + 1, 1, 0, d->lookahead, &f->pre_conv1.w, f->pre_conv1.b, w.col,
                 nthreads);
    vx_leaky_relu(w.tmp, T * E, 0.01f);
    vx_conv1d_tm(w.a, w.tmp, 1, T, E, 3, 1, 2, 0, &f->pre_conv2.w, f->pre_conv2.b, w.col, nthreads);
    vx_add(x, w.a, T * E);
    /* conformer layers on T frames */
    rel_table(w.R, T, E);
    for (int64_t i = 0; i < d->n_enc; i++) conformer(f, &f->enc[i], x, T, w.R, &w, nthreads);
    /* up_layer: nearest ×S  [T][E] → [L2][E], left-pad 2S, conv k 2S+1 */
    for (int64_t t = 0; t < T; t++)
        for (int64_t r = 0; r < S; r++) memcpy(up + (t * S + r) * E, x + t * E, (size_t)E * sizeof(float));
    vx_conv1d_tm(x, up, 1, L2, E, 2 * S + 1, 1, 2 * S, 0, &f->up_conv.w, f->up_conv.b, w.col, nthreads);
    /* up_embed + conformer layers on L2 frames */
    embed(f, &f->up_embed_lin, &f->up_embed_ln, up, x, L2, w.tmp, nthreads);
    rel_table(w.R, L2, E);
    for (int64_t i = 0; i < d->n_up; i++) conformer(f, &f->up[i], up, L2, w.R, &w, nthreads);
    vx_layernorm(h, up, f->after_norm.w, f->after_norm.b, L2, E, 1e-5f);
done:
    free(emb);
    free(x);
    free(up);
    free(w.n);
    free(w.q);
    free(w.k);
    free(w.v);
    free(w.a);
    free(w.tmp);
    free(w.ff);
    free(w.R);
    free(w.P);
    free(w.col);
    free(w.att);
    return st;
}
