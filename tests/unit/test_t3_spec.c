/* Self-speculative decoding of the Llama T3 (Chatterbox English and
 * Multilingual, issue 20).
 *
 *   1. vx_tf_forward_steps: a verify forward over ns[s] positions of several
 *      sequences gives the hidden rows and cached K/V of one-position
 *      forwards, bit for bit, over contexts below and above the attention's
 *      key-split length (2048), at 1 and 2 threads, f32 and bf16 caches.
 *   2. Generation on the tiny English checkpoint: for random sampling
 *      settings (CFG or not, greedy, penalties, min-p, top-p, caps), seeds and
 *      k, speculative decoding gives plain decoding's tokens, progress calls
 *      and rng state (memcmp); a stop token drawn mid-round; the forced
 *      drafts (always right, always wrong); a cancel mid-round.
 *   3. Four requests speculating inside one batch, joining at different
 *      rounds, give their solo plain tokens. */
#include <stdlib.h>
#include <string.h>

#include "models/chatterbox/conds.h"
#include "models/chatterbox/t3_batch.h"
#include "testlib.h"

static uint64_t lcg_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n) {
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(lcg_state >> 33) % n;
}

/* ---- 1. the verify forward ---- */

static void check_forward_steps(vx_tf *tf, int kv_dtype, int64_t ctx, int nthreads) {
    vx_err err = {0};
    enum { NS = 3 };
    const int64_t ns[NS] = {3, 1, 5}, D = tf->dim;
    int64_t M = 0;
    for (int s = 0; s < NS; s++) M += ns[s];
    vx_tf_set_kv(tf, kv_dtype);
    vx_kv_cache a, b;
    CHECK(vx_kv_init(&a, tf, NS, 0, &err) == VOCIS_OK && vx_kv_init(&b, tf, NS, 0, &err) == VOCIS_OK);
    CHECK(vx_kv_reserve(&a, ctx + 8, &err) == VOCIS_OK && vx_kv_reserve(&b, ctx + 8, &err) == VOCIS_OK);
    CHECK(vx_kv_fill_synthetic(&a, ctx, &err) == VOCIS_OK && vx_kv_fill_synthetic(&b, ctx, &err) == VOCIS_OK);
    for (int s = 0; s < NS; s++) a.len[s] = b.len[s] = ctx - 7 * s; /* sequences at different lengths */
    float *x = tl_random_floats((size_t)(M * D)), *y = malloc(sizeof(float) * (size_t)(M * D));
    memcpy(y, x, sizeof(float) * (size_t)(M * D));
    const int seqs[NS] = {2, 0, 1};
    CHECK(vx_tf_forward_steps(tf, &a, seqs, NS, ns, x, nthreads, &err) == VOCIS_OK);
    int64_t r = 0;
    for (int s = 0; s < NS; s++)
        for (int64_t i = 0; i < ns[s]; i++, r++)
            CHECK(vx_tf_forward(tf, &b, &seqs[s], 1, 1, y + r * D, nthreads, NULL, NULL, &err) == VOCIS_OK);
    CHECK_MSG(!memcmp(x, y, sizeof(float) * (size_t)(M * D)), "forward_steps rows, kv %s, context %lld, %d threads",
              vx_kv_name(kv_dtype), (long long)ctx, nthreads);
    const size_t el = kv_dtype == VX_KV_BF16 ? 2 : 4;
    for (int l = 0; l < tf->n_layers; l++)
        for (int s = 0; s < NS; s++) {
            const size_t c = (size_t)l * NS + (size_t)s;
            CHECK(a.len[s] == b.len[s]);
            const void *ka = el == 2 ? (const void *)a.k16[c] : a.k[c], *kb = el == 2 ? (const void *)b.k16[c] : b.k[c];
            const void *va = el == 2 ? (const void *)a.v16[c] : a.v[c], *vb = el == 2 ? (const void *)b.v16[c] : b.v[c];
            const size_t bytes = (size_t)a.len[s] * (size_t)a.kv_dim * el;
            CHECK_MSG(!memcmp(ka, kb, bytes) && !memcmp(va, vb, bytes), "forward_steps K/V, layer %d seq %d", l, s);
        }
    vx_kv_free(&a), vx_kv_free(&b);
    free(x), free(y);
    vx_tf_set_kv(tf, VX_KV_F32);
}

