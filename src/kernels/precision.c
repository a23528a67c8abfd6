/* The precision policy (precision.h): mode names and the load-time
 * conversion of weight matrices. */
#include "kernels/precision.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hugemem.h"
#include "base/pool.h"
#include "base/threads.h"
#include "kernels/isa.h"

/* The draft's format (precision.h vx_draft_quantize), by measurement: see the header. */
#define DRAFT_FORMAT VX_Q4

int vx_precision_resolve_part(int p, int part) {
    if (p != VX_PREC_DEFAULT) return p;
    const char *e = getenv("VOCIS_PRECISION");
    int q = e && *e ? vx_precision_parse(e) : -1;
    if (q > VX_PREC_DEFAULT) return q;
    return part == VX_PART_FLOW && vx_cpu_has_avx512bf16() ? VX_PREC_BF16 : VX_PREC_EXACT;
}

int vx_precision_resolve(int p) { return vx_precision_resolve_part(p, VX_PART_LM); }

const char *vx_precision_describe(int p) {
    int lm = vx_precision_resolve_part(p, VX_PART_LM), flow = vx_precision_resolve_part(p, VX_PART_FLOW);
    /* the parts differ only for the default without VOCIS_PRECISION */
    return lm == flow ? vx_precision_name(lm) : "default (T3/LM exact, S3Gen flow bf16, HiFT exact)";
}

int vx_precision_parse(const char *s) {
    if (!s) return -1;
    if (strcmp(s, "exact") == 0) return VX_PREC_EXACT;
    if (strcmp(s, "bf16") == 0) return VX_PREC_BF16;
    if (strcmp(s, "q8") == 0) return VX_PREC_Q8;
    if (strcmp(s, "default") == 0) return VX_PREC_DEFAULT;
    return -1;
}

const char *vx_precision_name(int p) {
    switch (vx_precision_resolve(p)) {
    case VX_PREC_EXACT: return "exact";
    case VX_PREC_BF16: return "bf16";
    case VX_PREC_Q8: return "q8";
    default: return "?";
    }
}

vocis_status vx_precision_check(int p, vx_err *err) {
    if (p == VX_PREC_DEFAULT) { /* a typo in the environment must not silently mean the default */
        const char *e = getenv("VOCIS_PRECISION");
        if (e && *e && vx_precision_parse(e) < 0)
            return vx_fail(err, VOCIS_E_ARG, "VOCIS_PRECISION=%.64s: unknown precision (exact, bf16, q8 or default)",
                           e);
        return VOCIS_OK;
    }
    if (p == VX_PREC_EXACT || p == VX_PREC_BF16 || p == VX_PREC_Q8) return VOCIS_OK;
    return vx_fail(err, VOCIS_E_ARG, "unknown precision %d (exact, bf16 or q8)", p);
}

/* ---- f32 → bf16 ---- */

static void cvt_scalar(uint16_t *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = vx_f32_to_bf16(src[i]);
}

/* Integer round-to-nearest-even on the bit pattern, exactly vx_f32_to_bf16
 * (vcvtneps2bf16 would flush denormals to zero). */
static VX_TARGET_AVX2 void cvt_avx2(uint16_t *dst, const float *src, size_t n) {
    const __m256i abs = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff), qnan = _mm256_set1_epi32(0x40);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i u = _mm256_loadu_si256((const __m256i *)(src + i));
        __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs), inf);
        __m256i r = _mm256_add_epi32(bias, _mm256_and_si256(_mm256_srli_epi32(u, 16), one));
        __m256i rn = _mm256_srli_epi32(_mm256_add_epi32(u, r), 16);
        __m256i nn = _mm256_or_si256(_mm256_srli_epi32(u, 16), qnan);
        __m256i v = _mm256_blendv_epi8(rn, nn, nan);
        /* 8 × u32 (values < 2^16) → 8 × u16 */
        __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
        _mm_storeu_si128((__m128i *)(dst + i), _mm_packus_epi32(lo, hi));
    }
    cvt_scalar(dst + i, src + i, n - i);
}

