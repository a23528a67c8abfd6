/* Continuous batching of T3 (t3_batch.c): requests that run together, joining and leaving
 * at different steps, draw exactly the tokens they draw alone (same seed), with and without
 * CFG, sampled and greedy; slots are reused; a cancelled request does not disturb the others. */
#include <stdlib.h>
#include <string.h>

#include "models/chatterbox/conds.h"
#include "models/chatterbox/t3_batch.h"
#include "testlib.h"

typedef struct job {
    int32_t text[24];
    int n_text;
    vx_t3_sampling s;
    uint64_t seed;
    int join_at; /* batch step at which the job is added */
    int32_t *alone;
    int n_alone;
} job;

static int cancel_at_3(void *user, int step, int32_t tok) {
    (void)user, (void)tok;
    return step == 3;
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    vx_err err = {0};
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tl_path("chatterbox/ckpt"));
    CHECK(vx_cb_config_load(&cfg, dir, NULL, &err) == VOCIS_OK);
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
    const vx_t3_cond c = {conds.speaker_emb.data, conds.cond_prompt_speech_tokens.data,
                          (int)conds.cond_prompt_speech_tokens.n, 0.5f};
    enum { NJ = 5 };
    job jobs[NJ];
    for (int j = 0; j < NJ; j++) {
        job *b = &jobs[j];
        memset(b, 0, sizeof *b);
        b->n_text = 6 + 3 * j;
        b->text[0] = cfg.start_text_token;
        for (int i = 1; i < b->n_text - 1; i++) b->text[i] = 3 + (i * 37 + j * 11) % 200;
        b->text[b->n_text - 1] = cfg.stop_text_token;
        b->s = (vx_t3_sampling){0.8f, j == 2 ? 0.0f : 0.5f, 0.05f, 1.0f, 1.2f, 30 + 5 * j, j == 3, NULL, NULL};
        b->seed = 100 + (uint64_t)j;
        b->join_at = (int[]){0, 0, 2, 5, 9}[j];
        vx_rng rng;
        vx_rng_seed(&rng, b->seed);
        CHECK_MSG(vx_t3_generate(&t3, &c, b->text, b->n_text, &b->s, &rng, 2, &b->alone, &b->n_alone, &err) ==
                      VOCIS_OK,
                  "%s", err.msg);
    }

    /* all five through a batch of 3 slots: later jobs join when a slot frees up */
    vx_t3_batch *bt;
    CHECK(vx_t3_batch_new(&t3, 3, &bt, &err) == VOCIS_OK);
    vx_rng rngs[NJ];
    int id[NJ], added = 0, taken = 0, step = 0;
    for (int j = 0; j < NJ; j++) id[j] = -1;
    while (taken < NJ && step < 2000) {
        for (int j = added; j < NJ && jobs[j].join_at <= step && vx_t3_batch_free_slots(bt) > 0; j = ++added) {
            vx_rng_seed(&rngs[j], jobs[j].seed);
            CHECK_MSG(vx_t3_batch_add(bt, &c, jobs[j].text, jobs[j].n_text, &jobs[j].s, &rngs[j], 2, &id[j], &err) ==
                          VOCIS_OK,
                      "%s", err.msg);
        }
        CHECK(vx_t3_batch_step(bt, 2, &err) == VOCIS_OK);
        step++;
        for (int j = 0; j < added; j++) {
            if (id[j] < 0 || !vx_t3_batch_done(bt, id[j])) continue;
            int32_t *tok = NULL;
            int n = 0;
            CHECK(vx_t3_batch_take(bt, id[j], &tok, &n, &err) == VOCIS_OK);
            CHECK_MSG(n == jobs[j].n_alone && memcmp(tok, jobs[j].alone, sizeof(int32_t) * (size_t)n) == 0,
                      "job %d: %d tokens batched vs %d alone, or different ids", j, n, jobs[j].n_alone);
            free(tok);
            id[j] = -1;
            taken++;
        }
    }
    CHECK_MSG(taken == NJ, "%d of %d jobs finished", taken, NJ);

    /* a cancelled request finishes with its error; its neighbour is unaffected */
    vx_rng r0, r1;
    vx_rng_seed(&r0, jobs[0].seed);
    vx_rng_seed(&r1, jobs[1].seed);
    vx_t3_sampling sc = jobs[1].s;
    sc.on_token = cancel_at_3;
    int a, b;
    CHECK(vx_t3_batch_add(bt, &c, jobs[0].text, jobs[0].n_text, &jobs[0].s, &r0, 2, &a, &err) == VOCIS_OK);
    CHECK(vx_t3_batch_add(bt, &c, jobs[1].text, jobs[1].n_text, &sc, &r1, 2, &b, &err) == VOCIS_OK);
    while (vx_t3_batch_active(bt)) CHECK(vx_t3_batch_step(bt, 2, &err) == VOCIS_OK);
    int32_t *tok = NULL;
    int n = 0;
    vx_err e2 = {0};
    CHECK(vx_t3_batch_take(bt, b, &tok, &n, &e2) == VOCIS_E_CANCELLED && tok == NULL);
    CHECK(vx_t3_batch_take(bt, a, &tok, &n, &err) == VOCIS_OK);
    CHECK(n == jobs[0].n_alone && memcmp(tok, jobs[0].alone, sizeof(int32_t) * (size_t)n) == 0);
    free(tok);
    /* more requests than slots is an error, not a crash */
    int ids[4];
    vx_rng rr[4];
    for (int k = 0; k < 3; k++) {
        vx_rng_seed(&rr[k], 1);
        CHECK(vx_t3_batch_add(bt, &c, jobs[0].text, jobs[0].n_text, &jobs[0].s, &rr[k], 2, &ids[k], &err) == VOCIS_OK);
    }
    CHECK(vx_t3_batch_add(bt, &c, jobs[0].text, jobs[0].n_text, &jobs[0].s, &rr[3], 2, &ids[3], &err) == VOCIS_E_ARG);

    vx_t3_batch_free(bt);
    for (int j = 0; j < NJ; j++) free(jobs[j].alone);
    vx_cb_conds_free(&conds);
    vx_t3_free(&t3);
    return tl_finish("test_t3_batch");
}