/* ---- 2. generation ---- */

typedef struct cancel_at {
    int step; /* cancel at this progress call; -1 = never */
    int32_t seen[400];
    int n;
} cancel_at;

static int on_token(void *user, int step, int32_t tok) {
    cancel_at *c = user;
    if (c->n < 400) {
        const int in_order = step == c->n;
        c->seen[c->n++] = in_order ? tok : -1000 - step;
    }
    return step == c->step;
}

typedef struct run {
    vocis_status st;
    int32_t *tokens;
    int n;
    vx_rng rng;
    cancel_at calls;
    vx_spec_ctl rep;
} run;

typedef struct request {
    int32_t text[40];
    int n_text;
    float cfg_weight;
} request;

static const vx_t3 *g_t3;
static vx_t3_cond g_cond;

static run generate(const request *r, vx_t3_sampling s, uint64_t seed, int k, int draft, int cancel) {
    run out;
    memset(&out, 0, sizeof out);
    out.calls.step = cancel;
    s.speculate = k;
    s.on_token = on_token, s.user = &out.calls;
    vx_rng_seed(&out.rng, seed);
    vx_err err = {0};
    out.st = vx_t3_generate_ex(g_t3, &g_cond, r->text, r->n_text, &s, &out.rng, 2, draft, &out.rep, &out.tokens,
                               &out.n, &err);
    return out;
}

/* Plain and speculative decoding of one request agree; returns the proposals made. */
static int64_t check_same(const request *r, vx_t3_sampling s, uint64_t seed, int k, int draft, int cancel,
                          const char *what) {
    run p = generate(r, s, seed, VX_SPEC_OFF, VX_DRAFT_QUANT, cancel);
    run q = generate(r, s, seed, k, draft, cancel);
    CHECK_MSG(p.st == q.st, "%s: status %d vs %d", what, p.st, q.st);
    CHECK_MSG(p.n == q.n, "%s: %d vs %d tokens", what, p.n, q.n);
    if (p.n == q.n && p.tokens && q.tokens)
        CHECK_MSG(!memcmp(p.tokens, q.tokens, sizeof(int32_t) * (size_t)p.n), "%s: tokens differ", what);
    CHECK_MSG(p.calls.n == q.calls.n && !memcmp(p.calls.seen, q.calls.seen, sizeof(int32_t) * (size_t)p.calls.n),
              "%s: progress calls differ (%d vs %d)", what, p.calls.n, q.calls.n);
    CHECK_MSG(!memcmp(&p.rng, &q.rng, sizeof p.rng), "%s: rng state differs", what);
    CHECK_MSG(p.rep.proposed == 0, "%s: speculate off proposed tokens", what);
    if (draft == VX_DRAFT_SAME) CHECK_MSG(q.rep.accepted == q.rep.proposed, "%s: a right draft rejected", what);
    if (draft == VX_DRAFT_CONTRARY) CHECK_MSG(q.rep.accepted == 0, "%s: a wrong draft accepted", what);
    free(p.tokens), free(q.tokens);
    return q.rep.proposed;
}

static void random_request(const vx_t3 *t3, request *r) {
    r->n_text = 3 + (int)rnd(30);
    r->text[0] = t3->cfg.start_text_token;
    for (int i = 1; i < r->n_text - 1; i++) r->text[i] = (int32_t)rnd((uint32_t)t3->text_emb.rows);
    r->text[r->n_text - 1] = t3->cfg.stop_text_token;
    static const float cfgs[] = {0.0f, 0.5f, 0.5f, 1.0f, 3.0f};
    r->cfg_weight = cfgs[rnd(5)];
}