static VX_TARGET_AVX512 void cvt_avx512(uint16_t *dst, const float *src, size_t n) {
    const __m512i abs = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff), qnan = _mm512_set1_epi32(0x40);
    size_t i = 0;
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512i u = _mm512_maskz_loadu_epi32(m, src + i);
        __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, abs), inf);
        __m512i r = _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(u, 16), one));
        __m512i v = _mm512_srli_epi32(_mm512_add_epi32(u, r), 16);
        v = _mm512_mask_or_epi32(v, nan, _mm512_srli_epi32(u, 16), qnan);
        _mm256_mask_storeu_epi16(dst + i, m, _mm512_cvtepi32_epi16(v));
    }
}

void vx_f32_to_bf16_isa(int isa, uint16_t *dst, const float *src, size_t n) {
    if (isa >= VX_ISA_AVX512) cvt_avx512(dst, src, n);
    else if (isa >= VX_ISA_AVX2) cvt_avx2(dst, src, n);
    else cvt_scalar(dst, src, n);
}

typedef struct {
    int isa;
    uint16_t *dst;
    const float *src;
} bf16_job;

static void bf16_range(void *ctx, int64_t a, int64_t b) {
    const bf16_job *j = ctx;
    vx_f32_to_bf16_isa(j->isa, j->dst + a, j->src + a, (size_t)(b - a));
}

void vx_f32_to_bf16_n(uint16_t *dst, const float *src, size_t n, int nthreads) {
    int isa = vx_cpu_isa();
    if (n < (1u << 20) || nthreads <= 1) {
        vx_f32_to_bf16_isa(isa, dst, src, n);
        return;
    }
    bf16_job j = {isa, dst, src};
    vx_pool_for(nthreads, (int64_t)n, 16, bf16_range, &j);
}

/* ---- q8 quantization (layout: precision.h) ---- */

size_t vx_q8_bytes(int64_t rows, int64_t cols) { return 64 + (size_t)rows * (size_t)vx_q8_row_bytes(cols); }

/* One row: n values of dtype dt → its vx_q8_row_bytes(n) bytes at d. */
static void q8_row(uint8_t *d, const void *src, vx_dtype dt, int64_t n) {
    float f[VX_Q8_BLOCK];
    const size_t es = vx_dtype_size(dt);
    const int64_t nb = (n + VX_Q8_BLOCK - 1) / VX_Q8_BLOCK;
    for (int64_t g0 = 0; g0 < nb; g0 += VX_Q8_GROUP) {
        const int g = nb - g0 < VX_Q8_GROUP ? (int)(nb - g0) : VX_Q8_GROUP;
        uint8_t *grp = d + (g0 / VX_Q8_GROUP) * (64 + 32 * VX_Q8_GROUP);
        float sc[VX_Q8_GROUP] = {0};
        uint8_t *codes = grp + 64;
        memset(codes, 128, (size_t)(32 * g));
        for (int j = 0; j < g; j++) {
            const int64_t k = (g0 + j) * VX_Q8_BLOCK;
            const int len = n - k < VX_Q8_BLOCK ? (int)(n - k) : VX_Q8_BLOCK;
            vx_to_f32(f, (const char *)src + (size_t)k * es, dt, (size_t)len);
            float amax = 0;
            for (int i = 0; i < len; i++) amax = fabsf(f[i]) > amax ? fabsf(f[i]) : amax;
            const float inv = amax > 0 ? 127.0f / amax : 0.0f;
            for (int i = 0; i < len; i++) {
                float r = f[i] * inv;
                int v = (int)(r + (r >= 0 ? 0.5f : -0.5f));
                v = v > 127 ? 127 : v < -127 ? -127 : v;
                codes[(i / 4) * 4 * g + 4 * j + i % 4] = (uint8_t)(v + 128);
            }
            sc[j] = amax / 127.0f;
        }
        memcpy(grp, sc, sizeof sc);
    }
}

