/* The cues a checkpointed job has reported (vocis_speak_options.on_cue), kept in each checkpoint
 * (section "cues") so that a resumed job reports them again before its new ones: the caller's
 * subtitles then come out whole, as from one uninterrupted run. A cue's text is not stored, only
 * what it refers to (Chatterbox: the text chunk; VibeVoice: the script line). */
#ifndef VX_API_CUE_LOG_H
#define VX_API_CUE_LOG_H

#include <stdint.h>

#include "io/checkpoint.h"
#include "vocis.h"

typedef struct vx_cue_rec {
    int64_t ref; /* the chunk / script line whose text the cue shows */
    int64_t speaker, start, end, exact;
} vx_cue_rec;

typedef struct vx_cue_log {
    vx_cue_rec *v; /* v[i] is the cue of index i */
    int64_t n, cap;
} vx_cue_log;

/* Appends cue c (its index must be l->n) that shows the text of ref. */
vocis_status vx_cue_log_add(vx_cue_log *l, const vocis_cue *c, int64_t ref, vx_err *err);
vx_ckpt_piece vx_cue_log_piece(const vx_cue_log *l);
/* The "cues" section of ck into l (empty before): refs below n_refs, speakers below n_speakers,
 * times ordered and within [0, max_end]; else VOCIS_E_FORMAT naming the file. */
vocis_status vx_cue_log_load(vx_cue_log *l, const vx_ckpt *ck, int64_t n_refs, int n_speakers, int64_t max_end,
                             vx_err *err);
/* on_cue(user, ·) for every logged cue, in order; texts[ref] is its text. */
vocis_status vx_cue_log_replay(const vx_cue_log *l, const char *const *texts, int sample_rate,
                               int (*on_cue)(void *, const vocis_cue *), void *user, vx_err *err);
void vx_cue_log_free(vx_cue_log *l);

#endif