static vx_t3_sampling random_sampling(const request *r) {
    static const float temps[] = {0.05f, 0.5f, 0.8f, 1.0f, 1.3f, 2.0f};
    static const float min_ps[] = {0.0f, 0.05f, 0.1f, 0.3f};
    static const float top_ps[] = {1.0f, 0.95f, 0.8f, 0.3f};
    static const float penalties[] = {1.0f, 1.2f, 1.5f, 3.0f};
    vx_t3_sampling s = {temps[rnd(6)],      r->cfg_weight, min_ps[rnd(4)], top_ps[rnd(4)], penalties[rnd(4)],
                        1 + (int)rnd(80), rnd(7) == 0,   NULL,           NULL,           VX_SPEC_AUTO};
    return s;
}

static void test_generation(const vx_t3 *t3) {
    char what[200];
    int64_t proposed = 0;
    for (int c = 0; c < 56; c++) {
        request r;
        random_request(t3, &r);
        vx_t3_sampling s = random_sampling(&r);
        const uint64_t seed = rnd(1u << 30);
        const int k = rnd(4) == 0 ? VX_SPEC_AUTO : 1 + (int)rnd(VX_SPEC_KMAX);
        snprintf(what, sizeof what, "combo %d (T %g cfg %g min-p %g top-p %g penalty %g max %d greedy %d k %d)", c,
                 s.temperature, s.cfg_weight, s.min_p, s.top_p, s.repetition_penalty, s.max_new_tokens, s.greedy, k);
        proposed += check_same(&r, s, seed, k, VX_DRAFT_QUANT, -1, what);
        if (c % 4 == 0) { /* a stop token drawn mid-way: rounds end inside their proposals */
            run p = generate(&r, s, seed, VX_SPEC_OFF, VX_DRAFT_QUANT, -1);
            vx_t3 *m = (vx_t3 *)t3;
            const int32_t stop = m->cfg.stop_speech_token;
            if (p.n > 4) m->cfg.stop_speech_token = p.tokens[p.n / 2];
            free(p.tokens);
            check_same(&r, s, seed, k, VX_DRAFT_QUANT, -1, "mid-way stop token");
            m->cfg.stop_speech_token = stop;
        }
        if (c % 5 == 0) {
            check_same(&r, s, seed, 1 + (int)rnd(VX_SPEC_KMAX), VX_DRAFT_SAME, -1, "right draft");
            check_same(&r, s, seed, 1 + (int)rnd(VX_SPEC_KMAX), VX_DRAFT_CONTRARY, -1, "wrong draft");
        }
        if (c % 7 == 0) { /* a cancel mid-round */
            s.max_new_tokens = 60;
            check_same(&r, s, seed, 6, VX_DRAFT_QUANT, (int)rnd(30), "cancel");
        }
    }
    CHECK_MSG(proposed > 0, "the speculative path never ran");
    /* a right draft over a long run: every round proposes k and keeps k + 1 */
    request r;
    random_request(t3, &r);
    r.cfg_weight = 0.5f;
    vx_t3_sampling s = {0.8f, 0.5f, 0.05f, 1.0f, 1.2f, 120, 0, NULL, NULL, 4};
    run q = generate(&r, s, 3, 4, VX_DRAFT_SAME, -1);
    CHECK_MSG(q.st == VOCIS_OK && q.rep.accepted == q.rep.proposed && q.rep.rounds > 0 &&
                  q.rep.tokens >= 4 * q.rep.rounds,
              "right draft, k 4: %lld rounds, %lld of %lld accepted, %lld tokens", (long long)q.rep.rounds,
              (long long)q.rep.accepted, (long long)q.rep.proposed, (long long)q.rep.tokens);
    free(q.tokens);
}

/* ---- 3. speculating inside a batch ---- */

