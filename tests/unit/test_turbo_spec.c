/* Self-speculative decoding of the GPT-2 T3 (Turbo / Nano, issue 20).
 *
 *   1. vx_linear_rows: every row has the bits of that row alone (M = 1) at
 *      any row count, across the many-row thresholds of vx_linear.
 *   2. vx_t3_gpt2_forward_steps: a verify forward over n positions gives the
 *      hidden rows, logits and cached K/V of n one-position forwards, bit for
 *      bit, over contexts below and above the attention's key-split length
 *      (2048), at several thread counts.
 *   3. Generation on the tiny Turbo and Nano checkpoints: for random sampling
 *      settings, seeds, caps, stop tokens and k, speculative decoding gives
 *      plain decoding's tokens, recorded logits and rng state (memcmp); the
 *      forced drafts (always right, always wrong) and a cancel too.
 *   4. Continuous batching (t3_gpt2_batch.h): requests joining at different
 *      steps, with their own settings (speculating or not, a cancel), give
 *      the tokens, recorded logits and rng state of their solo runs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "kernels/kernels.h"
#include "kernels/precision.h"
#include "models/chatterbox/t3_gpt2.h"
#include "models/chatterbox/t3_gpt2_batch.h"
#include "models/chatterbox/turbo.h"
#include "testlib.h"

static uint64_t lcg_state = 88172645463325252ull;
static uint32_t rnd(uint32_t n) {
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(lcg_state >> 33) % n;
}

/* ---- 1. row-exact linears ---- */

static void check_linear_rows(vx_dtype dt, int act_bf16, int64_t N, int64_t K) {
    const int64_t Mmax = 70;
    float *wf = tl_random_floats((size_t)(N * K)), *x = tl_random_floats((size_t)(Mmax * K));
    float *bias = tl_random_floats((size_t)N);
    float *y = malloc(sizeof(float) * (size_t)(Mmax * N)), *y1 = malloc(sizeof(float) * (size_t)N);
    void *store = NULL;
    vx_mat W = {VX_F32, N, K, wf, act_bf16};
    if (dt == VX_BF16) {
        uint16_t *b = malloc(sizeof(uint16_t) * (size_t)(N * K));
        vx_f32_to_bf16_n(b, wf, (size_t)(N * K), 1);
        store = b, W.dtype = VX_BF16, W.data = b;
    } else if (dt == VX_Q8) {
        store = malloc(vx_q8_bytes(N, K));
        W = vx_q8_quantize(store, &W, 1);
        W.act_bf16 = act_bf16;
    }
    const int64_t counts[] = {1, 2, 5, 17, 31, 32, 33, 64, 70};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        const int64_t M = counts[c];
        for (int th = 1; th <= 3; th += 2) {
            vx_linear_rows(y, x, M, &W, bias, th);
            for (int64_t m = 0; m < M; m++) {
                vx_linear(y1, x + m * K, 1, &W, bias, 1);
                CHECK_MSG(!memcmp(y1, y + m * N, sizeof(float) * (size_t)N),
                          "vx_linear_rows %s act_bf16 %d N %lld K %lld: M %lld row %lld, %d threads",
                          vx_dtype_name(W.dtype), act_bf16, (long long)N, (long long)K, (long long)M, (long long)m,
                          th);
            }
        }
    }
    free(wf), free(x), free(bias), free(y), free(y1), free(store);
}

/* ---- 2. the verify forward ---- */

