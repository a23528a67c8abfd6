/* Precision policy: how a model's weight matrices are computed, chosen once
 * at load for the whole model.
 *
 *   exact  the stored dtype (F32/F16/BF16) with float32 activations: upstream's
 *          arithmetic; every golden test runs in this mode.
 *   bf16   float32 matrices of linears and convolutions converted to bf16 once
 *          at load (F16 and BF16 ones stay as stored); float32 activations and
 *          accumulation. Halves the bytes the decode kernels stream.
 *   q8     the transformer linears (role VX_W_TF_LINEAR: T3, Qwen2, the
 *          diffusion head) as int8 with one float scale per 32 values of a
 *          row (VX_Q8, kernels.h), whatever their stored float dtype;
 *          every other matrix as in bf16. Decode products (< 32 x rows)
 *          quantize x per block into two int8 parts (~16 bits, below) and
 *          sum int8 products exactly (VNNI); prefill ones dequantize W to
 *          f32 (matmul_q8.c). Streams ~0.56x the bytes of bf16.
 *
 * How a loader honours the policy (the whole contract):
 *   1. The code that opens a weight set sets the policy on it right after
 *      vx_weights_open: vx_weights_set_precision(w, vx_precision_resolve(p)).
 *      A set without a policy (0) computes exactly as stored.
 *   2. Every loader fetches each matrix of a linear/conv as a vx_mat view
 *      (vx_weights_mat in nn/transformer.h does steps 2+3 for you), then calls
 *      vx_weights_mat_policy(w, &m, role, err) on it. The view then points
 *      at a converted copy owned by the weight set (freed by
 *      vx_weights_close), and the resident pages of the F32 original are
 *      dropped, so no F32 copy lingers and peak memory stays at the
 *      converted size. The same tensor converted twice shares one copy.
 *   2b. A matrix of at least VX_HUGE_PAGE_BYTES used in its stored dtype
 *      (exact mode; BF16/F16 ones in the fast modes) is copied the same way,
 *      once, out of the file mapping into huge pages (base/hugemem.h): the
 *      decode kernels stream it every step, and the mapping's 4 KiB pages
 *      cost a TLB miss each. Smaller matrices and data outside a file
 *      mapping (in-memory sets, torch checkpoints) stay where they are.
 *   3. Embedding tables (row gathers), norms, biases and other vectors stay
 *      as they are: they cost no bandwidth worth saving.
 *   A loader that repacks a matrix into its own buffer calls
 *   vx_weights_mat_policy on the file view first and repacks the result.
 *   Synthetic (benchmark) weights go through the same call. */
#ifndef VX_PRECISION_H
#define VX_PRECISION_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "io/safetensors.h"
#include "kernels/kernels.h"

/* Values match VOCIS_PRECISION_* in include/vocis.h (0 = default). */
typedef enum vx_precision { VX_PREC_DEFAULT = 0, VX_PREC_EXACT = 1, VX_PREC_BF16 = 2, VX_PREC_Q8 = 3 } vx_precision;

/* Parts of a model that the default mode treats apart:
 *   VX_PART_LM       autoregressive transformers whose logits pick the tokens
 *                    (T3, Qwen2 and everything VibeVoice runs): exact, so a
 *                    seeded run draws upstream's tokens (bf16 changes them);
 *   VX_PART_FLOW     Chatterbox's S3Gen flow (CFM estimator): bf16 where the
 *                    CPU multiplies bf16 natively (AVX512_BF16) — about twice
 *                    as fast, with a mel 43.5 dB from exact that no listener
 *                    can tell apart — else exact;
 *   VX_PART_VOCODER  HiFT: exact (its bf16 waveform is only ~23-28 dB from
 *                    exact, and it is a small share of the time). */
enum { VX_PART_LM = 0, VX_PART_FLOW = 1, VX_PART_VOCODER = 2 };

/* 0 → the default mode of that part: VOCIS_PRECISION from the environment
 * when it names a mode (exact, bf16, q8) — the same for every part — else
 * as described above; other values unchanged. (CTest runs the script tests
 * with VOCIS_PRECISION=exact.) */
