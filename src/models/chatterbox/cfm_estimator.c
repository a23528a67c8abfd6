/* CFM velocity estimator (ConditionalDecoder with causal blocks, spec §9.6):
 * sinusoidal time embedding + MLP, one-level causal 1-D U-Net of ResNet
 * blocks (causal conv k3, LayerNorm over channels, Mish) and diffusers-style
 * transformer blocks. All B rows (the CFG pair) go through every layer
 * together so each weight is read once per evaluation. Activations are
 * time-major [B][L][C]; masks are all-valid and therefore omitted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/pool.h"
#include "kernels/ops_extra.h"
#include "models/chatterbox/s3gen_flow_impl.h"

enum { CFM_B = 2 };

struct cfm_ws {
    int64_t L;
    float *cat;                 /* [B][L][max(4M, 2C)] */
    float *h0, *h1, *a, *tmp;   /* [B][L][C] */
    float *skip;                /* [B][L][C] */
    float *col;                 /* [B][L][3·max(4M, 2C)] im2col */
    float *q, *k, *v, *att;     /* [B][L][H·hd] */
    float *ff;                  /* [B][L][ffn] */
    float *te, *t1, *temb, *tmish, *tproj;
    float *tcat; /* MeanFlow: [time_mlp(t) | time_mlp(r)] */
    float r;     /* MeanFlow end time (cfm_ws_set_r) */
};

void cfm_ws_set_r(cfm_ws *w, float r) { w->r = r; }

void cfm_ws_free(cfm_ws *w) {
    if (!w) return;
    float *bufs[] = {w->cat, w->h0, w->h1, w->a, w->tmp, w->skip, w->col, w->q, w->k, w->v, w->att, w->ff,
                     w->te,  w->t1, w->temb, w->tmish, w->tproj, w->tcat};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    free(w);
}

vocis_status cfm_ws_new(const vx_s3gen_flow *f, int64_t L, cfm_ws **out, vx_err *err) {
    const vx_s3gen_flow_dims *d = &f->d;
    const int64_t C = d->dec_ch, HD = d->dec_heads * d->dec_head_dim, BL = CFM_B * L;
    const int64_t wide = 4 * d->n_mels > 2 * C ? 4 * d->n_mels : 2 * C;
    cfm_ws *w = vx_calloc(err, 1, sizeof *w, "estimator workspace");
    if (!w) return err->code;
    w->L = L;
    struct {
        float **p;
        int64_t n;
    } a[] = {{&w->cat, BL * wide}, {&w->h0, BL * C},   {&w->h1, BL * C},       {&w->a, BL * C},
             {&w->tmp, BL * C},    {&w->skip, BL * C}, {&w->col, BL * wide * 3}, {&w->q, BL * HD},
             {&w->k, BL * HD},     {&w->v, BL * HD},   {&w->att, BL * HD},     {&w->ff, BL * d->dec_ffn},
             {&w->te, 4 * d->n_mels}, {&w->t1, d->temb_dim}, {&w->temb, d->temb_dim}, {&w->tmish, d->temb_dim},
             {&w->tproj, C}, {&w->tcat, 2 * d->temb_dim}};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        *a[i].p = vx_malloc(err, (size_t)a[i].n * sizeof(float), "estimator workspace");
        if (!*a[i].p) {
            cfm_ws_free(w);
            return err->code;
        }
    }
    *out = w;
    return VOCIS_OK;
}

/* Row-wise / element-wise passes on the thread pool: each chunk of rows runs the
 * single-threaded kernel (rows are independent, so any split gives the same
 * bits); below ~64k elements one thread does it all. */
enum { ROWS_RES_LN, ROWS_LN_MISH, ROWS_BIAS_GELU, ROWS_BIAS_ADD };
typedef struct rows_job {
    int op;
    float *y, *x;              /* RES_LN: x = h (in/out), y = LN output; LN_MISH: x is clobbered */
    const float *t, *bias, *add;
    const fl_norm *n;
    int64_t rows, dim, per;
} rows_job;

