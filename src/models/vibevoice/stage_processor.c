/* `vocis debug vv-processor --model DIR --script FILE --voice FILE [--voice FILE ...] --out OUT`
 * Needs only config.json, preprocessor_config.json and tokenizer.json of DIR. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/audio.h"
#include "io/jsonfile.h"
#include "models/stages.h"
#include "models/vibevoice/config.h"
#include "models/vibevoice/processor.h"

#define MAX_VOICES 64

static void warn_stderr(void *user, const char *msg) {
    (void)user;
    fprintf(stderr, "vocis: warning: %s\n", msg);
}

vocis_status vx_stage_vv_processor(const vx_stage_args *a, vx_err *err) {
    const char *script_path = NULL;
    const char *voice_paths[MAX_VOICES];
    int nv = 0;
    for (int i = 0; i < a->argc; i++) {
        const char *o = a->argv[i];
        int is_script = strcmp(o, "--script") == 0, is_voice = strcmp(o, "--voice") == 0;
        if (!is_script && !is_voice)
            return vx_fail(err, VOCIS_E_ARG, "unknown option '%s' (stage options: --script FILE --voice FILE ...)", o);
        if (i + 1 >= a->argc) return vx_fail(err, VOCIS_E_ARG, "option %s needs a value", o);
        const char *v = a->argv[++i];
        if (is_script) {
            script_path = v;
        } else {
            if (nv == MAX_VOICES) return vx_fail(err, VOCIS_E_ARG, "more than %d --voice options", MAX_VOICES);
            voice_paths[nv++] = v;
        }
    }
    if (!script_path) return vx_fail(err, VOCIS_E_ARG, "--script FILE is required");
    if (nv == 0) return vx_fail(err, VOCIS_E_ARG, "at least one --voice FILE is required");

    vx_vv_config cfg;
    VX_TRY(vx_vv_config_load(a->model_dir, &cfg, err));

    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.json", a->model_dir);
    vx_tokenizer *tok = NULL;
    char *script_text = NULL;
    vx_vv_script script = {0};
    vx_vv_voice voices[MAX_VOICES];
    float *bufs[MAX_VOICES] = {0};
    vx_vv_inputs in = {0};
    int64_t *i64 = NULL;
    int32_t *i32 = NULL;
    vx_vv_processor proc;
    size_t slen = 0;

    vocis_status st = vx_tokenizer_load(path, &tok, err);
    if (st == VOCIS_OK) st = vx_vv_processor_init(&proc, tok, &cfg, err);
    if (st == VOCIS_OK) st = vx_read_file(script_path, 64u << 20, &script_text, &slen, err);
    if (st == VOCIS_OK) {
        st = vx_vv_script_parse(script_text, slen, warn_stderr, NULL, &script, err);
        if (st != VOCIS_OK) vx_errctx(err, "%s", script_path);
    }
    for (int i = 0; i < nv && st == VOCIS_OK; i++) {
        st = vx_audio_read(voice_paths[i], proc.sampling_rate, &bufs[i], &voices[i].n, err);
        voices[i].samples = bufs[i];
    }
    if (st == VOCIS_OK) st = vx_vv_process(&proc, &script, voices, nv, &in, err);

    if (st == VOCIS_OK) {
        size_t L = (size_t)in.n_tokens, V = (size_t)in.n_voices, F = (size_t)in.n_frames;
        size_t n32 = L > V * F ? L : V * F;
        i64 = vx_malloc(err, (L ? L : 1) * sizeof *i64, "input ids");
        i32 = i64 ? vx_malloc(err, (n32 ? n32 : 1) * sizeof *i32, "masks") : NULL;
        if (!i64 || !i32) st = VOCIS_E_NOMEM;
        if (st == VOCIS_OK) {
            for (size_t t = 0; t < L; t++)
                i64[t] = in.input_ids[t];
            st = vx_st_writer_add(a->out, "input_ids", VX_I64, VX_DIMS(1, (int64_t)L), i64, err);
        }
        if (st == VOCIS_OK) {
            for (size_t t = 0; t < L; t++)
                i64[t] = 1;
            st = vx_st_writer_add(a->out, "attention_mask", VX_I64, VX_DIMS(1, (int64_t)L), i64, err);
        }
        if (st == VOCIS_OK) {
            for (size_t t = 0; t < L; t++)
                i32[t] = in.speech_input_mask[t];
            st = vx_st_writer_add(a->out, "speech_input_mask", VX_I32, VX_DIMS(1, (int64_t)L), i32, err);
        }
        if (st == VOCIS_OK)
            st = vx_st_writer_add(a->out, "speech_tensors", VX_F32, VX_DIMS((int64_t)V, in.max_samples),
                                  in.speech_tensors, err);
        if (st == VOCIS_OK) {
            for (size_t t = 0; t < V * F; t++)
                i32[t] = in.speech_masks[t];
            st = vx_st_writer_add(a->out, "speech_masks", VX_I32, VX_DIMS((int64_t)V, (int64_t)F), i32, err);
        }
    }

    free(i64);
    free(i32);
    vx_vv_inputs_free(&in);
    for (int i = 0; i < nv; i++)
        free(bufs[i]);
    vx_vv_script_free(&script);
    free(script_text);
    vx_tokenizer_free(tok);
    return st;
}
