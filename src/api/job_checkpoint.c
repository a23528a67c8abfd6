#include "api/job_checkpoint.h"
#include "api/family.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SMALL_FILE_BYTES (4u << 20) /* hashed whole: configs, tokenizers, voice presets */
#define DEFAULT_EVERY_S 60.0

static void hash_file(vx_hash *h, const char *path, off_t size) {
    FILE *fp = size <= (off_t)SMALL_FILE_BYTES ? fopen(path, "rb") : NULL;
    if (!fp) return;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0) vx_hash_update(h, buf, n);
    fclose(fp);
}

vocis_status vx_api_model_fingerprint(const vocis_model *m, uint64_t *out) {
    vx_hash h;
    vx_hash_init(&h);
    vx_hash_str(&h, vx_family_kind(m));
    vx_hash_update(&h, &m->cfg, sizeof m->cfg);
    if (m->vv) vx_hash_update(&h, &m->vv->cfg, sizeof m->vv->cfg);
    struct dirent **names = NULL;
    const int n = scandir(m->dir, &names, NULL, alphasort);
    if (n < 0) return vx_fail(vx_api_err(m), VOCIS_E_IO, "%s: cannot list the model folder: %s", m->dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        char path[8192];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", m->dir, names[i]->d_name);
        if (names[i]->d_name[0] != '.' && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
            vx_hash_str(&h, names[i]->d_name);
            vx_hash_u64(&h, (uint64_t)sb.st_size);
            hash_file(&h, path, sb.st_size);
        }
        free(names[i]);
    }
    free(names);
    *out = vx_hash_final(&h);
    return VOCIS_OK;
}

vocis_status vx_api_refuse_checkpoint(vocis_model *m, const vocis_speak_options *o, const char *what) {
    const vocis_checkpoint_options *c = o ? o->checkpoint : NULL;
    if (!c || (!c->path && !c->resume_path)) return VOCIS_OK;
    return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED, "checkpoints and resuming are not available for %s", what);
}

static void hash_f32(vx_hash *h, const vx_cb_f32 *t) {
    vx_hash_u64(h, (uint64_t)t->ndim);
    for (int i = 0; i < t->ndim; i++) vx_hash_u64(h, (uint64_t)t->shape[i]);
    if (t->data) vx_hash_update(h, t->data, t->n * sizeof *t->data);
}
static void hash_i64(vx_hash *h, const vx_cb_i64 *t) {
    vx_hash_u64(h, (uint64_t)t->ndim);
    for (int i = 0; i < t->ndim; i++) vx_hash_u64(h, (uint64_t)t->shape[i]);
    if (t->data) vx_hash_update(h, t->data, t->n * sizeof *t->data);
}

static uint64_t voice_hash(const vx_cb_conds *v) {
    vx_hash h;
    vx_hash_init(&h);
    vx_hash_u64(&h, (uint64_t)v->no_t3);
    hash_f32(&h, &v->speaker_emb);
    hash_i64(&h, &v->cond_prompt_speech_tokens);
    hash_f32(&h, &v->emotion_adv);
    vx_hash_u64(&h, (uint64_t)v->has_gen);
    hash_i64(&h, &v->prompt_token);
    vx_hash_u64(&h, (uint64_t)v->prompt_token_len);
    hash_f32(&h, &v->prompt_feat);
    hash_f32(&h, &v->embedding);
    return vx_hash_final(&h);
}

/* Every option that changes a Chatterbox synthesis (not threads, progress, speculation). */
static uint64_t cb_options_hash(const vocis_model *m, const vocis_speak_options *o) {
    const vocis_t3_options *t = &o->t3;
    vx_hash h;
    vx_hash_init(&h);
    const double f[] = {t->temperature, t->cfg_weight, t->exaggeration, t->min_p, t->top_p, t->repetition_penalty,
                        o->crossfade_ms};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) vx_hash_f64(&h, f[i]);
    const int64_t k[] = {t->max_new_tokens, t->greedy, t->top_k, o->cfm_steps, o->max_chunk_chars,
                         m->precision, m->precision_flow, m->precision_vocoder, m->has_t3 ? (int64_t)m->t3.tf.kv_dtype : -1};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) vx_hash_u64(&h, (uint64_t)k[i]);
    vx_hash_str(&h, t->language);
    return vx_hash_final(&h);
}

