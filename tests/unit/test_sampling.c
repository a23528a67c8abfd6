/* Logits processors and token choice: the Chatterbox golden decode steps
 * (08 sampled, 09 greedy) replayed through the processors, the full 46-step
 * token choice from the seed, and hand-computed edge cases. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "io/safetensors.h"
#include "nn/sampling.h"
#include "testlib.h"

#define V 8194
#define BOS 6561

/* Chatterbox generate() defaults (spec §8.6). */
#define REP 1.2f
#define TEMP 0.8f
#define MIN_P 0.05f
#define TOP_P 1.0f

/* Softmax as torch computes it on CPU: e = exp(x − max), p = e · (1/Σe). */
static void softmax_ref(float *x, int n) {
    float m = -INFINITY;
    for (int i = 0; i < n; i++)
        if (x[i] > m) m = x[i];
    double s = 0;
    for (int i = 0; i < n; i++) s += expf(x[i] - m);
    float inv = (float)(1.0 / s);
    for (int i = 0; i < n; i++) x[i] = expf(x[i] - m) * inv;
}

/* Same floats bit for bit, with −inf == −inf. Returns the number that differ. */
static int count_diff(const float *a, const float *b, int n) {
    int d = 0;
    for (int i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0) d++;
    return d;
}

static int count_neginf(const float *a, int n) {
    int c = 0;
    for (int i = 0; i < n; i++) c += isinf(a[i]) && a[i] < 0;
    return c;
}

static vx_st_file *open_golden(const char *rel) {
    vx_st_file *f = NULL;
    vx_err err = {0};
    if (vx_st_open(tl_path(rel), &f, &err) != VOCIS_OK) {
        fprintf(stderr, "cannot open %s: %s\n", rel, err.msg);
        tl_failures++;
        return NULL;
    }
    return f;
}

static const vx_tensor *golden(vx_st_file *f, const char *name, vx_dtype dt, int64_t numel) {
    if (!f) return NULL;
    const vx_tensor *t = vx_st_find(f, name);
    CHECK_MSG(t && t->dtype == dt && vx_numel(t) == numel, "golden %s missing or wrong dtype/size", name);
    return t && t->dtype == dt && vx_numel(t) == numel ? t : NULL;
}

/* Processors of one T3 step, in upstream order. */
static void process(float *l, const int32_t *hist, size_t nhist, float *after_rep, float *after_minp) {
    vx_logits_repetition_penalty(l, V, hist, nhist, REP);
    if (after_rep) memcpy(after_rep, l, V * sizeof *l);
    vx_logits_temperature(l, V, TEMP);
    vx_logits_min_p(l, V, MIN_P);
    if (after_minp) memcpy(after_minp, l, V * sizeof *l);
    vx_logits_top_p(l, V, TOP_P);
}