static void rows_chunk(void *ctx, int64_t c) {
    const rows_job *j = ctx;
    const int64_t a = c * j->per, b = a + j->per < j->rows ? a + j->per : j->rows, dim = j->dim;
    switch (j->op) {
    case ROWS_RES_LN: /* h += t + bias, then y = LN(h) (t or y may be NULL) */
        vx_residual_layernorm(j->x + a * dim, j->t ? j->t + a * dim : NULL, j->bias, j->y ? j->y + a * dim : NULL,
                              j->n ? j->n->w : NULL, j->n ? j->n->b : NULL, b - a, dim, 1e-5f);
        break;
    case ROWS_LN_MISH: /* y = Mish(LN(x + bias)) + add (add broadcast over rows, may be NULL) */
        vx_layernorm_mish(j->y + a * dim, j->x + a * dim, j->bias, j->n->w, j->n->b, j->add, b - a, dim, 1e-5f);
        break;
    case ROWS_BIAS_GELU: /* x = GELU(x + bias), row by row while the row is in cache */
        for (int64_t r = a; r < b; r++) {
            float *xr = j->x + r * dim;
            for (int64_t i = 0; i < dim; i++) xr[i] += j->bias[i];
            vx_gelu(xr, dim);
        }
        break;
    default: /* y = (y + bias) + t */
        for (int64_t r = a; r < b; r++) {
            float *yr = j->y + r * dim;
            const float *xr = j->t + r * dim;
            for (int64_t i = 0; i < dim; i++) yr[i] = (yr[i] + j->bias[i]) + xr[i];
        }
        break;
    }
}

static void rows_run(rows_job j, int nth) {
    if (nth < 1 || j.rows * j.dim < 65536) nth = 1;
    j.per = nth > 1 ? vx_pool_chunk_items(j.rows, 1, nth) : j.rows;
    if (j.per < 1) j.per = 1;
    vx_pool_run(nth, (j.rows + j.per - 1) / j.per, rows_chunk, &j);
}

/* h += t + bias, then y = LN(h) (t or y may be NULL). */
static void p_res_ln(float *h, const float *t, const float *bias, float *y, const fl_norm *n, int64_t rows,
                     int64_t dim, int nth) {
    rows_run((rows_job){.op = ROWS_RES_LN, .y = y, .x = h, .t = t, .bias = bias, .n = n, .rows = rows, .dim = dim},
             nth);
}
/* y = Mish(LN(x + bias)) + add (add broadcast over rows, may be NULL); x is clobbered. */
static void p_ln_mish(float *y, float *x, const float *bias, const fl_norm *n, const float *add, int64_t rows,
                      int64_t dim, int nth) {
    rows_run((rows_job){.op = ROWS_LN_MISH, .y = y, .x = x, .bias = bias, .add = add, .n = n, .rows = rows,
                        .dim = dim},
             nth);
}
static void p_bias_gelu(float *x, const float *bias, int64_t rows, int64_t dim, int nth) {
    rows_run((rows_job){.op = ROWS_BIAS_GELU, .x = x, .bias = bias, .rows = rows, .dim = dim}, nth);
}
/* y = (y + bias) + x (bias broadcast over rows). */
static void p_bias_add(float *y, const float *bias, const float *x, int64_t rows, int64_t dim, int nth) {
    rows_run((rows_job){.op = ROWS_BIAS_ADD, .y = y, .t = x, .bias = bias, .rows = rows, .dim = dim}, nth);
}

/* CausalResnetBlock1D: in [B][L][cin] → out [B][L][C] (out ≠ in). Conv biases are added in the
 * fused row passes (same float operations as adding them in the GEMM). */