/* A whole matrix, row by row with row(), into the format's buffer: its
 * 64-byte vx_q8 header, then rows of row_bytes(cols) bytes; threaded over rows. */
typedef struct {
    uint8_t *rows;
    const vx_mat *src;
    void (*row)(uint8_t *d, const void *src, vx_dtype dt, int64_t n);
    int64_t row_bytes;
} quant_job;

static void quant_rows(void *ctx, int64_t r0, int64_t r1) {
    const quant_job *j = ctx;
    const int64_t C = j->src->cols;
    const size_t es = vx_dtype_size(j->src->dtype);
    for (int64_t r = r0; r < r1; r++)
        j->row(j->rows + r * j->row_bytes, (const char *)j->src->data + (size_t)r * (size_t)C * es, j->src->dtype, C);
}

static vx_mat quantize_matrix(void *buf, const vx_mat *src, vx_dtype dt, int64_t row_bytes,
                              void (*row)(uint8_t *, const void *, vx_dtype, int64_t), int nthreads) {
    const int64_t R = src->rows, C = src->cols;
    vx_q8 *h = buf;
    uint8_t *rows = (uint8_t *)buf + 64;
    h->q = (const int8_t *)rows;
    h->scale = NULL;
    if ((double)R * C < (1 << 20)) nthreads = 1;
    quant_job j = {rows, src, row, row_bytes};
    vx_pool_for(nthreads, R, 1, quant_rows, &j);
    return (vx_mat){.dtype = dt, .rows = R, .cols = C, .data = buf};
}

vx_mat vx_q8_quantize(void *buf, const vx_mat *src, int nthreads) {
    return quantize_matrix(buf, src, VX_Q8, vx_q8_row_bytes(src->cols), q8_row, nthreads);
}

void vx_q8_weight(const vx_mat *W, int64_t r, int64_t k, int *q, float *scale) {
    const uint8_t *row = (const uint8_t *)((const vx_q8 *)W->data)->q + r * vx_q8_row_bytes(W->cols);
    const int64_t b = k / VX_Q8_BLOCK, G = b / VX_Q8_GROUP, nb = (W->cols + VX_Q8_BLOCK - 1) / VX_Q8_BLOCK;
    const int j = (int)(b % VX_Q8_GROUP), p = (int)(k % VX_Q8_BLOCK);
    const int g = nb - G * VX_Q8_GROUP < VX_Q8_GROUP ? (int)(nb - G * VX_Q8_GROUP) : VX_Q8_GROUP;
    const uint8_t *grp = row + G * (64 + 32 * VX_Q8_GROUP);
    memcpy(scale, grp + 4 * j, sizeof(float));
    *q = (int)grp[64 + (p / 4) * 4 * g + 4 * j + p % 4] - 128;
}

/* ---- q4 quantization (layout: precision.h) ---- */

#define Q4_GROUP_BYTES (64 + 16 * VX_Q8_GROUP)

size_t vx_q4_bytes(int64_t rows, int64_t cols) { return 64 + (size_t)rows * (size_t)vx_q4_row_bytes(cols); }

/* Byte of value p (0…31) of block j in a group of g blocks, and whether it is the high nibble. */
static inline int q4_byte(int p, int j, int g, int *high) {
    *high = (p / 4) & 1;
    return (p / 8) * 4 * g + 4 * j + p % 4;
}

/* One row: n values of dtype dt → its vx_q4_row_bytes(n) bytes at d (the
 * bytes q4_byte names, written whole: values 8t + i low, 8t + 4 + i high). */
