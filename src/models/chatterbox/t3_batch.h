/* Continuous batching of T3 requests: every request keeps its own KV
 * sequences (the CFG pair), sampling state and RNG stream; at every step the
 * unfinished requests' rows go through ONE transformer forward, so each weight
 * is read once per step for all of them. A request joins (its prefill runs
 * alone) and leaves at any step. The token stream of a request is the same
 * whether it runs alone or next to others: rows never mix, and the kernels
 * compute each row the same way whatever the batch.
 *
 *   b = vx_t3_batch_new(t3, 4)
 *   vx_t3_batch_add(b, ...) → id        (any time)
 *   while (vx_t3_batch_active(b)) vx_t3_batch_step(b)
 *   vx_t3_batch_take(b, id, &tokens)    (once vx_t3_batch_done(b, id))
 *
 * Not thread-safe: one thread drives a batch. */
#ifndef VX_T3_BATCH_H
#define VX_T3_BATCH_H

#include "models/chatterbox/t3.h"

typedef struct vx_t3_batch vx_t3_batch;

vocis_status vx_t3_batch_new(const vx_t3 *t3, int max_requests, vx_t3_batch **out, vx_err *err);
void vx_t3_batch_free(vx_t3_batch *b);

/* Admits a request and runs its prefill. c, text_ids and s are copied (the
 * speaker embedding and prompt tokens too); rng is borrowed until the request
 * is taken. Fails when all slots are taken (VOCIS_E_ARG) or on bad input. */
vocis_status vx_t3_batch_add(vx_t3_batch *b, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                             const vx_t3_sampling *s, vx_rng *rng, int nthreads, int *id, vx_err *err);
/* vx_t3_batch_add in two parts, so that the prefill may run while the batch steps: the request's
 * prefill into a cache of its own and its first logits (any thread; the same bits as in the
 * batch), then its admission (its K/V copied into a slot; on success the batch owns what p held
 * and frees p). */
typedef struct vx_t3_prep vx_t3_prep;
vocis_status vx_t3_batch_prepare(const vx_t3 *t3, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                                 const vx_t3_sampling *s, vx_rng *rng, int nthreads, vx_t3_prep **out, vx_err *err);
vocis_status vx_t3_batch_put(vx_t3_batch *b, vx_t3_prep *p, int *id, vx_err *err);
void vx_t3_prep_free(vx_t3_prep *p);
/* Requests admitted and not finished. */
int vx_t3_batch_active(const vx_t3_batch *b);
/* Free request slots. */
int vx_t3_batch_free_slots(const vx_t3_batch *b);
/* One round for every unfinished request: one token (plain decoding) or,
 * when it speculates, its pending token and the draft's proposals checked
 * in one exact forward (1 .. k + 1 tokens, the very tokens plain decoding
 * draws), all requests' rows in ONE forward. A failure of one request (e.g. cancelled by its on_token)
 * finishes that request with its error; the status returned is for the
 * batch as a whole (out of memory, ...). */
vocis_status vx_t3_batch_step(vx_t3_batch *b, int nthreads, vx_err *err);
int vx_t3_batch_done(const vx_t3_batch *b, int id);
/* The finished request's tokens (malloc'd; incl. a final stop token when
 * drawn) or its error; frees the slot. */
vocis_status vx_t3_batch_take(vx_t3_batch *b, int id, int32_t **tokens, int *n_tokens, vx_err *err);
/* Speculative decoding (each request's vx_t3_sampling.speculate): the
 * counts of every request so far (rounds, proposals, acceptance, tokens). */
void vx_t3_batch_spec_totals(const vx_t3_batch *b, vx_spec_ctl *out);
/* Tests: the draft to propose with (VX_DRAFT_*; default the quantized copy). */
void vx_t3_batch_set_draft(vx_t3_batch *b, int draft_kind);
/* Removes a request, finished or not, and frees its slot. */
void vx_t3_batch_drop(vx_t3_batch *b, int id);

#endif