static void test_golden_steps(void) {
    vx_st_file *f = open_golden("chatterbox/golden/08_t3_sampled.safetensors");
    const vx_tensor *t_logits = golden(f, "cfg_logits", VX_F32, 46 * V);
    const vx_tensor *t_noise = golden(f, "exp_noise", VX_F32, 46 * V);
    const vx_tensor *t_tokens = golden(f, "tokens", VX_I64, 46);
    if (!t_logits || !t_noise || !t_tokens) {
        vx_st_close(f);
        return;
    }
    const float *cfg = t_logits->data, *noise = t_noise->data;
    const int64_t *tokens = t_tokens->data;
    static float l[V], rep[V], minp[V], q[V];
    int32_t hist[64];

    /* Steps 0 and 1 stage by stage. */
    for (int k = 0; k < 2; k++) {
        char nm[64];
        const vx_tensor *g[4];
        static const char *stage[4] = {"after_rep_penalty", "after_min_p", "after_top_p", "probs"};
        for (int s = 0; s < 4; s++) {
            snprintf(nm, sizeof nm, "step%d_%s", k, stage[s]);
            g[s] = golden(f, nm, VX_F32, V);
        }
        if (!g[0] || !g[1] || !g[2] || !g[3]) continue;
        hist[0] = BOS;
        for (int j = 0; j < k; j++) hist[j + 1] = (int32_t)tokens[j];
        memcpy(l, cfg + (size_t)k * V, sizeof l);
        process(l, hist, (size_t)k + 1, rep, minp);
        int d_rep = count_diff(rep, g[0]->data, V);
        int d_minp = count_diff(minp, g[1]->data, V);
        int d_topp = count_diff(l, g[2]->data, V);
        printf("  step %d: differing floats after rep %d, min_p %d, top_p %d; kept by min_p %d of %d\n", k, d_rep,
               d_minp, d_topp, V - count_neginf(minp, V), V);
        CHECK_MSG(d_rep == 0, "step %d repetition penalty: %d values differ", k, d_rep);
        CHECK_MSG(d_minp == 0, "step %d temperature+min_p: %d values differ", k, d_minp);
        CHECK_MSG(d_topp == 0, "step %d top_p: %d values differ", k, d_topp);
        CHECK(count_neginf(minp, V) == count_neginf(g[1]->data, V));
        softmax_ref(l, V);
        CHECK_CLOSE(l, (const float *)g[3]->data, V, 1e-6);
        printf("  step %d: probs max |diff| %.3g\n", k, tl_max_abs_diff(l, g[3]->data, V));
        /* With the golden probabilities and the golden noise the choice is the golden token. */
        int tok = vx_sample_exp_race(g[3]->data, noise + (size_t)k * V, V);
        CHECK_MSG(tok == tokens[k], "step %d: exp race gives %d, golden %lld", k, tok, (long long)tokens[k]);
        tok = vx_sample_exp_race(l, noise + (size_t)k * V, V);
        CHECK_MSG(tok == tokens[k], "step %d: own probs give %d, golden %lld", k, tok, (long long)tokens[k]);
    }

    /* All 46 steps from the seed: processors on the golden CFG logits, our
     * probabilities, our exponential stream (torch.manual_seed(0)). */
    vx_rng r;
    vx_rng_seed(&r, 0);
    int agree = 0, noise_exact = 0;
    hist[0] = BOS;
    for (int k = 0; k < 46; k++) {
        memcpy(l, cfg + (size_t)k * V, sizeof l);
        process(l, hist, (size_t)k + 1, NULL, NULL);
        softmax_ref(l, V);
        int tok = vx_sample_multinomial(l, V, &r, q);
        noise_exact += memcmp(q, noise + (size_t)k * V, sizeof q) == 0;
        agree += tok == tokens[k];
        CHECK_MSG(tok == tokens[k], "sampled step %d: token %d, golden %lld", k, tok, (long long)tokens[k]);
        hist[k + 1] = (int32_t)tokens[k]; /* teacher-forced history */
    }
    printf("  46-step sampling from seed 0: %d/46 tokens equal, %d/46 noise rows bit-identical\n", agree,
           noise_exact);
    CHECK(noise_exact == 46);
    CHECK(tokens[45] == 6562);
    vx_st_close(f);
}

static void test_golden_greedy(void) {
    vx_st_file *f = open_golden("chatterbox/golden/09_t3_greedy.safetensors");
    const vx_tensor *t_logits = golden(f, "cfg_logits", VX_F32, 44 * V);
    const vx_tensor *t_tokens = golden(f, "tokens", VX_I64, 44);
    if (t_logits && t_tokens) {
        const float *cfg = t_logits->data;
        const int64_t *tokens = t_tokens->data;
        static float l[V];
        int32_t hist[64];
        hist[0] = BOS;
        int agree = 0;
        for (int k = 0; k < 44; k++) {
            memcpy(l, cfg + (size_t)k * V, sizeof l);
            process(l, hist, (size_t)k + 1, NULL, NULL);
            int tok = vx_argmax(l, V);
            agree += tok == tokens[k];
            CHECK_MSG(tok == tokens[k], "greedy step %d: token %d, golden %lld", k, tok, (long long)tokens[k]);
            hist[k + 1] = (int32_t)tokens[k];
        }
        printf("  greedy: %d/44 tokens equal\n", agree);
    }
    vx_st_close(f);
}

