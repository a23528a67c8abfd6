#include "models/chatterbox/t3_batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/sampling.h"

typedef struct req {
    int used, finished;
    vx_err err;             /* the request's own failure, if any */
    int nseq;               /* 2 with CFG, else 1; KV slots 2·id (+1) */
    vx_t3_sampling s;
    vx_rng *rng;
    int max_new, step;      /* tokens allowed / drawn so far */
    int32_t *out, *hist;    /* [max_new + 1], [max_new + 2] */
    int n;
    size_t nhist;
    float *logits;          /* [nseq][V]: the latest forward's head output */
} req;

struct vx_t3_batch {
    const vx_t3 *t3;
    int max_req;
    req *r;
    vx_kv_cache kv;         /* 2 · max_req sequences */
    float *x, *rows, *l, *q; /* step input [2·max_req][D], logits of a step [2·max_req][V], CFG row, scratch */
    int *seqs;
};

vocis_status vx_t3_batch_new(const vx_t3 *t3, int max_requests, vx_t3_batch **out, vx_err *err) {
    *out = NULL;
    if (max_requests < 1 || max_requests > 256)
        return vx_fail(err, VOCIS_E_ARG, "T3 batch: %d requests (1..256)", max_requests);
    vx_t3_batch *b = calloc(1, sizeof *b);
    if (!b) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    const size_t D = (size_t)t3->dim, V = (size_t)t3->speech_head.rows, R = 2 * (size_t)max_requests;
    b->t3 = t3;
    b->max_req = max_requests;
    b->r = calloc((size_t)max_requests, sizeof *b->r);
    b->x = malloc(sizeof(float) * R * D);
    b->rows = malloc(sizeof(float) * R * V);
    b->l = malloc(sizeof(float) * V);
    b->q = malloc(sizeof(float) * V);
    b->seqs = malloc(sizeof(int) * R);
    vocis_status st = VOCIS_OK;
    if (!b->r || !b->x || !b->rows || !b->l || !b->q || !b->seqs) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    if (!st) st = vx_kv_init(&b->kv, &t3->tf, (int)R, 0, err);
    if (st) {
        vx_t3_batch_free(b);
        return st;
    }
    *out = b;
    return VOCIS_OK;
}

static void req_release(vx_t3_batch *b, int id) {
    req *q = &b->r[id];
    free(q->out), free(q->hist), free(q->logits);
    for (int k = 0; k < 2; k++) vx_kv_reset(&b->kv, 2 * id + k);
    memset(q, 0, sizeof *q);
}

void vx_t3_batch_free(vx_t3_batch *b) {
    if (!b) return;
    for (int i = 0; b->r && i < b->max_req; i++)
        if (b->r[i].used) req_release(b, i);
    vx_kv_free(&b->kv);
    free(b->r), free(b->x), free(b->rows), free(b->l), free(b->q), free(b->seqs);
    free(b);
}

int vx_t3_batch_active(const vx_t3_batch *b) {
    int n = 0;
    for (int i = 0; i < b->max_req; i++) n += b->r[i].used && !b->r[i].finished;
    return n;
}

int vx_t3_batch_free_slots(const vx_t3_batch *b) {
    int n = 0;
    for (int i = 0; i < b->max_req; i++) n += !b->r[i].used;
    return n;
}

int vx_t3_batch_done(const vx_t3_batch *b, int id) {
    return id >= 0 && id < b->max_req && b->r[id].used && b->r[id].finished;
}

static vocis_status check_request(const vx_t3 *t3, const int32_t *text_ids, int n_text, const vx_t3_sampling *s,
                                  vx_err *err) {
    if (n_text < 1) return vx_fail(err, VOCIS_E_ARG, "empty text token list");
    if (n_text > t3->text_pos.rows)
        return vx_fail(err, VOCIS_E_ARG, "text has %d tokens (with start/stop), more than the model's %lld", n_text,
                       (long long)t3->text_pos.rows);
    for (int i = 0; i < n_text; i++)
        if (text_ids[i] < 0 || text_ids[i] >= t3->text_emb.rows)
            return vx_fail(err, VOCIS_E_ARG, "text token %d is outside the vocabulary of %lld", text_ids[i],
                           (long long)t3->text_emb.rows);
    if (!(s->temperature > 0) || !isfinite(s->temperature))
        return vx_fail(err, VOCIS_E_ARG, "temperature must be > 0 (got %g)", s->temperature);
    if (!(s->repetition_penalty > 0)) return vx_fail(err, VOCIS_E_ARG, "repetition penalty must be > 0");
    if (!(s->cfg_weight >= 0)) return vx_fail(err, VOCIS_E_ARG, "cfg weight must be >= 0");
    int max_new = s->max_new_tokens;
    if (max_new > t3->speech_pos.rows - 1) max_new = (int)t3->speech_pos.rows - 1; /* learned positions end */
    if (max_new < 1) return vx_fail(err, VOCIS_E_ARG, "max new tokens must be >= 1");
    return VOCIS_OK;
}

