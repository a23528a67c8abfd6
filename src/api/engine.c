/* Continuous batching of a model's concurrent calls: they share one batch (Chatterbox
 * English/Multilingual: models/chatterbox/t3_batch.h; Turbo/Nano: t3_gpt2_batch.h; VibeVoice:
 * its generations, vocis_vv.c): each call admits its request, and whichever caller holds the
 * engine runs the steps for everyone — every weight is read once per step for all requests in
 * flight. A call returns as soon as its own request finishes (another caller, if any, takes over
 * the stepping). A request's output does not depend on its neighbours. Callbacks (on_token,
 * on_audio) may run on another caller's thread. The engine knows a batch only through
 * vx_batch_ops. */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "models/chatterbox/t3_batch.h"
#include "models/chatterbox/t3_gpt2_batch.h"

typedef struct vx_engine {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    const vx_batch_ops *ops;
    void *b;
    int driving;  /* a caller is running a step (without the lock): only it touches the batch */
    int arriving; /* callers waiting to admit a request: the driver lets them in between steps */
    int active;   /* requests admitted and not yet taken or dropped */
    int64_t steps, rows; /* steps run, and the requests in the batch at each, summed */
} vx_engine;

static pthread_mutex_t engine_create_lock = PTHREAD_MUTEX_INITIALIZER;

static vocis_status engine_of(vocis_model *m, const vx_batch_ops *ops, vx_engine **out, vx_err *err) {
    pthread_mutex_lock(&engine_create_lock);
    vocis_status st = VOCIS_OK;
    if (!m->engine) {
        vx_engine *e = calloc(1, sizeof *e);
        if (!e) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        if (!st && (st = ops->create(m, &e->b, err))) free(e);
        if (!st) {
            e->ops = ops;
            pthread_mutex_init(&e->lock, NULL);
            pthread_cond_init(&e->cv, NULL);
            m->engine = e;
        }
    }
    *out = m->engine;
    pthread_mutex_unlock(&engine_create_lock);
    return st;
}

void vx_api_engine_free(vocis_model *m) {
    vx_engine *e = m->engine;
    if (!e) return;
    e->ops->destroy(e->b);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->lock);
    free(e);
    m->engine = NULL;
}

void vx_api_engine_stats(const vocis_model *m, int *active, int64_t *steps, int64_t *rows) {
    vx_engine *e = m->engine;
    *active = 0, *steps = 0, *rows = 0;
    if (!e) return;
    pthread_mutex_lock(&e->lock);
    *active = e->active, *steps = e->steps, *rows = e->rows;
    pthread_mutex_unlock(&e->lock);
}

/* Admits one request through ops->add (after ops->prepare, when the family has one, outside the
 * lock) and steps the batch until it is finished, taking turns with the other callers. A step runs without the lock, so that callers
 * arriving meanwhile can register; the batch is touched only under the lock while no step runs
 * (admissions, done checks, takes), or by the one driver during its step. After each step the
 * driver waits until the registered arrivals are admitted, so that new requests join at the next
 * step instead of after the driver's own request ends. */
vocis_status vx_api_engine_run(vocis_model *m, const vx_batch_ops *ops, const void *req, void *out, vx_err *err) {
    vx_engine *e;
    VX_TRY(engine_of(m, ops, &e, err));
    void *prep = NULL; /* the prefill runs here, while other callers' requests keep stepping */
    if (ops->prepare) VX_TRY(ops->prepare(m, req, m->threads, &prep, err));
    pthread_mutex_lock(&e->lock);
    e->arriving++;
    while (e->driving || ops->free_slots(e->b) == 0) pthread_cond_wait(&e->cv, &e->lock);
    int id = -1;
    vocis_status st = ops->add(e->b, ops->prepare ? prep : req, m->threads, &id, err);
    if (st && ops->prepare) ops->discard(prep);
    e->arriving--;
    if (!st) e->active++;
    pthread_cond_broadcast(&e->cv);
    for (;;) {
        while (e->driving) pthread_cond_wait(&e->cv, &e->lock);
        if (st || ops->done(e->b, id)) break;
        e->driving = 1;
        e->steps++;
        e->rows += e->active;
        pthread_mutex_unlock(&e->lock);
        vx_err step_err = {0};
        const vocis_status ss = ops->step(e->b, m->threads, &step_err);
        pthread_mutex_lock(&e->lock);
        e->driving = 0;
        pthread_cond_broadcast(&e->cv);
        if (ss) { /* the batch itself failed (out of memory): every caller sees it */
            st = ss;
            if (err) *err = step_err;
        }
        /* let the callers that arrived during the step join before the next one */
        while (!st && e->arriving > 0 && ops->free_slots(e->b) > 0 && !e->driving)
            pthread_cond_wait(&e->cv, &e->lock);
    }
    if (!st) st = ops->take(e->b, id, out, err);
    else if (id >= 0) ops->drop(e->b, id);
    if (id >= 0) e->active--;
    pthread_cond_broadcast(&e->cv); /* a slot is free; the next caller may drive */
    pthread_mutex_unlock(&e->lock);
    return st;
}

