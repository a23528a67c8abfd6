#include "models/chatterbox/t3_batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/threads.h"
#include "nn/prefix_cache.h"
#include "nn/sampling.h"

typedef struct req {
    int used, finished;
    int drawn;              /* the first token is drawn: out[n - 1] is pending (drawn, not yet fed) */
    vx_err err;             /* the request's own failure, if any */
    int nseq;               /* 2 with CFG, else 1; KV slots 2·id (+1) */
    vx_t3_sampling s;
    vx_rng *rng;
    int max_new;            /* tokens allowed */
    int32_t *out, *hist;    /* [max_new + 1], [max_new + 2 + VX_SPEC_KMAX] (room for a round's proposals) */
    int n;
    size_t nhist;
    float *logits;          /* [nseq][V]: the prefill's head output (the first draw) */
    /* speculative decoding (nn/speculate.h) */
    vx_spec_ctl ctl;
    int k, np;              /* this round: proposals wanted, made */
    int32_t prop[VX_SPEC_KMAX];
    vx_rng peek;            /* the draft's copy of rng during a round */
    int row0;               /* the request's first row in the round's forward */
} req;

struct vx_t3_batch {
    const vx_t3 *t3;
    int max_req;
    req *r;
    vx_kv_cache kv;         /* 2 · max_req sequences */
    float *x, *rows;        /* forward inputs [cap_rows][D], head outputs [cap_rows][V] */
    int64_t cap_rows;
    float *l, *q;           /* a CFG-combined row [V], sampling scratch [V] */
    int *seqs;              /* [2 · max_req] */
    int64_t *ns;            /* [2 · max_req] positions per sequence */
    int draft_kind;         /* VX_DRAFT_* (tests force the exact model as draft) */
    vx_spec_ctl total;      /* all requests' speculation counts */
};

/* Room for `rows` forward rows (inputs and head outputs). */
static vocis_status ensure_rows(vx_t3_batch *b, int64_t rows, vx_err *err) {
    if (rows <= b->cap_rows) return VOCIS_OK;
    const size_t D = (size_t)b->t3->dim, V = (size_t)b->t3->speech_head.rows;
    float *x = realloc(b->x, sizeof(float) * (size_t)rows * D);
    if (x) b->x = x;
    float *r = x ? realloc(b->rows, sizeof(float) * (size_t)rows * V) : NULL;
    if (r) b->rows = r;
    if (!x || !r) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (T3 batch, %lld rows)", (long long)rows);
    b->cap_rows = rows;
    return VOCIS_OK;
}

vocis_status vx_t3_batch_new(const vx_t3 *t3, int max_requests, vx_t3_batch **out, vx_err *err) {
    *out = NULL;
    if (max_requests < 1 || max_requests > 256)
        return vx_fail(err, VOCIS_E_ARG, "T3 batch: %d requests (1..256)", max_requests);
    vx_t3_batch *b = calloc(1, sizeof *b);
    if (!b) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    const size_t V = (size_t)t3->speech_head.rows, R = 2 * (size_t)max_requests;
    b->t3 = t3;
    b->max_req = max_requests;
    b->r = calloc((size_t)max_requests, sizeof *b->r);
    b->l = malloc(sizeof(float) * V);
    b->q = malloc(sizeof(float) * V);
    b->seqs = malloc(sizeof(int) * R);
    b->ns = malloc(sizeof(int64_t) * R);
    vx_spec_ctl_init(&b->total, VX_SPEC_AUTO);
    vocis_status st = VOCIS_OK;
    if (!b->r || !b->l || !b->q || !b->seqs || !b->ns) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    if (!st) st = ensure_rows(b, (int64_t)R, err);
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
    free(b->r), free(b->x), free(b->rows), free(b->l), free(b->q), free(b->seqs), free(b->ns);
    free(b);
}

void vx_t3_batch_set_draft(vx_t3_batch *b, int draft_kind) { b->draft_kind = draft_kind; }

