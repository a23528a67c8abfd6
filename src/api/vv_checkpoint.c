/* Resumable VibeVoice jobs: the job's id (script, voice recordings, seed, the knobs that change
 * the audio) and its session-level state around the generation state of generate_ckpt.c. */
#include <stdlib.h>
#include <string.h>

#include "api/vv_checkpoint.h"

enum { J_SESSION, J_N_SESSIONS, J_BEFORE, J_TEXT_TOKENS, J_SPEECH_TOKENS, J_TOKENS_BEFORE, J_PROGRESS, J_N };

vocis_status vx_api_vv_job_init(vocis_model *m, const vx_vv_request *r, const char *script,
                                const vocis_speak_options *o, vx_vv_job *j) {
    memset(j, 0, sizeof *j);
    VX_TRY(vx_api_job_ckpt_init(m, o, 0, &j->jc));
    if (!j->jc.opts) return VOCIS_OK;
    vx_hash h;
    j->jc.id.job[VX_JOB_TEXT] = vx_hash_bytes(script, strlen(script));
    vx_hash_init(&h);
    vx_hash_u64(&h, (uint64_t)r->n_voices);
    for (int i = 0; i < r->n_voices; i++) {
        vx_hash_u64(&h, (uint64_t)r->voices[i].n);
        vx_hash_update(&h, r->voices[i].samples, sizeof(float) * (size_t)r->voices[i].n);
    }
    j->jc.id.job[VX_JOB_VOICES] = vx_hash_final(&h);
    vx_hash_init(&h);
    const vocis_vv_options *v = &o->vv;
    vx_hash_f64(&h, v->cfg_scale);
    vx_hash_f64(&h, v->max_seconds);
    const int64_t k[] = {v->diffusion_steps, v->max_new_tokens, v->split_turns, m->precision, m->vv->lm.tf.kv_dtype};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) vx_hash_u64(&h, (uint64_t)k[i]);
    j->jc.id.job[VX_JOB_OPTIONS] = vx_hash_final(&h);
    j->m = m;
    j->gen.next_at = j->jc.next_at;
    j->gen.save = vx_api_vv_job_save;
    j->gen.user = j;
    return VOCIS_OK;
}

vocis_status vx_api_vv_job_save(vx_vv_gen_ckpt *g, const vx_vv_gen_state *s, vx_err *err) {
    vx_vv_job *j = g->user;
    (void)err;
    if (!j->jc.opts->path) return VOCIS_OK;
    const int max = 3 + vx_vv_gen_state_max_pieces(s);
    vx_ckpt_piece *pieces = vx_malloc(vx_api_err(j->m), sizeof *pieces * (size_t)max, "checkpoint sections");
    if (!pieces) return VOCIS_E_NOMEM;
    int64_t job[J_N] = {j->session, j->n_sessions, j->before, j->text_tokens, j->ctx_p->speech_tokens,
                        j->tokens_before, j->ctx_p->n_steps};
    int64_t words[VX_VV_STATE_WORDS];
    uint8_t rng[VX_RNG_STATE_BYTES];
    int n = 0;
    pieces[0] = (vx_ckpt_piece){"vv.job", job, sizeof job};
    pieces[1] = vx_cue_log_piece(j->cues);
    pieces[2] = (vx_ckpt_piece){"vv.energy", j->energy->v, sizeof(float) * (uint64_t)j->energy->n};
    vx_vv_gen_state_pieces(s, words, rng, pieces + 3, &n);
    const int64_t written = j->before + s->samples;
    vocis_status st = vx_api_job_ckpt_save(j->m, &j->jc, written, pieces, n + 3);
    free(pieces);
    g->next_at = j->jc.next_at - j->before; /* the generation counts its own samples */
    return st;
}

