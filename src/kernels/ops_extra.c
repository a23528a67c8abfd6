#include "kernels/ops_extra.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void vx_mish(float *x, int64_t n) {
    /* tanh(ln(1 + e)) = ((1 + e)² − 1) / ((1 + e)² + 1) = m / (m + 2) with m = e·(e + 2):
     * one exp instead of exp + log1p + tanh; beyond 20 the factor is 1 in float. */
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        if (v < 20.0f) {
            float e = expf(v);
            float m = e * (e + 2.0f);
            x[i] = v * m / (m + 2.0f);
        }
    }
}

void vx_leaky_relu(float *x, int64_t n, float slope) {
    for (int64_t i = 0; i < n; i++)
        if (x[i] < 0.0f) x[i] *= slope;
}

void vx_transpose(float *dst, const float *src, int64_t rows, int64_t cols) {
    enum { BS = 32 };
    for (int64_t r0 = 0; r0 < rows; r0 += BS)
        for (int64_t c0 = 0; c0 < cols; c0 += BS) {
            int64_t r1 = r0 + BS < rows ? r0 + BS : rows, c1 = c0 + BS < cols ? c0 + BS : cols;
            for (int64_t r = r0; r < r1; r++)
                for (int64_t c = c0; c < c1; c++) dst[c * rows + r] = src[r * cols + c];
        }
}

int64_t vx_conv1d_tm_out_len(int64_t lin, int64_t k, int64_t dil, int64_t pad_left, int64_t pad_right) {
    return lin + pad_left + pad_right - dil * (k - 1);
}

void vx_conv1d_tm(float *y, const float *x, int64_t B, int64_t lin, int64_t cin, int64_t k, int64_t dil,
                  int64_t pad_left, int64_t pad_right, const vx_mat *w, const float *bias, float *col,
                  int nthreads) {
    int64_t lout = vx_conv1d_tm_out_len(lin, k, dil, pad_left, pad_right);
    int64_t ck = cin * k;
    if (k == 1 && pad_left == 0 && pad_right == 0) {
        /* pointwise: the input already is the im2col matrix */
        vx_linear(y, x, B * lin, w, bias, nthreads);
        return;
    }
    /* col[b][t][ci·k + j] = x[b][t + j·dil − pad_left][ci]  (weight column order ci·k + j) */
#pragma omp parallel for num_threads(nthreads) collapse(2) schedule(static) if (B * lout * ck > 65536)
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < lout; t++) {
            float *dst = col + (b * lout + t) * ck;
            for (int64_t j = 0; j < k; j++) {
                int64_t s = t + j * dil - pad_left;
                if (s < 0 || s >= lin) {
                    for (int64_t ci = 0; ci < cin; ci++) dst[ci * k + j] = 0.0f;
                } else {
                    const float *src = x + (b * lin + s) * cin;
                    for (int64_t ci = 0; ci < cin; ci++) dst[ci * k + j] = src[ci];
                }
            }
        }
    vx_linear(y, col, B * lout, w, bias, nthreads);
}

enum { RELPOS_BLOCK = 64 };

static int64_t relpos_block(int64_t L) { return L < RELPOS_BLOCK ? L : RELPOS_BLOCK; }

int64_t vx_relpos_attention_scratch(int64_t L, int64_t dk, int nthreads) {
    int64_t R = relpos_block(L);
    return (nthreads < 1 ? 1 : nthreads) * (2 * R * dk + R * L + R * (L + R - 1));
}

void vx_relpos_attention(float *out, const float *q, const float *k, const float *v, const float *p,
                         const float *pos_u, const float *pos_v, int64_t L, int H, int dk, float *scratch,
                         int nthreads) {
    const int64_t HD = (int64_t)H * dk;
    const int64_t RB = relpos_block(L), nblk = (L + RB - 1) / RB;
    const int64_t per = 2 * RB * dk + RB * L + RB * (L + RB - 1);
    const float sq = sqrtf((float)dk);
    if (nthreads < 1) nthreads = 1;
    /* one work item = (head, block of RB query rows); GEMMs single-threaded inside */
#pragma omp parallel num_threads(nthreads) if (nthreads > 1 && (double)L * L * HD > 1e6)
    {
#ifdef _OPENMP
        float *qu = scratch + (int64_t)omp_get_thread_num() * per;
#else
        float *qu = scratch;
#endif
        float *qv = qu + RB * dk, *ac = qv + RB * dk, *bd = ac + RB * L;
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < (int64_t)H * nblk; it++) {
            const int h = (int)(it % H);
            const int64_t i0 = it / H * RB, R = i0 + RB <= L ? RB : L - i0, i1 = i0 + R;
            const float *u = pos_u + (int64_t)h * dk, *w = pos_v + (int64_t)h * dk;
            for (int64_t r = 0; r < R; r++) {
                const float *qi = q + (i0 + r) * HD + (int64_t)h * dk;
                for (int d = 0; d < dk; d++) {
                    qu[r * dk + d] = qi[d] + u[d];
                    qv[r * dk + d] = qi[d] + w[d];
                }
            }
            /* ac[r][j] = (q_i + u)·k_j          [R][L] */
            vx_gemm_f32(0, 1, R, L, dk, 1.0f, qu, dk, k + (int64_t)h * dk, HD, 0.0f, ac, L, 1);
            /* Rows i0..i1−1 need p rows c = L−1−i+j ∈ [L − i1, 2L − 2 − i0]: a window of W rows.
             * bd[r][c − c0] = (q_i + v)·p_c    [R][W] */
            const int64_t c0 = L - i1, W = L + R - 1;
            vx_gemm_f32(0, 1, R, W, dk, 1.0f, qv, dk, p + c0 * HD + (int64_t)h * dk, HD, 0.0f, bd, W, 1);
            for (int64_t r = 0; r < R; r++) {
                float *s = ac + r * L;
                const float *b = bd + r * W + (R - 1 - r); /* c − c0 = (L−1−i+j) − (L−i1) = R−1−r+j */
                for (int64_t j = 0; j < L; j++) s[j] = (s[j] + b[j]) / sq;
                vx_softmax(s, L);
            }
            /* out_i = Σ_j a_ij v_j              [R][dk] */
            vx_gemm_f32(0, 0, R, dk, L, 1.0f, ac, L, v + (int64_t)h * dk, HD, 0.0f, out + i0 * HD + (int64_t)h * dk,
                        HD, 1);
        }
    }
}