static void resblock(const vx_s3gen_flow *f, const fl_resblock *r, cfm_ws *w, int64_t B, int64_t L, const float *in,
                     float *out, int nth) {
    const int64_t C = f->d.dec_ch, BL = B * L;
    /* Linear(Mish(temb)), broadcast over time after block1 */
    vx_linear(w->tproj, w->tmish, 1, &r->mlp.w, r->mlp.b, 1);
    /* block1: causal conv k3 → LN(channels) → Mish, + the time projection */
    vx_conv1d_tm(w->tmp, in, B, L, r->cin, 3, 1, 2, 0, &r->block1.conv.w, NULL, w->col, nth);
    p_ln_mish(w->a, w->tmp, r->block1.conv.b, &r->block1.ln, w->tproj, BL, C, nth);
    /* block2 */
    vx_conv1d_tm(w->tmp, w->a, B, L, C, 3, 1, 2, 0, &r->block2.conv.w, NULL, w->col, nth);
    p_ln_mish(w->a, w->tmp, r->block2.conv.b, &r->block2.ln, NULL, BL, C, nth);
    /* + res_conv (1×1) of the input */
    vx_linear(out, in, BL, &r->res_conv.w, NULL, nth);
    p_bias_add(out, r->res_conv.b, w->a, BL, C, nth);
}

/* BasicTransformerBlock on h [B][L][C], in place. ln_done: w->a already holds norm1(h) (the
 * previous block computed it with its last residual add); next: the following block's norm1,
 * applied the same way (NULL for the last block). */
static void tblock(const vx_s3gen_flow *f, const fl_tblock *tb, cfm_ws *w, int64_t B, int64_t L, float *h,
                   int ln_done, const fl_norm *next, int nth) {
    const vx_s3gen_flow_dims *d = &f->d;
    const int64_t C = d->dec_ch, H = d->dec_heads, hd = d->dec_head_dim, HD = H * hd, BL = B * L;
    if (!ln_done) p_res_ln(h, NULL, NULL, w->a, &tb->norm1, BL, C, nth);
    vx_linear(w->q, w->a, BL, &tb->q.w, NULL, nth);
    vx_linear(w->k, w->a, BL, &tb->k.w, NULL, nth);
    vx_linear(w->v, w->a, BL, &tb->v.w, NULL, nth);
    const float scale = (float)(1.0 / sqrt((double)hd));
    for (int64_t b = 0; b < B; b++)
        vx_attention_lowp(w->att + b * L * HD, w->q + b * L * HD, w->k + b * L * HD, w->v + b * L * HD, L, L,
                          (int)H, (int)H, (int)hd, HD, scale, 0, tb->q.w.act_bf16, nth);
    vx_linear(w->tmp, w->att, BL, &tb->out.w, NULL, nth);
    p_res_ln(h, w->tmp, tb->out.b, w->a, &tb->norm3, BL, C, nth);
    vx_linear(w->ff, w->a, BL, &tb->ff1.w, NULL, nth);
    p_bias_gelu(w->ff, tb->ff1.b, BL, d->dec_ffn, nth);
    vx_linear(w->tmp, w->ff, BL, &tb->ff2.w, NULL, nth);
    p_res_ln(h, w->tmp, tb->ff2.b, next ? w->a : NULL, next, BL, C, nth);
}

/* Debug capture of row 0: channel-major [1][C][L] (cm = 1) or time-major [1][L][C]. */
static vocis_status cap(vx_st_writer *dbg, const char *tag, const char *what, const float *x, int64_t L, int64_t C,
                        int cm, vx_err *err) {
    char name[128];
    snprintf(name, sizeof name, "est_%s_%s", tag ? tag : "", what);
    if (!cm) return vx_st_writer_add(dbg, name, VX_F32, VX_DIMS(1, L, C), x, err);
    float *t = vx_malloc(err, (size_t)(L * C) * sizeof(float), name);
    if (!t) return err->code;
    vx_transpose(t, x, L, C);
    vocis_status st = vx_st_writer_add(dbg, name, VX_F32, VX_DIMS(1, C, L), t, err);
    free(t);
    return st;
}

/* One U-Net stage: resblock, transformer blocks, optional post conv. *ph is the
 * stage output (pointers to h0/h1 swap as needed). */