void vx_t3_batch_spec_totals(const vx_t3_batch *b, vx_spec_ctl *out) { *out = b->total; }

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
    if (s->speculate < VX_SPEC_OFF || s->speculate > VX_SPEC_KMAX)
        return vx_fail(err, VOCIS_E_ARG, "speculate must be off (-1), auto (0) or 1..%d (got %d)", VX_SPEC_KMAX,
                       s->speculate);
    int max_new = s->max_new_tokens;
    if (max_new > t3->speech_pos.rows - 1) max_new = (int)t3->speech_pos.rows - 1; /* learned positions end */
    if (max_new < 1) return vx_fail(err, VOCIS_E_ARG, "max new tokens must be >= 1");
    return VOCIS_OK;
}

/* What a voice's conditioning prefix is computed from: the model's cache
 * dtype and the T3Cond (speaker embedding, prompt tokens, exaggeration). */
static void prefix_key(const vx_t3 *t3, const vx_t3_cond *c, vx_keybuf *k) {
    const int32_t head[4] = {0x7433 /* "t3" */, (int32_t)t3->tf.kv_dtype, t3->speaker_dim,
                             c->prompt_tokens ? c->n_prompt : 0};
    vx_keybuf_add(k, head, sizeof head);
    vx_keybuf_add(k, c->speaker_emb, sizeof(float) * (size_t)t3->speaker_dim);
    if (c->prompt_tokens) vx_keybuf_add(k, c->prompt_tokens, sizeof(int64_t) * (size_t)c->n_prompt);
    vx_keybuf_add(k, &c->emotion_adv, sizeof c->emotion_adv);
}

typedef struct prefix_in {
    vx_kv_cache *kv;
    const int *seqs;
    int nseq;
    int64_t len;
    vocis_status st;
    vx_err *err;
} prefix_in;

static void prefix_import(void *user, const void *value, size_t n) {
    prefix_in *p = user;
    if (n != vx_kv_span_bytes(p->kv, p->len)) {
        p->st = vx_fail(p->err, VOCIS_E_INTERNAL, "voice cache entry of %zu bytes, expected %zu", n,
                        vx_kv_span_bytes(p->kv, p->len));
        return;
    }
    for (int i = 0; i < p->nseq && !p->st; i++) p->st = vx_kv_import(p->kv, p->seqs[i], p->len, value, p->err);
}

/* The conditioning prefix's K/V into the request's sequences (the CFG rows
 * share it): from the model's voice cache, else computed as its own
 * forward of one sequence and cached. Always its own forward, so a cached
 * prefix has the bits of a computed one. */
static vocis_status prefill_prefix(const vx_t3 *t3, vx_kv_cache *kv, const vx_t3_cond *c, const int *seqs, int nseq,
                                   int nthreads, vx_err *err) {
    const int lc = vx_t3_cond_len(t3, c);
    vx_keybuf key = {0};
    if (t3->prefix_cache) prefix_key(t3, c, &key);
    prefix_in in = {kv, seqs, nseq, lc, VOCIS_OK, err};
    if (key.n && vx_prefix_cache_get(t3->prefix_cache, key.p, key.n, prefix_import, &in)) {
        vx_keybuf_free(&key);
        return in.st;
    }
    float *x = vx_malloc(err, sizeof(float) * (size_t)lc * (size_t)t3->dim, "T3 conditioning");
    void *span = x ? vx_malloc(err, vx_kv_span_bytes(kv, lc), "T3 conditioning K/V") : NULL;
    int len_cond;
    vocis_status st = span ? VOCIS_OK : VOCIS_E_NOMEM;
    if (!st) st = vx_t3_cond_encode(t3, c, x, &len_cond, NULL, NULL, nthreads, err);
    if (!st) st = vx_tf_forward(&t3->tf, kv, seqs, 1, lc, x, nthreads, NULL, NULL, err);
    if (!st) {
        vx_kv_export(kv, seqs[0], lc, span);
        if (nseq == 2) st = vx_kv_import(kv, seqs[1], lc, span, err);
        if (!st && key.n) vx_prefix_cache_put(t3->prefix_cache, key.p, key.n, span, vx_kv_span_bytes(kv, lc));
    }
    free(x), free(span);
    vx_keybuf_free(&key);
    return st;
}