static void check_forward_steps(const vx_t3_gpt2 *t, int64_t L0, int n, int nthreads) {
    const int64_t D = t->dim, V = t->speech_head.rows;
    vx_err err = {0};
    vx_gpt2_kv a, b;
    CHECK(vx_gpt2_kv_init(&a, t, L0 + n, &err) == VOCIS_OK);
    CHECK(vx_gpt2_kv_init(&b, t, L0 + n, &err) == VOCIS_OK);
    float *pre = tl_random_floats((size_t)(L0 * D)), *steps = tl_random_floats((size_t)(n * D));
    float *x = malloc(sizeof(float) * (size_t)(L0 * D)), *xs = malloc(sizeof(float) * (size_t)(n * D));
    float *h1 = malloc(sizeof(float) * (size_t)(n * D)), *l1 = malloc(sizeof(float) * (size_t)(n * V));
    float *ls = malloc(sizeof(float) * (size_t)(n * V));
    /* the same prefill in both caches */
    memcpy(x, pre, sizeof(float) * (size_t)(L0 * D));
    CHECK(vx_t3_gpt2_forward(t, &a, L0, x, NULL, nthreads, &err) == VOCIS_OK);
    memcpy(x, pre, sizeof(float) * (size_t)(L0 * D));
    CHECK(vx_t3_gpt2_forward(t, &b, L0, x, NULL, nthreads, &err) == VOCIS_OK);
    /* a: one position per forward; b: all n in one verify forward */
    for (int i = 0; i < n; i++) {
        memcpy(h1 + i * D, steps + i * D, sizeof(float) * (size_t)D);
        CHECK(vx_t3_gpt2_forward(t, &a, 1, h1 + i * D, NULL, nthreads, &err) == VOCIS_OK);
        vx_t3_gpt2_logits(t, h1 + i * D, l1 + i * V, NULL, nthreads);
    }
    memcpy(xs, steps, sizeof(float) * (size_t)(n * D));
    CHECK(vx_t3_gpt2_forward_steps(t, &b, n, xs, nthreads, &err) == VOCIS_OK);
    CHECK(vx_t3_gpt2_logits_rows(t, xs, n, ls, nthreads, &err) == VOCIS_OK);
    CHECK(a.len == b.len);
    CHECK_MSG(!memcmp(h1, xs, sizeof(float) * (size_t)(n * D)), "hidden rows, context %lld, n %d, %d threads",
              (long long)L0, n, nthreads);
    CHECK_MSG(!memcmp(l1, ls, sizeof(float) * (size_t)(n * V)), "logits, context %lld, n %d, %d threads",
              (long long)L0, n, nthreads);
    int kv_same = 1;
    for (int l = 0; l < t->n_layers; l++) {
        const size_t off = ((size_t)l * a.cap + (size_t)L0) * D, bytes = sizeof(float) * (size_t)(n * D);
        kv_same &= !memcmp(a.k + off, b.k + off, bytes) && !memcmp(a.v + off, b.v + off, bytes);
    }
    CHECK_MSG(kv_same, "cached K/V, context %lld, n %d, %d threads", (long long)L0, n, nthreads);
    vx_gpt2_kv_free(&a), vx_gpt2_kv_free(&b);
    free(pre), free(steps), free(x), free(xs), free(h1), free(l1), free(ls);
}

static void test_forward_steps(void) {
    /* 2 heads of 32, 2600 positions: contexts past the 2048-key split */
    const vx_gpt2_synth_dims dims = {64, 2, 2600, 50, 6563, 16, 0.125f, 0.0625f};
    vx_weights *w = NULL;
    vx_err err = {0};
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    vx_t3_gpt2 t;
    CHECK(vx_t3_gpt2_synthetic_dims(&dims, VX_F32, 7, &w, &err) == VOCIS_OK);
    if (!w) return;
    if (vx_t3_gpt2_init(&t, w, &cfg, 2, &err) != VOCIS_OK) {
        CHECK_MSG(0, "%s", err.msg);
        vx_weights_close(w);
        return;
    }
    t.w = w;
    const int64_t contexts[] = {1, 9, 2040, 2100, 2560};
    const int ns[] = {1, 2, 5, 17};
    for (size_t c = 0; c < sizeof contexts / sizeof contexts[0]; c++)
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
            for (int th = 1; th <= 3; th++) {
                if (contexts[c] + ns[i] > dims.positions) continue;
                if (contexts[c] > 100 && th == 2 && ns[i] < 17) continue; /* the long prefills are the slow part */
                check_forward_steps(&t, contexts[c], ns[i], th);
            }
    vx_t3_gpt2_free(&t);
}

/* ---- 3. generation ---- */

