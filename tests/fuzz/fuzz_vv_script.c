/* libFuzzer target: arbitrary bytes as a VibeVoice script
 * (vx_vv_script_parse, vx_vv_script_join), and every parsed script
 * through vx_vv_process with the test model's tokenizer + config and short
 * synthetic voices (none, and one per speaker when there are few).
 * Data: $VOCIS_FUZZ_DATA or the compiled-in tests/data. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "models/vibevoice/config.h"
#include "models/vibevoice/processor.h"
#include "text/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_VOICES 4
#define VOICE_LEN 4000

static vx_tokenizer *tok;
static vx_vv_config cfg;
static vx_vv_processor proc;
static float voice[MAX_VOICES][VOICE_LEN];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    vx_err e = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", fz_data_path("vibevoice/model"));
    if (vx_vv_config_load(dir, &cfg, &e) != VOCIS_OK ||
        vx_tokenizer_load(fz_data_path("vibevoice/model/tokenizer.json"), &tok, &e) != VOCIS_OK ||
        vx_vv_processor_init(&proc, tok, &cfg, &e) != VOCIS_OK) {
        fprintf(stderr, "fuzz_vv_script: %s (set VOCIS_FUZZ_DATA to the tests/data folder)\n", e.msg);
        abort();
    }
    for (int v = 0; v < MAX_VOICES; v++)
        for (int i = 0; i < VOICE_LEN; i++) voice[v][i] = 0.3f * sinf(0.01f * (float)(i * (v + 1)));
    return 0;
}

static void warn(void *user, const char *msg) {
    (void)msg;
    ++*(int *)user;
}

static void run_process(const vx_vv_script *s) {
    vx_err e = {0};
    vx_vv_voice vs[MAX_VOICES];
    int nv = s->n_speakers <= MAX_VOICES ? s->n_speakers : 0;
    for (int v = 0; v < nv; v++) {
        vs[v].samples = voice[v];
        vs[v].n = VOICE_LEN - 1000 * v; /* different lengths: padding and masks */
    }
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? nv : 0;
        if (pass && !nv) break;
        vx_vv_inputs in;
        if (vx_vv_process(&proc, s, vs, n, &in, &e) == VOCIS_OK) {
            int32_t nid = vx_tokenizer_size(tok);
            int64_t masked = 0;
            FZ_CHECK(in.n_tokens >= 1 && in.n_voices == n);
            for (int64_t i = 0; i < in.n_tokens; i++) {
                FZ_CHECK(in.input_ids[i] >= 0 && in.input_ids[i] < nid && in.input_ids[i] < cfg.vocab_size);
                FZ_CHECK(in.speech_input_mask[i] <= 1);
                if (in.speech_input_mask[i]) {
                    FZ_CHECK(in.input_ids[i] == proc.speech_diffusion_id);
                    masked++;
                }
            }
            int64_t frames = 0;
            for (int v = 0; v < in.n_voices; v++) {
                FZ_CHECK(in.voice_frames[v] >= 1 && in.voice_frames[v] <= in.n_frames);
                frames += in.voice_frames[v];
                for (int64_t k = 0; k < in.max_samples; k++)
                    FZ_CHECK(fabsf(in.speech_tensors[v * in.max_samples + k]) <= 1.0f);
            }
            FZ_CHECK(masked == frames);
            FZ_CHECK(in.input_ids[in.n_tokens - 1] == proc.speech_start_id);
        }
        vx_vv_inputs_free(&in);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    vx_err e = {0};
    const char *text = (const char *)data;
    vx_vv_script s;
    int nwarn = 0;
    if (vx_vv_script_parse(text, size, warn, &nwarn, &s, &e) == VOCIS_OK) {
        FZ_CHECK(s.n_lines >= 1 && s.n_speakers >= 1 && s.n_speakers <= s.n_lines);
        int mx = -1;
        for (int i = 0; i < s.n_lines; i++) {
            FZ_CHECK(s.lines[i].speaker >= 0 && s.lines[i].text && s.lines[i].text[0] == ' ');
            if (s.lines[i].speaker > mx) mx = s.lines[i].speaker;
        }
        FZ_CHECK(mx == s.max_speaker);
        run_process(&s);
    }
    vx_vv_script_free(&s);

    char *demo = NULL;
    int n_labels = 0;
    if (vx_vv_script_join(text, size, warn, &nwarn, &demo, &n_labels, &e) == VOCIS_OK) {
        FZ_CHECK(demo != NULL && n_labels >= 0);
        FZ_CHECK(n_labels > 0 || !*demo);
        vx_vv_script s2;
        if (vx_vv_script_parse(demo, strlen(demo), NULL, NULL, &s2, &e) == VOCIS_OK) run_process(&s2);
        vx_vv_script_free(&s2);
    }
    free(demo);
    return 0;
}