struct vx_t3_prep {
    vx_kv_cache kv; /* the request's own: its CFG rows in sequences 0 (and 1) */
    int nseq;
    int64_t len;    /* positions prefilled */
    float *logits;  /* [nseq][V] */
    vx_t3_sampling s;
    vx_rng *rng;
};

void vx_t3_prep_free(vx_t3_prep *p) {
    if (!p) return;
    vx_kv_free(&p->kv);
    free(p->logits);
    free(p);
}

vocis_status vx_t3_batch_prepare(const vx_t3 *t3, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                                 const vx_t3_sampling *s, vx_rng *rng, int nthreads, vx_t3_prep **out, vx_err *err) {
    *out = NULL;
    VX_TRY(check_request(t3, text_ids, n_text, s, err));
    vx_t3_prep *p = vx_calloc(err, 1, sizeof *p, "T3 request");
    if (!p) return VOCIS_E_NOMEM;
    p->s = *s;
    p->rng = rng;
    p->nseq = s->cfg_weight > 0 ? 2 : 1;
    const int D = t3->dim, V = (int)t3->speech_head.rows;
    const int64_t n = n_text + 2; /* after the conditioning prefix */
    const int seqs[2] = {0, 1};
    p->logits = malloc(sizeof(float) * (size_t)p->nseq * V);
    float *x = vx_calloc(err, (size_t)p->nseq * n * D, sizeof(float), "T3 prefill");
    vocis_status st = p->logits && x ? VOCIS_OK : vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    if (!st) st = vx_kv_init(&p->kv, &t3->tf, 2, 0, err);
    if (!st) st = prefill_prefix(t3, &p->kv, c, seqs, p->nseq, nthreads, err);
    if (!st) {
        vx_t3_text_embeds(t3, text_ids, n_text, p->nseq, x);
        st = vx_tf_forward(&t3->tf, &p->kv, seqs, p->nseq, n, x, nthreads, NULL, NULL, err);
    }
    if (!st) st = vx_t3_head_logits(t3, x, p->nseq, n, p->logits, nthreads, err);
    free(x);
    if (st) {
        vx_t3_prep_free(p);
        return st;
    }
    p->len = p->kv.len[0];
    *out = p;
    return VOCIS_OK;
}

vocis_status vx_t3_batch_put(vx_t3_batch *b, vx_t3_prep *p, int *id, vx_err *err) {
    *id = -1;
    const vx_t3 *t3 = b->t3;
    int k = 0;
    while (k < b->max_req && b->r[k].used) k++;
    if (k == b->max_req) return vx_fail(err, VOCIS_E_ARG, "T3 batch: all %d request slots are taken", b->max_req);
    req *q = &b->r[k];
    memset(q, 0, sizeof *q);
    q->used = 1;
    q->s = p->s;
    q->rng = p->rng;
    q->nseq = p->nseq;
    q->max_new = p->s.max_new_tokens > t3->speech_pos.rows - 1 ? (int)t3->speech_pos.rows - 1 : p->s.max_new_tokens;
    q->out = malloc(sizeof(int32_t) * (size_t)(q->max_new + 1));
    q->hist = malloc(sizeof(int32_t) * (size_t)(q->max_new + 2 + VX_SPEC_KMAX));
    vx_spec_ctl_init(&q->ctl, t3->tf.n_layers > 0 && vx_spec_active(p->s.speculate, &t3->tf.layers[0].q)
                                  ? p->s.speculate
                                  : VX_SPEC_OFF);
    /* the prefill's K/V into the request's slots (a copy: the batch's cache may grow while it steps) */
    void *span = malloc(vx_kv_span_bytes(&b->kv, p->len));
    vocis_status st = q->out && q->hist && span ? VOCIS_OK : vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int i = 0; i < 2; i++) vx_kv_reset(&b->kv, 2 * k + i);
    for (int i = 0; i < p->nseq && !st; i++) {
        vx_kv_export(&p->kv, i, p->len, span);
        st = vx_kv_import(&b->kv, 2 * k + i, p->len, span, err);
    }
    free(span);
    if (st) {
        req_release(b, k);
        return st;
    }
    q->logits = p->logits; /* taken over */
    p->logits = NULL;
    vx_t3_prep_free(p);
    q->hist[q->nhist++] = t3->cfg.start_speech_token;
    *id = k;
    return VOCIS_OK;
}

