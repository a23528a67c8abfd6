/* `vocis debug vv-generate --model DIR --script FILE --voice FILE ... [--in 08_e2e.safetensors]
 *  [--seed N] [--cfg-scale F] [--steps N] [--max-new-tokens N] --out OUT`
 *
 * Upstream's generate() end to end; writes the 08_e2e tensors (sequences, generated_ids,
 * prompt_sample_*, prompt_acoustic_*, frame_*, step_valid_logits, audio). With --in, the
 * recorded noise (prompt_sample_std_noise, prompt_sample_noise, frame_init_noise) is injected
 * instead of drawn; with --seed the draws follow torch.manual_seed(N). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "io/jsonfile.h"
#include "kernels/precision.h"
#include "models/stages.h"
#include "models/vibevoice/generate.h"

#define MAX_VOICES 64

static void warn_stderr(void *user, const char *msg) {
    (void)user;
    fprintf(stderr, "vocis: warning: %s\n", msg);
}

static vocis_status opt_num(const char *name, const char *v, double lo, double hi, double *out, vx_err *err) {
    char *end;
    double x = strtod(v, &end);
    if (*end || end == v || x < lo || x > hi)
        return vx_fail(err, VOCIS_E_ARG, "vv-generate: %s: invalid value '%s' (expected %g..%g)", name, v, lo, hi);
    *out = x;
    return VOCIS_OK;
}

vocis_status vx_stage_vv_generate(const vx_stage_args *a, vx_err *err) {
    const char *script_path = NULL, *voice_paths[MAX_VOICES];
    int nv = 0, have_seed = 0;
    double seed = 0, cfg = 1.3, steps = 10, max_new = 0;
    for (int i = 0; i < a->argc; i++) {
        const char *o = a->argv[i], *v = i + 1 < a->argc ? a->argv[i + 1] : NULL;
        if (!v) return vx_fail(err, VOCIS_E_ARG, "vv-generate: option %s needs a value", o);
        i++;
        if (!strcmp(o, "--script")) script_path = v;
        else if (!strcmp(o, "--voice")) {
            if (nv == MAX_VOICES) return vx_fail(err, VOCIS_E_ARG, "vv-generate: more than %d voices", MAX_VOICES);
            voice_paths[nv++] = v;
        } else if (!strcmp(o, "--seed")) {
            VX_TRY(opt_num(o, v, 0, 9007199254740992.0, &seed, err));
            have_seed = 1;
        } else if (!strcmp(o, "--cfg-scale")) VX_TRY(opt_num(o, v, 0, 100, &cfg, err));
        else if (!strcmp(o, "--steps")) VX_TRY(opt_num(o, v, 1, VX_DPM_MAX_STEPS, &steps, err));
        else if (!strcmp(o, "--max-new-tokens")) VX_TRY(opt_num(o, v, 1, 1e9, &max_new, err));
        else
            return vx_fail(err, VOCIS_E_ARG,
                           "vv-generate: unknown option '%s' (options: --script FILE --voice FILE... --seed N "
                           "--cfg-scale F --steps N --max-new-tokens N)",
                           o);
    }
    if (!script_path) return vx_fail(err, VOCIS_E_ARG, "vv-generate: --script FILE is required");
    if (!a->in && !have_seed) return vx_fail(err, VOCIS_E_ARG, "vv-generate: give --in (recorded noise) or --seed N");

    vx_vv_model m;
    VX_TRY(vx_vv_model_load_prec(&m, a->model_dir, NULL, a->precision ? a->precision : VX_PREC_EXACT, err));
    char *text = NULL;
    size_t len = 0;
    vx_vv_inputs in = {0};
    float *std_noise = NULL, *noise = NULL, *frames = NULL, *audio = NULL;
    vx_rng rng;
    vx_vv_gen_opts o;
    vx_vv_gen_opts_default(&o);
    o.cfg_scale = (float)cfg;
    o.n_steps = (int)steps;
    o.max_new_tokens = (int64_t)max_new;
    o.nthreads = a->nthreads;
    o.trace = a->out;
    if (have_seed) {
        vx_rng_seed(&rng, (uint64_t)seed);
        o.rng = &rng;
    }
    vocis_status st = vx_read_file(script_path, 64u << 20, &text, &len, err);
    if (!st) st = vx_vv_prepare(&m, text, len, voice_paths, nv, warn_stderr, NULL, &in, err);
    if (!st && a->in && !have_seed) {
        const int64_t V = in.n_voices, F = in.n_frames, D = vx_vv_vae_dim(m.acoustic);
        vx_tensor t;
        if (V > 0) {
            st = vx_stage_in_f32(a, "prompt_sample_std_noise", VX_DIMS(V), &std_noise, NULL, err);
            if (!st) st = vx_stage_in_f32(a, "prompt_sample_noise", VX_DIMS(V, F, D), &noise, NULL, err);
        }
        if (!st) st = vx_stage_in_f32(a, "frame_init_noise", VX_DIMS(-1, 2, D), &frames, &t, err);
        if (!st) {
            o.inj_prompt_std_noise = std_noise;
            o.inj_prompt_noise = noise;
            o.inj_frame_noise = frames;
            o.n_inj_frames = t.shape[0];
        }
    }
    int64_t n = 0;
    if (!st) st = vx_vv_generate(&m, &in, &o, &audio, &n, NULL, NULL, err);
    free(audio);
    free(std_noise), free(noise), free(frames);
    free(text);
    vx_vv_inputs_free(&in);
    vx_vv_model_free(&m);
    return st;
}
