/* Linear layers with q8 weights (the q8 precision mode, kernels/precision.h):
 * y = x·Wᵀ + b, W int8 with one float scale per 32 values of a row (layout:
 * precision.h), x and y float32. Reached through vx_linear.
 *
 * Small M (decode, CFG pairs; M < Q8_PANEL_MIN_M) should be memory-bound:
 * the point of q8 is to stream 1.125 bytes per weight instead of bf16's 2.
 * Dequantizing to f32 in registers costs too many instructions for that at
 * 2 rows, so each call first quantizes the x rows per block of 32 as well
 * (precision.h VX_Q8_XPARTS: two int8 parts h + l/256 keep ~16 bits of each
 * activation) and the products are summed in int32, exactly:
 *   AVX-512 VNNI  vpdpbusd, the weights' unsigned bytes (q + 128) times the
 *                 signed x bytes, the offset taken back as −128·Σx per block;
 *   AVX2          vpmaddubsw on |x| and sign(x)·q, vpmaddwd to int32 (also
 *                 the AVX-512 level of CPUs without VNNI).
 * The interleaved layout puts the 16 blocks of a group in the 16 int32
 * lanes, so a group's sums are one vector: per block, in float,
 *   acc[lane] = fma((float)I, sw·sx, acc[lane])
 * (I = 256·I_h + I_l with two parts), and at the end one fixed addition
 * tree over the 16 lanes. Integer sums are exact and every float operation
 * is the same at every level, for any tile shape and thread split: the
 * scalar, AVX2 and AVX-512 levels give the same bits, and an x row gives
 * the same bits alone or next to others (batched decode stays
 * bit-identical).
 *
 * Large M (prefill) is compute-bound: each thread dequantizes panels of W
 * rows to f32 scratch once and runs the ordinary f32 vx_linear path on them
 * (its tiles or sgemm), with float32 activations. */
#include <cpuid.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/isa.h"
#include "kernels/precision.h"
#include "kernels/xquant.h"

/* x rows from which the panel path replaces the tiles. 1 thread, K=1024
 * N=4096, ms tiles vs panels (shared machine, f32 tiles): M=16 0.88 vs
 * 1.18, M=32 1.73 vs 1.51, M=128 6.89 vs 5.77. */
#ifndef Q8_PANEL_MIN_M
#define Q8_PANEL_MIN_M 32
#endif
/* f32 scratch per thread for one panel of dequantized W rows */
#define Q8_PANEL_BYTES (512 * 1024)
/* W bytes per column tile (reused by every x row) */
#define WT_BYTES (256 * 1024)

#define GRP 16                     /* blocks per group = int32 lanes */
#define GRP_BYTES (64 + 32 * GRP)  /* one group of a W row: 16 scales + codes */
#define XG_BYTES (32 * GRP)        /* one group of an x part */
#define Q8_XTINY 1e-30f /* below: 127 / max|x| could overflow */

static pthread_once_t vnni_once = PTHREAD_ONCE_INIT;
static int vnni;
static void vnni_detect(void) {
    unsigned a, b, c, d;
    vnni = vx_cpu_has_avx512() && __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((c >> 11) & 1);
}
int vx_cpu_has_vnni(void) {
    pthread_once(&vnni_once, vnni_detect);
    return vnni;
}

static inline int64_t nblk(int64_t K) { return (K + VX_Q8_BLOCK - 1) / VX_Q8_BLOCK; }
static inline int64_t ngrp(int64_t nb) { return (nb + GRP - 1) / GRP; }

/* ---- x rows, quantized once per call (xquant.h) ---- */

/* One block of len ≤ 32 values: codes into their interleaved places (word s
 * of block j at s·64 + 4j of the group), scale and sums. The reference
 * arithmetic that the SIMD versions repeat exactly. */
static void xblock1(int xp, const float *x, int len, int8_t *h, int8_t *l, float *sx, int32_t *ch, int32_t *cl) {
    float amax = 0;
    int bad = 0;
    for (int i = 0; i < len; i++) {
        float a = fabsf(x[i]);
        if (!(a <= FLT_MAX)) bad = 1;
        amax = a > amax ? a : amax;
    }
    int8_t hb[32] = {0}, lb[32] = {0};
    int32_t sh = 0, sl = 0;
    if (bad || amax < Q8_XTINY) {
        *sx = bad ? NAN : 0.0f; /* NaN propagates; a block of |x| < 1e-30 counts as zeros */
    } else {
        const float inv = amax > 0 ? 127.0f / amax : 0.0f;
        for (int i = 0; i < len; i++) {
            float r = x[i] * inv, hv = rintf(r);
            float lv = rintf((r - hv) * 256.0f);
            lv = lv > 127.0f ? 127.0f : lv < -127.0f ? -127.0f : lv;
            hb[i] = (int8_t)hv;
            lb[i] = xp == 2 ? (int8_t)lv : 0;
            sh += hb[i], sl += lb[i];
        }
        *sx = xp == 2 ? amax / 127.0f * (1.0f / 256.0f) : amax / 127.0f;
    }
    for (int s = 0; s < 8; s++) {
        memcpy(h + s * 64, hb + 4 * s, 4);
        if (xp == 2) memcpy(l + s * 64, lb + 4 * s, 4);
    }
    *ch = -128 * sh;
    *cl = -128 * sl;
}