int64_t vx_api_job_ckpt_interval(const vx_job_ckpt *jc) {
    return (int64_t)((jc->opts->every_s > 0 ? jc->opts->every_s : DEFAULT_EVERY_S) * VX_HIFT_SR);
}

vocis_status vx_api_job_ckpt_init(vocis_model *m, const vocis_speak_options *o, int keeps_audio, vx_job_ckpt *jc) {
    vx_err *err = vx_api_err(m);
    memset(jc, 0, sizeof *jc);
    const vocis_checkpoint_options *c = o->checkpoint;
    if (!c || (!c->path && !c->resume_path)) return VOCIS_OK;
    if (keeps_audio)
        return vx_fail(err, VOCIS_E_ARG, "a checkpointed job hands its audio to on_audio only (out must be NULL)");
    if (o->t3.seed < 0)
        return vx_fail(err, VOCIS_E_ARG, "a checkpointed job needs a fixed seed (the resumed run draws the same "
                                         "random stream)");
    if (!(c->every_s >= 0) || c->every_s > 1e9)
        return vx_fail(err, VOCIS_E_ARG, "checkpoint interval of %g s (give 0 for the default, 60 s)", c->every_s);
    jc->opts = c;
    jc->speak = o;
    VX_TRY(vx_api_model_fingerprint(m, &jc->id.model));
    jc->id.job[VX_JOB_SEED] = (uint64_t)o->t3.seed;
    jc->next_at = vx_api_job_ckpt_interval(jc);
    return VOCIS_OK;
}

vocis_status vx_api_cb_job_ckpt_init(vocis_model *m, const vx_cb_conds *v, const char *text,
                                     const vocis_speak_options *o, int keeps_audio, vx_job_ckpt *jc) {
    VX_TRY(vx_api_job_ckpt_init(m, o, keeps_audio, jc));
    if (!jc->opts) return VOCIS_OK;
    jc->id.job[VX_JOB_TEXT] = vx_hash_bytes(text, strlen(text));
    jc->id.job[VX_JOB_VOICES] = voice_hash(v);
    jc->id.job[VX_JOB_OPTIONS] = cb_options_hash(m, o);
    return VOCIS_OK;
}

vocis_status vx_api_job_ckpt_save(vocis_model *m, vx_job_ckpt *jc, int64_t written, const vx_ckpt_piece *pieces,
                                  int n_pieces) {
    vx_err *err = vx_api_err(m);
    if (jc->opts->on_checkpoint && jc->opts->on_checkpoint(jc->speak->user, written, 0))
        return vx_fail(err, VOCIS_E_CANCELLED, "the output could not be made durable for a checkpoint");
    VX_TRY(vx_ckpt_write(jc->opts->path, &jc->id, (uint64_t)written, pieces, n_pieces, err));
    jc->next_at = written + vx_api_job_ckpt_interval(jc);
    return VOCIS_OK;
}

vocis_status vx_api_job_ckpt_load(vocis_model *m, const vx_job_ckpt *jc, vx_ckpt *ck) {
    VX_TRY(vx_ckpt_load(jc->opts->resume_path, ck, vx_api_err(m)));
    vocis_status st = vx_ckpt_check_id(ck, &jc->id, vx_api_err(m));
    if (st) vx_ckpt_free(ck);
    return st;
}

vocis_status vx_api_job_ckpt_resumed(vocis_model *m, vx_job_ckpt *jc, int64_t written) {
    jc->next_at = written + vx_api_job_ckpt_interval(jc);
    if (jc->opts->on_checkpoint && jc->opts->on_checkpoint(jc->speak->user, written, 1))
        return vx_fail(vx_api_err(m), VOCIS_E_CANCELLED, "resuming from %s: the output could not be prepared",
                       jc->opts->resume_path);
    return VOCIS_OK;
}

enum { ST_NEXT, ST_NCHUNKS, ST_WRITTEN, ST_TOTAL, ST_TEXT_TOKENS, ST_SPEECH_TOKENS, ST_NTAIL, ST_N };

vocis_status vx_api_cb_job_ckpt_step(vocis_model *m, vx_job_ckpt *jc, const vx_cb_job_state *s) {
    if (!jc->opts || !jc->opts->path || s->next_chunk >= s->n_chunks || s->written < jc->next_at) return VOCIS_OK;
    int64_t state[ST_N] = {s->next_chunk, s->n_chunks, s->written, s->total, s->text_tokens, s->speech_tokens,
                           (int64_t)s->ntail};
    uint8_t rng[VX_RNG_STATE_BYTES];
    vx_rng_state_save(&s->rng, rng);
    const vx_ckpt_piece pieces[] = {
        {"cb.state", state, sizeof state},
        {"rng", rng, sizeof rng},
        {"cb.tail", s->tail, s->ntail * sizeof(float)},
        vx_cue_log_piece(s->cues),
    };
    return vx_api_job_ckpt_save(m, jc, s->written, pieces, 4);
}