static void q4_row(uint8_t *d, const void *src, vx_dtype dt, int64_t n) {
    float f[VX_Q8_BLOCK];
    const size_t es = vx_dtype_size(dt);
    const int64_t nb = (n + VX_Q8_BLOCK - 1) / VX_Q8_BLOCK;
    for (int64_t g0 = 0; g0 < nb; g0 += VX_Q8_GROUP) {
        const int g = nb - g0 < VX_Q8_GROUP ? (int)(nb - g0) : VX_Q8_GROUP;
        uint8_t *grp = d + (g0 / VX_Q8_GROUP) * Q4_GROUP_BYTES;
        float sc[VX_Q8_GROUP] = {0};
        uint8_t *codes = grp + 64;
        for (int j = 0; j < g; j++) {
            const int64_t k = (g0 + j) * VX_Q8_BLOCK;
            const int len = n - k < VX_Q8_BLOCK ? (int)(n - k) : VX_Q8_BLOCK;
            vx_to_f32(f, (const char *)src + (size_t)k * es, dt, (size_t)len);
            for (int i = len; i < VX_Q8_BLOCK; i++) f[i] = 0.0f; /* a short last block: code 0 (byte 0x88) */
            float amax = 0;
            for (int i = 0; i < VX_Q8_BLOCK; i++) amax = fabsf(f[i]) > amax ? fabsf(f[i]) : amax;
            const float inv = amax > 0 ? 7.0f / amax : 0.0f;
            uint8_t c[VX_Q8_BLOCK];
            for (int i = 0; i < VX_Q8_BLOCK; i++) {
                const float r = f[i] * inv;
                int v = (int)(r + (r >= 0 ? 0.5f : -0.5f));
                v = v > 7 ? 7 : v < -7 ? -7 : v;
                c[i] = (uint8_t)(v + 8);
            }
            for (int t = 0; t < 4; t++)
                for (int i = 0; i < 4; i++)
                    codes[t * 4 * g + 4 * j + i] = (uint8_t)(c[8 * t + i] | c[8 * t + 4 + i] << 4);
            sc[j] = amax / 7.0f;
        }
        memcpy(grp, sc, sizeof sc);
    }
}

vx_mat vx_q4_quantize(void *buf, const vx_mat *src, int nthreads) {
    return quantize_matrix(buf, src, VX_Q4, vx_q4_row_bytes(src->cols), q4_row, nthreads);
}

void vx_q4_weight(const vx_mat *W, int64_t r, int64_t k, int *q, float *scale) {
    const uint8_t *row = (const uint8_t *)((const vx_q8 *)W->data)->q + r * vx_q4_row_bytes(W->cols);
    const int64_t b = k / VX_Q8_BLOCK, G = b / VX_Q8_GROUP, nb = (W->cols + VX_Q8_BLOCK - 1) / VX_Q8_BLOCK;
    const int j = (int)(b % VX_Q8_GROUP), p = (int)(k % VX_Q8_BLOCK);
    const int g = nb - G * VX_Q8_GROUP < VX_Q8_GROUP ? (int)(nb - G * VX_Q8_GROUP) : VX_Q8_GROUP;
    const uint8_t *grp = row + G * Q4_GROUP_BYTES;
    int high;
    const uint8_t byte = grp[64 + q4_byte(p, j, g, &high)];
    memcpy(scale, grp + 4 * j, sizeof(float));
    *q = (int)(high ? byte >> 4 : byte & 0x0f) - 8;
}

/* ---- the draft's format ---- */

size_t vx_draft_bytes(int64_t rows, int64_t cols) {
    return DRAFT_FORMAT == VX_Q4 ? vx_q4_bytes(rows, cols) : vx_q8_bytes(rows, cols);
}

vx_mat vx_draft_quantize(void *buf, const vx_mat *src, int nthreads) {
    if (DRAFT_FORMAT == VX_Q4) return vx_q4_quantize(buf, src, nthreads);
    vx_mat m = vx_q8_quantize(buf, src, nthreads);
    m.dtype = VX_Q8D;
    return m;
}

/* ---- load-time conversion ---- */