static VX_TARGET_AVX512 void xblock512(int xp, const float *x, int len, int8_t *h, int8_t *l, float *sx,
                                       int32_t *ch, int32_t *cl) {
    __mmask16 m0 = len >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << len) - 1);
    __mmask16 m1 = len >= 32 ? (__mmask16)0xffff : len > 16 ? (__mmask16)((1u << (len - 16)) - 1) : 0;
    __m512 x0 = _mm512_maskz_loadu_ps(m0, x), x1 = _mm512_maskz_loadu_ps(m1, x + 16);
    __m512 a0 = _mm512_abs_ps(x0), a1 = _mm512_abs_ps(x1), big = _mm512_set1_ps(FLT_MAX);
    if (_mm512_cmp_ps_mask(a0, big, _CMP_NLE_UQ) | _mm512_cmp_ps_mask(a1, big, _CMP_NLE_UQ)) {
        xblock1(xp, x, len, h, l, sx, ch, cl);
        return;
    }
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
    if (amax < Q8_XTINY) {
        xblock1(xp, x, len, h, l, sx, ch, cl);
        return;
    }
    const __m512 inv = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
    const __m512 k256 = _mm512_set1_ps(256.0f), lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
    __m512i hi32[2], lo32[2];
    const __m512 xv[2] = {x0, x1};
    for (int v = 0; v < 2; v++) {
        __m512 r = _mm512_mul_ps(xv[v], inv);
        __m512 hv = _mm512_roundscale_ps(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m512 lv = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_sub_ps(r, hv), k256),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        lv = _mm512_min_ps(_mm512_max_ps(lv, lo), hi);
        hi32[v] = _mm512_cvtps_epi32(hv);
        lo32[v] = xp == 2 ? _mm512_cvtps_epi32(lv) : _mm512_setzero_si512();
    }
    /* bytes 0..15 and 16..31: word s of the block is dword s of the pair */
    __m256i hb = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(hi32[0])),
                                         _mm512_cvtepi32_epi8(hi32[1]), 1);
    __m256i lb = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(lo32[0])),
                                         _mm512_cvtepi32_epi8(lo32[1]), 1);
    const __m256i idx = _mm256_setr_epi32(0, 16, 32, 48, 64, 80, 96, 112); /* s·64 bytes in dwords */
    _mm256_i32scatter_epi32((int *)h, idx, hb, 4);
    if (xp == 2) _mm256_i32scatter_epi32((int *)l, idx, lb, 4);
    *sx = xp == 2 ? amax / 127.0f * (1.0f / 256.0f) : amax / 127.0f;
    *ch = -128 * _mm512_reduce_add_epi32(_mm512_add_epi32(hi32[0], hi32[1]));
    *cl = -128 * _mm512_reduce_add_epi32(_mm512_add_epi32(lo32[0], lo32[1]));
}