vocis_status vx_t3_batch_add(vx_t3_batch *b, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                             const vx_t3_sampling *s, vx_rng *rng, int nthreads, int *id, vx_err *err) {
    *id = -1;
    if (!vx_t3_batch_free_slots(b))
        return vx_fail(err, VOCIS_E_ARG, "T3 batch: all %d request slots are taken", b->max_req);
    vx_t3_prep *p;
    VX_TRY(vx_t3_batch_prepare(b->t3, c, text_ids, n_text, s, rng, nthreads, &p, err));
    vocis_status st = vx_t3_batch_put(b, p, id, err);
    if (st) vx_t3_prep_free(p);
    return st;
}

/* A draw of plain decoding from a forward's rows for request q: lc the
 * conditional row, lu the unconditional one (CFG), processed in upstream's
 * order over the history hist[0..nhist) (l, the batch's row, is
 * overwritten), then argmax or the multinomial from rng. */
static int32_t draw(vx_t3_batch *b, const req *q, const float *lc, const float *lu, const int32_t *hist,
                    size_t nhist, vx_rng *rng) {
    const int V = (int)b->t3->speech_head.rows;
    const float w = q->s.cfg_weight;
    float *l = b->l;
    for (int v = 0; v < V; v++) l[v] = q->nseq == 2 ? lc[v] + w * (lc[v] - lu[v]) : lc[v];
    vx_logits_repetition_penalty(l, V, hist, nhist, q->s.repetition_penalty);
    vx_logits_temperature(l, V, q->s.temperature);
    vx_logits_min_p(l, V, q->s.min_p);
    vx_logits_top_p(l, V, q->s.top_p);
    if (q->s.greedy) return vx_argmax(l, V);
    vx_softmax(l, V);
    return vx_sample_multinomial(l, V, rng, b->q);
}

/* The request's next token drawn with its real rng, appended and reported;
 * 1 when the request is finished (stop token, cap, or cancelled), else 0. */
static int emit(vx_t3_batch *b, req *q, const float *lc, const float *lu) {
    const int32_t tok = draw(b, q, lc, lu, q->hist, q->nhist, q->rng);
    const int i = q->n;
    q->out[q->n++] = tok;
    q->hist[q->nhist++] = tok;
    if (q->s.on_token && q->s.on_token(q->s.user, i, tok)) {
        vx_fail(&q->err, VOCIS_E_CANCELLED, "generation cancelled");
        return q->finished = 1;
    }
    if (tok == b->t3->cfg.stop_speech_token || q->n == q->max_new) return q->finished = 1;
    return 0;
}

static int live(const req *q) { return q->used && !q->finished; }

/* Whether request q makes proposal j of this round: it is live, made the j before, wants more
 * (k) and has not proposed the stop token. */
static int proposing(const req *q, int j, int32_t stop) {
    return live(q) && q->np == j && j < q->k && !(j > 0 && q->prop[j - 1] == stop);
}

/* Appends request q's rows for token `tok` at its speech position `pos` (one per CFG row) to the
 * forward inputs at row *nrows; j: the row's place among the request's rows of this forward. */