/* The resumed session's frame energies so far: one per frame, finite and >= 0. */
static vocis_status load_energy(vx_vv_job *j, vx_err *err) {
    const void *p;
    uint64_t size;
    VX_TRY(vx_ckpt_section(&j->ck, "vv.energy", UINT64_MAX, &p, &size, err));
    const int64_t n = (int64_t)(size / sizeof(float));
    if (size % sizeof(float) || (uint64_t)n > j->ck.samples)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: section 'vv.energy' of %llu bytes does not fit the %llu samples",
                       j->ck.name, (unsigned long long)size, (unsigned long long)j->ck.samples);
    j->energy->n = 0;
    if (n && vx_flist_add(j->energy, p, n)) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++)
        if (!(j->energy->v[i] >= 0.0f && j->energy->v[i] <= 3.4e38f))
            return vx_fail(err, VOCIS_E_FORMAT, "%s: frame energy %lld is not a finite number >= 0", j->ck.name,
                           (long long)i);
    return VOCIS_OK;
}

vocis_status vx_api_vv_job_resume(vx_vv_job *j, int n_sessions) {
    if (!j->jc.opts || !j->jc.opts->resume_path) return VOCIS_OK;
    vx_err *err = vx_api_err(j->m);
    VX_TRY(vx_api_job_ckpt_load(j->m, &j->jc, &j->ck));
    const void *p;
    int64_t job[J_N];
    vocis_status st = vx_ckpt_section(&j->ck, "vv.job", sizeof job, &p, NULL, err);
    if (!st) {
        memcpy(job, p, sizeof job);
        if (job[J_N_SESSIONS] != n_sessions || job[J_SESSION] < 0 || job[J_SESSION] >= n_sessions ||
            job[J_BEFORE] < 0 || job[J_BEFORE] > (int64_t)j->ck.samples || job[J_TEXT_TOKENS] < 0 ||
            job[J_TEXT_TOKENS] > INT32_MAX || job[J_SPEECH_TOKENS] < 0 || job[J_SPEECH_TOKENS] > INT32_MAX ||
            job[J_TOKENS_BEFORE] < 0 || job[J_TOKENS_BEFORE] > INT32_MAX || job[J_PROGRESS] < 0 ||
            job[J_PROGRESS] > INT32_MAX)
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: the VibeVoice job state is inconsistent (session %lld of %lld)",
                         j->ck.name, (long long)job[J_SESSION], (long long)job[J_N_SESSIONS]);
    }
    if (!st) st = vx_cue_log_load(j->cues, &j->ck, j->n_lines, j->n_speakers, job[J_BEFORE], err);
    if (!st) st = load_energy(j, err);
    if (st) {
        vx_ckpt_free(&j->ck);
        return st;
    }
    j->resume_session = (int)job[J_SESSION];
    j->before = job[J_BEFORE];
    j->text_tokens = (int)job[J_TEXT_TOKENS];
    j->speech_tokens = (int)job[J_SPEECH_TOKENS];
    j->tokens_before = (int)job[J_TOKENS_BEFORE];
    j->progress = (int)job[J_PROGRESS];
    j->resuming = 1;
    return VOCIS_OK;
}

vocis_status vx_api_vv_job_start_session(vx_vv_job *j, int k, int64_t before, vx_vv_gen_opts *g) {
    if (!j->jc.opts) return VOCIS_OK;
    j->session = k;
    j->before = before;
    g->ckpt = &j->gen;
    j->gen.resume = NULL;
    j->gen.resumed_samples = 0;
    j->gen.next_at = j->jc.next_at - before;
    if (j->resuming && k == j->resume_session) {
        j->gen.resume = &j->ck;
        VX_TRY(vx_api_job_ckpt_resumed(j->m, &j->jc, (int64_t)j->ck.samples));
        j->gen.next_at = j->jc.next_at - before;
    }
    return VOCIS_OK;
}

void vx_api_vv_job_free(vx_vv_job *j) {
    if (j->resuming) vx_ckpt_free(&j->ck);
    j->resuming = 0;
}