static VX_TARGET_AVX2 void xblock256(int xp, const float *x, int len, int8_t *h, int8_t *l, float *sx,
                                     int32_t *ch, int32_t *cl) {
    if (len < 32) {
        xblock1(xp, x, len, h, l, sx, ch, cl);
        return;
    }
    const __m256 sgn = _mm256_set1_ps(-0.0f), big = _mm256_set1_ps(FLT_MAX);
    __m256 xv[4], mx = _mm256_setzero_ps();
    int bad = 0;
    for (int v = 0; v < 4; v++) {
        xv[v] = _mm256_loadu_ps(x + 8 * v);
        __m256 a = _mm256_andnot_ps(sgn, xv[v]);
        bad |= _mm256_movemask_ps(_mm256_cmp_ps(a, big, _CMP_NLE_UQ));
        mx = _mm256_max_ps(mx, a);
    }
    if (bad) {
        xblock1(xp, x, len, h, l, sx, ch, cl);
        return;
    }
    const float amax = vx_hmax256(mx);
    if (amax < Q8_XTINY) {
        xblock1(xp, x, len, h, l, sx, ch, cl);
        return;
    }
    const __m256 inv = _mm256_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
    const __m256 k256 = _mm256_set1_ps(256.0f), lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
    __m256i hq[4], lq[4], sh = _mm256_setzero_si256(), sl = _mm256_setzero_si256();
    for (int v = 0; v < 4; v++) {
        __m256 r = _mm256_mul_ps(xv[v], inv);
        __m256 hv = _mm256_round_ps(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m256 lv = _mm256_round_ps(_mm256_mul_ps(_mm256_sub_ps(r, hv), k256),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        lv = _mm256_min_ps(_mm256_max_ps(lv, lo), hi);
        hq[v] = _mm256_cvtps_epi32(hv);
        lq[v] = xp == 2 ? _mm256_cvtps_epi32(lv) : _mm256_setzero_si256();
        sh = _mm256_add_epi32(sh, hq[v]);
        sl = _mm256_add_epi32(sl, lq[v]);
    }
    /* 32 int32 → 32 bytes in order: packs work per 128-bit lane, then fix the dword order */
    const __m256i fix = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256i hb = _mm256_permutevar8x32_epi32(
        _mm256_packs_epi16(_mm256_packs_epi32(hq[0], hq[1]), _mm256_packs_epi32(hq[2], hq[3])), fix);
    __m256i lb = _mm256_permutevar8x32_epi32(
        _mm256_packs_epi16(_mm256_packs_epi32(lq[0], lq[1]), _mm256_packs_epi32(lq[2], lq[3])), fix);
    int32_t hw[8], lw[8];
    _mm256_storeu_si256((__m256i *)hw, hb);
    _mm256_storeu_si256((__m256i *)lw, lb);
    for (int s = 0; s < 8; s++) {
        memcpy(h + s * 64, hw + s, 4);
        if (xp == 2) memcpy(l + s * 64, lw + s, 4);
    }
    __m128i t = _mm_add_epi32(_mm256_castsi256_si128(sh), _mm256_extracti128_si256(sh, 1));
    __m128i u = _mm_add_epi32(_mm256_castsi256_si128(sl), _mm256_extracti128_si256(sl, 1));
    t = _mm_hadd_epi32(t, t), u = _mm_hadd_epi32(u, u);
    t = _mm_hadd_epi32(t, t), u = _mm_hadd_epi32(u, u);
    *sx = xp == 2 ? amax / 127.0f * (1.0f / 256.0f) : amax / 127.0f;
    *ch = -128 * _mm_cvtsi128_si32(t);
    *cl = -128 * _mm_cvtsi128_si32(u);
}

void vx_xq8_fill(int isa, int xp, xq8 *X, const float *x, int64_t M, int64_t K) {
    const int64_t nb = nblk(K);
    for (int64_t m = 0; m < M; m++)
        for (int64_t b = 0; b < nb; b++) {
            const int64_t G = b / GRP, j = b % GRP, k = b * VX_Q8_BLOCK;
            const int len = K - k < VX_Q8_BLOCK ? (int)(K - k) : VX_Q8_BLOCK;
            int8_t *h = X->c[0] + m * X->xs + G * XG_BYTES + 4 * j, *l = X->c[1] + m * X->xs + G * XG_BYTES + 4 * j;
            float *sx = X->sx + m * X->ss + b;
            int32_t *ch = X->corr[0] + m * X->ss + b, *cl = X->corr[1] + m * X->ss + b;
            if (isa >= VX_ISA_AVX512) xblock512(xp, x + m * K + k, len, h, l, sx, ch, cl);
            else if (isa >= VX_ISA_AVX2) xblock256(xp, x + m * K + k, len, h, l, sx, ch, cl);
            else xblock1(xp, x + m * K + k, len, h, l, sx, ch, cl);
        }
}

void *vx_xq8_alloc(xq8 *X, int64_t M, int64_t K) {
    const int64_t ng = ngrp(nblk(K));
    X->xs = ng * XG_BYTES;
    X->ss = ng * GRP;
    const size_t codes = (size_t)(M * X->xs), ents = (size_t)(M * X->ss);
    char *p = calloc(1, 2 * codes + 3 * ents * 4 + 64);
    if (!p) return NULL;
    X->sx = (float *)p;
    X->corr[0] = (int32_t *)(p + ents * 4);
    X->corr[1] = (int32_t *)(p + 2 * ents * 4);
    X->c[0] = (int8_t *)(p + 3 * ents * 4);
    X->c[1] = X->c[0] + codes;
    return p;
}

/* Software prefetch, into L2, of the next tile's rows while a tile runs, as in matmul.c:
 * a tile of NR rows is one contiguous span of NR·RS bytes and the next tile's follows it,
 * so group G of this tile prefetches the same share (NR·GRP_BYTES) of that span, one
 * sequential stream one tile ahead. T3 decode shapes, M=2, 1 thread, GB/s of W against a
 * plain read loop in the same process: 31-35 % with every row stream prefetched 2 KiB
 * ahead into L1, 43-52 % with this pattern into L1, 67-74 % into L2 (two tiles ahead about
 * the same). */
VX_INLINE void pf_next(const uint8_t *w, int64_t RS, int NR, int64_t G) {
    const char *p = (const char *)w + NR * RS + G * NR * GRP_BYTES;
    _Pragma("GCC unroll 1")
    for (int64_t c = 0; c < NR * GRP_BYTES; c += 64) _mm_prefetch(p + c, _MM_HINT_T1);
}

typedef void (*qtile_fn)(const xq8 *X, int64_t m0, const uint8_t *w, int64_t RS, int64_t nb, float *y,
                         int64_t ldy, const float *bias);

/* ---- AVX-512 VNNI ---- */

/* The 8 steps of one group: 64 bytes (16 lanes × 4 values) of each W row
 * against each x part. g = 16 for full groups (compile-time), else masked. */
VX_INLINE VX_TARGET_VNNI void vsteps(int xp, int MB, int NR, int g, const xq8 *X, int64_t m0, int64_t G, const uint8_t *w,
                                     int64_t RS, __m512i ah[4][8], __m512i al[4][8]) {
    const __mmask64 mask = g == 16 ? ~(__mmask64)0 : (((__mmask64)1 << (4 * g)) - 1);
    const uint8_t *wg = w + G * GRP_BYTES;
    _Pragma("GCC unroll 8")
    for (int s = 0; s < 8; s++) {
        __m512i xh[4], xl[4];
        _Pragma("GCC unroll 4")
        for (int m = 0; m < MB; m++) {
            const int8_t *xc = X->c[0] + (m0 + m) * X->xs + G * XG_BYTES + s * 64;
            xh[m] = _mm512_loadu_si512(xc);
            if (xp == 2) xl[m] = _mm512_loadu_si512(xc + (X->c[1] - X->c[0]));
        }
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) {
            const uint8_t *p = wg + r * RS + 64 + s * 4 * g;
            __m512i wv = g == 16 ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi8(mask, p);
            _Pragma("GCC unroll 4")
            for (int m = 0; m < MB; m++) {
                ah[m][r] = _mm512_dpbusd_epi32(ah[m][r], wv, xh[m]);
                if (xp == 2) al[m][r] = _mm512_dpbusd_epi32(al[m][r], wv, xl[m]);
            }
        }
    }
}

VX_INLINE VX_TARGET_VNNI void vtile(int xp, int MB, int NR, const xq8 *X, int64_t m0, const uint8_t *w, int64_t RS,
                                    int64_t nb, float *y, int64_t ldy, const float *bias) {
    const int64_t ng = ngrp(nb);
    __m512 fa[4][8];
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) fa[m][r] = _mm512_setzero_ps();
    for (int64_t G = 0; G < ng; G++) {
        const int g = nb - G * GRP < GRP ? (int)(nb - G * GRP) : GRP;
        const uint8_t *wg = w + G * GRP_BYTES;
        __m512i ah[4][8], al[4][8];
        _Pragma("GCC unroll 4")
        for (int m = 0; m < MB; m++) {
            __m512i ch = _mm512_loadu_si512(X->corr[0] + (m0 + m) * X->ss + G * GRP);
            __m512i cl = xp == 2 ? _mm512_loadu_si512(X->corr[1] + (m0 + m) * X->ss + G * GRP) : ch;
            _Pragma("GCC unroll 8")
            for (int r = 0; r < NR; r++) ah[m][r] = ch, al[m][r] = cl;
        }
        pf_next(w, RS, NR, G);
        if (g == GRP) vsteps(xp, MB, NR, 16, X, m0, G, w, RS, ah, al);
        else vsteps(xp, MB, NR, g, X, m0, G, w, RS, ah, al);
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) {
            __m512 sw = _mm512_loadu_ps((const float *)(wg + r * RS));
            _Pragma("GCC unroll 4")
            for (int m = 0; m < MB; m++) {
                __m512 sc = _mm512_mul_ps(sw, _mm512_loadu_ps(X->sx + (m0 + m) * X->ss + G * GRP));
                __m512i I = xp == 2 ? _mm512_add_epi32(_mm512_slli_epi32(ah[m][r], 8), al[m][r]) : ah[m][r];
                fa[m][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(I), sc, fa[m][r]);
            }
        }
    }
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++)
            y[m * ldy + r] = vx_red16_256(_mm512_castps512_ps256(fa[m][r]), _mm512_extractf32x8_ps(fa[m][r], 1)) +
                             (bias ? bias[r] : 0.0f);
}

