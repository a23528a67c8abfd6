#include "models/chatterbox/t3_gpt2_batch.h"

#include <stdlib.h>

struct vx_t3_gpt2_batch {
    const vx_t3_gpt2 *t;
    int max_req;
    vx_t3_gpt2_gen **g; /* [max_req], NULL = free slot */
};

vocis_status vx_t3_gpt2_batch_new(const vx_t3_gpt2 *t, int max_requests, vx_t3_gpt2_batch **out, vx_err *err) {
    *out = NULL;
    if (max_requests < 1 || max_requests > 256)
        return vx_fail(err, VOCIS_E_ARG, "T3 batch: %d requests (1..256)", max_requests);
    vx_t3_gpt2_batch *b = calloc(1, sizeof *b);
    if (b) b->g = calloc((size_t)max_requests, sizeof *b->g);
    if (!b || !b->g) {
        free(b);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    b->t = t, b->max_req = max_requests;
    *out = b;
    return VOCIS_OK;
}

void vx_t3_gpt2_batch_free(vx_t3_gpt2_batch *b) {
    if (!b) return;
    for (int i = 0; i < b->max_req; i++) vx_t3_gpt2_gen_free(b->g[i]);
    free(b->g), free(b);
}

vocis_status vx_t3_gpt2_req_start(const vx_t3_gpt2 *t, const vx_t3_gpt2_req *r, int nthreads, vx_t3_gpt2_gen **g,
                                  vx_err *err) {
    return vx_t3_gpt2_gen_start(t, r->speaker_emb, r->prompt, r->n_prompt, r->text, r->n_text, r->s, r->rng, nthreads,
                                VX_DRAFT_QUANT, g, err);
}

vocis_status vx_t3_gpt2_batch_put(vx_t3_gpt2_batch *b, vx_t3_gpt2_gen *g, int *id, vx_err *err) {
    *id = -1;
    int k = 0;
    while (k < b->max_req && b->g[k]) k++;
    if (k == b->max_req) return vx_fail(err, VOCIS_E_ARG, "T3 batch: all %d request slots are taken", b->max_req);
    b->g[k] = g;
    *id = k;
    return VOCIS_OK;
}

vocis_status vx_t3_gpt2_batch_add(vx_t3_gpt2_batch *b, const vx_t3_gpt2_req *r, int nthreads, int *id, vx_err *err) {
    *id = -1;
    if (!vx_t3_gpt2_batch_free_slots(b))
        return vx_fail(err, VOCIS_E_ARG, "T3 batch: all %d request slots are taken", b->max_req);
    vx_t3_gpt2_gen *g;
    VX_TRY(vx_t3_gpt2_req_start(b->t, r, nthreads, &g, err));
    return vx_t3_gpt2_batch_put(b, g, id, err);
}

int vx_t3_gpt2_batch_active(const vx_t3_gpt2_batch *b) {
    int n = 0;
    for (int i = 0; i < b->max_req; i++) n += b->g[i] && !vx_t3_gpt2_gen_done(b->g[i]);
    return n;
}

int vx_t3_gpt2_batch_free_slots(const vx_t3_gpt2_batch *b) {
    int n = 0;
    for (int i = 0; i < b->max_req; i++) n += !b->g[i];
    return n;
}

vocis_status vx_t3_gpt2_batch_step(vx_t3_gpt2_batch *b, int nthreads, vx_err *err) {
    vx_t3_gpt2_gen *live[256];
    int n = 0;
    for (int i = 0; i < b->max_req; i++)
        if (b->g[i] && !vx_t3_gpt2_gen_done(b->g[i])) live[n++] = b->g[i];
    return vx_t3_gpt2_gen_step_many(live, n, nthreads, err);
}

int vx_t3_gpt2_batch_done(const vx_t3_gpt2_batch *b, int id) {
    return id >= 0 && id < b->max_req && b->g[id] && vx_t3_gpt2_gen_done(b->g[id]);
}

vocis_status vx_t3_gpt2_batch_take(vx_t3_gpt2_batch *b, int id, int32_t **tokens, int *n_tokens, vx_err *err) {
    *tokens = NULL;
    *n_tokens = 0;
    if (!vx_t3_gpt2_batch_done(b, id)) return vx_fail(err, VOCIS_E_ARG, "T3 batch: request %d is not finished", id);
    vx_t3_gpt2_gen *g = b->g[id];
    b->g[id] = NULL;
    return vx_t3_gpt2_gen_take(g, tokens, n_tokens, NULL, err);
}

void vx_t3_gpt2_batch_drop(vx_t3_gpt2_batch *b, int id) {
    if (id < 0 || id >= b->max_req || !b->g[id]) return;
    vx_t3_gpt2_gen_free(b->g[id]);
    b->g[id] = NULL;
}