static vocis_status stage(const vx_s3gen_flow *f, const fl_stage *s, cfm_ws *w, int64_t B, int64_t L, const float *in,
                          float **ph, float **palt, int has_post, float *skip_copy, int nth, vx_st_writer *dbg,
                          const char *tag, const char *sname, const char *post_name, vx_err *err) {
    const int64_t C = f->d.dec_ch;
    char nb[64];
    float *h = *ph;
    resblock(f, &s->res, w, B, L, in, h, nth);
    if (dbg) {
        snprintf(nb, sizeof nb, "%s_resnet", sname);
        VX_TRY(cap(dbg, tag, nb, h, L, C, 1, err));
    }
    for (int64_t n = 0; n < f->d.n_tblocks; n++)
        tblock(f, &s->tb[n], w, B, L, h, n > 0, n + 1 < f->d.n_tblocks ? &s->tb[n + 1].norm1 : NULL, nth);
    if (dbg) {
        snprintf(nb, sizeof nb, "%s_transformer_last", sname);
        VX_TRY(cap(dbg, tag, nb, h, L, C, 0, err));
    }
    if (skip_copy) memcpy(skip_copy, h, (size_t)(B * L * C) * sizeof(float));
    if (has_post) {
        float *o = *palt;
        vx_conv1d_tm(o, h, B, L, C, 3, 1, 2, 0, &s->post.w, s->post.b, w->col, nth);
        *palt = h;
        *ph = o;
        if (dbg) {
            snprintf(nb, sizeof nb, "%s_%s", sname, post_name);
            VX_TRY(cap(dbg, tag, nb, o, L, C, 1, err));
        }
    }
    return VOCIS_OK;
}

vocis_status cfm_estimator_forward(const vx_s3gen_flow *f, cfm_ws *w, int64_t B, int64_t L, const float *x,
                                   const float *mu, const float *spk, const float *cond, float t, float *v,
                                   int nthreads, vx_st_writer *dbg, const char *tag, vx_err *err) {
    const vx_s3gen_flow_dims *d = &f->d;
    const int64_t M = d->n_mels, C = d->dec_ch, IN = 4 * M;
    if (B > CFM_B || L > w->L) return vx_fail(err, VOCIS_E_INTERNAL, "estimator workspace too small");
    if (!tag) dbg = NULL;

    /* time embedding: te = [sin(1000·t·ω_κ), cos(…)], ω_κ = exp(−κ·ln(10000)/(half − 1)); MLP (SiLU) */
    const int64_t half = IN / 2;
    const float sc = (float)-(log(10000.0) / (double)(half - 1));
    for (int pass = 0; pass < (d->meanflow ? 2 : 1); pass++) {
        const float tt = pass ? w->r : t;
        for (int64_t i = 0; i < half; i++) {
            float a = (1000.0f * tt) * expf((float)i * sc);
            w->te[i] = sinf(a);
            w->te[half + i] = cosf(a);
        }
        vx_linear(w->t1, w->te, 1, &f->time1.w, f->time1.b, 1);
        vx_silu(w->t1, d->temb_dim);
        vx_linear(d->meanflow ? w->tcat + pass * d->temb_dim : w->temb, w->t1, 1, &f->time2.w, f->time2.b, 1);
    }
    if (d->meanflow) { /* MeanFlow: temb = time_embed_mixer([time_mlp(t) | time_mlp(r)]) */
        vx_linear(w->temb, w->tcat, 1, &f->time_mixer.w, NULL, 1);
        if (dbg) {
            const char *what[3] = {"time_mlp_t", "time_mlp_r", "time_embed_mixer"};
            const float *src[3] = {w->tcat, w->tcat + d->temb_dim, w->temb};
            for (int i = 0; i < 3; i++) {
                char name[80];
                snprintf(name, sizeof name, "est_%s_%s", tag, what[i]);
                VX_TRY(vx_st_writer_add(dbg, name, VX_F32, VX_DIMS(1, d->temb_dim), src[i], err));
            }
        }
    }
    if (dbg && !d->meanflow) {
        char name[64];
        snprintf(name, sizeof name, "est_%s_time_mlp", tag);
        float *tt = vx_malloc(err, (size_t)(B * d->temb_dim) * sizeof(float), name);
        if (!tt) return err->code;
        for (int64_t b = 0; b < B; b++) memcpy(tt + b * d->temb_dim, w->temb, (size_t)d->temb_dim * sizeof(float));
        vocis_status st = vx_st_writer_add(dbg, name, VX_F32, VX_DIMS(B, d->temb_dim), tt, err);
        free(tt);
        VX_TRY(st);
    }
    memcpy(w->tmish, w->temb, (size_t)d->temb_dim * sizeof(float));
    vx_mish(w->tmish, d->temb_dim);

    /* input stack: [x | μ | spk | cond] per frame   [B][L][4M] */
    for (int64_t b = 0; b < B; b++)
        for (int64_t l = 0; l < L; l++) {
            float *o = w->cat + (b * L + l) * IN;
            const int64_t src = (b * L + l) * M;
            memcpy(o, x + src, (size_t)M * sizeof(float));
            memcpy(o + M, mu + src, (size_t)M * sizeof(float));
            memcpy(o + 2 * M, spk + b * M, (size_t)M * sizeof(float));
            memcpy(o + 3 * M, cond + src, (size_t)M * sizeof(float));
        }

    float *h = w->h0, *alt = w->h1;
    VX_TRY(stage(f, &f->down, w, B, L, w->cat, &h, &alt, 1, w->skip, nthreads, dbg, tag, "down0", "downsample", err));
    for (int64_t m = 0; m < d->n_mid; m++) {
        char sn[32];
        snprintf(sn, sizeof sn, "mid%lld", (long long)m);
        /* resblock needs out ≠ in: run into alt, then swap */
        float *in = h;
        h = alt;
        alt = in;
        VX_TRY(stage(f, &f->mid[m], w, B, L, in, &h, &alt, 0, NULL, nthreads, dbg, tag, sn, NULL, err));
    }
    /* up: concat(h, skip) along channels   [B][L][2C] */
    for (int64_t i = 0; i < B * L; i++) {
        memcpy(w->cat + i * 2 * C, h + i * C, (size_t)C * sizeof(float));
        memcpy(w->cat + i * 2 * C + C, w->skip + i * C, (size_t)C * sizeof(float));
    }
    VX_TRY(stage(f, &f->up_stage, w, B, L, w->cat, &h, &alt, 1, NULL, nthreads, dbg, tag, "up0", "upsample", err));
    /* final block + 1×1 projection to n_mels */
    vx_conv1d_tm(w->tmp, h, B, L, C, 3, 1, 2, 0, &f->final_block.conv.w, NULL, w->col, nthreads);
    p_ln_mish(w->a, w->tmp, f->final_block.conv.b, &f->final_block.ln, NULL, B * L, C, nthreads);
    if (dbg) VX_TRY(cap(dbg, tag, "final_block", w->a, L, C, 1, err));
    vx_linear(v, w->a, B * L, &f->final_proj.w, f->final_proj.b, nthreads);
    return VOCIS_OK;
}

