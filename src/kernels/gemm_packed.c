/* The many-row GEMM: C[M,N] = alpha·op(A)·op(B) + beta·C (+ bias per column),
 * with both operands packed into cache blocks and an AVX-512 register tile.
 *
 * Why our own: OpenBLAS's sgemm speed depends on which core it runs, and an
 * environment may force its AVX2 Haswell core on an AVX-512 CPU
 * (OPENBLAS_CORETYPE), halving the rate; and OpenBLAS has no bf16 GEMM with
 * float32 activations. Two register tiles share one blocking scheme:
 *   f32   14 × 32 tile of vfmadd231ps, A broadcast from memory;
 *   bf16  14 × 32 tile of vdpbf16ps (AVX512_BF16): A and B rounded to bf16
 *         and packed as k-pairs, float32 accumulation — twice the FLOPs per
 *         instruction. Used only when the caller allows rounding of the
 *         activations (the bf16 precision mode).
 *
 * Blocking (BLIS order): for each NC block of columns and KC block of k,
 * pack B (KC × NC, in NR-column micro-panels); for each MC block of rows pack
 * A (MC × KC, as contiguous rows); then every NR micro-panel of B stays in L1
 * while the tiles broadcast A's rows from L2.
 * Packed layouts (p = k-pair index for bf16; rows are `kstep` entries long):
 *   A f32  [m][k] floats       A bf16 [m][p] u32 (a[m][2p] | a[m][2p+1] << 16)
 *   B f32  [k][NR] floats      B bf16 [p][NR] u32 (b[2p][n] | b[2p+1][n] << 16)
 * Rows or columns past the matrix edge are packed as zeros; odd K gets a
 * zero partner in its last pair. Packing a linear layer's W (rows of K)
 * into [k][NR] is a transpose, done 16 × 16 in registers. Each C element is
 * one tile's sum in a fixed k order, so the result does not depend on the
 * thread split. */
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/isa.h"

#define MR 14
#define NR 32
/* k per block (entries of A's rows and B's micro-panels per pass over C).
 * f32 at 256 beat 128 by ~10 % on the CFM shapes (2 threads, M=1400:
 * 428-456 vs 381-415 GFLOP/s) although A rows + B micro-panel (46 KiB) then
 * overflow that machine's 32 KiB L1d (the tiles' A loads come partly from
 * L2); half as many passes over C pay for it. */
#ifndef KC
#define KC 256
#endif
#ifndef KC_F32
#define KC_F32 256
#endif
#define MC (MR * 10)
#define NC 1024

#define VX_TARGET_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")))

typedef struct gemm_args {
    int ta, tb;
    int64_t M, N, K;
    float alpha, beta;
    const float *A;
    int64_t lda;
    const void *B;
    vx_dtype bdt;
    int64_t ldb;
    float *C;
    int64_t ldc;
    const float *bias;
    int bf16; /* 1: the vdpbf16ps tile */
} gemm_args;

/* ---- packing ---- */

static inline float a_at(const gemm_args *g, int64_t m, int64_t k) {
    return g->ta ? g->A[k * g->lda + m] : g->A[m * g->lda + k];
}

static inline float b_at(const gemm_args *g, int64_t k, int64_t n) {
    int64_t i = g->tb ? n * g->ldb + k : k * g->ldb + n;
    switch (g->bdt) {
    case VX_BF16: return vx_bf16_to_f32(((const uint16_t *)g->B)[i]);
    case VX_F16: return vx_f16_to_f32(((const uint16_t *)g->B)[i]);
    default: return ((const float *)g->B)[i];
    }
}

static inline uint16_t b16_at(const gemm_args *g, int64_t k, int64_t n) {
    if (g->bdt == VX_BF16) {
        int64_t i = g->tb ? n * g->ldb + k : k * g->ldb + n;
        return ((const uint16_t *)g->B)[i];
    }
    return vx_f32_to_bf16(b_at(g, k, n));
}

/* A rows [m0, m0 + mc) × k [k0, k0 + kc) as a row-major block of `ld`
 * entries per row (rows past mc up to the next MR are zero): the tiles
 * broadcast A straight from these rows. bf16: entry = one k-pair. */