/* ---- AVX2: a group as two 8-lane halves; |x| · sign(x)·q by vpmaddubsw ---- */

VX_INLINE VX_TARGET_AVX2 void atile(int xp, int MB, int NR, const xq8 *X, int64_t m0, const uint8_t *w, int64_t RS,
                                    int64_t nb, float *y, int64_t ldy, const float *bias) {
    const int64_t ng = ngrp(nb);
    const __m256i ones = _mm256_set1_epi16(1), off = _mm256_set1_epi8((char)0x80);
    __m256 fa[4][4][2];
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 4")
        for (int r = 0; r < NR; r++) fa[m][r][0] = fa[m][r][1] = _mm256_setzero_ps();
    for (int64_t G = 0; G < ng; G++) {
        const int g = nb - G * GRP < GRP ? (int)(nb - G * GRP) : GRP;
        const uint8_t *wg = w + G * GRP_BYTES;
        pf_next(w, RS, NR, G);
        for (int half = 0; half < 2; half++) {
            const int gl = g - 8 * half; /* lanes of this half that hold blocks */
            if (gl <= 0) break;
            const __m256i lm = _mm256_cmpgt_epi32(_mm256_set1_epi32(gl), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            __m256i ah[4][4], al[4][4];
            _Pragma("GCC unroll 4")
            for (int m = 0; m < MB; m++)
                _Pragma("GCC unroll 4")
                for (int r = 0; r < NR; r++) ah[m][r] = al[m][r] = _mm256_setzero_si256();
            for (int s = 0; s < 8; s++) {
                __m256i xh[4], xl[4], ah_[4], al_[4];
                _Pragma("GCC unroll 4")
                for (int m = 0; m < MB; m++) {
                    const int8_t *xc = X->c[0] + (m0 + m) * X->xs + G * XG_BYTES + s * 64 + half * 32;
                    xh[m] = _mm256_loadu_si256((const __m256i *)xc);
                    ah_[m] = _mm256_abs_epi8(xh[m]);
                    if (xp == 2) {
                        xl[m] = _mm256_loadu_si256((const __m256i *)(xc + (X->c[1] - X->c[0])));
                        al_[m] = _mm256_abs_epi8(xl[m]);
                    }
                }
                _Pragma("GCC unroll 4")
                for (int r = 0; r < NR; r++) {
                    const uint8_t *p = wg + r * RS + 64 + s * 4 * g + half * 32;
                    __m256i wv = gl >= 8 ? _mm256_loadu_si256((const __m256i *)p) : _mm256_maskload_epi32((const int *)p, lm);
                    wv = _mm256_xor_si256(wv, off); /* q + 128 → q */
                    _Pragma("GCC unroll 4")
                    for (int m = 0; m < MB; m++) {
                        __m256i t = _mm256_maddubs_epi16(ah_[m], _mm256_sign_epi8(wv, xh[m]));
                        ah[m][r] = _mm256_add_epi32(ah[m][r], _mm256_madd_epi16(t, ones));
                        if (xp == 2) {
                            t = _mm256_maddubs_epi16(al_[m], _mm256_sign_epi8(wv, xl[m]));
                            al[m][r] = _mm256_add_epi32(al[m][r], _mm256_madd_epi16(t, ones));
                        }
                    }
                }
            }
            _Pragma("GCC unroll 4")
            for (int r = 0; r < NR; r++) {
                __m256 sw = _mm256_loadu_ps((const float *)(wg + r * RS) + 8 * half);
                _Pragma("GCC unroll 4")
                for (int m = 0; m < MB; m++) {
                    __m256 sc = _mm256_mul_ps(sw, _mm256_loadu_ps(X->sx + (m0 + m) * X->ss + G * GRP + 8 * half));
                    __m256i I = xp == 2 ? _mm256_add_epi32(_mm256_slli_epi32(ah[m][r], 8), al[m][r]) : ah[m][r];
                    fa[m][r][half] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I), sc, fa[m][r][half]);
                }
            }
        }
    }
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 4")
        for (int r = 0; r < NR; r++) y[m * ldy + r] = vx_red16_256(fa[m][r][0], fa[m][r][1]) + (bias ? bias[r] : 0.0f);
}

