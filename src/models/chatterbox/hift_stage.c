/* Stage harness entry for the HiFT vocoder (golden 11_hift).
 *
 * inputs:  mel_in [1, 80, Tm], phase_uniform_sample [1, 9, 1], sine_noise_randn [1, 9, Tw]
 * outputs: f0 [1, Tm], source [1, 1, Tw], istft_magnitude / istft_phase [1, 9, Tw/4 + 1],
 *          wav_clamped [1, Tw], wav_trim_faded [1, Tw], trim_fade [960]
 * options: --source-in   decode the input's `source` [1, 1, Tw] instead of the generated one
 *          --seed N      draw phases and noise from torch.manual_seed(N)'s CPU stream instead
 *                        (the injected tensors are then not needed) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/chatterbox/hift.h"
#include "models/stages.h"
#include "models/chatterbox/mtl.h"
#include "models/chatterbox/turbo.h"

vocis_status vx_stage_hift(const vx_stage_args *a, vx_err *err) {
    int source_in = 0, use_seed = 0;
    unsigned long long seed = 0;
    for (int i = 0; i < a->argc; i++) {
        if (strcmp(a->argv[i], "--source-in") == 0) {
            source_in = 1;
        } else if (strcmp(a->argv[i], "--seed") == 0 && i + 1 < a->argc) {
            char *end;
            seed = strtoull(a->argv[++i], &end, 10);
            if (*end) return vx_fail(err, VOCIS_E_ARG, "hift: --seed: invalid value '%s'", a->argv[i]);
            use_seed = 1;
        } else {
            return vx_fail(err, VOCIS_E_ARG, "hift: unknown option '%s' (options: --source-in, --seed N)",
                           a->argv[i]);
        }
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/%s", a->model_dir,
             vx_turbo_s3gen_name(a->model_dir) ? vx_turbo_s3gen_name(a->model_dir) : "s3gen.safetensors");
    vx_weights *w = NULL;
    vx_hift *h = NULL;
    VX_TRY(vx_cb_weights_open_path(path, &w, err));
    vocis_status st = vx_hift_load(w, NULL, a->precision, &h, err); /* bf16 / q8: bf16 generator matrices */
    vx_weights_close(w); /* everything is copied to owned f32 */
    if (st != VOCIS_OK) return st;

    float *mel = NULL, *phase = NULL, *noise = NULL, *f0 = NULL, *src = NULL, *wav = NULL, *mag = NULL, *ph = NULL;
    vx_tensor mt;
    if ((st = vx_stage_in_f32(a, "mel_in", VX_DIMS(1, h->in_ch, -1), &mel, &mt, err))) goto done;
    const int64_t tm = mt.shape[2], tw = tm * VX_HIFT_HOP, nf = tw / VX_HIFT_ISTFT_HOP + 1;
    if (tm < 1) {
        st = vx_fail(err, VOCIS_E_SHAPE, "hift: mel_in has no frames");
        goto done;
    }
    f0 = malloc(sizeof(float) * (size_t)tm);
    wav = malloc(sizeof(float) * (size_t)tw);
    mag = malloc(sizeof(float) * (size_t)(VX_HIFT_NB_HARM * nf));
    ph = malloc(sizeof(float) * (size_t)(VX_HIFT_NB_HARM * nf));
    if (!f0 || !wav || !mag || !ph) {
        st = vx_fail(err, VOCIS_E_NOMEM, "hift: out of memory");
        goto done;
    }
    if ((st = vx_hift_f0(h, mel, tm, f0, a->nthreads, err))) goto done;
    if (source_in) {
        if ((st = vx_stage_in_f32(a, "source", VX_DIMS(1, 1, tw), &src, NULL, err))) goto done;
    } else {
        if (!(src = malloc(sizeof(float) * (size_t)tw))) {
            st = vx_fail(err, VOCIS_E_NOMEM, "hift: out of memory");
            goto done;
        }
        if (use_seed) {
            vx_rng rng;
            vx_rng_seed(&rng, seed);
            float *wv = NULL;
            int64_t n;
            if ((st = vx_hift_vocode(h, mel, tm, &rng, NULL, NULL, &wv, &n, NULL, src, a->nthreads, err))) goto done;
            free(wv);
        } else {
            if ((st = vx_stage_in_f32(a, "phase_uniform_sample", VX_DIMS(1, VX_HIFT_NB_HARM, 1), &phase, NULL, err)))
                goto done;
            if ((st = vx_stage_in_f32(a, "sine_noise_randn", VX_DIMS(1, VX_HIFT_NB_HARM, tw), &noise, NULL, err)))
                goto done;
            vx_hift_source(h, f0, tm, phase, noise, src, a->nthreads);
        }
    }
    if ((st = vx_hift_decode(h, mel, tm, src, wav, mag, ph, a->nthreads, err))) goto done;

    if ((st = vx_stage_out_f32(a, "f0", VX_DIMS(1, tm), f0, err))) goto done;
    if ((st = vx_stage_out_f32(a, "source", VX_DIMS(1, 1, tw), src, err))) goto done;
    if ((st = vx_stage_out_f32(a, "istft_magnitude", VX_DIMS(1, VX_HIFT_NB_HARM, nf), mag, err))) goto done;
    if ((st = vx_stage_out_f32(a, "istft_phase", VX_DIMS(1, VX_HIFT_NB_HARM, nf), ph, err))) goto done;
    if ((st = vx_stage_out_f32(a, "wav_clamped", VX_DIMS(1, tw), wav, err))) goto done;
    vx_trim_fade(wav, tw);
    if ((st = vx_stage_out_f32(a, "wav_trim_faded", VX_DIMS(1, tw), wav, err))) goto done;
    float fade[VX_TRIM_FADE_LEN];
    vx_trim_fade_window(fade);
    st = vx_stage_out_f32(a, "trim_fade", VX_DIMS(VX_TRIM_FADE_LEN), fade, err);
done:
    free(mel), free(phase), free(noise), free(f0), free(src), free(wav), free(mag), free(ph);
    vx_hift_free(h);
    return st;
}