/* ---- Chatterbox English / Multilingual (Llama T3, CFG pair) ---- */

typedef struct llama_req {
    const vx_t3_cond *c;
    const int32_t *ids;
    int n_ids;
    const vx_t3_sampling *s;
    vx_rng *rng;
} llama_req;

static vocis_status llama_create(vocis_model *m, void **b, vx_err *err) {
    return vx_t3_batch_new(&m->t3, VX_ENGINE_SLOTS, (vx_t3_batch **)b, err);
}
static void llama_destroy(void *b) { vx_t3_batch_free(b); }
/* the prefill into the request's own cache on the caller's thread, while the batch steps; add copies
 * its K/V into a slot */
static vocis_status llama_prepare(vocis_model *m, const void *req, int nthreads, void **prep, vx_err *err) {
    const llama_req *r = req;
    return vx_t3_batch_prepare(&m->t3, r->c, r->ids, r->n_ids, r->s, r->rng, nthreads, (vx_t3_prep **)prep, err);
}
static void llama_discard(void *prep) { vx_t3_prep_free(prep); }
static vocis_status llama_add(void *b, const void *prep, int nthreads, int *id, vx_err *err) {
    (void)nthreads;
    return vx_t3_batch_put(b, (vx_t3_prep *)prep, id, err);
}
static int llama_free_slots(const void *b) { return vx_t3_batch_free_slots(b); }
static int llama_done(const void *b, int id) { return vx_t3_batch_done(b, id); }
static vocis_status llama_step(void *b, int nthreads, vx_err *err) { return vx_t3_batch_step(b, nthreads, err); }
typedef struct t3_out {
    int32_t **tokens;
    int *n;
} t3_out;

static vocis_status llama_take(void *b, int id, void *out, vx_err *err) {
    const t3_out *o = out;
    return vx_t3_batch_take(b, id, o->tokens, o->n, err);
}
static void llama_drop(void *b, int id) { vx_t3_batch_drop(b, id); }
static const vx_batch_ops llama_ops = {llama_create, llama_destroy, llama_add,  llama_free_slots, llama_done,
                                       llama_step,   llama_take,    llama_drop, llama_prepare,    llama_discard};

vocis_status vx_api_t3_generate(vocis_model *m, const vx_t3_cond *c, const int32_t *ids, int n_ids,
                                const vx_t3_sampling *s, vx_rng *rng, int32_t **tokens, int *n_tokens, vx_err *err) {
    const llama_req r = {c, ids, n_ids, s, rng};
    *tokens = NULL;
    *n_tokens = 0;
    return vx_api_engine_run(m, &llama_ops, &r, &(t3_out){tokens, n_tokens}, err);
}

/* ---- Chatterbox Turbo / Nano (GPT-2 T3, one row) ---- */

static vocis_status gpt2_create(vocis_model *m, void **b, vx_err *err) {
    return vx_t3_gpt2_batch_new(vx_api_turbo_t3(m), VX_ENGINE_SLOTS, (vx_t3_gpt2_batch **)b, err);
}
static void gpt2_destroy(void *b) { vx_t3_gpt2_batch_free(b); }
/* the prompt's prefill on the caller's thread, while the batch steps; add only admits it */
static vocis_status gpt2_prepare(vocis_model *m, const void *req, int nthreads, void **prep, vx_err *err) {
    return vx_t3_gpt2_req_start(vx_api_turbo_t3(m), req, nthreads, (vx_t3_gpt2_gen **)prep, err);
}
static void gpt2_discard(void *prep) { vx_t3_gpt2_gen_free(prep); }
static vocis_status gpt2_add(void *b, const void *prep, int nthreads, int *id, vx_err *err) {
    (void)nthreads;
    return vx_t3_gpt2_batch_put(b, (vx_t3_gpt2_gen *)prep, id, err);
}
static int gpt2_free_slots(const void *b) { return vx_t3_gpt2_batch_free_slots(b); }
static int gpt2_done(const void *b, int id) { return vx_t3_gpt2_batch_done(b, id); }
static vocis_status gpt2_step(void *b, int nthreads, vx_err *err) { return vx_t3_gpt2_batch_step(b, nthreads, err); }
static vocis_status gpt2_take(void *b, int id, void *out, vx_err *err) {
    const t3_out *o = out;
    return vx_t3_gpt2_batch_take(b, id, o->tokens, o->n, err);
}
static void gpt2_drop(void *b, int id) { vx_t3_gpt2_batch_drop(b, id); }
static const vx_batch_ops gpt2_ops = {gpt2_create, gpt2_destroy, gpt2_add,  gpt2_free_slots, gpt2_done,
                                      gpt2_step,   gpt2_take,    gpt2_drop, gpt2_prepare,    gpt2_discard};

vocis_status vx_api_turbo_t3_batched(vocis_model *m, const vx_t3_gpt2_req *r, int32_t **tokens, int *n_tokens,
                                     vx_err *err) {
    *tokens = NULL;
    *n_tokens = 0;
    return vx_api_engine_run(m, &gpt2_ops, r, &(t3_out){tokens, n_tokens}, err);
}
