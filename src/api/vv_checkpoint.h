/* Resumable VibeVoice jobs (vocis_checkpoint_options on vocis_speak_script): a checkpoint at a
 * frame boundary once every_s seconds of audio were emitted since the last, holding the session
 * being spoken, the counters, and the generation state (both CFG branches' KV caches, the
 * σ-VAE decoder and semantic encoder streams, the position, the random stream). */
#ifndef VX_API_VV_CHECKPOINT_H
#define VX_API_VV_CHECKPOINT_H

#include "api/job_checkpoint.h"
#include "base/flist.h"
#include "models/vibevoice/generate.h"

typedef struct vx_vv_job {
    vx_job_ckpt jc;
    vocis_model *m;
    vx_vv_gen_ckpt gen;   /* the hooks vx_vv_generate calls */
    int session, n_sessions;
    int64_t before;       /* samples of the sessions before this one */
    int text_tokens;      /* progress counters before this session (text) / at the checkpoint */
    int speech_tokens, tokens_before, progress;
    const vocis_progress *ctx_p; /* the live progress counters */
    int resuming, resume_session;
    vx_ckpt ck;           /* the checkpoint being resumed */
    /* the cues of the sessions before (script lines, speakers below n_speakers) and the current
     * session's frame energies (the turn rule's input): saved, and loaded on resume */
    vx_cue_log *cues;
    vx_flist *energy;
    int n_lines, n_speakers;
} vx_vv_job;

/* The job's id; j->jc.opts NULL when no checkpoint is asked for. */
vocis_status vx_api_vv_job_init(vocis_model *m, const vx_vv_request *r, const char *script,
                                const vocis_speak_options *o, vx_vv_job *j);
/* --resume: loads and checks the checkpoint, takes its session and counters. */
vocis_status vx_api_vv_job_resume(vx_vv_job *j, int n_sessions);
/* Before session k (whose audio starts at `before` samples): the hooks into g; for the resumed
 * session, the checkpoint to continue from, after on_checkpoint(resuming). */
vocis_status vx_api_vv_job_start_session(vx_vv_job *j, int k, int64_t before, vx_vv_gen_opts *g);
vocis_status vx_api_vv_job_save(vx_vv_gen_ckpt *g, const vx_vv_gen_state *s, vx_err *err);
void vx_api_vv_job_free(vx_vv_job *j);

#endif
