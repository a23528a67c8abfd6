/* Stage harness entry for the CAMPPlus x-vector (golden 04_campplus).
 *
 * inputs:  ref_16k_torchaudio [1, L] or [L] (16 kHz audio, 01_audio_inputs)
 * outputs: fbank_meannorm [1, m, 80], xvector [1, emb]
 * weights: DIR/s3gen.safetensors (speaker_encoder.*) */
#include <stdio.h>
#include <stdlib.h>

#include "models/chatterbox/campplus.h"
#include "models/stages.h"
#include "models/chatterbox/mtl.h"
#include "models/chatterbox/turbo.h"

vocis_status vx_stage_campplus(const vx_stage_args *a, vx_err *err) {
    VX_TRY(vx_stage_no_options(a, err));
    float *wav = NULL;
    vx_tensor wt;
    VX_TRY(vx_stage_in_f32(a, "ref_16k_torchaudio", -1, NULL, &wav, &wt, err));
    if (!(wt.ndim == 1 || (wt.ndim == 2 && wt.shape[0] == 1))) {
        char sh[64];
        free(wav);
        return vx_fail(err, VOCIS_E_SHAPE, "%s: ref_16k_torchaudio: expected shape [1, L] or [L], found %s",
                       vx_st_path(a->in), vx_shape_str(&wt, sh, sizeof sh));
    }
    const int64_t n = wt.shape[wt.ndim - 1];

    char path[4096];
    snprintf(path, sizeof path, "%s/%s", a->model_dir,
             vx_turbo_s3gen_name(a->model_dir) ? vx_turbo_s3gen_name(a->model_dir) : "s3gen.safetensors");
    vx_weights *w = NULL;
    vx_campplus *c = NULL;
    vocis_status st = vx_cb_weights_open_path(path, &w, err);
    if (st == VOCIS_OK) {
        st = vx_campplus_load(w, NULL, &c, err);
        vx_weights_close(w); /* everything is copied to owned f32 */
    }
    float *xvec = NULL, *fb = NULL;
    int64_t m = 0;
    if (st) goto done;
    const int64_t emb = vx_campplus_emb_dim(c);
    if (!(xvec = malloc(sizeof(float) * (size_t)emb))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "campplus: out of memory");
        goto done;
    }
    if ((st = vx_campplus_embed(c, wav, n, xvec, &fb, &m, a->nthreads, err))) goto done;
    if ((st = vx_stage_out_f32(a, "fbank_meannorm", VX_DIMS(1, m, VX_CAMPPLUS_FEAT), fb, err))) goto done;
    st = vx_stage_out_f32(a, "xvector", VX_DIMS(1, emb), xvec, err);
done:
    free(wav), free(xvec), free(fb);
    vx_campplus_free(c);
    return st;
}
