/* Concurrent vocis_speak / vocis_t3_generate calls on one model share one T3 batch
 * (models/chatterbox/t3_batch.h): each call admits its request, and whichever caller
 * holds the engine runs the steps for everyone — every weight is read once per step
 * for all requests in flight. A call returns as soon as its own request finishes
 * (another caller, if any, takes over the stepping). The tokens of a request do not
 * depend on its neighbours. Callbacks (on_token) may run on another caller's thread. */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "models/chatterbox/t3_batch.h"

#define T3_ENGINE_SLOTS 8 /* requests batched at once; more wait for a slot */

typedef struct vx_t3_engine {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    vx_t3_batch *b;
    int driving; /* a caller is running steps */
} vx_t3_engine;

static pthread_mutex_t engine_create_lock = PTHREAD_MUTEX_INITIALIZER;

static vocis_status engine_of(vocis_model *m, vx_t3_engine **out, vx_err *err) {
    pthread_mutex_lock(&engine_create_lock);
    vocis_status st = VOCIS_OK;
    if (!m->t3_engine) {
        vx_t3_engine *e = calloc(1, sizeof *e);
        if (!e) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        if (!st && (st = vx_t3_batch_new(&m->t3, T3_ENGINE_SLOTS, &e->b, err))) free(e);
        if (!st) {
            pthread_mutex_init(&e->lock, NULL);
            pthread_cond_init(&e->cv, NULL);
            m->t3_engine = e;
        }
    }
    *out = m->t3_engine;
    pthread_mutex_unlock(&engine_create_lock);
    return st;
}

void vx_api_t3_engine_free(vocis_model *m) {
    vx_t3_engine *e = m->t3_engine;
    if (!e) return;
    vx_t3_batch_free(e->b);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->lock);
    free(e);
    m->t3_engine = NULL;
}

vocis_status vx_api_t3_generate(vocis_model *m, const vx_t3_cond *c, const int32_t *ids, int n_ids,
                                const vx_t3_sampling *s, vx_rng *rng, int32_t **tokens, int *n_tokens, vx_err *err) {
    *tokens = NULL;
    *n_tokens = 0;
    vx_t3_engine *e;
    VX_TRY(engine_of(m, &e, err));
    pthread_mutex_lock(&e->lock);
    while (vx_t3_batch_free_slots(e->b) == 0) pthread_cond_wait(&e->cv, &e->lock);
    int id;
    vocis_status st = vx_t3_batch_add(e->b, c, ids, n_ids, s, rng, m->threads, &id, err);
    while (!st && !vx_t3_batch_done(e->b, id)) {
        if (e->driving) {
            pthread_cond_wait(&e->cv, &e->lock);
            continue;
        }
        e->driving = 1;
        vx_err step_err = {0};
        vocis_status ss = vx_t3_batch_step(e->b, m->threads, &step_err);
        e->driving = 0;
        pthread_cond_broadcast(&e->cv);
        if (ss) { /* the batch itself failed (out of memory): every caller sees it */
            st = ss;
            if (err) *err = step_err;
        }
    }
    if (!st) st = vx_t3_batch_take(e->b, id, tokens, n_tokens, err);
    else vx_t3_batch_drop(e->b, id);
    pthread_cond_broadcast(&e->cv); /* a slot is free; the next caller may drive */
    pthread_mutex_unlock(&e->lock);
    return st;
}