vocis_status vx_s3gen_flow_bench_step(const vx_s3gen_flow *f, int64_t L, int reps, int nthreads, double *sec_per_step,
                                      vx_err *err) {
    const int64_t M = f->d.n_mels, n = CFM_B * L * M;
    if (L < 1 || reps < 1) return vx_fail(err, VOCIS_E_ARG, "s3gen bench: length and repetitions must be positive");
    cfm_ws *w = NULL;
    VX_TRY(cfm_ws_new(f, L, &w, err));
    float *buf = vx_calloc(err, (size_t)(4 * n + CFM_B * M), sizeof(float), "bench inputs");
    if (!buf) {
        cfm_ws_free(w);
        return err->code;
    }
    uint32_t s = 12345u;
    for (int64_t i = 0; i < 4 * n + CFM_B * M; i++) {
        s = s * 1664525u + 1013904223u;
        buf[i] = (float)((s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
    }
    float *x = buf, *mu = buf + n, *cond = buf + 2 * n, *v = buf + 3 * n, *spk = buf + 4 * n;
    struct timespec t0, t1;
    vocis_status st = VOCIS_OK;
    /* one warm-up evaluation, then the timed ones */
    st = cfm_estimator_forward(f, w, CFM_B, L, x, mu, spk, cond, 0.5f, v, nthreads, NULL, NULL, err);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < reps && st == VOCIS_OK; r++)
        st = cfm_estimator_forward(f, w, CFM_B, L, x, mu, spk, cond, 0.5f, v, nthreads, NULL, NULL, err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *sec_per_step = ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / reps;
    free(buf);
    cfm_ws_free(w);
    return st;
}