static void put_rows(vx_t3_batch *b, const req *q, int32_t tok, int pos, int j, int per_seq) {
    const int D = b->t3->dim;
    float *e = b->x + (size_t)(q->row0 + j) * D;
    vx_t3_embed(&b->t3->speech_emb, tok, e, 0);
    vx_t3_embed(&b->t3->speech_pos, pos, e, 1);
    for (int r = 1; r < q->nseq; r++) memcpy(e + (size_t)r * per_seq * D, e, sizeof(float) * D);
}

/* logits[r] = head(final_norm(x[r])) for n rows (x normalized in place), each row's bits those of a lone row. */
static void head_rows(const vx_tf *tf, const vx_mat *head, float *x, int64_t n, float *logits, int nthreads) {
    vx_tf_final_norm(tf, x, x, n);
    vx_linear_rows(logits, x, n, head, NULL, nthreads);
}

/* The draft d's proposals (NULL: the exact model, for tests): up to q->k tokens after the pending token of every
 * live request, in ≤ kmax batched one-position draft forwards. Proposal j is
 * drawn like plain draw n + j would be if every earlier proposal were right:
 * the same processors over the history extended by the proposals, with a
 * copy of the request's rng (the real one is not touched). The draft
 * writes its K/V after each request's cached prefix; the lengths are put
 * back afterwards (the verify overwrites those positions). */
static vocis_status propose(vx_t3_batch *b, const vx_t3_draft *d, int kmax, int nthreads, vx_err *err) {
    const vx_t3 *t3 = b->t3;
    const vx_tf *tf = d ? &d->tf : &t3->tf; /* the test drafts: the exact model */
    const vx_mat *head = d ? &d->speech_head : &t3->speech_head;
    const int V = (int)head->rows;
    int64_t len0[256]; /* max_requests <= 256 */
    for (int id = 0; id < b->max_req; id++) {
        req *q = &b->r[id];
        q->np = 0;
        if (!live(q) || q->k == 0) continue;
        q->peek = *q->rng;
        len0[id] = b->kv.len[2 * id];
    }
    for (int j = 0; j < kmax; j++) {
        int nrows = 0;
        for (int id = 0; id < b->max_req; id++) {
            req *q = &b->r[id];
            if (!proposing(q, j, t3->cfg.stop_speech_token)) continue;
            q->row0 = nrows;
            put_rows(b, q, j ? q->prop[j - 1] : q->out[q->n - 1], q->n + j, 0, 1);
            for (int r = 0; r < q->nseq; r++) b->seqs[nrows++] = 2 * id + r;
        }
        if (nrows == 0) break;
        VX_TRY(vx_tf_forward(tf, &b->kv, b->seqs, nrows, 1, b->x, nthreads, NULL, NULL, err));
        vx_tf_final_norm(&t3->tf, b->x, b->x, nrows);
        vx_linear(b->rows, b->x, nrows, head, NULL, nthreads);
        for (int id = 0; id < b->max_req; id++) {
            req *q = &b->r[id];
            if (!proposing(q, j, t3->cfg.stop_speech_token)) continue;
            const float *lc = b->rows + (size_t)q->row0 * V;
            int32_t tok = draw(b, q, lc, lc + V, q->hist, q->nhist + (size_t)j, &q->peek);
            if (b->draft_kind == VX_DRAFT_CONTRARY) tok = (tok + 1) % V;
            q->prop[q->np++] = tok;
            q->hist[q->nhist + (size_t)j] = tok; /* the next proposal's history */
        }
    }
    for (int id = 0; id < b->max_req; id++) {
        const req *q = &b->r[id];
        if (live(q) && q->k > 0)
            for (int r = 0; r < q->nseq; r++) b->kv.len[2 * id + r] = len0[id];
    }
    return VOCIS_OK;
}

/* One round for every live request: its pending token and its proposals
 * through the exact model in ONE forward (each row exactly as a lone
 * one-position step computes it), then draws in order with the real rng
 * until the first that differs from its proposal (kept: the exact model's
 * token) or, all matching, one more; the cache keeps the pending token and
 * the accepted proposals. With no proposals this is a plain decode step. */
