/* Logits processors and token choice with Hugging Face / torch semantics.
 * Written from the behaviour of transformers' RepetitionPenaltyLogitsProcessor,
 * TemperatureLogitsWarper, MinPLogitsWarper and TopPLogitsWarper (all with
 * min_tokens_to_keep = 1) and of torch.multinomial(p, 1) on CPU; checked
 * against the Chatterbox golden decode steps (tests/unit/test_sampling.c).
 * All element arithmetic is float32 like the float32 tensors upstream. */
#include "nn/sampling.h"

#include <math.h>
#include <stdlib.h>

#define VX_REP_BITMAP_IDS (1 << 19) /* ids covered by the on-stack bitmap (64 KiB) */

void vx_logits_repetition_penalty(float *logits, int n, const int32_t *hist, size_t nhist, float penalty) {
    /* HF gathers the scores of all history ids, penalises them and scatters
     * them back, so an id that occurs several times is penalised once. */
    if (penalty == 1.0f || !logits || !hist || n <= 0) return;
    if (n <= VX_REP_BITMAP_IDS) {
        uint8_t seen[VX_REP_BITMAP_IDS / 8];
        size_t nbytes = ((size_t)n + 7) / 8;
        for (size_t k = 0; k < nbytes; k++) seen[k] = 0;
        for (size_t i = 0; i < nhist; i++) {
            int32_t id = hist[i];
            if (id < 0 || id >= n) continue;
            uint8_t bit = (uint8_t)(1u << (id & 7));
            if (seen[id >> 3] & bit) continue;
            seen[id >> 3] |= bit;
            float s = logits[id];
            logits[id] = s < 0.0f ? s * penalty : s / penalty;
        }
        return;
    }
    /* Very large vocabularies: skip ids already seen earlier in hist. */
    for (size_t i = 0; i < nhist; i++) {
        int32_t id = hist[i];
        if (id < 0 || id >= n) continue;
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) dup = hist[j] == id;
        if (dup) continue;
        float s = logits[id];
        logits[id] = s < 0.0f ? s * penalty : s / penalty;
    }
}

void vx_logits_temperature(float *logits, int n, float temperature) {
    if (temperature == 1.0f) return;
    for (int i = 0; i < n; i++) logits[i] = logits[i] / temperature;
}

/* Softmax pieces shared by min-p and top-p, in the shape torch's CPU
 * softmax uses: m = max, e_i = exp(x_i − m), p_i = e_i · (1 / Σ e). */
static float row_max(const float *x, int n) {
    float m = -INFINITY;
    for (int i = 0; i < n; i++)
        if (x[i] > m) m = x[i];
    return m;
}

static float inv_exp_sum(const float *x, int n, float m) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += (double)expf(x[i] - m);
    return (float)(1.0 / s);
}

void vx_logits_min_p(float *logits, int n, float min_p) {
    if (min_p <= 0.0f || n <= 0) return;
    float m = row_max(logits, n);
    if (!(m > -INFINITY)) return; /* all −inf (or NaN): nothing to rank */
    float inv = inv_exp_sum(logits, n, m);
    /* probs < min_p · max(probs); max(probs) = exp(0) · inv. The first index
     * of the maximum logit is the token that sorts first and is always kept
     * (min_tokens_to_keep = 1; only matters for min_p > 1). */
    float threshold = min_p * inv;
    int keep = vx_argmax(logits, n);
    for (int i = 0; i < n; i++) {
        float p = expf(logits[i] - m) * inv;
        if (p < threshold && i != keep) logits[i] = -INFINITY;
    }
}

typedef struct {
    float v;
    int i;
} vx_vi;

/* Ascending by value, then by index: a deterministic (stable) order. */
static int cmp_vi_asc(const void *a, const void *b) {
    const vx_vi *x = a, *y = b;
    if (x->v < y->v) return -1;
    if (x->v > y->v) return 1;
    return (x->i > y->i) - (x->i < y->i);
}

size_t vx_logits_top_p_scratch_size(int n) { return n > 0 ? (size_t)n * sizeof(vx_vi) : 0; }

void vx_logits_top_p_ws(float *logits, int n, float top_p, void *scratch) {
    if (top_p >= 1.0f || n <= 1) return;
    vx_vi *s = scratch;
    for (int i = 0; i < n; i++) {
        s[i].v = logits[i];
        s[i].i = i;
    }
    qsort(s, (size_t)n, sizeof *s, cmp_vi_asc);
    float m = s[n - 1].v;
    if (!(m > -INFINITY)) return; /* all −inf (or NaN): nothing to rank */
    /* sorted.softmax().cumsum(): torch accumulates the cumulative sum in
     * double on CPU and stores float; entries whose cumulative probability is
     * <= 1 − top_p are removed, never the last (largest) one. */
    float inv = inv_exp_sum(logits, n, m);
    float limit = (float)(1.0 - (double)top_p);
    double acc = 0.0;
    for (int k = 0; k < n - 1; k++) {
        acc += (double)(expf(s[k].v - m) * inv);
        if ((float)acc <= limit) logits[s[k].i] = -INFINITY;
    }
}

void vx_logits_top_p(float *logits, int n, float top_p) {
    if (top_p >= 1.0f || n <= 1) return;
    void *s = malloc(vx_logits_top_p_scratch_size(n));
    if (!s) {
        /* Out of memory: keep only the single best token (a subset of every
         * top-p set, i.e. greedy) rather than sampling from too much. */
        int best = vx_argmax(logits, n);
        for (int i = 0; i < n; i++)
            if (i != best) logits[i] = -INFINITY;
        return;
    }
    vx_logits_top_p_ws(logits, n, top_p, s);
    free(s);
}

int vx_argmax(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

int vx_sample_exp_race(const float *probs, const float *q, int n) {
    /* torch: argmax(p / q) in float; the first index wins ties and p = 0
     * never wins (0/q = 0, and 0/0 would be NaN). */
    int best = -1;
    float bestv = 0.0f;
    for (int i = 0; i < n; i++) {
        if (!(probs[i] > 0.0f)) continue;
        float r = probs[i] / q[i];
        if (best < 0 || r > bestv) {
            best = i;
            bestv = r;
        }
    }
    return best < 0 ? vx_argmax(probs, n) : best;
}

int vx_sample_multinomial(const float *probs, int n, vx_rng *rng, float *q) {
    /* One exponential per entry, drawn for the whole row like torch. */
    vx_rng_exponential(rng, q, (size_t)n);
    return vx_sample_exp_race(probs, q, n);
}
