#include "audio/resample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

typedef struct {
    float *out;
    const float *x, *h;
    int64_t n, out_len, orig, nw, width, taps;
} resample_job;

/* output blocks [k0, k1) of nw samples */
static void resample_blocks(void *ctx, int64_t k0, int64_t k1) {
    const resample_job *c = ctx;
    for (int64_t k = k0; k < k1; k++) {
        const int64_t s0 = c->orig * k - c->width; /* x index of tap 0 */
        for (int64_t j = 0; j < c->nw; j++) {
            const int64_t o = c->nw * k + j;
            if (o >= c->out_len) break;
            const float *hj = c->h + j * c->taps;
            float acc = 0.0f;
            for (int64_t i = 0; i < c->taps; i++) {
                const int64_t xi = s0 + i;
                if (xi >= 0 && xi < c->n) acc += c->x[xi] * hj[i];
            }
            c->out[o] = acc;
        }
    }
}

vocis_status vx_resample_sinc(const float *x, int64_t n, int sr_in, int sr_out, float **y, int64_t *m,
                              int nthreads, vx_err *err) {
    *y = NULL;
    *m = 0;
    if (sr_in <= 0 || sr_out <= 0) return vx_fail(err, VOCIS_E_ARG, "resample: invalid rates %d -> %d", sr_in, sr_out);
    if (n < 1) return vx_fail(err, VOCIS_E_INVALID, "resample: no samples");
    const int64_t g = gcd64(sr_in, sr_out), orig = sr_in / g, nw = sr_out / g;
    if (orig > 100000 || nw > 100000)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "resample: rates %d -> %d reduce to %lld/%lld phases (too many)",
                       sr_in, sr_out, (long long)orig, (long long)nw);
    const int64_t out_len = (nw * n + orig - 1) / orig;
    float *out = malloc(sizeof(float) * (size_t)out_len);
    if (!out) return vx_fail(err, VOCIS_E_NOMEM, "resample: out of memory for %lld samples", (long long)out_len);
    if (orig == nw) {
        memcpy(out, x, sizeof(float) * (size_t)n);
        *y = out;
        *m = n;
        return VOCIS_OK;
    }
    /* Kernel (torchaudio _get_sinc_resample_kernel): computed in float64, kept as float32.
     * h[j][i], j < nw phases, i < 2·width + orig taps. */
    const double lowpass_width = 6.0, rolloff = 0.99;
    const double base = (double)(orig < nw ? orig : nw) * rolloff;
    const int64_t width = (int64_t)ceil(lowpass_width * (double)orig / base);
    const int64_t taps = 2 * width + orig;
    float *h = malloc(sizeof(float) * (size_t)(nw * taps));
    if (!h) {
        free(out);
        return vx_fail(err, VOCIS_E_NOMEM, "resample: out of memory");
    }
    const double scale = base / (double)orig;
    for (int64_t j = 0; j < nw; j++) {
        for (int64_t i = 0; i < taps; i++) {
            double t = (-(double)j / (double)nw + (double)(i - width) / (double)orig) * base;
            if (t < -lowpass_width) t = -lowpass_width;
            if (t > lowpass_width) t = lowpass_width;
            const double c = cos(t * M_PI / lowpass_width / 2.0);
            const double window = c * c;
            const double tp = t * M_PI;
            const double sinc = tp == 0.0 ? 1.0 : sin(tp) / tp;
            h[j * taps + i] = (float)(sinc * window * scale);
        }
    }
    /* y[nw·k + j] = Σ_i x_pad[orig·k + i] · h[j][i], x_pad = [width zeros, x, width + orig zeros]. */
    const int64_t nblocks = (out_len + nw - 1) / nw;
    resample_job job = {out, x, h, n, out_len, orig, nw, width, taps};
    vx_pool_for(nthreads, nblocks, 1, resample_blocks, &job);
    free(h);
    *y = out;
    *m = out_len;
    return VOCIS_OK;
}