/* ---- scalar reference: the same integer sums and float operations ---- */

static inline void stile(int xp, int MB, int NR, const xq8 *X, int64_t m0, const uint8_t *w, int64_t RS, int64_t nb,
                         float *y, int64_t ldy, const float *bias) {
    const int64_t ng = ngrp(nb);
    for (int r = 0; r < NR; r++)
        for (int m = 0; m < MB; m++) {
            const int8_t *xh = X->c[0] + (m0 + m) * X->xs, *xl = X->c[1] + (m0 + m) * X->xs;
            const float *sx = X->sx + (m0 + m) * X->ss;
            float fa[GRP] = {0};
            for (int64_t G = 0; G < ng; G++) {
                const int g = nb - G * GRP < GRP ? (int)(nb - G * GRP) : GRP;
                const uint8_t *wg = w + r * RS + G * GRP_BYTES;
                for (int j = 0; j < g; j++) {
                    int32_t ih = 0, il = 0;
                    for (int p = 0; p < 32; p++) {
                        int q = (int)wg[64 + (p / 4) * 4 * g + 4 * j + p % 4] - 128;
                        int64_t xo = G * XG_BYTES + (p / 4) * 64 + 4 * j + p % 4;
                        ih += q * xh[xo];
                        il += q * xl[xo];
                    }
                    float sw;
                    memcpy(&sw, wg + 4 * j, sizeof sw);
                    int32_t I = xp == 2 ? ih * 256 + il : ih;
                    fa[j] = fmaf((float)I, sw * sx[G * GRP + j], fa[j]);
                }
            }
            y[m * ldy + r] = vx_red16(fa) + (bias ? bias[r] : 0.0f);
        }
}

#define QTILE_ARGS                                                                                               \
    const xq8 *X, int64_t m0, const uint8_t *w, int64_t RS, int64_t nb, float *y, int64_t ldy, const float *bias
#define QTILE_PASS X, m0, w, RS, nb, y, ldy, bias
#define DEF_QTILE(ISA, ATTR, FN, XPN, MB, NR, TAG)                                                              \
    static ATTR void q##ISA##_##XPN##_##MB##_##TAG(QTILE_ARGS) { FN(XPN, MB, NR, QTILE_PASS); }
