/* Many-query attention as two packed GEMMs per head and block of query rows:
 * S = scale·Q·Kᵀ (with the causal mask), row softmax, O = P·V. With bf16 the
 * GEMMs round Q, K, P and V to bf16 and multiply with vdpbf16ps — the bf16
 * precision mode's attention, about twice the f32 kernels' rate. Scratch per
 * thread: QB × nk floats. */
#ifdef _OPENMP
#include <omp.h>
#endif
#include <math.h>
#include <stdlib.h>

#include "kernels/isa.h"

/* Query rows per block: S stays QB × nk floats (L2-sized up to nk ≈ 1000; K_h and V_h are
 * packed once per block, so larger blocks pack less: at 700 frames 256 beat 128 by ~15 %). */
#ifndef QB
#define QB 256
#endif

int vx_attention_gemm(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                      int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal, int bf16,
                      int nthreads) {
    int isa = vx_cpu_isa();
    if (!vx_gemm_packed_supported(isa, bf16) || n_kv_heads < 1 || n_heads % n_kv_heads) return 0;
    const int64_t ld = (int64_t)n_heads * hd, nblk = (nq + QB - 1) / QB, tasks = (int64_t)n_heads * nblk;
    const int group = n_heads / n_kv_heads;
    if (nthreads < 1) nthreads = 1;
    int ok = 1;
#pragma omp parallel num_threads(nthreads) reduction(&& : ok)
    {
        float *s = malloc((size_t)QB * (size_t)(nk > 0 ? nk : 1) * sizeof(float));
        if (!s) ok = 0;
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < tasks; t++) {
            if (!s) continue;
            int h = (int)(t / nblk);
            int64_t q0 = (t % nblk) * QB, rows = nq - q0 < QB ? nq - q0 : QB;
            const float *kh = k + (int64_t)(h / group) * hd, *vh = v + (int64_t)(h / group) * hd;
            float *o = out + q0 * ld + (int64_t)h * hd;
            /* keys row i sees: all, or 0 .. nk − nq + q0 + i when causal */
            int64_t seen0 = causal ? nk - nq + q0 + 1 : nk;
            if (seen0 > nk) seen0 = nk;
            int64_t span = causal ? seen0 + rows - 1 : nk;
            if (span > nk) span = nk;
            if (span <= 0) {
                for (int64_t i = 0; i < rows; i++)
                    for (int j = 0; j < hd; j++) o[i * ld + j] = 0.0f;
                continue;
            }
            ok &= vx_gemm_packed(isa, 0, 1, rows, span, hd, scale, q + q0 * ld + (int64_t)h * hd, ld, kh, VX_F32,
                                 kv_stride, 0.0f, s, span, NULL, bf16, 1);
            for (int64_t i = 0; i < rows; i++) {
                float *r = s + i * span;
                int64_t seen = causal ? seen0 + i : nk;
                if (seen > span) seen = span;
                for (int64_t j = seen < 0 ? 0 : seen; j < span; j++) r[j] = -INFINITY;
                vx_softmax(r, span);
            }
            ok &= vx_gemm_packed(isa, 0, 0, rows, hd, span, 1.0f, s, span, vh, VX_F32, kv_stride, 0.0f, o, ld, NULL,
                                 bf16, 1);
        }
        free(s);
    }
    return ok;
}

void vx_attention_lowp(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                       int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal, int bf16,
                       int nthreads) {
    if (bf16 && nq >= 16 &&
        vx_attention_gemm(out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal, 1, nthreads))
        return;
    vx_attention(out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal, nthreads);
}
