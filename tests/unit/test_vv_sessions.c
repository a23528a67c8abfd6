/* VibeVoice against the context (tiny model): the prompt's length in parts adds up to the prompt
 * vx_vv_process builds for any run of turns, the generation budget follows upstream's cap, and
 * the session plan refuses what cannot fit and otherwise packs whole turns greedily within it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/vibevoice/generate.h"
#include "testlib.h"

static const char SCRIPT[] = "Speaker 1: So tell us about the book.\n"
                             "Speaker 2: It took me three years.\n"
                             "Speaker 1: Hello, welcome back to the show!\n"
                             "Speaker 2: Thanks, it is great to be here.\n"
                             "Speaker 1: Wonderful.\n";
enum { N_LINES = 5 };
static char voice0[4096], voice1[4096];
static const char *const paths[2] = {voice0, voice1};

/* fixed + the lines' counts == the length of the prompt built for every run of lines */
static void test_prompt_length(const vx_vv_model *m, const vx_vv_request *r) {
    vx_err err = {0};
    int64_t fixed = -1, line[N_LINES];
    CHECK_MSG(vx_vv_prompt_length(&m->proc, &r->script, r->voices, r->n_voices, &fixed, line, &err) == VOCIS_OK,
              "%s", err.msg);
    CHECK(fixed > 0);
    for (int i = 0; i < N_LINES; i++) CHECK(line[i] > 0);
    int bad = 0;
    for (int first = 0; first < N_LINES; first++)
        for (int n = 1; first + n <= N_LINES; n++) {
            vx_vv_session s = {first, n, 0};
            vx_vv_inputs in;
            if (vx_vv_session_inputs(m, r, &s, &in, &err) != VOCIS_OK) {
                bad++;
                continue;
            }
            int64_t want = fixed;
            for (int i = first; i < first + n; i++) want += line[i];
            bad += in.n_tokens != want || in.n_voices != 2;
            vx_vv_inputs_free(&in);
        }
    CHECK_MSG(bad == 0, "%d runs of lines whose prompt is not fixed + their lines", bad);

    /* the whole script's session is vx_vv_prepare's prompt */
    vx_vv_inputs a, b;
    vx_vv_session whole = {0, N_LINES, 0};
    CHECK(vx_vv_prepare(m, SCRIPT, strlen(SCRIPT), paths, 2, NULL, NULL, &a, &err) == VOCIS_OK);
    CHECK(vx_vv_session_inputs(m, r, &whole, &b, &err) == VOCIS_OK);
    CHECK(a.n_tokens == b.n_tokens && a.n_tokens > 0 &&
          !memcmp(a.input_ids, b.input_ids, sizeof(int32_t) * (size_t)a.n_tokens) &&
          !memcmp(a.speech_input_mask, b.speech_input_mask, (size_t)a.n_tokens));
    vx_vv_inputs_free(&a);
    vx_vv_inputs_free(&b);
}

static void test_budget(const vx_vv_model *m) {
    vx_vv_gen_opts o;
    vx_vv_gen_opts_default(&o);
    CHECK(vx_vv_tokens_budget(m, 100, 3, &o) == 200); /* upstream's 2 x prompt */
    o.max_new_tokens = 150;
    CHECK(vx_vv_tokens_budget(m, 100, 3, &o) == 150);
    o.max_new_tokens = 500; /* upstream's cap still applies */
    CHECK(vx_vv_tokens_budget(m, 100, 3, &o) == 200);
    o.max_new_tokens = 0;
    o.max_seconds = 2.0; /* 15 frames + 2 per line + 2 */
    CHECK(vx_vv_tokens_budget(m, 100, 3, &o) == 15 + 6 + 2);
    o.max_seconds = 100.0;
    CHECK(vx_vv_tokens_budget(m, 100, 3, &o) == 200);
}