int vx_precision_resolve_part(int p, int part);
/* vx_precision_resolve_part(p, VX_PART_LM). */
int vx_precision_resolve(int p);
/* "exact" | "bf16" | "q8" | "default" → value; -1 when unknown. */
int vx_precision_parse(const char *s);
/* "exact", "bf16", "q8" (0 → the name of the LM part's default mode). */
const char *vx_precision_name(int p);
/* One line for reports: "exact", or for the default "default (LM exact, audio bf16)". */
const char *vx_precision_describe(int p);
/* VOCIS_OK for a mode that runs (exact, bf16, q8); unknown values are refused, and so is
 * the default (0) when VOCIS_PRECISION holds something other than exact|bf16|q8|default. */
vocis_status vx_precision_check(int p, vx_err *err);

/* Roles of a matrix (for q8, which treats transformer linears apart). A
 * VX_W_TF_LINEAR view must be a linear's [out, in] weight as the kernels
 * read it (a loader that transposes calls the policy with VX_W_MATRIX and
 * quantizes its repacked copy with vx_q8_quantize). */
enum { VX_W_MATRIX = 0, VX_W_TF_LINEAR = 1 };
/* Or'ed into the role by a loader that repacks the policy's result into a
 * buffer of its own: a matrix used as stored then stays in the file mapping
 * (step 2b above would only add a copy that nothing reads). */
enum { VX_W_REPACKED = 0x100 };

/* Applies w's policy to a view m of one of w's tensors (see above). */
vocis_status vx_weights_mat_policy(const vx_weights *w, vx_mat *m, int role, vx_err *err);

/* n float32 values → bf16, round to nearest even (NaN stays NaN), bit-equal
 * to vx_f32_to_bf16 at every level; threaded for large n. */
void vx_f32_to_bf16_n(uint16_t *dst, const float *src, size_t n, int nthreads);
void vx_f32_to_bf16_isa(int isa, uint16_t *dst, const float *src, size_t n);

/* ---- q8 (kernels.h vx_q8) ----
 * One buffer holds a q8 matrix: its vx_q8 header, then the rows; free()
 * releases it. vx_q8_bytes: its size for rows x cols. vx_q8_quantize: src
 * (F32, F16 or BF16, rows x cols) into buf, returning the VX_Q8 view of buf;
 * threaded over rows. Per block of 32 values of a row: scale = max|w| / 127
 * (0 for an all-zero block), q = w · (127 / max|w|) rounded to nearest (ties
 * away from zero), so |w − q·scale| ≤ scale / 2 (+ float rounding).
 * Non-finite weights are not supported.
 *
 * Layout (private to precision.c and matmul_q8.c; the header's q points at
 * the first row, scale is NULL): a row takes vx_q8_row_bytes(cols) bytes
 * and holds its blocks in groups of VX_Q8_GROUP (the last group has g ≤ 16
 * blocks, the last block may be short). Group G starts at byte G·576 of the
 * row: 16 float scales (blocks 16G…16G+15; 0 past the row's last block),
 * then 32·g code bytes, interleaved for 16-lane dot products: value p
 * (0…31) of block j (0…g−1) at byte 64 + (p/4)·4g + 4j + p%4, stored as
 * q + 128 (an unsigned byte; positions past cols hold 128, q = 0). */
#define VX_Q8_GROUP 16
static inline int64_t vx_q8_row_bytes(int64_t cols) {
    int64_t nb = (cols + 31) / 32, ng = (nb + VX_Q8_GROUP - 1) / VX_Q8_GROUP;
    return ng * 64 + nb * 32;
}
size_t vx_q8_bytes(int64_t rows, int64_t cols);
vx_mat vx_q8_quantize(void *buf, const vx_mat *src, int nthreads);
/* Weight [r][k] of a VX_Q8 matrix: its code q (−127…127) and block scale
 * (W = q · scale). For tests and reference code. */
void vx_q8_weight(const vx_mat *W, int64_t r, int64_t k, int *q, float *scale);