static void test_edge_cases(void) {
    /* Repetition penalty: negative multiplied, positive divided, duplicates
     * penalised once, out-of-range ids ignored, penalty 1 a no-op. */
    {
        float l[5] = {2.4f, -1.0f, 0.5f, 3.0f, 0.0f};
        int32_t h[7] = {0, 1, 0, 0, 7, -1, 4};
        vx_logits_repetition_penalty(l, 5, h, 7, 1.2f);
        CHECK(l[0] == 2.4f / 1.2f);
        CHECK(l[1] == -1.0f * 1.2f);
        CHECK(l[2] == 0.5f && l[3] == 3.0f);
        CHECK(l[4] == 0.0f); /* 0 is not < 0: divided, stays 0 */
        float m[3] = {1.0f, -2.0f, 3.0f}, m0[3];
        memcpy(m0, m, sizeof m);
        int32_t h2[2] = {0, 1};
        vx_logits_repetition_penalty(m, 3, h2, 2, 1.0f);
        CHECK(memcmp(m, m0, sizeof m) == 0);
    }
    /* Temperature: 1 is a bit-exact no-op; 0.5 doubles. */
    {
        float l[4] = {0.1f, -3.7f, 1e-30f, 12.0f}, l0[4];
        memcpy(l0, l, sizeof l);
        vx_logits_temperature(l, 4, 1.0f);
        CHECK(memcmp(l, l0, sizeof l) == 0);
        vx_logits_temperature(l, 4, 0.5f);
        CHECK(l[1] == -7.4f && l[3] == 24.0f);
    }
    /* Min-p: probabilities [0.5, 0.3, 0.02, 0.18], min_p 0.05 -> threshold
     * 0.025: only token 2 goes. */
    {
        float l[4] = {logf(0.5f), logf(0.3f), logf(0.02f), logf(0.18f)}, l0[4];
        memcpy(l0, l, sizeof l);
        vx_logits_min_p(l, 4, 0.05f);
        CHECK(l[0] == l0[0] && l[1] == l0[1] && l[3] == l0[3]);
        CHECK(isinf(l[2]) && l[2] < 0);
        /* min_p 1: everything below the maximum goes, ties at the max stay */
        float t[4] = {0.0f, 2.0f, 2.0f, 1.0f};
        vx_logits_min_p(t, 4, 1.0f);
        CHECK(isinf(t[0]) && t[1] == 2.0f && t[2] == 2.0f && isinf(t[3]));
        /* min_p > 1 would remove everything: the first best token is kept */
        float u[4] = {0.0f, 2.0f, 2.0f, 1.0f};
        vx_logits_min_p(u, 4, 1.5f);
        CHECK(isinf(u[0]) && u[1] == 2.0f && isinf(u[2]) && isinf(u[3]));
        /* min_p 0 disables */
        float w[2] = {0.0f, -100.0f};
        vx_logits_min_p(w, 2, 0.0f);
        CHECK(w[0] == 0.0f && w[1] == -100.0f);
    }
    /* Top-p on probabilities [0.3, 0.1, 0.4, 0.2]: ascending cumulative sums
     * 0.1 (1), 0.3 (3), 0.6 (0), 1.0 (2). */
    {
        const float p[4] = {0.3f, 0.1f, 0.4f, 0.2f};
        float l[4];
        for (int i = 0; i < 4; i++) l[i] = logf(p[i]);
        vx_logits_top_p(l, 4, 0.5f); /* remove cum <= 0.5: ids 1, 3 */
        CHECK(!isinf(l[0]) && isinf(l[1]) && !isinf(l[2]) && isinf(l[3]));
        for (int i = 0; i < 4; i++) l[i] = logf(p[i]);
        vx_logits_top_p(l, 4, 0.8f); /* remove cum <= 0.2: id 1 */
        CHECK(!isinf(l[0]) && isinf(l[1]) && !isinf(l[2]) && !isinf(l[3]));
        for (int i = 0; i < 4; i++) l[i] = logf(p[i]);
        vx_logits_top_p(l, 4, 0.05f); /* remove cum <= 0.95: all but the best */
        CHECK(isinf(l[0]) && isinf(l[1]) && !isinf(l[2]) && isinf(l[3]));
        for (int i = 0; i < 4; i++) l[i] = logf(p[i]);
        vx_logits_top_p(l, 4, 0.0f); /* top_p 0: the best token is always kept */
        CHECK(isinf(l[0]) && isinf(l[1]) && !isinf(l[2]) && isinf(l[3]));
        float k[4];
        for (int i = 0; i < 4; i++) k[i] = l[i] = logf(p[i]);
        vx_logits_top_p(l, 4, 1.0f); /* disabled */
        CHECK(memcmp(l, k, sizeof l) == 0);
        /* Equal logits: ties ordered by index, so the lower ids go first. */
        float e[4] = {1.0f, 1.0f, 1.0f, 1.0f};
        vx_logits_top_p(e, 4, 0.5f);
        CHECK(isinf(e[0]) && isinf(e[1]) && e[2] == 1.0f && e[3] == 1.0f);
        /* Caller scratch variant gives the same result. */
        float a[4], b[4];
        for (int i = 0; i < 4; i++) a[i] = b[i] = logf(p[i]);
        void *ws = malloc(vx_logits_top_p_scratch_size(4));
        CHECK(ws != NULL);
        if (ws) {
            vx_logits_top_p(a, 4, 0.5f);
            vx_logits_top_p_ws(b, 4, 0.5f, ws);
            CHECK(memcmp(a, b, sizeof a) == 0);
            free(ws);
        }
    }
    /* All −inf except one: every processor leaves it alone, sampling picks it. */
    {
        float l[5] = {-INFINITY, -INFINITY, 3.0f, -INFINITY, -INFINITY};
        int32_t h[2] = {2, 0};
        vx_logits_repetition_penalty(l, 5, h, 2, 1.2f);
        vx_logits_temperature(l, 5, 0.8f);
        vx_logits_min_p(l, 5, 0.05f);
        vx_logits_top_p(l, 5, 0.9f);
        CHECK(count_neginf(l, 5) == 4 && l[2] == 3.0f / 1.2f / 0.8f);
        softmax_ref(l, 5);
        CHECK(l[2] == 1.0f && l[0] == 0.0f);
        vx_rng r;
        vx_rng_seed(&r, 1);
        float q[5];
        for (int i = 0; i < 20; i++) CHECK(vx_sample_multinomial(l, 5, &r, q) == 2);
        CHECK(vx_argmax(l, 5) == 2);
        /* all −inf: processors do nothing harmful */
        float z[3] = {-INFINITY, -INFINITY, -INFINITY};
        vx_logits_min_p(z, 3, 0.05f);
        vx_logits_top_p(z, 3, 0.5f);
        CHECK(count_neginf(z, 3) == 3);
    }
    /* argmax: first index of the maximum. */
    {
        float x[5] = {1.0f, 3.0f, 3.0f, 2.0f, -INFINITY};
        CHECK(vx_argmax(x, 5) == 1);
    }
    /* Exponential race: first index on ties; p = 0 never wins, even with q = 0. */
    {
        float p[3] = {0.5f, 0.5f, 0.0f}, q[3] = {1.0f, 1.0f, 1e-30f};
        CHECK(vx_sample_exp_race(p, q, 3) == 0);
        float p2[3] = {0.0f, 0.25f, 0.75f}, q2[3] = {0.0f, 0.1f, 1.0f};
        CHECK(vx_sample_exp_race(p2, q2, 3) == 1);
        float p3[2] = {0.0f, 1.0f}, q3[2] = {1.0f, 5.0f};
        CHECK(vx_sample_exp_race(p3, q3, 2) == 1);
    }
    /* One draw consumes exactly one exponential per entry (2 outputs each). */
    {
        vx_rng a, b;
        vx_rng_seed(&a, 42);
        vx_rng_seed(&b, 42);
        float p[7] = {0.1f, 0.1f, 0.1f, 0.1f, 0.2f, 0.2f, 0.2f}, q[7];
        vx_sample_multinomial(p, 7, &a, q);
        for (int i = 0; i < 14; i++) vx_rng_u32(&b);
        CHECK(vx_rng_u32(&a) == vx_rng_u32(&b));
    }
    /* Sampling frequencies follow the probabilities. */
    {
        vx_rng r;
        vx_rng_seed(&r, 3);
        float p[3] = {0.2f, 0.5f, 0.3f}, q[3];
        int cnt[3] = {0, 0, 0};
        const int N = 30000;
        for (int i = 0; i < N; i++) cnt[vx_sample_multinomial(p, 3, &r, q)]++;
        for (int i = 0; i < 3; i++)
            CHECK_MSG(fabs((double)cnt[i] / N - p[i]) < 0.015, "token %d frequency %.4f vs %.2f", i,
                      (double)cnt[i] / N, p[i]);
    }
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    test_golden_steps();
    test_golden_greedy();
    test_edge_cases();
    return tl_finish("test_sampling");
}