vocis_status vx_t3_batch_step(vx_t3_batch *b, int nthreads, vx_err *err) {
    const vx_t3 *t3 = b->t3;
    const int V = (int)t3->speech_head.rows;
    /* requests fresh from their prefill: the first draw */
    for (int id = 0; id < b->max_req; id++) {
        req *q = &b->r[id];
        if (!live(q) || q->drawn) continue;
        q->drawn = 1;
        emit(b, q, q->logits, q->logits + V);
    }
    int kmax = 0;
    for (int id = 0; id < b->max_req; id++) {
        req *q = &b->r[id];
        if (!live(q)) continue;
        int k = vx_spec_ctl_k(&q->ctl);
        if (k > q->max_new - q->n - 1) k = q->max_new - q->n - 1; /* a round draws at most k + 1 */
        q->k = k > 0 ? k : 0;
        q->np = 0;
        if (q->k > kmax) kmax = q->k;
    }
    const vx_t3_draft *d = NULL;
    if (kmax > 0 && b->draft_kind == VX_DRAFT_QUANT) /* built on first use: not part of the round's timing */
        VX_TRY(vx_t3_draft_of(t3, &d, nthreads, err));
    const double t0 = vx_now_s();
    if (kmax > 0) VX_TRY(propose(b, d, kmax, nthreads, err));
    const double t1 = vx_now_s();
    int nrows = 0, nseqs = 0;
    for (int id = 0; id < b->max_req; id++) {
        req *q = &b->r[id];
        if (!live(q)) continue;
        q->row0 = nrows;
        nrows += q->nseq * (1 + q->np);
    }
    if (nrows == 0) return VOCIS_OK;
    VX_TRY(ensure_rows(b, nrows, err));
    for (int id = 0; id < b->max_req; id++) {
        req *q = &b->r[id];
        if (!live(q)) continue;
        const int per = 1 + q->np; /* rows of each CFG row's sequence: the pending token, then the proposals */
        for (int j = 0; j < per; j++) put_rows(b, q, j ? q->prop[j - 1] : q->out[q->n - 1], q->n + j, j, per);
        for (int r = 0; r < q->nseq; r++) b->seqs[nseqs] = 2 * id + r, b->ns[nseqs++] = per;
    }
    VX_TRY(vx_tf_forward_steps(&t3->tf, &b->kv, b->seqs, nseqs, b->ns, b->x, nthreads, err));
    head_rows(&t3->tf, &t3->speech_head, b->x, nrows, b->rows, nthreads);
    const double t2 = vx_now_s();
    for (int id = 0; id < b->max_req; id++) {
        req *q = &b->r[id];
        if (!live(q)) continue;
        const int per = 1 + q->np, n0 = q->n;
        const int64_t len0 = b->kv.len[2 * id] - per;
        int accepted = 0;
        for (int j = 0; j < per; j++) {
            const float *lc = b->rows + (size_t)(q->row0 + j) * V;
            const int end = emit(b, q, lc, lc + (size_t)per * V);
            if (j == q->np || q->out[q->n - 1] != q->prop[j]) break; /* the bonus draw, or a rejection */
            accepted++;
            if (end) break; /* an accepted stop token, or a cancel */
        }
        for (int r = 0; r < q->nseq; r++) b->kv.len[2 * id + r] = len0 + 1 + accepted;
        const int tokens = q->n - n0;
        if (q->np > 0) {
            const double draft_s = (t1 - t0) * q->np / kmax;
            vx_spec_ctl_round(&q->ctl, q->np, accepted, tokens, draft_s, t2 - t1);
            vx_spec_ctl_round(&b->total, q->np, accepted, tokens, draft_s, t2 - t1);
        } else {
            vx_spec_ctl_plain(&q->ctl, t2 - t0);
            vx_spec_ctl_plain(&b->total, t2 - t0);
        }
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