#define DEF_QISA_XP(ISA, ATTR, FN, XPN, NR1, NR2, NR34)                                                          \
    DEF_QTILE(ISA, ATTR, FN, XPN, 1, NR1, w)                                                                    \
    DEF_QTILE(ISA, ATTR, FN, XPN, 2, NR2, w)                                                                    \
    DEF_QTILE(ISA, ATTR, FN, XPN, 3, NR34, w)                                                                   \
    DEF_QTILE(ISA, ATTR, FN, XPN, 4, NR34, w)                                                                   \
    DEF_QTILE(ISA, ATTR, FN, XPN, 1, 1, 1)                                                                      \
    DEF_QTILE(ISA, ATTR, FN, XPN, 2, 1, 1)                                                                      \
    DEF_QTILE(ISA, ATTR, FN, XPN, 3, 1, 1)                                                                      \
    DEF_QTILE(ISA, ATTR, FN, XPN, 4, 1, 1)
/* both x part counts: 2 (VX_Q8) and 1 (VX_Q8D) */
#define DEF_QISA(ISA, ATTR, FN, NR1, NR2, NR34)                                                                 \
    DEF_QISA_XP(ISA, ATTR, FN, 2, NR1, NR2, NR34)                                                               \
    DEF_QISA_XP(ISA, ATTR, FN, 1, NR1, NR2, NR34)

typedef struct {
    qtile_fn wide, one;
    int nr;
} qtile_set;
#define QSET(ISA, XPN, MB, NR) {q##ISA##_##XPN##_##MB##_w, q##ISA##_##XPN##_##MB##_1, NR}
#define QSETS(ISA, XPN, NR1, NR2, NR34)                                                                         \
    {QSET(ISA, XPN, 1, NR1), QSET(ISA, XPN, 2, NR2), QSET(ISA, XPN, 3, NR34), QSET(ISA, XPN, 4, NR34)}

/* Tile widths (W rows per x row group), by registers: VNNI (32 zmm) holds
 * XP·MB·NR int32 and MB·NR float accumulators plus XP·MB x vectors; AVX2
 * (16 ymm) spills some at every width, so it keeps them narrow. */
#ifndef Q8_V_NR1
#define Q8_V_NR1 8
#endif
#ifndef Q8_V_NR2
#define Q8_V_NR2 4
#endif
#ifndef Q8_V_NR34
#define Q8_V_NR34 2
#endif
#ifndef Q8_A_NR1
#define Q8_A_NR1 2
#endif
#ifndef Q8_A_NR2
#define Q8_A_NR2 2
#endif
DEF_QISA(s1, , stile, 4, 4, 4)
DEF_QISA(v2, VX_TARGET_AVX2, atile, Q8_A_NR1, Q8_A_NR2, 2)
DEF_QISA(v5, VX_TARGET_VNNI, vtile, Q8_V_NR1, Q8_V_NR2, Q8_V_NR34)

/* qtiles[x parts − 1][kernel][MB − 1]; kernel 0 scalar, 1 AVX2, 2 VNNI */
static const qtile_set qtiles[2][3][4] = {
    {QSETS(s1, 1, 4, 4, 4), QSETS(v2, 1, Q8_A_NR1, Q8_A_NR2, 2), QSETS(v5, 1, Q8_V_NR1, Q8_V_NR2, Q8_V_NR34)},
    {QSETS(s1, 2, 4, 4, 4), QSETS(v2, 2, Q8_A_NR1, Q8_A_NR2, 2), QSETS(v5, 2, Q8_V_NR1, Q8_V_NR2, Q8_V_NR34)}};

/* The x parts a matrix's decode products use: 1 for the draft's VX_Q8D. */
static int q8_xparts(const vx_mat *W) { return W->dtype == VX_Q8D ? 1 : VX_Q8_XPARTS; }

/* y[:, n0:n1] for M x rows from row m0 of X, one thread: column tiles of
 * W that stay in L2 while every x row passes over them. */
static void q8_stream(int kern, const xq8 *X, int64_t m0, float *y, int64_t M, const vx_mat *W, const float *bias,
                      int64_t n0, int64_t n1) {
    const uint8_t *q = (const uint8_t *)((const vx_q8 *)W->data)->q;
    const int64_t K = W->cols, N = W->rows, nb = nblk(K), RS = vx_q8_row_bytes(K);
    int64_t nt = RS > 0 ? WT_BYTES / RS / 8 * 8 : n1 - n0;
    if (nt < 8) nt = 8;
    for (int64_t a = n0; a < n1; a += nt) {
        int64_t b = a + nt < n1 ? a + nt : n1;
        for (int64_t m = 0; m < M; m += 4) {
            int mb = M - m < 4 ? (int)(M - m) : 4;
            const qtile_set *ts = &qtiles[q8_xparts(W) - 1][kern][mb - 1];
            float *ym = y + m * N;
            int64_t n = a;
            for (; n + ts->nr <= b; n += ts->nr) ts->wide(X, m0 + m, q + n * RS, RS, nb, ym + n, N, bias ? bias + n : NULL);
            for (; n < b; n++) ts->one(X, m0 + m, q + n * RS, RS, nb, ym + n, N, bias ? bias + n : NULL);
        }
    }
}

/* ---- dequantization for the panel path: W row → f32, value q · scale ---- */