vocis_status vx_t3_batch_add(vx_t3_batch *b, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                             const vx_t3_sampling *s, vx_rng *rng, int nthreads, int *id, vx_err *err) {
    *id = -1;
    const vx_t3 *t3 = b->t3;
    VX_TRY(check_request(t3, text_ids, n_text, s, err));
    int k = 0;
    while (k < b->max_req && b->r[k].used) k++;
    if (k == b->max_req) return vx_fail(err, VOCIS_E_ARG, "T3 batch: all %d request slots are taken", b->max_req);
    req *q = &b->r[k];
    memset(q, 0, sizeof *q);
    q->used = 1;
    q->s = *s;
    q->rng = rng;
    q->nseq = s->cfg_weight > 0 ? 2 : 1;
    q->max_new = s->max_new_tokens > t3->speech_pos.rows - 1 ? (int)t3->speech_pos.rows - 1 : s->max_new_tokens;
    const int D = t3->dim, V = (int)t3->speech_head.rows;
    const int64_t L0 = vx_t3_cond_len(t3, c) + n_text + 2;
    q->out = malloc(sizeof(int32_t) * (size_t)(q->max_new + 1));
    q->hist = malloc(sizeof(int32_t) * (size_t)(q->max_new + 2));
    q->logits = malloc(sizeof(float) * (size_t)q->nseq * V);
    float *x = vx_calloc(err, (size_t)q->nseq * L0 * D, sizeof(float), "T3 prefill");
    vocis_status st = VOCIS_OK;
    if (!q->out || !q->hist || !q->logits || !x) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    const int seqs[2] = {2 * k, 2 * k + 1};
    for (int i = 0; i < 2; i++) vx_kv_reset(&b->kv, seqs[i]);
    if (!st) st = vx_t3_prefill_embeds(t3, c, text_ids, n_text, q->nseq, x, nthreads, err);
    if (!st) st = vx_tf_forward(&t3->tf, &b->kv, seqs, q->nseq, L0, x, nthreads, NULL, NULL, err);
    if (!st) st = vx_t3_head_logits(t3, x, q->nseq, L0, q->logits, nthreads, err);
    free(x);
    if (st) {
        req_release(b, k);
        return st;
    }
    q->hist[q->nhist++] = t3->cfg.start_speech_token;
    *id = k;
    return VOCIS_OK;
}

/* The next token of request q from its latest logits (upstream's processor order). */
static int32_t next_token(vx_t3_batch *b, req *q) {
    const int V = (int)b->t3->speech_head.rows;
    const float *lc = q->logits, *lu = q->logits + V, w = q->s.cfg_weight;
    float *l = b->l;
    for (int v = 0; v < V; v++) l[v] = q->nseq == 2 ? lc[v] + w * (lc[v] - lu[v]) : lc[v];
    vx_logits_repetition_penalty(l, V, q->hist, q->nhist, q->s.repetition_penalty);
    vx_logits_temperature(l, V, q->s.temperature);
    vx_logits_min_p(l, V, q->s.min_p);
    vx_logits_top_p(l, V, q->s.top_p);
    if (q->s.greedy) return vx_argmax(l, V);
    vx_softmax(l, V);
    return vx_sample_multinomial(l, V, q->rng, b->q);
}

vocis_status vx_t3_batch_step(vx_t3_batch *b, int nthreads, vx_err *err) {
    const vx_t3 *t3 = b->t3;
    const int D = t3->dim, V = (int)t3->speech_head.rows;
    int nrows = 0;
    for (int k = 0; k < b->max_req; k++) {
        req *q = &b->r[k];
        if (!q->used || q->finished) continue;
        const int32_t tok = next_token(b, q);
        const int i = q->step++;
        q->out[q->n++] = tok;
        q->hist[q->nhist++] = tok;
        if (q->s.on_token && q->s.on_token(q->s.user, i, tok)) {
            vx_fail(&q->err, VOCIS_E_CANCELLED, "generation cancelled");
            q->finished = 1;
            continue;
        }
        if (tok == t3->cfg.stop_speech_token || i + 1 == q->max_new) {
            q->finished = 1;
            continue;
        }
        /* this request's rows of the step input: speech_emb(tok) + speech_pos(i + 1), once per CFG row */
        float *e = b->x + (size_t)nrows * D;
        vx_t3_embed(&t3->speech_emb, tok, e, 0);
        vx_t3_embed(&t3->speech_pos, i + 1, e, 1);
        for (int r = 0; r < q->nseq; r++) {
            if (r) memcpy(e + (size_t)r * D, e, sizeof(float) * D);
            b->seqs[nrows++] = 2 * k + r;
        }
    }
    if (nrows == 0) return VOCIS_OK;
    VX_TRY(vx_tf_forward(&t3->tf, &b->kv, b->seqs, nrows, 1, b->x, nthreads, NULL, NULL, err));
    VX_TRY(vx_t3_head_logits(t3, b->x, nrows, 1, b->rows, nthreads, err));
    for (int j = 0; j < nrows; j++) {
        const int k = b->seqs[j] / 2, r = b->seqs[j] % 2;
        memcpy(b->r[k].logits + (size_t)r * V, b->rows + (size_t)j * V, sizeof(float) * V);
    }
    return VOCIS_OK;
}

void vx_t3_batch_drop(vx_t3_batch *b, int id) {
    if (id >= 0 && id < b->max_req && b->r[id].used) req_release(b, id);
}

vocis_status vx_t3_batch_take(vx_t3_batch *b, int id, int32_t **tokens, int *n_tokens, vx_err *err) {
    *tokens = NULL;
    *n_tokens = 0;
    if (!vx_t3_batch_done(b, id)) return vx_fail(err, VOCIS_E_ARG, "T3 batch: request %d is not finished", id);
    req *q = &b->r[id];
    vocis_status st = q->err.code;
    if (st) {
        if (err) *err = q->err;
    } else {
        *tokens = q->out;
        *n_tokens = q->n;
        q->out = NULL;
    }
    req_release(b, id);
    return st;
}
