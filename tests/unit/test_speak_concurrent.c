/* Several threads calling vocis_speak on ONE model at once: their steps run as one batched
 * forward (api/engine.c: the Llama CFG-pair batch of English, the single-row GPT-2 batch of
 * Turbo and Nano, the LM pairs of VibeVoice's generations, the upper-stack pairs of Realtime's
 * sessions), and each seeded call returns exactly
 * the samples it returns alone -- also when a neighbour is cancelled half-way. */
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
    const vocis_voice *v;
    int k;
    vocis_audio a;
    vocis_status st;
    int together;
    int cancel_after; /* > 0: cancel at that progress report */
    int reports;
    const int *seeds; /* NULL: 10 + k */
} job;

static pthread_barrier_t start; /* the threads call at once, so that their steps overlap */

static int progress(void *user, const vocis_progress *p) {
    job *j = user;
    (void)p;
    return j->cancel_after > 0 && ++j->reports >= j->cancel_after;
}

static void *run(void *p) {
    job *j = p;
    if (j->together) pthread_barrier_wait(&start);
    vocis_speak_options o;
    vocis_speak_options_for_model(j->m, &o);
    o.t3.seed = j->seeds ? j->seeds[j->k] : 10 + j->k;
    o.t3.max_new_tokens = 120;
    o.vv.max_seconds = 4.0f;
    o.on_progress = progress;
    o.user = j;
    j->st = vocis_speak(j->m, j->v, texts[j->k], &o, &j->a);
    return NULL;
}

/* Runs jobs[0..n) at once; returns the batch counters' growth. */
static void run_together(job *jobs, int n) {
    pthread_t th[N];
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int k = 0; k < n; k++) CHECK(pthread_create(&th[k], NULL, run, &jobs[k]) == 0);
    for (int k = 0; k < n; k++) pthread_join(th[k], NULL);
    pthread_barrier_destroy(&start);
}

static void check_same(const char *folder, const char *what, const job *alone, const job *together, int k) {
    CHECK_MSG(together->st == VOCIS_OK, "%s %s request %d: %s", folder, what, k, vocis_errmsg(together->m));
    CHECK_MSG(together->a.n == alone->a.n && alone->a.n > 0 &&
                  memcmp(together->a.samples, alone->a.samples, sizeof(float) * alone->a.n) == 0,
              "%s %s request %d: %zu samples together vs %zu alone, or different samples", folder, what, k,
              together->a.n, alone->a.n);
}

/* voice_files: NULL for the folder's built-in voice, else one recording / preset per request (VibeVoice);
 * seeds: NULL for 10 + k */
static void check_model(const char *folder, const char *const *voice_files, const int *seeds) {
    vocis_open_options oo = {2, NULL, VOCIS_PRECISION_EXACT};
    vocis_model *m;
    if (vocis_model_open(tl_path(folder), &oo, &m) != VOCIS_OK) {
        CHECK_MSG(0, "%s: %s", folder, vocis_errmsg(m));
        vocis_model_close(m);
        return;
    }
    vocis_voice *v[N] = {0};
    for (int k = 0; k < N; k++) {
        char path[4096];
        if (voice_files) snprintf(path, sizeof path, "%s", tl_path(voice_files[k]));
        if (k == 0 || voice_files) CHECK_MSG(vocis_voice_load(m, voice_files ? path : NULL, &v[k]) == VOCIS_OK, "%s",
                                             vocis_errmsg(m));
        if (!voice_files) v[k] = v[0];
    }
    job alone[N], together[N], cancel[N];
    for (int k = 0; k < N; k++) {
        alone[k] = (job){m, v[k], k, {0}, 0, 0, 0, 0, seeds};
        run(&alone[k]);
        CHECK_MSG(alone[k].st == VOCIS_OK, "%s: %s", folder, vocis_errmsg(m));
    }
    vocis_batch_stats solo;
    vocis_batch_stats_get(m, &solo); /* one request at a time: one row per step */
    CHECK_MSG(solo.steps > 0 && solo.rows == solo.steps && solo.active == 0, "%s: alone %lld steps, %lld rows, %d active",
              folder, (long long)solo.steps, (long long)solo.rows, solo.active);
    for (int k = 0; k < N; k++) together[k] = (job){m, v[k], k, {0}, 0, 1, 0, 0, seeds};
    run_together(together, N);
    vocis_batch_stats all;
    vocis_batch_stats_get(m, &all); /* together: steps that carried several requests */
    const int64_t steps = all.steps - solo.steps, rows = all.rows - solo.rows;
    CHECK_MSG(steps > 0 && rows > steps && rows <= (int64_t)N * steps && all.active == 0,
              "%s: together %lld steps, %lld rows, %d active", folder, (long long)steps, (long long)rows, all.active);
    fprintf(stderr, "%s: %d requests at once: %lld steps, mean batch %.2f; samples %zu %zu %zu %zu\n", folder, N,
            (long long)steps, steps ? (double)rows / (double)steps : 0.0, alone[0].a.n, alone[1].a.n, alone[2].a.n,
            alone[3].a.n);
    for (int k = 0; k < N; k++) check_same(folder, "together", &alone[k], &together[k], k);
    /* the last request cancelled after a few reports: the others are unchanged */
    for (int k = 0; k < N; k++) cancel[k] = (job){m, v[k], k, {0}, 0, 1, k == N - 1 ? 4 : 0, 0, seeds};
    run_together(cancel, N);
    CHECK_MSG(cancel[N - 1].st == VOCIS_E_CANCELLED, "%s: the cancelled request returned %d", folder,
              (int)cancel[N - 1].st);
    for (int k = 0; k + 1 < N; k++) check_same(folder, "beside a cancel", &alone[k], &cancel[k], k);
    vocis_batch_stats after;
    vocis_batch_stats_get(m, &after);
    CHECK_MSG(after.active == 0, "%s: %d requests left in the batch", folder, after.active);
    for (int k = 0; k < N; k++) {
        vocis_audio_free(&alone[k].a);
        vocis_audio_free(&together[k].a);
        vocis_audio_free(&cancel[k].a);
        if (k == 0 || voice_files) vocis_voice_free(v[k]);
    }
    vocis_model_close(m);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    /* a recording per request (the tiny model speaks with voice_1 only; loaded four times) */
    static const char *const vv_voices[N] = {"vibevoice/inputs/voice_1.wav", "vibevoice/inputs/voice_1.wav",
                                             "vibevoice/inputs/voice_1.wav", "vibevoice/inputs/voice_1.wav"};
    /* VibeVoice: seeds with which the tiny model speaks these texts, 1 to 4.5 s (others end at once) */
    static const int vv_seeds[N] = {10, 13, 14, 8};
    static const char *const rt_presets[N] = {
        "vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt",
        "vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt",
        "vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt",
        "vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt"};
    check_model("chatterbox/ckpt", NULL, NULL);
    check_model("chatterbox-turbo/ckpt", NULL, NULL);
    check_model("chatterbox-nano/ckpt", NULL, NULL);
    check_model("vibevoice/model", vv_voices, vv_seeds);
    check_model("vibevoice-realtime/model", rt_presets, NULL);
    return tl_finish("test_speak_concurrent");
}
