/* VibeVoice-Realtime sessions stepped together (vx_rt_sessions_step, the continuous batching of
 * concurrent speak calls): each session's samples equal its solo run's bit for bit, with every
 * part batched — the windows' text rows (lower and upper stack), the diffusion, the acoustic
 * decode and the positive/negative pair forward. Texts of several windows, two sessions starting
 * together (their text windows share the forwards), one joining three steps later, one whose
 * length cap ends it early. */
#include <stdlib.h>
#include <string.h>

#include "kernels/precision.h"
#include "models/vibevoice/realtime.h"
#include "testlib.h"

enum { NS = 3 };
static const char *const texts[NS] = {
    "The first speaker reads a sentence that spans several text windows of five tokens.",
    "A second one, starting at the same step, with a different and somewhat longer text to speak.",
    "The third joins later."};
static const int64_t caps[NS] = {90, 120, 40}; /* max_new_tokens: positions of text and frames */

static vx_rt_session *start(const vx_rt_model *m, const vx_rt_preset *p, vx_rng *rng, int i, int batched) {
    vx_err err = {0};
    vx_rt_opts o;
    vx_rt_opts_default(&o);
    vx_rng_seed(rng, 500 + (uint64_t)i);
    o.rng = rng;
    o.max_new_tokens = caps[i];
    o.nthreads = 2;
    o.batched = batched;
    vx_rt_session *s = NULL;
    CHECK_MSG(vx_rt_session_new(m, p, &o, &s, &err) == VOCIS_OK, "%s", err.msg);
    int32_t *ids = NULL;
    int64_t n = 0;
    CHECK_MSG(s && vx_rt_encode(m, texts[i], strlen(texts[i]), &ids, &n, &err) == VOCIS_OK, "%s", err.msg);
    CHECK_MSG(n > 2 * VX_RT_TEXT_WINDOW || i == NS - 1, "text %d has only %lld tokens", i, (long long)n);
    if (s && ids) CHECK_MSG(vx_rt_session_run_ids(s, ids, n, &err) == VOCIS_OK, "%s", err.msg);
    free(ids);
    return s;
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    vx_err err = {0};
    vx_rt_model m;
    vx_rt_preset p = {0};
    if (vx_rt_model_load(&m, tl_path("vibevoice-realtime/model"), NULL, 1, VX_PREC_EXACT, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return tl_finish("test_rt_batch");
    }
    CHECK_MSG(vx_rt_preset_load(tl_path("vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt"), &p, &err) ==
                  VOCIS_OK,
              "%s", err.msg);
    vx_rng rng[NS], rng_t[NS];
    float *alone[NS] = {0};
    int64_t n_alone[NS] = {0};
    for (int i = 0; i < NS; i++) { /* solo: the windows run inside run_ids */
        vx_rt_session *s = start(&m, &p, &rng[i], i, 0);
        if (s) alone[i] = vx_rt_session_take_audio(s, &n_alone[i]);
        CHECK_MSG(n_alone[i] > 0, "session %d alone: no audio", i);
        vx_rt_session_free(s);
    }
    vx_rt_session *s[NS] = {0};
    int steps = 0, most = 0;
    for (int i = 0; i < NS - 1; i++) s[i] = start(&m, &p, &rng_t[i], i, 1);
    for (;;) {
        if (steps == 3) s[NS - 1] = start(&m, &p, &rng_t[NS - 1], NS - 1, 1);
        vx_rt_session *live[NS];
        int n = 0;
        for (int i = 0; i < NS; i++)
            if (s[i] && vx_rt_session_ready(s[i])) live[n++] = s[i];
        if (n == 0 && steps > 3) break;
        CHECK_MSG(vx_rt_sessions_step(live, n, 2, &err) == VOCIS_OK, "%s", err.msg);
        most = n > most ? n : most;
        if (++steps > 10000) break;
    }
    CHECK_MSG(most == NS, "at most %d sessions stepped together", most);
    for (int i = 0; i < NS; i++) {
        int64_t n = 0;
        CHECK_MSG(s[i] && vx_rt_session_status(s[i], &err) == VOCIS_OK, "session %d: %s", i, err.msg);
        float *a = s[i] ? vx_rt_session_take_audio(s[i], &n) : NULL;
        CHECK_MSG(n == n_alone[i] && (n == 0 || !memcmp(a, alone[i], sizeof(float) * (size_t)n)),
                  "session %d: %lld samples together vs %lld alone, or different samples", i, (long long)n,
                  (long long)n_alone[i]);
        free(a), free(alone[i]);
        vx_rt_session_free(s[i]);
    }
    vx_rt_preset_free(&p);
    vx_rt_model_free(&m);
    return tl_finish("test_rt_batch");
}
