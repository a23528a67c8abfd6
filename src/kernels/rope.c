/* Rotary position embedding, written to round like HF transformers' float32
 * torch code (each line below names the torch expression it mirrors). */
#include <math.h>

#include "kernels/kernels.h"

/* 1.0 / (theta ** (arange(0, hd, 2).float() / hd)). The power is rounded
 * correctly (double pow, then float). That equals torch bit for bit where
 * torch uses std::pow (short tensors, e.g. hd = 16) and for the Llama-3
 * θ = 500000, hd = 64 case; where torch's vectorized Sleef powf is used it
 * is off by one ulp on ~1.5% of exponents (θ = 1e6, hd = 128: i = 37). */
void vx_rope_freqs(float *inv_freq, int head_dim, float theta) {
    for (int i = 0; i < head_dim / 2; i++) {
        float e = (float)(2 * i) / (float)head_dim;
        float p = (float)pow((double)theta, (double)e);
        inv_freq[i] = 1.0f / p;
    }
}

/* HF _compute_llama3_parameters. torch evaluates `scalar / tensor` as
 * reciprocal(tensor) * scalar and `tensor / scalar` as a true division. */
void vx_rope_llama3_scale(float *inv_freq, int head_dim, float factor, float low_freq_factor,
                          float high_freq_factor, float original_max_pos) {
    float low_wavelen = (float)((double)original_max_pos / low_freq_factor);
    float high_wavelen = (float)((double)original_max_pos / high_freq_factor);
    float span = (float)((double)high_freq_factor - (double)low_freq_factor);
    for (int i = 0; i < head_dim / 2; i++) {
        float f = inv_freq[i];
        float wavelen = (1.0f / f) * (float)(2.0 * M_PI);            /* 2 * math.pi / inv_freq */
        float llama = wavelen > low_wavelen ? f / factor : f;        /* torch.where(...) */
        float smooth = ((1.0f / wavelen) * original_max_pos - low_freq_factor) / span;
        float smoothed = (1.0f - smooth) * llama / factor + smooth * llama;
        int medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
        inv_freq[i] = medium ? smoothed : llama;
    }
}

/* q' = q·cos + rotate_half(q)·sin with angle = float(pos) · inv_freq[d]. */
void vx_rope_apply(float *x, int nheads, int head_dim, const float *inv_freq, int64_t pos) {
    enum { CHUNK = 64 };
    int half = head_dim / 2;
    float c[CHUNK], s[CHUNK];
    for (int d0 = 0; d0 < half; d0 += CHUNK) {
        int n = half - d0 < CHUNK ? half - d0 : CHUNK;
        for (int d = 0; d < n; d++) {
            float a = (float)pos * inv_freq[d0 + d];
            c[d] = cosf(a);
            s[d] = sinf(a);
        }
        for (int h = 0; h < nheads; h++) {
            float *x1 = x + (int64_t)h * head_dim + d0, *x2 = x1 + half;
            for (int d = 0; d < n; d++) {
                float a = x1[d], b = x2[d];
                x1[d] = a * c[d] - b * s[d];
                x2[d] = b * c[d] + a * s[d];
            }
        }
    }
}
