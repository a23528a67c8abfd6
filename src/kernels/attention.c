/* Scaled dot-product attention over position-major K/V (a KV cache).
 *
 * Few query rows (decode): one pass over the keys per KV head with an
 * online softmax (running max and sum, flash-attention style), so nothing
 * is allocated and K/V are read once for all query heads of a GQA group.
 * Many query rows (prefill, perceiver): per head and block of query rows,
 * S = scale·Q·Kᵀ and O = softmax(S)·V with sgemm into per-thread scratch.
 * A query row that sees no key (causal with nq > nk) gets zeros. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/isa.h"

#define GEMM_MIN_Q 16 /* query rows from which the sgemm path is used */
#define KB 128        /* keys per online-softmax block */
#define CH 16         /* max query heads per decode work item */

/* ---- per-ISA pieces of the online softmax ----
 * scores: s[j] = scale · q·k_j;  expsum: s[j] = exp(s[j] − m), returns Σ;
 * pv: o += Σ_j p[j] · v_j;  k_j = k + j·ks, v_j = v + j·ks. */

static void scores_1(float *s, const float *q, const float *k, int64_t ks, int hd, int64_t nb, float scale) {
    for (int64_t j = 0; j < nb; j++) {
        const float *kj = k + j * ks;
        float p[8] = {0};
        int d = 0;
        for (; d + 8 <= hd; d += 8)
            for (int l = 0; l < 8; l++) p[l] += q[d + l] * kj[d + l];
        float a = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
        for (; d < hd; d++) a += q[d] * kj[d];
        s[j] = a * scale;
    }
}

static float expsum_1(float *s, int64_t nb, float m) {
    float sum = 0;
    for (int64_t j = 0; j < nb; j++) sum += s[j] = expf(s[j] - m);
    return sum;
}

static void pv_1(float *o, const float *p, const float *v, int64_t ks, int hd, int64_t nb) {
    for (int64_t j = 0; j < nb; j++)
        for (int d = 0; d < hd; d++) o[d] += p[j] * v[j * ks + d];
}

static VX_TARGET_AVX2 void scores_2(float *s, const float *q, const float *k, int64_t ks, int hd, int64_t nb,
                                    float scale) {
    for (int64_t j = 0; j < nb; j++) {
        const float *kj = k + j * ks;
        __m256 acc = _mm256_setzero_ps();
        int d = 0;
        for (; d + 8 <= hd; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(kj + d), acc);
        float a = vx_hsum256(acc);
        for (; d < hd; d++) a += q[d] * kj[d];
        s[j] = a * scale;
    }
}

static VX_TARGET_AVX2 float expsum_2(float *s, int64_t nb, float m) {
    __m256 m8 = _mm256_set1_ps(m), acc = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= nb; j += 8) {
        __m256 e = vx_exp256(_mm256_sub_ps(_mm256_loadu_ps(s + j), m8));
        _mm256_storeu_ps(s + j, e);
        acc = _mm256_add_ps(acc, e);
    }
    float sum = vx_hsum256(acc);
    for (; j < nb; j++) sum += s[j] = expf(s[j] - m);
    return sum;
}

static VX_TARGET_AVX2 void pv_2(float *o, const float *p, const float *v, int64_t ks, int hd, int64_t nb) {
    int d0 = 0;
    for (; d0 + 32 <= hd; d0 += 32) {
        __m256 a0 = _mm256_loadu_ps(o + d0), a1 = _mm256_loadu_ps(o + d0 + 8);
        __m256 a2 = _mm256_loadu_ps(o + d0 + 16), a3 = _mm256_loadu_ps(o + d0 + 24);
        for (int64_t j = 0; j < nb; j++) {
            const float *vj = v + j * ks + d0;
            __m256 pj = _mm256_set1_ps(p[j]);
            a0 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj), a0);
            a1 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 8), a1);
            a2 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 16), a2);
            a3 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 24), a3);
        }
        _mm256_storeu_ps(o + d0, a0);
        _mm256_storeu_ps(o + d0 + 8, a1);
        _mm256_storeu_ps(o + d0 + 16, a2);
        _mm256_storeu_ps(o + d0 + 24, a3);
    }
    for (; d0 + 8 <= hd; d0 += 8) {
        __m256 a = _mm256_loadu_ps(o + d0);
        for (int64_t j = 0; j < nb; j++) a = _mm256_fmadd_ps(_mm256_set1_ps(p[j]), _mm256_loadu_ps(v + j * ks + d0), a);
        _mm256_storeu_ps(o + d0, a);
    }
    for (int64_t j = 0; d0 < hd && j < nb; j++)
        for (int d = d0; d < hd; d++) o[d] += p[j] * v[j * ks + d];
}

