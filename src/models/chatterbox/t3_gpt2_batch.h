/* Continuous batching of GPT-2 T3 requests (Turbo / Nano): slots of
 * generations (vx_t3_gpt2_gen) that step together, one forward per step for
 * every unfinished request (each weight read once for all of them); a lone
 * request speculates as it does alone. Requests join (their prefill runs at
 * once) and leave at any step; a request's tokens and rng state are those it
 * gets alone. Not thread-safe: one thread drives a batch (api/engine.c).
 * The same shape as models/chatterbox/t3_batch.h. */
#ifndef VX_T3_GPT2_BATCH_H
#define VX_T3_GPT2_BATCH_H

#include "models/chatterbox/t3_gpt2.h"

typedef struct vx_t3_gpt2_batch vx_t3_gpt2_batch;

/* What a request is: the voice (speaker embedding, prompt tokens) and text
 * ids, read during vx_t3_gpt2_batch_add only; s copied, rng borrowed. */
typedef struct vx_t3_gpt2_req {
    const float *speaker_emb;
    const int64_t *prompt;
    int n_prompt;
    const int32_t *text;
    int n_text;
    const vx_turbo_sampling *s;
    vx_rng *rng;
} vx_t3_gpt2_req;

vocis_status vx_t3_gpt2_batch_new(const vx_t3_gpt2 *t, int max_requests, vx_t3_gpt2_batch **out, vx_err *err);
void vx_t3_gpt2_batch_free(vx_t3_gpt2_batch *b);
/* Admits a request and runs its prefill and first draw; VOCIS_E_ARG when
 * every slot is taken. */
vocis_status vx_t3_gpt2_batch_add(vx_t3_gpt2_batch *b, const vx_t3_gpt2_req *r, int nthreads, int *id, vx_err *err);
/* vx_t3_gpt2_batch_add in two parts, so that the prefill may run while the batch steps: the
 * request's generation (its prefill and first draw; any thread), then its admission (the batch
 * takes g over). */
vocis_status vx_t3_gpt2_req_start(const vx_t3_gpt2 *t, const vx_t3_gpt2_req *r, int nthreads, vx_t3_gpt2_gen **g,
                                  vx_err *err);
vocis_status vx_t3_gpt2_batch_put(vx_t3_gpt2_batch *b, vx_t3_gpt2_gen *g, int *id, vx_err *err);
int vx_t3_gpt2_batch_active(const vx_t3_gpt2_batch *b);
int vx_t3_gpt2_batch_free_slots(const vx_t3_gpt2_batch *b);
/* One step for every unfinished request (vx_t3_gpt2_gen_step_many). */
vocis_status vx_t3_gpt2_batch_step(vx_t3_gpt2_batch *b, int nthreads, vx_err *err);
int vx_t3_gpt2_batch_done(const vx_t3_gpt2_batch *b, int id);
/* The finished request's tokens or its failure; frees the slot. */
vocis_status vx_t3_gpt2_batch_take(vx_t3_gpt2_batch *b, int id, int32_t **tokens, int *n_tokens, vx_err *err);
/* Removes a request, finished or not. */
void vx_t3_gpt2_batch_drop(vx_t3_gpt2_batch *b, int id);

#endif