static void deq_group1(float *d, const uint8_t *grp, int g) {
    for (int j = 0; j < g; j++) {
        float sw;
        memcpy(&sw, grp + 4 * j, sizeof sw);
        for (int p = 0; p < 32; p++)
            d[j * 32 + p] = (float)((int)grp[64 + (p / 4) * 4 * g + 4 * j + p % 4] - 128) * sw;
    }
}
/* A full group: step s holds values 4s..4s+3 of the 16 blocks */
static VX_TARGET_AVX512 void deq_group512(float *d, const uint8_t *grp) {
    const __m512 sw = _mm512_loadu_ps((const float *)grp);
    __m512 swq[4]; /* lanes 4c..4c+3's scales, each 4 times */
    for (int c = 0; c < 4; c++)
        swq[c] = _mm512_permutexvar_ps(_mm512_setr_epi32(4 * c, 4 * c, 4 * c, 4 * c, 4 * c + 1, 4 * c + 1, 4 * c + 1,
                                                         4 * c + 1, 4 * c + 2, 4 * c + 2, 4 * c + 2, 4 * c + 2,
                                                         4 * c + 3, 4 * c + 3, 4 * c + 3, 4 * c + 3),
                                       sw);
    for (int s = 0; s < 8; s++) {
        const uint8_t *src = grp + 64 + 64 * s;
#define DEQ4(c)                                                                                                  \
    do {                                                                                                         \
        __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(src + 16 * (c))), _mm_set1_epi8((char)0x80)); \
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b)), swq[c]);                           \
        _mm_storeu_ps(d + (4 * (c) + 0) * 32 + 4 * s, _mm512_extractf32x4_ps(f, 0));                             \
        _mm_storeu_ps(d + (4 * (c) + 1) * 32 + 4 * s, _mm512_extractf32x4_ps(f, 1));                             \
        _mm_storeu_ps(d + (4 * (c) + 2) * 32 + 4 * s, _mm512_extractf32x4_ps(f, 2));                             \
        _mm_storeu_ps(d + (4 * (c) + 3) * 32 + 4 * s, _mm512_extractf32x4_ps(f, 3));                             \
    } while (0)
        DEQ4(0);
        DEQ4(1);
        DEQ4(2);
        DEQ4(3);
#undef DEQ4
    }
}
static VX_TARGET_AVX2 void deq_group256(float *d, const uint8_t *grp) {
    for (int s = 0; s < 8; s++)
        for (int c = 0; c < 8; c++) { /* blocks 2c, 2c+1 */
            __m128i b = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(grp + 64 + 64 * s + 8 * c)), _mm_set1_epi8((char)0x80));
            const float *sw = (const float *)grp + 2 * c;
            __m256 sc = _mm256_setr_m128(_mm_set1_ps(sw[0]), _mm_set1_ps(sw[1]));
            __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)), sc);
            _mm_storeu_ps(d + (2 * c) * 32 + 4 * s, _mm256_castps256_ps128(f));
            _mm_storeu_ps(d + (2 * c + 1) * 32 + 4 * s, _mm256_extractf128_ps(f, 1));
        }
}

/* W rows [n0, n1) → f32 (row-major, K per row). */
static void q8_dequant(int isa, float *dst, const vx_mat *W, int64_t n0, int64_t n1) {
    const uint8_t *q = (const uint8_t *)((const vx_q8 *)W->data)->q;
    const int64_t K = W->cols, nb = nblk(K), RS = vx_q8_row_bytes(K);
    float tail[GRP * 32];
    for (int64_t n = n0; n < n1; n++) {
        float *d = dst + (n - n0) * K;
        for (int64_t G = 0; G * GRP < nb; G++) {
            const int g = nb - G * GRP < GRP ? (int)(nb - G * GRP) : GRP;
            const uint8_t *grp = q + n * RS + G * GRP_BYTES;
            const int64_t k0 = G * GRP * 32, len = K - k0 < GRP * 32 ? K - k0 : GRP * 32;
            float *o = len == GRP * 32 ? d + k0 : tail;
            if (g == GRP && isa >= VX_ISA_AVX512) deq_group512(o, grp);
            else if (g == GRP && isa >= VX_ISA_AVX2) deq_group256(o, grp);
            else deq_group1(o, grp, g);
            if (o == tail) memcpy(d + k0, tail, (size_t)len * sizeof(float));
        }
    }
}

/* Large M: chunks of P rows of W, each dequantized to f32 into its thread's
 * scratch and run through vx_linear_isa (1 thread) into scratch, then copied
 * into y's columns. Returns 0 if scratch was not available (the caller
 * streams). */
typedef struct {
    int isa;
    float *y;
    const float *x;
    int64_t M, P;
    const vx_mat *W;
    const float *bias;
    float *scratch; /* per pool slot: P × K weights, then P × M outputs */
} q8_panels_job;

