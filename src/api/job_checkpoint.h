/* Resumable speak jobs (vocis_checkpoint_options): what identifies a model and a job, and the
 * Chatterbox long-text state between chunks, over the container of io/checkpoint.h. */
#ifndef VX_API_JOB_CHECKPOINT_H
#define VX_API_JOB_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "api/cue_log.h"
#include "api/internal.h"
#include "base/hash.h"
#include "io/checkpoint.h"

/* The model files (names, sizes, contents of the small ones: configs, tokenizers), the model kind
 * and its parsed configuration: a checkpoint of one model folder is refused by another. */
vocis_status vx_api_model_fingerprint(const vocis_model *m, uint64_t *out);

/* VOCIS_E_UNSUPPORTED when o asks for a checkpoint or a resume that the family (what) cannot do. */
vocis_status vx_api_refuse_checkpoint(vocis_model *m, const vocis_speak_options *o, const char *what);

/* The checkpoint of a running job: when the next one is due, and the id every one carries. */
typedef struct vx_job_ckpt {
    const vocis_checkpoint_options *opts; /* NULL: not checkpointed */
    const vocis_speak_options *speak;
    vx_ckpt_id id;
    int64_t next_at; /* emitted samples at which the next checkpoint is due */
} vx_job_ckpt;

/* Checks o->checkpoint (a known seed, out == NULL); jc->opts stays NULL when none is asked for.
 * The id gets the model's fingerprint and the seed; the caller fills the text, voice and
 * options parts. */
vocis_status vx_api_job_ckpt_init(vocis_model *m, const vocis_speak_options *o, int keeps_audio, vx_job_ckpt *jc);
int64_t vx_api_job_ckpt_interval(const vx_job_ckpt *jc); /* samples between checkpoints */
/* on_checkpoint(written, 0), then the pieces to opts->path atomically; next_at moves on. */
vocis_status vx_api_job_ckpt_save(vocis_model *m, vx_job_ckpt *jc, int64_t written, const vx_ckpt_piece *pieces,
                                  int n_pieces);
/* Loads resume_path and checks it is this model's and this job's. */
vocis_status vx_api_job_ckpt_load(vocis_model *m, const vx_job_ckpt *jc, vx_ckpt *ck);
/* The state was restored at `written` samples: on_checkpoint(written, 1), next_at from there. */
vocis_status vx_api_job_ckpt_resumed(vocis_model *m, vx_job_ckpt *jc, int64_t written);

/* vx_api_job_ckpt_init plus the Chatterbox job's id: the voice's conditioning, the text and the
 * options that change the audio. */
vocis_status vx_api_cb_job_ckpt_init(vocis_model *m, const vx_cb_conds *v, const char *text,
                                     const vocis_speak_options *o, int keeps_audio, vx_job_ckpt *jc);

/* The Chatterbox long-text state at a chunk boundary. */
typedef struct vx_cb_job_state {
    int next_chunk, n_chunks;
    vx_rng rng;
    const float *tail; /* the crossfade tail not yet emitted (load: malloc'd into *tail_out) */
    size_t ntail;
    int64_t written, total; /* samples emitted to on_audio / made */
    int text_tokens, speech_tokens;
    vx_cue_log *cues; /* the chunks' cues so far (saved; loaded on resume) */
} vx_cb_job_state;

/* After chunk s->next_chunk - 1: saves a checkpoint when one is due (on_checkpoint first). */
vocis_status vx_api_cb_job_ckpt_step(vocis_model *m, vx_job_ckpt *jc, const vx_cb_job_state *s);
/* The state to resume from (resume_path; n_chunks must match), then on_checkpoint(resuming). */
vocis_status vx_api_cb_job_ckpt_resume(vocis_model *m, vx_job_ckpt *jc, int n_chunks, vx_cb_job_state *s,
                                       float **tail_out);

#endif