typedef struct run {
    int32_t *tokens;
    int n;
    vocis_status st;
    vx_rng rng;
    float *logits;
    vx_spec_ctl rep;
} run;

typedef struct cancel_at {
    int step;
} cancel_at;

static int on_token_cancel(void *user, int step, int32_t tok) {
    (void)tok;
    return step == ((cancel_at *)user)->step;
}

typedef struct request {
    float spk[256];
    int64_t prompt[40];
    int n_prompt;
    int32_t text[12];
    int n_text;
} request;

static run generate(const vx_t3_gpt2 *t, const request *r, vx_turbo_sampling s, uint64_t seed, int draft) {
    run o = {0};
    o.logits = malloc(sizeof(float) * (size_t)(s.max_new_tokens + 1) * (size_t)t->speech_head.rows);
    s.rec_logits = o.logits;
    vx_rng_seed(&o.rng, seed);
    vx_err err = {0};
    o.st = vx_t3_gpt2_generate_ex(t, r->spk, r->prompt, r->n_prompt, r->text, r->n_text, &s, &o.rng, 2, draft,
                                  &o.rep, &o.tokens, &o.n, &err);
    return o;
}

static void run_free(run *o) { free(o->tokens), free(o->logits); }

/* Speculative (setting k, the given draft) against plain decoding; returns the speculative run's proposals. */
static int64_t check_same(const vx_t3_gpt2 *t, const request *r, vx_turbo_sampling s, uint64_t seed, int k,
                          int draft, const char *what) {
    s.speculate = VX_SPEC_OFF;
    run p = generate(t, r, s, seed, VX_DRAFT_QUANT);
    s.speculate = k;
    run q = generate(t, r, s, seed, draft);
    const size_t V = (size_t)t->speech_head.rows;
    CHECK_MSG(p.st == q.st, "%s: status %d vs %d", what, p.st, q.st);
    CHECK_MSG(p.n == q.n, "%s: %d vs %d tokens", what, p.n, q.n);
    if (p.n == q.n && p.tokens && q.tokens)
        CHECK_MSG(!memcmp(p.tokens, q.tokens, sizeof(int32_t) * (size_t)p.n), "%s: tokens differ", what);
    if (p.n == q.n) CHECK_MSG(!memcmp(p.logits, q.logits, sizeof(float) * V * (size_t)p.n), "%s: logits", what);
    CHECK_MSG(!memcmp(&p.rng, &q.rng, sizeof p.rng), "%s: rng state differs", what);
    const int64_t proposed = q.rep.proposed;
    if (draft == VX_DRAFT_SAME) CHECK_MSG(q.rep.accepted == q.rep.proposed, "%s: a right draft rejected", what);
    if (draft == VX_DRAFT_CONTRARY) CHECK_MSG(q.rep.accepted == 0, "%s: a wrong draft accepted", what);
    run_free(&p), run_free(&q);
    return proposed;
}

static void random_request(const vx_t3_gpt2 *t, request *r) {
    for (int i = 0; i < t->speaker_dim; i++) r->spk[i] = (float)rnd(2001) / 1000.0f - 1.0f;
    r->n_prompt = 1 + (int)rnd(40);
    for (int i = 0; i < r->n_prompt; i++) r->prompt[i] = rnd(6561);
    r->n_text = 1 + (int)rnd(12);
    for (int i = 0; i < r->n_text; i++) r->text[i] = (int32_t)rnd((uint32_t)t->text_emb.rows);
}

static vx_turbo_sampling random_sampling(void) {
    static const float temps[] = {0.05f, 0.5f, 0.8f, 1.0f, 1.3f, 2.0f};
    static const int top_ks[] = {0, 1, 2, 10, 100, 1000};
    static const float top_ps[] = {1.0f, 0.95f, 0.8f, 0.3f};
    static const float penalties[] = {1.0f, 1.2f, 1.5f, 3.0f};
    vx_turbo_sampling s = {temps[rnd(6)], top_ks[rnd(6)], top_ps[rnd(4)], penalties[rnd(4)], (int)rnd(90),
                           rnd(7) == 0, NULL, NULL, NULL, VX_SPEC_AUTO};
    if (rnd(6) == 0) s.max_new_tokens = 250 + (int)rnd(100); /* past the tiny models' planted stop (~200) */
    return s;
}

