/* Many-query attention as two packed GEMMs per head and block of query rows:
 * S = scale·Q·Kᵀ (with the causal mask), row softmax, O = P·V. With bf16 the
 * GEMMs round Q, K, P and V to bf16 and multiply with vdpbf16ps — the bf16
 * precision mode's attention, about twice the f32 kernels' rate. Scratch per
 * task: QB × nk floats. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/pool.h"
#include "kernels/isa.h"

/* Query rows per block: S stays QB × nk floats (L2-sized up to nk ≈ 1000; K_h and V_h are
 * packed once per block, so larger blocks pack less: at 700 frames 256 beat 128 by ~15 %). */
#ifndef QB
#define QB 256
#endif

typedef struct agemm_job {
    float *out;
    const float *q, *k, *v;
    int64_t nq, nk, ld, ks, nblk;
    int isa, hd, group, causal, bf16;
    float scale;
    _Atomic int ok;
} agemm_job;

/* One (head, block of QB query rows) task with its own scores scratch. */
static void agemm_task(void *ctx, int64_t t) {
    agemm_job *j = ctx;
    const int64_t nq = j->nq, nk = j->nk, ld = j->ld;
    int h = (int)(t / j->nblk);
    int64_t q0 = (t % j->nblk) * QB, rows = nq - q0 < QB ? nq - q0 : QB;
    const float *kh = j->k + (int64_t)(h / j->group) * j->hd, *vh = j->v + (int64_t)(h / j->group) * j->hd;
    float *o = j->out + q0 * ld + (int64_t)h * j->hd;
    /* keys row i sees: all, or 0 .. nk − nq + q0 + i when causal */
    int64_t seen0 = j->causal ? nk - nq + q0 + 1 : nk;
    if (seen0 > nk) seen0 = nk;
    int64_t span = j->causal ? seen0 + rows - 1 : nk;
    if (span > nk) span = nk;
    if (span <= 0) {
        for (int64_t i = 0; i < rows; i++)
            for (int d = 0; d < j->hd; d++) o[i * ld + d] = 0.0f;
        return;
    }
    float *s = malloc((size_t)rows * (size_t)span * sizeof(float));
    int ok = s != NULL;
    ok = ok && vx_gemm_packed(j->isa, 0, 1, rows, span, j->hd, j->scale, j->q + q0 * ld + (int64_t)h * j->hd, ld, kh,
                              VX_F32, j->ks, 0.0f, s, span, NULL, j->bf16, 1);
    if (ok) {
        for (int64_t i = 0; i < rows; i++) {
            float *r = s + i * span;
            int64_t seen = j->causal ? seen0 + i : nk;
            if (seen > span) seen = span;
            for (int64_t c = seen < 0 ? 0 : seen; c < span; c++) r[c] = -INFINITY;
            vx_softmax(r, span);
        }
        ok = vx_gemm_packed(j->isa, 0, 0, rows, j->hd, span, 1.0f, s, span, vh, VX_F32, j->ks, 0.0f, o, ld, NULL,
                            j->bf16, 1);
    }
    free(s);
    if (!ok) atomic_store(&j->ok, 0);
}

int vx_attention_gemm(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                      int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal, int bf16,
                      int nthreads) {
    int isa = vx_cpu_isa();
    if (!vx_gemm_packed_supported(isa, bf16) || n_kv_heads < 1 || n_heads % n_kv_heads) return 0;
    const int64_t nblk = (nq + QB - 1) / QB;
    agemm_job j = {out, q, k, v, nq, nk, (int64_t)n_heads * hd, kv_stride, nblk, isa, hd, n_heads / n_kv_heads,
                   causal, bf16, scale};
    atomic_init(&j.ok, 1);
    vx_pool_run(nthreads, (int64_t)n_heads * nblk, agemm_task, &j);
    return atomic_load(&j.ok);
}

void vx_attention_lowp(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                       int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal, int bf16,
                       int nthreads) {
    if (bf16 && nq >= 16 && vx_attention_blocked16_supported(hd) && n_kv_heads >= 1 && n_heads % n_kv_heads == 0 &&
        vx_attention_blocked16(out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal, nthreads))
        return;
    if (bf16 && nq >= 16 &&
        vx_attention_gemm(out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal, 1, nthreads))
        return;
    vx_attention(out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal, nthreads);
}