static void pack_a_f32(float *dst, int64_t ld, const gemm_args *g, int64_t m0, int64_t mc, int64_t k0, int64_t kc) {
    int64_t rows = (mc + MR - 1) / MR * MR;
    for (int64_t i = 0; i < rows; i++) {
        float *d = dst + i * ld;
        if (i >= mc)
            memset(d, 0, (size_t)kc * sizeof(float));
        else if (!g->ta)
            memcpy(d, g->A + (m0 + i) * g->lda + k0, (size_t)kc * sizeof(float));
        else
            for (int64_t k = 0; k < kc; k++) d[k] = g->A[(k0 + k) * g->lda + m0 + i];
    }
}

/* 32 floats → 16 bf16 pairs (round to nearest even, as vx_f32_to_bf16 for finite values). */
VX_INLINE VX_TARGET_AVX512BF16 __m512i bf16_pairs(__m512 lo16, __m512 hi16) {
    return (__m512i)_mm512_cvtne2ps_pbh(hi16, lo16);
}

static VX_TARGET_AVX512BF16 void pack_a_bf16(uint32_t *dst, int64_t ld, const gemm_args *g, int64_t m0, int64_t mc,
                                             int64_t k0, int64_t kc) {
    int64_t rows = (mc + MR - 1) / MR * MR, kp = (kc + 1) / 2;
    for (int64_t i = 0; i < rows; i++) {
        uint32_t *d = dst + i * ld;
        if (i >= mc) {
            memset(d, 0, (size_t)kp * sizeof(uint32_t));
            continue;
        }
        int64_t p = 0;
        if (!g->ta) {
            const float *src = g->A + (m0 + i) * g->lda + k0;
            for (; 2 * p + 32 <= kc; p += 16)
                _mm512_storeu_si512(d + p, bf16_pairs(_mm512_loadu_ps(src + 2 * p), _mm512_loadu_ps(src + 2 * p + 16)));
        }
        for (; p < kp; p++) {
            int64_t k = k0 + 2 * p;
            uint32_t lo = vx_f32_to_bf16(a_at(g, m0 + i, k));
            uint32_t hi = 2 * p + 1 < kc ? vx_f32_to_bf16(a_at(g, m0 + i, k + 1)) : 0;
            d[p] = lo | hi << 16;
        }
    }
}

/* 16 × 16 block of 32-bit values in registers: dst[c·ldd + r] = r[r][c]. */
VX_INLINE VX_TARGET_AVX512 void transpose16_store(__m512i r[16], uint32_t *dst, int64_t ldd) {
    __m512i t[16];
    _Pragma("GCC unroll 8")
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    _Pragma("GCC unroll 4")
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    /* r[4q + j] holds, per 128-bit lane L, column 4L + j' of rows 4q..4q+3 */
    _Pragma("GCC unroll 4")
    for (int j = 0; j < 4; j++) {
        __m512i a = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x88), b = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xDD);
        __m512i c = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x88), d = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xDD);
        t[j] = _mm512_shuffle_i32x4(a, c, 0x88);
        t[8 + j] = _mm512_shuffle_i32x4(a, c, 0xDD);
        t[4 + j] = _mm512_shuffle_i32x4(b, d, 0x88);
        t[12 + j] = _mm512_shuffle_i32x4(b, d, 0xDD);
    }
    _Pragma("GCC unroll 16")
    for (int i = 0; i < 16; i++) _mm512_storeu_si512(dst + i * ldd, t[i]);
}

/* dst[c·ldd + r] = src[r·lds + c] for a 16 × 16 block of 32-bit values. */
VX_INLINE VX_TARGET_AVX512 void transpose16(const uint32_t *src, int64_t lds, uint32_t *dst, int64_t ldd) {
    __m512i r[16];
    _Pragma("GCC unroll 16")
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_si512(src + i * lds);
    transpose16_store(r, dst, ldd);
}

/* The same from 16 rows of bf16, widened to float32 on the way. */
VX_INLINE VX_TARGET_AVX512 void transpose16_bf16(const uint16_t *src, int64_t lds, float *dst, int64_t ldd) {
    __m512i r[16];
    _Pragma("GCC unroll 16")
    for (int i = 0; i < 16; i++)
        r[i] = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i * lds))), 16);
    transpose16_store(r, (uint32_t *)dst, ldd);
}