static void test_batch(const vx_t3 *t3) {
    enum { NJ = 4 };
    request r[NJ];
    vx_t3_sampling s[NJ];
    run alone[NJ];
    const int join_at[NJ] = {0, 0, 1, 3}, ks[NJ] = {VX_SPEC_AUTO, 3, VX_SPEC_OFF, 8};
    for (int j = 0; j < NJ; j++) {
        random_request(t3, &r[j]);
        s[j] = random_sampling(&r[j]);
        s[j].max_new_tokens = 40 + 10 * j;
        alone[j] = generate(&r[j], s[j], 50 + (uint64_t)j, VX_SPEC_OFF, VX_DRAFT_QUANT, -1);
        s[j].speculate = ks[j];
        s[j].on_token = NULL;
    }
    vx_err err = {0};
    vx_t3_batch *b;
    CHECK(vx_t3_batch_new(t3, NJ, &b, &err) == VOCIS_OK);
    vx_rng rng[NJ];
    int id[NJ], added = 0, taken = 0;
    for (int step = 0; taken < NJ && step < 1000; step++) {
        for (; added < NJ && join_at[added] <= step; added++) {
            vx_rng_seed(&rng[added], 50 + (uint64_t)added);
            CHECK_MSG(vx_t3_batch_add(b, &g_cond, r[added].text, r[added].n_text, &s[added], &rng[added], 2,
                                      &id[added], &err) == VOCIS_OK,
                      "%s", err.msg);
        }
        CHECK(vx_t3_batch_step(b, 2, &err) == VOCIS_OK);
        for (int j = 0; j < added; j++) {
            if (id[j] < 0 || !vx_t3_batch_done(b, id[j])) continue;
            int32_t *tok = NULL;
            int n = 0;
            CHECK(vx_t3_batch_take(b, id[j], &tok, &n, &err) == VOCIS_OK);
            CHECK_MSG(n == alone[j].n && !memcmp(tok, alone[j].tokens, sizeof(int32_t) * (size_t)n),
                      "batched request %d (speculate %d): %d tokens vs %d alone, or different ids", j, ks[j], n,
                      alone[j].n);
            CHECK_MSG(!memcmp(&rng[j], &alone[j].rng, sizeof rng[j]), "batched request %d: rng state", j);
            free(tok);
            id[j] = -1;
            taken++;
        }
    }
    CHECK_MSG(taken == NJ, "%d of %d batched requests finished", taken, NJ);
    vx_spec_ctl tot;
    vx_t3_batch_spec_totals(b, &tot);
    CHECK_MSG(tot.proposed > 0, "no request speculated in the batch");
    vx_t3_batch_free(b);
    for (int j = 0; j < NJ; j++) free(alone[j].tokens);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    vx_err err = {0};
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    CHECK(vx_cb_config_load(&cfg, tl_path("chatterbox/ckpt"), NULL, &err) == VOCIS_OK);
    vx_t3 t3;
    if (vx_t3_load(&t3, tl_path("chatterbox/ckpt/t3_cfg.safetensors"), &cfg, &err) != VOCIS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    vx_cb_conds conds;
    if (vx_cb_conds_load_pt(tl_path("chatterbox/ckpt/conds.pt"), &conds, &err) != VOCIS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    g_t3 = &t3;
    g_cond = (vx_t3_cond){conds.speaker_emb.data, conds.cond_prompt_speech_tokens.data,
                          (int)conds.cond_prompt_speech_tokens.n, 0.5f};

    for (int th = 1; th <= 2; th++) {
        check_forward_steps(&t3.tf, VX_KV_F32, 40, th);
        check_forward_steps(&t3.tf, VX_KV_F32, 2100, th);
        check_forward_steps(&t3.tf, VX_KV_BF16, 2100, th);
    }
    test_generation(&t3);
    test_batch(&t3);

    vx_cb_conds_free(&conds);
    vx_t3_free(&t3);
    return tl_finish("test_t3_spec");
}