/* The tiny checkpoint's T3 in exact mode; 0, or -1 with a failed check. */
static int load_t3(const char *folder, vx_t3_gpt2 *t) {
    vx_err err = {0};
    vx_cb_config cfg;
    const char *dir = tl_path(folder);
    if (vx_turbo_config(dir, NULL, &cfg, &err) || vx_t3_gpt2_load(t, dir, &cfg, VX_PREC_EXACT, &err)) {
        CHECK_MSG(0, "%s: %s", folder, err.msg);
        return -1;
    }
    return 0;
}

static void test_generation(const char *folder) {
    vx_t3_gpt2 t;
    if (load_t3(folder, &t)) return;
    char what[160];
    int64_t proposed = 0;
    for (int c = 0; c < 40; c++) {
        request r;
        random_request(&t, &r);
        vx_turbo_sampling s = random_sampling();
        const uint64_t seed = rnd(1u << 30);
        const int k = rnd(4) == 0 ? VX_SPEC_AUTO : 1 + (int)rnd(VX_SPEC_KMAX);
        snprintf(what, sizeof what, "%s combo %d (T %g top-k %d top-p %g penalty %g max %d greedy %d k %d)", folder, c,
                 s.temperature, s.top_k, s.top_p, s.repetition_penalty, s.max_new_tokens, s.greedy, k);
        proposed += check_same(&t, &r, s, seed, k, VX_DRAFT_QUANT, what);
        if (c % 4 == 0) { /* a stop token that is drawn mid-way: rounds end inside their proposals */
            s.speculate = VX_SPEC_OFF;
            run p = generate(&t, &r, s, seed, VX_DRAFT_QUANT);
            const int32_t stop = t.cfg.stop_speech_token;
            if (p.n > 4) t.cfg.stop_speech_token = p.tokens[p.n / 2];
            run_free(&p);
            check_same(&t, &r, s, seed, k, VX_DRAFT_QUANT, "mid-way stop token");
            t.cfg.stop_speech_token = stop;
        }
        if (c % 5 == 0) {
            check_same(&t, &r, s, seed, 1 + (int)rnd(VX_SPEC_KMAX), VX_DRAFT_SAME, "right draft");
            check_same(&t, &r, s, seed, 1 + (int)rnd(VX_SPEC_KMAX), VX_DRAFT_CONTRARY, "wrong draft");
        }
        if (c % 8 == 0) { /* a cancel mid-round */
            cancel_at at = {(int)rnd(20)};
            s.on_token = on_token_cancel, s.user = &at, s.max_new_tokens = 60;
            check_same(&t, &r, s, seed, 6, VX_DRAFT_QUANT, "cancel");
        }
    }
    CHECK_MSG(proposed > 0, "%s: the speculative path never ran", folder);
    /* a right draft over a long run: every round proposes k and keeps k + 1 */
    request r;
    random_request(&t, &r);
    vx_turbo_sampling s = {0.8f, 1000, 0.95f, 1.2f, 120, 0, NULL, NULL, NULL, 4};
    CHECK(check_same(&t, &r, s, 3, 4, VX_DRAFT_SAME, "right draft, k 4") >= 4 * 20);
    vx_t3_gpt2_free(&t);
}

/* ---- 4. continuous batching ---- */