/* Full 16-column × 16-entry blocks of a micro-panel from rows of 32-bit
 * entries (W rows: entry = float or bf16 pair); returns the entries done. */
static VX_TARGET_AVX512 int64_t panel_transpose(uint32_t *d, const uint32_t *src, int64_t lds, int64_t cols,
                                                int64_t len) {
    if (cols != NR) return 0;
    int64_t e = 0;
    for (; e + 16 <= len; e += 16)
        for (int j = 0; j < NR; j += 16) transpose16(src + j * lds + e, lds, d + e * NR + j, NR);
    return e;
}

/* B k [k0, k0 + kc) × columns [n0, n0 + nc) into NR-column micro-panels. */
static VX_TARGET_AVX512 void pack_b_f32(float *dst, const gemm_args *g, int64_t k0, int64_t kc, int64_t n0,
                                         int64_t nc) {
    for (int64_t j0 = 0; j0 < nc; j0 += NR) {
        int64_t cols = nc - j0 < NR ? nc - j0 : NR;
        float *d = dst + j0 * kc;
        if (g->tb && g->bdt == VX_F32) {
            const float *src = (const float *)g->B + (n0 + j0) * g->ldb + k0;
            int64_t k1 = panel_transpose((uint32_t *)d, (const uint32_t *)src, g->ldb, cols, kc);
            for (int64_t j = 0; j < cols; j++)
                for (int64_t k = k1; k < kc; k++) d[k * NR + j] = src[j * g->ldb + k];
        } else if (!g->tb && g->bdt == VX_F32) {
            for (int64_t k = 0; k < kc; k++)
                memcpy(d + k * NR, (const float *)g->B + (k0 + k) * g->ldb + n0 + j0, (size_t)cols * sizeof(float));
        } else if (g->tb && g->bdt == VX_BF16) {
            const uint16_t *src = (const uint16_t *)g->B + (n0 + j0) * g->ldb + k0;
            int64_t k1 = 0;
            if (cols == NR)
                for (; k1 + 16 <= kc; k1 += 16)
                    for (int j = 0; j < NR; j += 16) transpose16_bf16(src + j * g->ldb + k1, g->ldb, d + k1 * NR + j, NR);
            for (int64_t j = 0; j < cols; j++)
                for (int64_t k = k1; k < kc; k++) d[k * NR + j] = vx_bf16_to_f32(src[j * g->ldb + k]);
        } else {
            for (int64_t j = 0; j < cols; j++)
                for (int64_t k = 0; k < kc; k++) d[k * NR + j] = b_at(g, k0 + k, n0 + j0 + j);
        }
        for (int64_t j = cols; j < NR; j++)
            for (int64_t k = 0; k < kc; k++) d[k * NR + j] = 0.0f;
    }
}