static VX_TARGET_AVX512 void scores_5(float *s, const float *q, const float *k, int64_t ks, int hd, int64_t nb,
                                      float scale) {
    int dv = hd & ~15;
    __mmask16 tm = (__mmask16)((1u << (hd - dv)) - 1);
    int64_t j = 0;
    for (; j + 4 <= nb; j += 4) { /* 4 keys at a time: independent FMA chains */
        const float *k0 = k + j * ks, *k1 = k0 + ks, *k2 = k1 + ks, *k3 = k2 + ks;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int d = 0; d < dv; d += 16) {
            __m512 qv = _mm512_loadu_ps(q + d);
            a0 = _mm512_fmadd_ps(qv, _mm512_loadu_ps(k0 + d), a0);
            a1 = _mm512_fmadd_ps(qv, _mm512_loadu_ps(k1 + d), a1);
            a2 = _mm512_fmadd_ps(qv, _mm512_loadu_ps(k2 + d), a2);
            a3 = _mm512_fmadd_ps(qv, _mm512_loadu_ps(k3 + d), a3);
        }
        if (tm) {
            __m512 qv = _mm512_maskz_loadu_ps(tm, q + dv);
            a0 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(tm, k0 + dv), a0);
            a1 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(tm, k1 + dv), a1);
            a2 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(tm, k2 + dv), a2);
            a3 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(tm, k3 + dv), a3);
        }
        s[j] = vx_hsum512(a0) * scale;
        s[j + 1] = vx_hsum512(a1) * scale;
        s[j + 2] = vx_hsum512(a2) * scale;
        s[j + 3] = vx_hsum512(a3) * scale;
    }
    for (; j < nb; j++) {
        const float *kj = k + j * ks;
        __m512 a = _mm512_setzero_ps();
        for (int d = 0; d < dv; d += 16) a = _mm512_fmadd_ps(_mm512_loadu_ps(q + d), _mm512_loadu_ps(kj + d), a);
        if (tm) a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tm, q + dv), _mm512_maskz_loadu_ps(tm, kj + dv), a);
        s[j] = vx_hsum512(a) * scale;
    }
}

static VX_TARGET_AVX512 float expsum_5(float *s, int64_t nb, float m) {
    __m512 m16 = _mm512_set1_ps(m), acc = _mm512_setzero_ps();
    int64_t j = 0;
    for (; j + 16 <= nb; j += 16) {
        __m512 e = vx_exp512(_mm512_sub_ps(_mm512_loadu_ps(s + j), m16));
        _mm512_storeu_ps(s + j, e);
        acc = _mm512_add_ps(acc, e);
    }
    if (j < nb) {
        __mmask16 tm = (__mmask16)((1u << (nb - j)) - 1);
        __m512 e = _mm512_maskz_mov_ps(tm, vx_exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(tm, s + j), m16)));
        _mm512_mask_storeu_ps(s + j, tm, e);
        acc = _mm512_add_ps(acc, e);
    }
    return vx_hsum512(acc);
}