static vocis_status to_q8(const vx_weights *w, vx_mat *m, vx_err *err) {
    void *c = vx_weights_converted(w, m->data, VX_Q8);
    if (!c) {
        c = vx_alloc_streamed(vx_q8_bytes(m->rows, m->cols)); /* rows on cache lines where RS allows */
        if (!c)
            return vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory converting a %lld x %lld matrix to q8",
                           vx_weights_path(w), (long long)m->rows, (long long)m->cols);
        vx_q8_quantize(c, m, vx_default_threads());
        VX_TRY(vx_weights_keep(w, m->data, VX_Q8, c, err));
        vx_weights_release(w, m->data, (size_t)m->rows * (size_t)m->cols * vx_dtype_size(m->dtype));
    }
    m->dtype = VX_Q8;
    m->data = c;
    m->act_bf16 = 1; /* many-row products may round activations as in bf16 (matmul_q8.c panels) */
    return VOCIS_OK;
}

/* A matrix used as stored (precision.h, step 2b): copied out of the file
 * mapping when it fills at least one huge page. */
static vocis_status to_streamed(const vx_weights *w, vx_mat *m, vx_err *err) {
    if (m->dtype != VX_F32 && m->dtype != VX_F16 && m->dtype != VX_BF16) return VOCIS_OK;
    const size_t bytes = (size_t)m->rows * (size_t)m->cols * vx_dtype_size(m->dtype);
    if (bytes < VX_HUGE_PAGE_BYTES || !vx_weights_mapped(w, m->data, bytes)) return VOCIS_OK;
    void *c = vx_weights_converted(w, m->data, m->dtype);
    if (!c) {
        /* out of memory: the mapping serves as before (slower, but its pages can be
         * evicted where a copy's cannot), so a tight machine loads what it loaded before */
        if (!(c = vx_copy_streamed(m->data, bytes, vx_default_threads()))) return VOCIS_OK;
        if (vx_weights_keep(w, m->data, m->dtype, c, err) != VOCIS_OK) {
            const char *name = vx_weights_name_at(w, m->data);
            return vx_errctx(err, "tensor '%s'", name ? name : "?");
        }
        vx_weights_release(w, m->data, bytes);
    }
    m->data = c;
    return VOCIS_OK;
}

vocis_status vx_weights_mat_policy(const vx_weights *w, vx_mat *m, int role, vx_err *err) {
    const int repacked = role & VX_W_REPACKED;
    role &= ~VX_W_REPACKED;
    int p = vx_weights_precision(w);
    if (p == VX_PREC_Q8 && role == VX_W_TF_LINEAR && m->rows > 0 && m->cols > 0 &&
        (m->dtype == VX_F32 || m->dtype == VX_F16 || m->dtype == VX_BF16))
        return to_q8(w, m, err);
    if (p == VX_PREC_BF16 || p == VX_PREC_Q8) m->act_bf16 = 1;
    if (m->rows <= 0 || m->cols <= 0) return VOCIS_OK;
    if ((p != VX_PREC_BF16 && p != VX_PREC_Q8) || m->dtype != VX_F32)
        return repacked ? VOCIS_OK : to_streamed(w, m, err);
    size_t n = (size_t)m->rows * (size_t)m->cols;
    uint16_t *c = vx_weights_converted(w, m->data, VX_BF16);
    if (!c) {
        c = vx_alloc_streamed(n * sizeof(uint16_t));
        if (!c)
            return vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory converting a %lld x %lld matrix to bf16",
                           vx_weights_path(w), (long long)m->rows, (long long)m->cols);
        vx_f32_to_bf16_n(c, m->data, n, vx_default_threads());
        VX_TRY(vx_weights_keep(w, m->data, VX_BF16, c, err));
        vx_weights_release(w, m->data, n * sizeof(float));
    }
    m->dtype = VX_BF16;
    m->data = c;
    return VOCIS_OK;
}