static void test_plan(vx_vv_model *m, const vx_vv_request *r) {
    vx_err err = {0};
    vx_vv_gen_opts o;
    vx_vv_gen_opts_default(&o);
    int64_t fixed, line[N_LINES], whole;
    CHECK(vx_vv_prompt_length(&m->proc, &r->script, r->voices, r->n_voices, &fixed, line, &err) == VOCIS_OK);
    whole = fixed;
    for (int i = 0; i < N_LINES; i++) whole += line[i];
    vx_vv_session *s = NULL;
    int n = 0;

    /* the whole script fits exactly at 3 x its prompt, not one position below */
    m->lm.max_positions = 3 * whole;
    CHECK(vx_vv_plan_sessions(m, r, &o, 0, &s, &n, &err) == VOCIS_OK && n == 1 && s[0].first_line == 0 &&
          s[0].n_lines == N_LINES && s[0].prompt_tokens == whole);
    free(s);
    m->lm.max_positions = 3 * whole - 1;
    CHECK(vx_vv_plan_sessions(m, r, &o, 0, &s, &n, &err) == VOCIS_E_ARG && s == NULL && n == 0);
    char want[200];
    snprintf(want, sizeof want, "needs ~%lld positions (prompt %lld + up to %lld generated), the model's context is %lld",
             (long long)(3 * whole), (long long)whole, (long long)(2 * whole), (long long)(3 * whole - 1));
    CHECK_MSG(strstr(err.msg, want) && strstr(err.msg, "--split-turns"), "%s", err.msg);

    /* split: in order, whole turns, each session within the context and as long as it can be */
    int n_refused = 0, n_split = 0;
    for (int64_t ctx = 3 * (fixed + 20); ctx <= 3 * whole + 3; ctx += 7) {
        m->lm.max_positions = ctx;
        vocis_status st = vx_vv_plan_sessions(m, r, &o, 1, &s, &n, &err);
        int longest = 0;
        for (int i = 0; i < N_LINES; i++) longest = line[i] > line[longest] ? i : longest;
        if (3 * (fixed + line[longest]) > ctx) { /* one turn alone does not fit */
            CHECK_MSG(st == VOCIS_E_ARG && strstr(err.msg, "on its own"), "ctx %lld: %s", (long long)ctx, err.msg);
            n_refused++;
            continue;
        }
        CHECK_MSG(st == VOCIS_OK, "ctx %lld: %s", (long long)ctx, err.msg);
        int next = 0;
        for (int k = 0; k < n && st == VOCIS_OK; k++) {
            int64_t L = fixed;
            for (int i = s[k].first_line; i < s[k].first_line + s[k].n_lines; i++) L += line[i];
            CHECK(s[k].first_line == next && s[k].n_lines >= 1 && s[k].prompt_tokens == L && 3 * L <= ctx);
            next = s[k].first_line + s[k].n_lines;
            if (next < N_LINES) CHECK(3 * (L + line[next]) > ctx); /* greedy: the next turn would not fit */
        }
        if (st == VOCIS_OK) CHECK(next == N_LINES);
        n_split += n > 1;
        free(s);
        s = NULL;
    }
    CHECK_MSG(n_refused > 0 && n_split > 0, "%d contexts refused, %d split", n_refused, n_split);

    /* max_seconds lowers the budget: a short preview of the whole script needs no split */
    m->lm.max_positions = whole + 60;
    o.max_seconds = 1.0; /* 8 frames + 2 x 5 + 2 */
    CHECK(vx_vv_plan_sessions(m, r, &o, 0, &s, &n, &err) == VOCIS_OK && n == 1);
    free(s);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    vx_vv_model m;
    vx_err err = {0};
    vocis_status st = vx_vv_model_load(&m, tl_path("vibevoice/model"), &err);
    CHECK_MSG(st == VOCIS_OK, "%s", err.msg);
    if (st) return tl_finish("test_vv_sessions");
    snprintf(voice0, sizeof voice0, "%s", tl_path("vibevoice/inputs/voice_0.wav"));
    snprintf(voice1, sizeof voice1, "%s", tl_path("vibevoice/inputs/voice_1.wav"));
    vx_vv_request r;
    st = vx_vv_request_load(&m, SCRIPT, strlen(SCRIPT), paths, 2, NULL, NULL, &r, &err);
    CHECK_MSG(st == VOCIS_OK && r.script.n_lines == N_LINES, "%s", err.msg);
    if (!st) {
        test_prompt_length(&m, &r);
        test_budget(&m);
        test_plan(&m, &r);
        vx_vv_request_free(&r);
    }
    vx_vv_model_free(&m);
    return tl_finish("test_vv_sessions");
}
