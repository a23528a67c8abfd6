#include "nn/speculate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hugemem.h"
#include "kernels/precision.h"

#define PRIOR_ACCEPT 0.7 /* acceptance assumed before any round */
#define ACCEPT_GAIN 0.1  /* weight of one proposal's outcome in the running acceptance */
#define TIME_GAIN 0.2    /* weight of one measurement in the running costs */
#define FIRST_K 4        /* the first round's proposals, before any cost is known */
#define PROBE_K 2        /* proposals of a probe after a run of plain steps */
#define BACKOFF_MIN 16   /* plain steps after the first failed probe... */
#define BACKOFF_MAX 512  /* ...doubling up to this */

int vx_spec_parse(const char *s, int *setting) {
    if (!s) return -1;
    if (!strcmp(s, "off")) return *setting = VX_SPEC_OFF, 0;
    if (!strcmp(s, "auto")) return *setting = VX_SPEC_AUTO, 0;
    char *end;
    long n = strtol(s, &end, 10);
    if (end == s || *end || n < 1 || n > VX_SPEC_KMAX) return -1;
    *setting = (int)n;
    return 0;
}

const char *vx_spec_name(int setting) {
    static char buf[16];
    if (setting == VX_SPEC_OFF) return "off";
    if (setting == VX_SPEC_AUTO) return "auto";
    snprintf(buf, sizeof buf, "%d", setting);
    return buf;
}

void vx_spec_ctl_init(vx_spec_ctl *c, int setting) {
    memset(c, 0, sizeof *c);
    c->setting = setting < VX_SPEC_OFF ? VX_SPEC_OFF : setting > VX_SPEC_KMAX ? VX_SPEC_KMAX : setting;
    c->acc = PRIOR_ACCEPT;
    c->backoff = BACKOFF_MIN;
}

static void mean_in(double *t, double x) { *t = *t > 0 ? *t + TIME_GAIN * (x - *t) : x; }

/* Expected tokens per second of rounds of k proposals under the cost model. */
static double rate_of(const vx_spec_ctl *c, int k) {
    double e = 1, p = 1;
    for (int i = 0; i < k; i++) e += (p *= c->acc);
    return e / (k * c->t_draft + c->t_plain + k * c->t_row);
}

int vx_spec_ctl_k(vx_spec_ctl *c) {
    if (c->setting == VX_SPEC_OFF) return 0;
    if (c->setting > 0) return c->setting;
    if (c->t_plain <= 0) return 0;              /* measure a plain step first */
    if (c->t_draft <= 0) return FIRST_K;        /* then one round to measure the draft and the verify */
    if (c->plain_left > 0) {
        if (--c->plain_left == 0) return PROBE_K; /* the run of plain steps is over: probe */
        return 0;
    }
    int best = 0;
    double best_rate = 1.0 / c->t_plain;
    for (int k = 1; k <= VX_SPEC_KMAX; k++) {
        double r = rate_of(c, k);
        if (r > best_rate) best = k, best_rate = r;
    }
    if (best == 0) {
        c->plain_left = c->backoff;
        c->backoff = c->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : c->backoff * 2;
    } else {
        c->backoff = BACKOFF_MIN;
    }
    return best;
}

void vx_spec_ctl_round(vx_spec_ctl *c, int k, int accepted, int tokens, double draft_s, double verify_s) {
    if (k < 1) return;
    if (accepted > k) accepted = k;
    c->rounds++;
    c->proposed += k;
    c->accepted += accepted;
    c->tokens += tokens;
    /* a stop token or the cap can end the round inside the accepted prefix: only what was seen counts */
    int seen = accepted < tokens ? accepted : tokens;
    for (int i = 0; i < seen; i++) c->acc += ACCEPT_GAIN * (1.0 - c->acc);
    if (accepted < k && tokens == accepted + 1) c->acc -= ACCEPT_GAIN * c->acc;
    mean_in(&c->t_draft, draft_s / k);
    if (c->t_plain > 0) {
        double row = (verify_s - c->t_plain) / k;
        mean_in(&c->t_row, row > 1e-9 ? row : 1e-9);
    }
}

void vx_spec_ctl_plain(vx_spec_ctl *c, double step_s) {
    c->plain_steps++;
    c->tokens++;
    mean_in(&c->t_plain, step_s);
}

double vx_spec_accept_rate(const vx_spec_ctl *c) { return c->proposed ? (double)c->accepted / c->proposed : 0; }

double vx_spec_tokens_per_verify(const vx_spec_ctl *c) {
    return c->rounds ? (double)(c->tokens - c->plain_steps) / c->rounds : 0;
}

int vx_spec_active(int setting, const vx_mat *linear) {
    if (setting == VX_SPEC_OFF || !linear) return 0;
    if (setting > 0) return 1;
    return linear->dtype != VX_Q8 && linear->dtype != VX_Q8D && linear->dtype != VX_Q4 && !linear->act_bf16;
}

vocis_status vx_draft_mat(vx_draft_mem *m, const vx_mat *src, vx_mat *out, int nthreads, vx_err *err) {
    if (src->dtype != VX_F32 && src->dtype != VX_BF16 && src->dtype != VX_F16) {
        *out = *src;
        return VOCIS_OK;
    }
    if (m->n == m->cap) {
        const int cap = m->cap ? 2 * m->cap : 64;
        void **nb = realloc(m->buf, sizeof *nb * (size_t)cap);
        if (!nb) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (speculative draft)");
        m->buf = nb, m->cap = cap;
    }
    const size_t bytes = vx_draft_bytes(src->rows, src->cols);
    void *buf = vx_alloc_streamed(bytes);
    if (!buf) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (speculative draft, %zu bytes)", bytes);
    m->buf[m->n++] = buf;
    m->bytes += bytes;
    *out = vx_draft_quantize(buf, src, nthreads);
    return VOCIS_OK;
}

void vx_draft_mem_free(vx_draft_mem *m) {
    for (int i = 0; i < m->n; i++) free(m->buf[i]);
    free(m->buf);
    memset(m, 0, sizeof *m);
}