vocis_status vx_api_cb_job_ckpt_resume(vocis_model *m, vx_job_ckpt *jc, int n_chunks, vx_cb_job_state *s,
                                       float **tail_out) {
    *tail_out = NULL;
    if (!jc->opts || !jc->opts->resume_path) return VOCIS_OK;
    vx_err *err = vx_api_err(m);
    const char *path = jc->opts->resume_path;
    vx_ckpt ck;
    VX_TRY(vx_api_job_ckpt_load(m, jc, &ck));
    const void *p_state, *p_rng, *p_tail;
    int64_t st[ST_N];
    vocis_status rc = vx_ckpt_section(&ck, "cb.state", sizeof st, &p_state, NULL, err);
    if (!rc) rc = vx_ckpt_section(&ck, "rng", VX_RNG_STATE_BYTES, &p_rng, NULL, err);
    if (!rc) {
        memcpy(st, p_state, sizeof st);
        const int64_t max_tail = (int64_t)1 << 30;
        if (st[ST_NCHUNKS] != n_chunks || st[ST_NEXT] < 1 || st[ST_NEXT] >= n_chunks || st[ST_WRITTEN] < 0 ||
            st[ST_TOTAL] < st[ST_WRITTEN] || st[ST_NTAIL] < 0 || st[ST_NTAIL] > max_tail ||
            st[ST_WRITTEN] != (int64_t)ck.samples || st[ST_TOTAL] - st[ST_WRITTEN] != st[ST_NTAIL] ||
            st[ST_TEXT_TOKENS] < 0 || st[ST_TEXT_TOKENS] > INT32_MAX || st[ST_SPEECH_TOKENS] < 0 ||
            st[ST_SPEECH_TOKENS] > INT32_MAX)
            rc = vx_fail(err, VOCIS_E_FORMAT, "%s: the Chatterbox state is inconsistent (chunk %lld of %lld, %lld "
                         "samples)", path, (long long)st[ST_NEXT], (long long)st[ST_NCHUNKS], (long long)st[ST_WRITTEN]);
    }
    if (!rc) rc = vx_ckpt_section(&ck, "cb.tail", (uint64_t)st[ST_NTAIL] * sizeof(float), &p_tail, NULL, err);
    if (!rc) /* the cues of chunks [0, next): each ends by the samples made then */
        rc = vx_cue_log_load(s->cues, &ck, st[ST_NEXT], 0, st[ST_TOTAL], err);
    if (!rc && s->cues->n != st[ST_NEXT])
        rc = vx_fail(err, VOCIS_E_FORMAT, "%s: %lld cues for %lld chunks", path, (long long)s->cues->n,
                     (long long)st[ST_NEXT]);
    if (!rc && vx_rng_state_load(&s->rng, p_rng) != 0)
        rc = vx_fail(err, VOCIS_E_FORMAT, "%s: the random generator's state is invalid", path);
    float *tail = NULL;
    if (!rc && !(tail = vx_malloc(err, (size_t)st[ST_NTAIL] * sizeof(float) + 1, "the crossfade tail")))
        rc = VOCIS_E_NOMEM;
    if (rc) {
        vx_ckpt_free(&ck);
        return rc;
    }
    memcpy(tail, p_tail, (size_t)st[ST_NTAIL] * sizeof(float));
    vx_ckpt_free(&ck);
    s->next_chunk = (int)st[ST_NEXT];
    s->n_chunks = n_chunks;
    s->written = st[ST_WRITTEN];
    s->total = st[ST_TOTAL];
    s->text_tokens = (int)st[ST_TEXT_TOKENS];
    s->speech_tokens = (int)st[ST_SPEECH_TOKENS];
    s->tail = tail;
    s->ntail = (size_t)st[ST_NTAIL];
    if ((rc = vx_api_job_ckpt_resumed(m, jc, s->written))) {
        free(tail);
        return rc;
    }
    *tail_out = tail;
    return VOCIS_OK;
}
