/* Joins the audio of consecutive text chunks for vocis_speak: each chunk's start is crossfaded
 * (linear) into the previous chunk's tail, and everything that no later chunk can fade into goes
 * to on_audio at once. A chunk's audio may come in pieces (the streamed path). */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"

void vx_join_init(vx_join *j, size_t xfade, int keep_all, const vocis_speak_options *o) {
    memset(j, 0, sizeof *j);
    j->xfade = xfade;
    j->keep_all = keep_all;
    j->o = o;
}

void vx_join_begin(vx_join *j, int k, int last) {
    j->chunk = k;
    j->last = last;
    j->first_piece = 1;
}

vocis_status vx_join_add(vx_join *j, const float *x, size_t n, vx_err *err) {
    size_t ov = 0;
    if (j->first_piece && n > 0) { /* the chunk's start fades into the previous chunk's held tail */
        ov = j->chunk == 0 ? 0 : j->xfade;
        if (ov > j->nacc - j->emitted) ov = j->nacc - j->emitted;
        if (ov > n) ov = n;
        j->first_piece = 0;
    }
    float *na = realloc(j->acc, sizeof(float) * (j->nacc + n - ov + 1));
    if (!na) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    j->acc = na;
    for (size_t i = 0; i < ov; i++) { /* linear crossfade over the previous chunk's tail */
        const float w = ((float)i + 0.5f) / (float)ov;
        na[j->nacc - ov + i] = na[j->nacc - ov + i] * (1.0f - w) + x[i] * w;
    }
    memcpy(na + j->nacc, x + ov, sizeof(float) * (n - ov));
    j->nacc += n - ov;
    j->total += n - ov;
    /* everything but the tail that the next chunk may fade into is final */
    const size_t final = j->last ? j->nacc : j->nacc > j->xfade ? j->nacc - j->xfade : 0;
    if (j->o->on_audio && final > j->emitted) {
        if (j->o->on_audio(j->o->user, na + j->emitted, final - j->emitted, VX_HIFT_SR))
            return vx_fail(err, VOCIS_E_CANCELLED, "synthesis cancelled");
        j->emitted = final;
    }
    if (!j->keep_all) { /* only on_audio wants the audio: keep just the tail the next chunk fades into */
        memmove(na, na + j->emitted, sizeof(float) * (j->nacc - j->emitted));
        j->nacc -= j->emitted;
        j->emitted = 0;
    }
    return VOCIS_OK;
}

void vx_join_free(vx_join *j) {
    free(j->acc);
    j->acc = NULL;
}
