/* Stage harness entry for the voice encoder (golden 02_voice_encoder).
 *
 * inputs:  ref_16k_soxr [L] or [1, L] (16 kHz reference)
 * outputs: trim_interval i64 [2], mel [T, n_mels], partials [N, 160, n_mels], partial_embeds [N, emb],
 *          utt_embed [1, emb], speaker_emb [1, emb]
 * no options */
#include <stdio.h>
#include <stdlib.h>

#include "models/chatterbox/voice_encoder.h"
#include "models/stages.h"
#include "models/chatterbox/mtl.h"

vocis_status vx_stage_voice_encoder(const vx_stage_args *a, vx_err *err) {
    VX_TRY(vx_stage_no_options(a, err));
    char path[4096];
    snprintf(path, sizeof path, "%s/ve.safetensors", a->model_dir);
    vx_weights *w = NULL;
    vx_ve *v = NULL;
    VX_TRY(vx_cb_weights_open_path(path, &w, err));
    vocis_status st = vx_ve_load(w, &v, err);
    vx_weights_close(w); /* everything is copied to owned f32 */
    if (st != VOCIS_OK) return st;

    float *wav = NULL, *emb = NULL;
    int64_t n = 0;
    vx_ve_trace tr = {0};
    if ((st = vx_stage_in_wave(a, "ref_16k_soxr", &wav, &n, err))) goto done;
    if (!(emb = malloc(sizeof(float) * (size_t)v->emb))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "voice encoder: out of memory");
        goto done;
    }
    if ((st = vx_ve_embed(v, wav, n, emb, &tr, a->nthreads, err))) goto done;

    const int64_t ti[2] = {tr.trim_start, tr.trim_end};
    if ((st = vx_stage_out_i64(a, "trim_interval", VX_DIMS(2), ti, err))) goto done;
    if ((st = vx_stage_out_f32(a, "mel", VX_DIMS(tr.n_frames, v->n_mels), tr.mel, err))) goto done;
    if ((st = vx_stage_out_f32(a, "partials", VX_DIMS(tr.n_partials, VX_VE_PARTIAL, v->n_mels), tr.partials, err)))
        goto done;
    if ((st = vx_stage_out_f32(a, "partial_embeds", VX_DIMS(tr.n_partials, v->emb), tr.partial_embeds, err))) goto done;
    if ((st = vx_stage_out_f32(a, "utt_embed", VX_DIMS(1, v->emb), emb, err))) goto done;
    st = vx_stage_out_f32(a, "speaker_emb", VX_DIMS(1, v->emb), emb, err);
done:
    vx_ve_trace_free(&tr);
    free(wav), free(emb);
    vx_ve_free(v);
    return st;
}