static VX_TARGET_AVX512 void pv_5(float *o, const float *p, const float *v, int64_t ks, int hd, int64_t nb) {
    /* 128 output dims (8 registers) per pass over the keys; lanes past hd are masked off. */
    for (int d0 = 0; d0 < hd; d0 += 128) {
        __mmask16 mk[8];
        __m512 a[8];
        for (int u = 0; u < 8; u++) {
            int n = hd - d0 - 16 * u;
            mk[u] = n >= 16 ? (__mmask16)0xffff : n > 0 ? (__mmask16)((1u << n) - 1) : 0;
            a[u] = _mm512_maskz_loadu_ps(mk[u], o + d0 + 16 * u);
        }
        for (int64_t j = 0; j < nb; j++) {
            const float *vj = v + j * ks + d0;
            __m512 pj = _mm512_set1_ps(p[j]);
            for (int u = 0; u < 8; u++) a[u] = _mm512_fmadd_ps(pj, _mm512_maskz_loadu_ps(mk[u], vj + 16 * u), a[u]);
        }
        for (int u = 0; u < 8; u++) _mm512_mask_storeu_ps(o + d0 + 16 * u, mk[u], a[u]);
    }
}

typedef struct {
    void (*scores)(float *, const float *, const float *, int64_t, int, int64_t, float);
    float (*expsum)(float *, int64_t, float);
    void (*pv)(float *, const float *, const float *, int64_t, int, int64_t);
} attn_ops;

static const attn_ops ops_tab[3] = {
    {scores_1, expsum_1, pv_1}, {scores_2, expsum_2, pv_2}, {scores_5, expsum_5, pv_5}};

/* Query row i, query heads [h0, h1) all in KV group g, keys [0, lim). */
static void attend_rows(const attn_ops *op, float *out, const float *q, const float *k, const float *v, int64_t i,
                        int64_t lim, int h0, int h1, int g, int n_heads, int hd, int64_t ks, float scale) {
    float s[CH][KB], mx[CH], sum[CH];
    int nh = h1 - h0;
    int64_t qs = (int64_t)n_heads * hd;
    float *o0 = out + i * qs;
    const float *q0 = q + i * qs;
    for (int h = 0; h < nh; h++) {
        memset(o0 + (int64_t)(h0 + h) * hd, 0, (size_t)hd * sizeof(float));
        mx[h] = -INFINITY;
        sum[h] = 0;
    }
    k += (int64_t)g * hd;
    v += (int64_t)g * hd;
    for (int64_t j0 = 0; j0 < lim; j0 += KB) {
        int64_t nb = lim - j0 < KB ? lim - j0 : KB;
        for (int h = 0; h < nh; h++) {
            float *o = o0 + (int64_t)(h0 + h) * hd;
            op->scores(s[h], q0 + (int64_t)(h0 + h) * hd, k + j0 * ks, ks, hd, nb, scale);
            float m = mx[h];
            for (int64_t j = 0; j < nb; j++) m = s[h][j] > m ? s[h][j] : m;
            if (m == -INFINITY) continue; /* only −inf scores so far */
            if (m > mx[h] && mx[h] != -INFINITY) {
                float c = expf(mx[h] - m);
                sum[h] *= c;
                vx_scale(o, c, hd);
            }
            mx[h] = m;
            sum[h] += op->expsum(s[h], nb, m);
            op->pv(o, s[h], v + j0 * ks, ks, hd, nb);
        }
    }
    for (int h = 0; h < nh; h++) {
        float *o = o0 + (int64_t)(h0 + h) * hd;
        if (sum[h] > 0)
            vx_scale(o, 1.0f / sum[h], hd);
        else
            memset(o, 0, (size_t)hd * sizeof(float));
    }
}

static int64_t visible(int causal, int64_t nq, int64_t nk, int64_t i) {
    if (!causal) return nk;
    int64_t lim = nk - nq + i + 1;
    return lim < 0 ? 0 : lim > nk ? nk : lim;
}