static VX_TARGET_AVX512BF16 void pack_b_bf16(uint32_t *dst, const gemm_args *g, int64_t k0, int64_t kc, int64_t n0,
                                             int64_t nc) {
    int64_t kp = (kc + 1) / 2;
    /* W rows of bf16 hold the pairs as adjacent 32-bit entries */
    int rows_of_pairs = g->tb && g->bdt == VX_BF16 && !(k0 & 1) && !(g->ldb & 1) && !((uintptr_t)g->B & 3);
    for (int64_t j0 = 0; j0 < nc; j0 += NR) {
        int64_t cols = nc - j0 < NR ? nc - j0 : NR;
        uint32_t *d = dst + j0 * kp;
        int64_t p1 = 0;
        if (rows_of_pairs) {
            const uint32_t *src = (const uint32_t *)((const uint16_t *)g->B + (n0 + j0) * g->ldb + k0);
            int64_t full = kc / 2; /* pairs with both halves inside this k block */
            p1 = panel_transpose(d, src, g->ldb / 2, cols, full);
            for (int64_t j = 0; j < cols; j++)
                for (int64_t p = p1; p < full; p++) d[p * NR + j] = src[j * (g->ldb / 2) + p];
            p1 = full;
        } else if (g->tb && g->bdt == VX_F32 && cols == NR) {
            const float *src = (const float *)g->B + (n0 + j0) * g->ldb + k0;
            for (; p1 + 16 <= kc / 2; p1 += 16)
                for (int j = 0; j < NR; j += 16) {
                    __m512i r[16];
                    _Pragma("GCC unroll 16")
                    for (int i = 0; i < 16; i++) {
                        const float *row = src + (j + i) * g->ldb + 2 * p1;
                        r[i] = bf16_pairs(_mm512_loadu_ps(row), _mm512_loadu_ps(row + 16));
                    }
                    transpose16_store(r, d + p1 * NR + j, NR);
                }
        } else if (!g->tb && g->bdt == VX_F32 && cols == NR) {
            const float *b = g->B;
            for (; 2 * p1 + 1 < kc; p1++) {
                const float *r0 = b + (k0 + 2 * p1) * g->ldb + n0 + j0, *r1 = r0 + g->ldb;
                for (int j = 0; j < NR; j += 16) {
                    __m512i lo = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(r0 + j)));
                    __m512i hi = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(r1 + j)));
                    _mm512_storeu_si512(d + p1 * NR + j, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
                }
            }
        }
        for (int64_t j = 0; j < NR; j++) {
            int64_t n = n0 + j0 + j;
            for (int64_t p = p1; p < kp; p++) {
                if (j >= cols) {
                    d[p * NR + j] = 0;
                    continue;
                }
                int64_t k = k0 + 2 * p;
                uint32_t lo = b16_at(g, k, n);
                uint32_t hi = 2 * p + 1 < kc ? b16_at(g, k + 1, n) : 0;
                d[p * NR + j] = lo | hi << 16;
            }
        }
        if (p1 > 0)
            for (int64_t j = cols; j < NR; j++)
                for (int64_t p = 0; p < p1; p++) d[p * NR + j] = 0;
    }
}

/* ---- register tiles ----
 * acc[MR][2] holds C[i][0..31]; store() writes rows < mr, columns < nr:
 * first k block: C = alpha·acc (+ beta·C) (+ bias); later blocks: C += alpha·acc. */

typedef struct tile_out {
    float *C;
    int64_t ldc;
    int mr, nr, first;
    float alpha, beta;
    const float *bias; /* at this tile's first column, or NULL */
} tile_out;

VX_INLINE VX_TARGET_AVX512 void tile_store(__m512 acc[MR][2], const tile_out *o) {
    __mmask16 m0 = o->nr >= 16 ? 0xFFFF : (__mmask16)((1u << o->nr) - 1);
    __mmask16 m1 = o->nr >= 32 ? 0xFFFF : o->nr <= 16 ? 0 : (__mmask16)((1u << (o->nr - 16)) - 1);
    __m512 al = _mm512_set1_ps(o->alpha), be = _mm512_set1_ps(o->beta);
    __m512 b0 = o->bias && o->first ? _mm512_maskz_loadu_ps(m0, o->bias) : _mm512_setzero_ps();
    __m512 b1 = o->bias && o->first ? _mm512_maskz_loadu_ps(m1, o->bias + 16) : _mm512_setzero_ps();
    for (int i = 0; i < o->mr; i++) {
        float *c = o->C + i * o->ldc;
        __m512 v0 = _mm512_mul_ps(acc[i][0], al), v1 = _mm512_mul_ps(acc[i][1], al);
        if (!o->first) {
            v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, c));
            v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, c + 16));
        } else {
            if (o->beta != 0.0f) {
                v0 = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(m0, c), v0);
                v1 = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(m1, c + 16), v1);
            }
            v0 = _mm512_add_ps(v0, b0);
            v1 = _mm512_add_ps(v1, b1);
        }
        _mm512_mask_storeu_ps(c, m0, v0);
        _mm512_mask_storeu_ps(c + 16, m1, v1);
    }
}

static VX_TARGET_AVX512 void tile_f32(int64_t kc, const float *Ap, int64_t lda, const float *Bp, const tile_out *o) {
    __m512 acc[MR][2];
    _Pragma("GCC unroll 14")
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(Bp), b1 = _mm512_loadu_ps(Bp + 16);
        _mm_prefetch((const char *)(Bp + 8 * NR), _MM_HINT_T0);
        _Pragma("GCC unroll 14")
        for (int i = 0; i < MR; i++) {
            __m512 a = _mm512_set1_ps(Ap[i * lda + k]);
            acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
        }
        Bp += NR;
    }
    tile_store(acc, o);
}