static void q8_panel_chunk(void *ctx, int64_t c) {
    const q8_panels_job *j = ctx;
    const int64_t K = j->W->cols, N = j->W->rows, M = j->M, n = c * j->P, rows = N - n < j->P ? N - n : j->P;
    float *buf = j->scratch + (size_t)vx_pool_slot() * (size_t)j->P * (size_t)(K + M), *tmp = buf + j->P * K;
    q8_dequant(j->isa, buf, j->W, n, n + rows);
    vx_mat F = {.dtype = VX_F32, .rows = rows, .cols = K, .data = buf, .act_bf16 = j->W->act_bf16};
    vx_linear_isa(j->isa, tmp, j->x, M, &F, j->bias ? j->bias + n : NULL, 1);
    for (int64_t m = 0; m < M; m++) memcpy(j->y + m * N + n, tmp + m * rows, (size_t)rows * sizeof(float));
}

static int q8_panels(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias,
                     int nthreads) {
    const int64_t K = W->cols, N = W->rows;
    int64_t P = (int64_t)(Q8_PANEL_BYTES / ((size_t)K * sizeof(float))) / 16 * 16;
    if (P < 16) P = 16;
    const int64_t chunks = (N + P - 1) / P;
    if (nthreads > chunks) nthreads = (int)chunks;
    q8_panels_job j = {isa, y, x, M, P, W, bias, malloc((size_t)nthreads * (size_t)P * (size_t)(K + M) * sizeof(float))};
    if (!j.scratch) return 0;
    vx_pool_run(nthreads, chunks, q8_panel_chunk, &j);
    free(j.scratch);
    return 1;
}

/* ---- the few-row driver shared by the integer formats (xquant.h) ---- */

/* Streaming on the pool, split as vx_linear_split says (isa.h), like linear_chunk (matmul.c). */
typedef struct {
    vx_xq8_stream_fn stream;
    int kern;
    const xq8 *X;
    float *y;
    int64_t M;
    const vx_mat *W;
    const float *bias;
    vx_linear_split split;
} xq8_job;

static void xq8_chunk(void *ctx, int64_t c) {
    const xq8_job *j = ctx;
    const int64_t N = j->W->rows;
    int64_t a, b;
    vx_linear_split_span(&j->split, c, &a, &b);
    if (j->split.by_rows)
        j->stream(j->kern, j->X, a, j->y + a * N, b - a, j->W, j->bias, 0, N);
    else
        j->stream(j->kern, j->X, 0, j->y, j->M, j->W, j->bias, a, b);
}

/* Without memory for the quantized x rows: one weight at a time, f32 activations. */
static void xq8_nomem(vx_xq8_weight_fn weight, float *y, const float *x, int64_t M, const vx_mat *W,
                      const float *bias) {
    const int64_t K = W->cols, N = W->rows;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            float acc = 0;
            for (int64_t k = 0; k < K; k++) {
                int q;
                float sw;
                weight(W, n, k, &q, &sw);
                acc += x[m * K + k] * ((float)q * sw);
            }
            y[m * N + n] = acc + (bias ? bias[n] : 0.0f);
        }
}

int vx_xq8_prologue(int *isa, float *y, int64_t M, const vx_mat *W, const float *bias, int *nthreads) {
    const int64_t K = W->cols, N = W->rows;
    if (M <= 0 || N <= 0) return 1;
    if (*nthreads < 1) *nthreads = 1;
    if (*isa > vx_cpu_isa()) *isa = vx_cpu_isa();
    if (*isa < VX_ISA_SCALAR) *isa = VX_ISA_SCALAR;
    if (K == 0) {
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) y[m * N + n] = bias ? bias[n] : 0.0f;
        return 1;
    }
    return 0;
}

void vx_xq8_linear(int isa, int xparts, vx_xq8_stream_fn stream, vx_xq8_weight_fn weight, float *y, const float *x,
                   int64_t M, const vx_mat *W, const float *bias, int nthreads) {
    const int64_t K = W->cols, N = W->rows;
    xq8 X;
    void *xbuf = vx_xq8_alloc(&X, M, K);
    if (!xbuf) {
        xq8_nomem(weight, y, x, M, W, bias);
        return;
    }
    vx_xq8_fill(isa, xparts, &X, x, M, K);
    const int kern = isa >= VX_ISA_AVX512 && vx_cpu_has_vnni() ? 2 : isa >= VX_ISA_AVX2 ? 1 : 0;
    if ((double)M * N * K < (1 << 18)) nthreads = 1;
    if (nthreads == 1) {
        stream(kern, &X, 0, y, M, W, bias, 0, N);
    } else {
        xq8_job j = {stream, kern, &X, y, M, W, bias, vx_linear_split_of(M, N, nthreads)};
        vx_pool_run(nthreads, j.split.chunks, xq8_chunk, &j);
    }
    free(xbuf);
}

void vx_linear_q8_isa(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias,
                      int nthreads) {
    if (vx_xq8_prologue(&isa, y, M, W, bias, &nthreads)) return;
    if (M >= Q8_PANEL_MIN_M && q8_panels(isa, y, x, M, W, bias, nthreads)) return;
    vx_xq8_linear(isa, q8_xparts(W), q8_stream, vx_q8_weight, y, x, M, W, bias, nthreads);
}
