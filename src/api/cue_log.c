#include "api/cue_log.h"

#include <stdlib.h>
#include <string.h>

vocis_status vx_cue_log_add(vx_cue_log *l, const vocis_cue *c, int64_t ref, vx_err *err) {
    if (l->n == l->cap) {
        const int64_t cap = l->cap ? 2 * l->cap : 64;
        vx_cue_rec *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (the cues of a checkpointed job)");
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = (vx_cue_rec){ref, c->speaker, c->start, c->end, c->exact};
    return VOCIS_OK;
}

vx_ckpt_piece vx_cue_log_piece(const vx_cue_log *l) {
    return (vx_ckpt_piece){"cues", l->v, sizeof(vx_cue_rec) * (uint64_t)l->n};
}

vocis_status vx_cue_log_load(vx_cue_log *l, const vx_ckpt *ck, int64_t n_refs, int n_speakers, int64_t max_end,
                             vx_err *err) {
    const void *p;
    uint64_t size;
    VX_TRY(vx_ckpt_section(ck, "cues", UINT64_MAX, &p, &size, err));
    if (size % sizeof(vx_cue_rec))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: section 'cues' holds %llu bytes, not whole cues", ck->name,
                       (unsigned long long)size);
    const int64_t n = (int64_t)(size / sizeof(vx_cue_rec));
    vx_cue_rec *v = n ? vx_malloc(err, (size_t)size, "the cues of the checkpoint") : NULL;
    if (n && !v) return VOCIS_E_NOMEM;
    if (n) memcpy(v, p, (size_t)size);
    for (int64_t i = 0; i < n; i++) {
        const vx_cue_rec *c = &v[i];
        const int64_t prev_ref = i ? v[i - 1].ref : 0, prev_start = i ? v[i - 1].start : 0;
        if (c->ref < prev_ref || c->ref >= n_refs || c->speaker < -1 || c->speaker >= n_speakers || c->start < prev_start ||
            c->end < c->start || c->end > max_end || (c->exact != 0 && c->exact != 1)) {
            vx_fail(err, VOCIS_E_FORMAT, "%s: cue %lld of the checkpoint is inconsistent (text %lld, samples %lld to "
                    "%lld)", ck->name, (long long)i, (long long)c->ref, (long long)c->start, (long long)c->end);
            free(v);
            return VOCIS_E_FORMAT;
        }
    }
    vx_cue_log_free(l);
    l->v = v, l->n = l->cap = n;
    return VOCIS_OK;
}

vocis_status vx_cue_log_replay(const vx_cue_log *l, const char *const *texts, int sample_rate,
                               int (*on_cue)(void *, const vocis_cue *), void *user, vx_err *err) {
    for (int64_t i = 0; on_cue && i < l->n; i++) {
        const vx_cue_rec *r = &l->v[i];
        const vocis_cue c = {(int)i, texts[r->ref], (int)r->speaker, r->start, r->end, sample_rate, (int)r->exact};
        if (on_cue(user, &c)) return vx_fail(err, VOCIS_E_CANCELLED, "synthesis cancelled");
    }
    return VOCIS_OK;
}

void vx_cue_log_free(vx_cue_log *l) {
    free(l->v);
    memset(l, 0, sizeof *l);
}