static void test_batch(const char *folder) {
    enum { N = 6 };
    vx_err err = {0};
    vx_t3_gpt2 t;
    if (load_t3(folder, &t)) return;
    const size_t V = (size_t)t.speech_head.rows;
    for (int round = 0; round < 3; round++) {
        request r[N];
        vx_turbo_sampling s[N];
        uint64_t seed[N];
        int join[N], id[N];
        cancel_at at[N];
        run solo[N], b[N];
        vx_t3_gpt2_batch *bt = NULL;
        CHECK(vx_t3_gpt2_batch_new(&t, N, &bt, &err) == VOCIS_OK);
        if (!bt) break;
        for (int i = 0; i < N; i++) {
            random_request(&t, &r[i]);
            s[i] = random_sampling();
            s[i].max_new_tokens = 20 + (int)rnd(60);
            s[i].speculate = rnd(3) == 0 ? VX_SPEC_OFF : rnd(2) ? VX_SPEC_AUTO : 1 + (int)rnd(VX_SPEC_KMAX);
            if (i == 2) at[i].step = 5 + (int)rnd(10), s[i].on_token = on_token_cancel, s[i].user = &at[i];
            seed[i] = rnd(1u << 30);
            join[i] = i == 0 ? 0 : join[i - 1] + (int)rnd(6);
            solo[i] = generate(&t, &r[i], s[i], seed[i], VX_DRAFT_QUANT);
            b[i] = (run){0};
            b[i].logits = malloc(sizeof(float) * (size_t)(s[i].max_new_tokens + 1) * V);
            s[i].rec_logits = b[i].logits;
            vx_rng_seed(&b[i].rng, seed[i]);
            id[i] = -1;
        }
        int added = 0, step = 0;
        while (added < N || vx_t3_gpt2_batch_active(bt)) {
            for (int i = 0; i < N; i++)
                if (id[i] == -1 && join[i] <= step && !b[i].st) { /* -2: taken */
                    const vx_t3_gpt2_req q = {r[i].spk, r[i].prompt, r[i].n_prompt, r[i].text, r[i].n_text, &s[i],
                                              &b[i].rng};
                    b[i].st = vx_t3_gpt2_batch_add(bt, &q, 2, &id[i], &err);
                    added++;
                }
            CHECK(vx_t3_gpt2_batch_step(bt, 2, &err) == VOCIS_OK);
            for (int i = 0; i < N; i++)
                if (id[i] >= 0 && vx_t3_gpt2_batch_done(bt, id[i])) {
                    b[i].st = vx_t3_gpt2_batch_take(bt, id[i], &b[i].tokens, &b[i].n, &err);
                    id[i] = -2;
                }
            step++;
        }
        for (int i = 0; i < N; i++) {
            CHECK_MSG(solo[i].st == b[i].st, "%s batch %d request %d: status %d vs %d", folder, round, i, solo[i].st,
                      b[i].st);
            CHECK_MSG(solo[i].n == b[i].n, "%s batch %d request %d: %d vs %d tokens", folder, round, i, solo[i].n,
                      b[i].n);
            if (solo[i].n == b[i].n && b[i].tokens) {
                CHECK_MSG(!memcmp(solo[i].tokens, b[i].tokens, sizeof(int32_t) * (size_t)b[i].n),
                          "%s batch %d request %d: tokens differ", folder, round, i);
                CHECK_MSG(!memcmp(solo[i].logits, b[i].logits, sizeof(float) * V * (size_t)b[i].n),
                          "%s batch %d request %d: logits differ", folder, round, i);
            }
            CHECK_MSG(!memcmp(&solo[i].rng, &b[i].rng, sizeof b[i].rng), "%s batch %d request %d: rng state", folder,
                      round, i);
            run_free(&solo[i]), run_free(&b[i]);
        }
        CHECK(vx_t3_gpt2_batch_free_slots(bt) == N);
        vx_t3_gpt2_batch_free(bt);
    }
    vx_t3_gpt2_free(&t);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    check_linear_rows(VX_F32, 0, 67, 130);
    check_linear_rows(VX_F32, 1, 300, 64);
    check_linear_rows(VX_BF16, 1, 67, 130);
    check_linear_rows(VX_Q8, 1, 67, 130);
    test_forward_steps();
    test_generation("chatterbox-turbo/ckpt");
    test_generation("chatterbox-nano/ckpt");
    test_batch("chatterbox-turbo/ckpt");
    test_batch("chatterbox-nano/ckpt");
    return tl_finish("test_turbo_spec");
}