static VX_TARGET_AVX512BF16 void tile_bf16(int64_t kp, const uint32_t *Ap, int64_t lda, const uint32_t *Bp,
                                           const tile_out *o) {
    __m512 acc[MR][2];
    _Pragma("GCC unroll 14")
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t p = 0; p < kp; p++) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(Bp), b1 = (__m512bh)_mm512_loadu_si512(Bp + 16);
        _mm_prefetch((const char *)(Bp + 8 * NR), _MM_HINT_T0);
        _Pragma("GCC unroll 14")
        for (int i = 0; i < MR; i++) {
            __m512bh a = (__m512bh)_mm512_set1_epi32((int)Ap[i * lda + p]);
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], a, b0);
            acc[i][1] = _mm512_dpbf16_ps(acc[i][1], a, b1);
        }
        Bp += NR;
    }
    tile_store(acc, o);
}

/* ---- the two pool regions of one column block ----
 * B's columns [jc, jc + nc) are packed once, for all k, into a slab shared by
 * the threads: k block b (k from b·kcb) at b·kstep_full·ncp entries, its
 * micro-panel j0 at j0·kstep within. Then row chunks of MC rows (× column
 * chunks of whole micro-panels when rows are few) each pack their A block per
 * k block and run its tiles over the slab, k blocks in order. */

typedef struct gemm_job {
    const gemm_args *g;
    void *slab;
    int64_t jc, nc, ncp;   /* column block, its width rounded up to NR */
    int64_t kcb, kstep_full;
    int64_t pack_panels;   /* micro-panels per packing chunk */
    int64_t rows_per, cols_per, n_rowc, n_colc;
    _Atomic int ok;
} gemm_job;

static inline int64_t k_blocks(const gemm_job *j) { return j->g->K > 0 ? (j->g->K + j->kcb - 1) / j->kcb : 1; }

/* both packed entry kinds (a float, a bf16 pair) are 4 bytes */
static void *slab_block(const gemm_job *j, int64_t b) {
    return (char *)j->slab + (size_t)(b * j->kstep_full * j->ncp) * 4;
}

static void pack_chunk(void *ctx, int64_t c) {
    const gemm_job *j = ctx;
    const gemm_args *g = j->g;
    int64_t npan = j->ncp / NR, ngrp = (npan + j->pack_panels - 1) / j->pack_panels;
    int64_t b = c / ngrp, p0 = c % ngrp * j->pack_panels;
    int64_t pc = b * j->kcb, kc = g->K - pc < j->kcb ? g->K - pc : j->kcb;
    int64_t n0 = p0 * NR, n1 = (p0 + j->pack_panels) * NR < j->nc ? (p0 + j->pack_panels) * NR : j->nc;
    int64_t kstep = g->bf16 ? (kc + 1) / 2 : kc;
    if (g->bf16)
        pack_b_bf16((uint32_t *)slab_block(j, b) + n0 * kstep, g, pc, kc, j->jc + n0, n1 - n0);
    else
        pack_b_f32((float *)slab_block(j, b) + n0 * kstep, g, pc, kc, j->jc + n0, n1 - n0);
}