static void attention_rows(const attn_ops *op, float *out, const float *q, const float *k, const float *v,
                           int64_t nq, int64_t nk, int n_heads, int n_kv_heads, int hd, int64_t ks, float scale,
                           int causal, int nthreads) {
    int hpg = n_heads / n_kv_heads;
    int64_t base = (int64_t)n_kv_heads * nq;
    /* Split a group's heads when there are too few (group, row) items for the threads. */
    int nchunk = base < nthreads ? (int)((nthreads + base - 1) / base) : 1;
    if (nchunk > hpg) nchunk = hpg;
    int chunk = (hpg + nchunk - 1) / nchunk;
    if (chunk > CH) chunk = CH;
    nchunk = (hpg + chunk - 1) / chunk;
    int64_t items = base * nchunk;
    if ((double)nq * nk * n_heads * hd < 65536) nthreads = 1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int64_t it = 0; it < items; it++) {
        int c = (int)(it % nchunk);
        int g = (int)(it / nchunk % n_kv_heads);
        int64_t i = it / nchunk / n_kv_heads;
        int h0 = g * hpg + c * chunk, h1 = h0 + chunk < (g + 1) * hpg ? h0 + chunk : (g + 1) * hpg;
        attend_rows(op, out, q, k, v, i, visible(causal, nq, nk, i), h0, h1, g, n_heads, hd, ks, scale);
    }
}

/* Returns 0 if a thread could not get its scratch (the caller then uses the row path). */
static int attention_gemm(int isa, float *out, const float *q, const float *k, const float *v, int64_t nq,
                          int64_t nk, int n_heads, int n_kv_heads, int hd, int64_t ks, float scale, int causal,
                          int nthreads) {
    int hpg = n_heads / n_kv_heads;
    int64_t qs = (int64_t)n_heads * hd;
    int64_t qb = (1 << 20) / (nk > 0 ? nk : 1); /* ≤ 4 MiB of scores per thread */
    qb = qb < 16 ? 16 : qb > 64 ? 64 : qb;
    int64_t nblk = (nq + qb - 1) / qb;
    int ok = 1;
#pragma omp parallel num_threads(nthreads) reduction(&& : ok)
    {
        float *S = malloc((size_t)qb * (size_t)(nk > 0 ? nk : 1) * sizeof(float));
        if (!S) ok = 0;
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < (int64_t)n_heads * nblk; it++) {
            if (!S) continue;
            int h = (int)(it % n_heads), g = h / hpg;
            int64_t i0 = it / n_heads * qb, nb = nq - i0 < qb ? nq - i0 : qb;
            int64_t kend = visible(causal, nq, nk, i0 + nb - 1);
            float *o = out + i0 * qs + (int64_t)h * hd;
            if (kend == 0) {
                for (int64_t r = 0; r < nb; r++) memset(o + r * qs, 0, (size_t)hd * sizeof(float));
                continue;
            }
            /* S[nb, kend] = scale · Q_h · K_gᵀ */
            vx_gemm_f32(0, 1, nb, kend, hd, scale, q + i0 * qs + (int64_t)h * hd, qs, k + (int64_t)g * hd, ks, 0.0f,
                        S, kend, 1);
            for (int64_t r = 0; r < nb; r++) {
                int64_t lim = visible(causal, nq, nk, i0 + r);
                vx_softmax_isa(isa, S + r * kend, lim);
                memset(S + r * kend + lim, 0, (size_t)(kend - lim) * sizeof(float));
            }
            /* O[nb, hd] = S · V_g */
            vx_gemm_f32(0, 0, nb, hd, kend, 1.0f, S, kend, v + (int64_t)g * hd, ks, 0.0f, o, qs, 1);
        }
        free(S);
    }
    return ok;
}

void vx_attention_isa(int isa, float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                      int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                      int nthreads) {
    if (nq <= 0 || n_heads <= 0) return;
    if (nthreads < 1) nthreads = 1;
    if (nq >= GEMM_MIN_Q &&
        attention_gemm(isa, out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal, nthreads))
        return;
    attention_rows(&ops_tab[isa], out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal,
                   nthreads);
}

void vx_attention(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk, int n_heads,
                  int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal, int nthreads) {
    vx_attention_isa(vx_cpu_isa(), out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal,
                     nthreads);
}
