/* Several threads calling vocis_speak on ONE model at once: their T3 steps run as one batched
 * forward (api/t3_engine.c: the Llama CFG-pair batch of English, the single-row GPT-2 batch of
 * Turbo and Nano), and each seeded call returns exactly the samples it returns alone. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "vocis.h"

enum { N = 4 };
static const char *const texts[N] = {"Hello there.", "A second, somewhat longer sentence to speak.",
                                     "Number three.", "And the last one, four."};

typedef struct job {
    vocis_model *m;
    vocis_voice *v;
    int k;
    vocis_audio a;
    vocis_status st;
    int together;
} job;

static pthread_barrier_t start; /* the threads call at once, so that their T3 steps overlap */

static void *run(void *p) {
    job *j = p;
    if (j->together) pthread_barrier_wait(&start);
    vocis_speak_options o;
    vocis_speak_options_default(&o);
    o.t3.seed = 10 + j->k;
    o.t3.max_new_tokens = 120;
    j->st = vocis_speak(j->m, j->v, texts[j->k], &o, &j->a);
    return NULL;
}

static void check_model(const char *folder) {
    vocis_open_options oo = {2, NULL, VOCIS_PRECISION_EXACT};
    vocis_model *m;
    if (vocis_model_open(tl_path(folder), &oo, &m) != VOCIS_OK) {
        CHECK_MSG(0, "%s: %s", folder, vocis_errmsg(m));
        vocis_model_close(m);
        return;
    }
    vocis_voice *v;
    CHECK(vocis_voice_load(m, NULL, &v) == VOCIS_OK);
    job alone[N], together[N];
    for (int k = 0; k < N; k++) {
        alone[k] = (job){m, v, k, {0}, 0, 0};
        run(&alone[k]);
        CHECK_MSG(alone[k].st == VOCIS_OK, "%s: %s", folder, vocis_errmsg(m));
    }
    vocis_batch_stats solo;
    vocis_batch_stats_get(m, &solo); /* one request at a time: one row per step */
    CHECK_MSG(solo.steps > 0 && solo.rows == solo.steps && solo.active == 0, "%s: alone %lld steps, %lld rows, %d active",
              folder, (long long)solo.steps, (long long)solo.rows, solo.active);
    pthread_t th[N];
    pthread_barrier_init(&start, NULL, N);
    for (int k = 0; k < N; k++) {
        together[k] = (job){m, v, k, {0}, 0, 1};
        CHECK(pthread_create(&th[k], NULL, run, &together[k]) == 0);
    }
    for (int k = 0; k < N; k++) pthread_join(th[k], NULL);
    pthread_barrier_destroy(&start);
    vocis_batch_stats all;
    vocis_batch_stats_get(m, &all); /* together: steps that carried several requests */
    const int64_t steps = all.steps - solo.steps, rows = all.rows - solo.rows;
    CHECK_MSG(steps > 0 && rows > steps && rows <= (int64_t)N * steps && all.active == 0,
              "%s: together %lld steps, %lld rows, %d active", folder, (long long)steps, (long long)rows, all.active);
    fprintf(stderr, "%s: %d requests at once: %lld steps, mean batch %.2f\n", folder, N, (long long)steps,
            steps ? (double)rows / (double)steps : 0.0);
    for (int k = 0; k < N; k++) {
        CHECK(together[k].st == VOCIS_OK);
        CHECK_MSG(together[k].a.n == alone[k].a.n &&
                      memcmp(together[k].a.samples, alone[k].a.samples, sizeof(float) * alone[k].a.n) == 0,
                  "%s request %d: %zu samples together vs %zu alone, or different samples", folder, k,
                  together[k].a.n, alone[k].a.n);
        vocis_audio_free(&alone[k].a);
        vocis_audio_free(&together[k].a);
    }
    vocis_voice_free(v);
    vocis_model_close(m);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    check_model("chatterbox/ckpt");
    check_model("chatterbox-turbo/ckpt");
    check_model("chatterbox-nano/ckpt");
    return tl_finish("test_speak_concurrent");
}