/* The decode kernels (matmul_q8.c, M < 32 rows) quantize each x row per
 * block of 32 as well, in VX_Q8_XPARTS int8 parts: x ≈ sx · (h + l/256),
 * sx = max|x| / 127, h = rint(x/sx), l = rint((x/sx − h)·256) clamped to
 * ±127 (one part: l = 0), and sum the products in int32 exactly (VNNI
 * vpdpbusd, or AVX2 vpmaddubsw), scaled per block in float. A block with a
 * non-finite value gives NaN; one with max|x| < 1e-30 counts as zeros. */
#ifndef VX_Q8_XPARTS
#define VX_Q8_XPARTS 2
#endif

/* ---- q4 (VX_Q4): 4-bit weights for the speculative draft ----
 * Per block of 32 values of a row: scale = max|w| / 7 (0 for an all-zero
 * block), q = w · (7 / max|w|) rounded to nearest (ties away from zero),
 * −7…7, so |w − q·scale| ≤ scale / 2. One buffer as for q8 (a vx_q8 header
 * whose q points at the first row, then the rows; free() releases it).
 * Decode products quantize x as the decode kernels of q8 do with ONE part
 * (above), sum q·h exactly in int32 (VNNI vpdpbusd on the codes q + 8 with
 * −8·Σh per block taken back; AVX2 vpmaddubsw; scalar) and scale per block
 * in float, the same float operations as q8's, at every M (many rows run
 * the same tiles).
 *
 * Layout (private to precision.c and matmul_q4.c): a row takes
 * vx_q4_row_bytes(cols) bytes, its blocks in groups of VX_Q8_GROUP (the
 * last group has g ≤ 16 blocks). Group G starts at byte G·320 of the row:
 * 16 float scales (0 past the row's last block), then 4 vectors of 4·g
 * bytes; byte 4j + i of vector t holds, for block j, value 8t + i in its
 * low nibble and value 8t + 4 + i in its high nibble (x's steps 2t and
 * 2t + 1), stored as q + 8 (8 past cols). */
static inline int64_t vx_q4_row_bytes(int64_t cols) {
    int64_t nb = (cols + 31) / 32, ng = (nb + VX_Q8_GROUP - 1) / VX_Q8_GROUP;
    return ng * 64 + nb * 16;
}
size_t vx_q4_bytes(int64_t rows, int64_t cols);
vx_mat vx_q4_quantize(void *buf, const vx_mat *src, int nthreads);
/* Weight [r][k] of a VX_Q4 matrix: its code q (−7…7) and block scale. */
void vx_q4_weight(const vx_mat *W, int64_t r, int64_t k, int *q, float *scale);

/* ---- the speculative draft's linears ----
 * vx_draft_bytes: the size of the buffer vx_draft_quantize needs for a
 * rows x cols matrix. vx_draft_quantize: src (F32, F16 or BF16) into buf
 * in the format whose few-row products are cheapest (DRAFT_FORMAT below),
 * returning its view for plain vx_linear (free(buf) releases it); threaded
 * over rows. A product's rows are exact functions of that row alone: the
 * same bits at any M, thread count or split, at every ISA level.
 * The format is q4 (VX_Q4): the T3 decode step's linears (vocis bench gemv,
 * 2 threads) took 14.5 ms (1 row) / 15.6 ms (CFG pair) against f32's 49 /
 * 76 ms, q8's 23.6 / 23.8 and q8d's (VX_Q8D) 24.4 / 25.1. Its error: the
 * rms relative error of a dot product of random uniform x and w is 7.3e-2
 * at K = 1024 and 4096 (q8d 5.6e-3, q8 4.1e-3, bf16 1.5e-3); it only
 * changes how often the exact model accepts the draft's tokens, never the
 * output. A finer draft: vx_q8_quantize, then set the view's dtype to VX_Q8D. */
size_t vx_draft_bytes(int64_t rows, int64_t cols);
vx_mat vx_draft_quantize(void *buf, const vx_mat *src, int nthreads);

#endif