static void compute_chunk(void *ctx, int64_t c) {
    gemm_job *j = ctx;
    const gemm_args *g = j->g;
    int64_t ic = c / j->n_colc * j->rows_per, j0 = c % j->n_colc * j->cols_per;
    int64_t mc = g->M - ic < j->rows_per ? g->M - ic : j->rows_per;
    int64_t j1 = j0 + j->cols_per < j->nc ? j0 + j->cols_per : j->nc;
    int64_t kstep_max = j->kstep_full;
    void *ap = malloc((size_t)(kstep_max * ((mc + MR - 1) / MR * MR)) * 4 + 64);
    if (!ap) {
        atomic_store(&j->ok, 0);
        return;
    }
    for (int64_t b = 0; b < k_blocks(j); b++) {
        int64_t pc = b * j->kcb, kc = g->K - pc < j->kcb ? g->K - pc : j->kcb;
        int64_t kstep = g->bf16 ? (kc + 1) / 2 : kc; /* packed entries per row/column */
        if (g->bf16)
            pack_a_bf16(ap, kstep, g, ic, mc, pc, kc);
        else
            pack_a_f32(ap, kstep, g, ic, mc, pc, kc);
        const char *bp = slab_block(j, b);
        for (int64_t jr = j0; jr < j1; jr += NR) {
            for (int64_t ir = 0; ir < mc; ir += MR) {
                tile_out o = {g->C + (ic + ir) * g->ldc + j->jc + jr,
                              g->ldc,
                              (int)(mc - ir < MR ? mc - ir : MR),
                              (int)(j1 - jr < NR ? j1 - jr : NR),
                              pc == 0,
                              g->alpha,
                              g->beta,
                              g->bias ? g->bias + j->jc + jr : NULL};
                if (g->bf16)
                    tile_bf16(kstep, (const uint32_t *)ap + ir * kstep, kstep, (const uint32_t *)bp + jr * kstep, &o);
                else
                    tile_f32(kstep, (const float *)ap + ir * kstep, kstep, (const float *)bp + jr * kstep, &o);
            }
        }
    }
    free(ap);
}

int vx_gemm_packed_supported(int isa, int bf16) {
    if (isa < VX_ISA_AVX512) return 0;
    return !bf16 || vx_cpu_has_avx512bf16();
}

int vx_gemm_packed(int isa, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                   int64_t lda, const void *B, vx_dtype bdt, int64_t ldb, float beta, float *C, int64_t ldc,
                   const float *bias, int bf16, int nthreads) {
    if (!vx_gemm_packed_supported(isa, bf16)) return 0;
    if (M <= 0 || N <= 0) return 1;
    gemm_args g = {ta, tb, M, N, K, alpha, beta, A, lda, B, bdt, ldb, C, ldc, bias, bf16};
    if (nthreads < 1) nthreads = 1;
    if ((double)M * N * K < 4e6) nthreads = 1;
    gemm_job j = {.g = &g, .kcb = bf16 ? KC : KC_F32};
    int64_t kc_max = K < j.kcb ? K : j.kcb;
    j.kstep_full = bf16 ? (kc_max + 1) / 2 : kc_max;
    if (j.kstep_full < 1) j.kstep_full = 1;
    int64_t ncap = N < NC ? N : NC;
    ncap = (ncap + NR - 1) / NR * NR;
    j.slab = aligned_alloc(64, ((size_t)(k_blocks(&j) * j.kstep_full * ncap) * 4 + 63) / 64 * 64);
    if (!j.slab) return 0;
    atomic_init(&j.ok, 1);
    for (j.jc = 0; j.jc < N; j.jc += NC) {
        j.nc = N - j.jc < NC ? N - j.jc : NC;
        j.ncp = (j.nc + NR - 1) / NR * NR;
        int64_t npan = j.ncp / NR;
        /* packing: about 4 chunks per thread, whole micro-panels */
        j.pack_panels = nthreads > 1 ? (npan * k_blocks(&j) + 4 * nthreads - 1) / (4 * nthreads) : npan;
        if (j.pack_panels > npan) j.pack_panels = npan;
        if (j.pack_panels < 1) j.pack_panels = 1;
        int64_t ngrp = (npan + j.pack_panels - 1) / j.pack_panels;
        vx_pool_run(nthreads, k_blocks(&j) * ngrp, pack_chunk, &j);
        /* tiles: MC-row chunks; when those are fewer than 4 per thread, also split the columns */
        j.rows_per = M < MC ? (M + MR - 1) / MR * MR : MC;
        j.n_rowc = (M + j.rows_per - 1) / j.rows_per;
        j.n_colc = 1;
        if (nthreads > 1 && j.n_rowc < 4 * nthreads) {
            j.n_colc = (4 * nthreads + j.n_rowc - 1) / j.n_rowc;
            if (j.n_colc > npan) j.n_colc = npan;
        }
        j.cols_per = (npan + j.n_colc - 1) / j.n_colc * NR;
        j.n_colc = (j.nc + j.cols_per - 1) / j.cols_per;
        vx_pool_run(nthreads, j.n_rowc * j.n_colc, compute_chunk, &j);
    }
    free(j.slab);
    return atomic_load(&j.ok);
}
