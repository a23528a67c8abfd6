/* Self-speculative decoding: a cheap draft of a model proposes k tokens,
 * the exact model checks them in one forward. This file holds what every
 * family shares: the setting (off | auto | fixed k) and the controller that
 * picks k for each round from the measured costs and the running
 * acceptance. The controller only ever changes speed: a round of any k
 * yields exactly the tokens plain decoding yields.
 *
 *   vx_spec_ctl c; vx_spec_ctl_init(&c, setting);
 *   loop: k = vx_spec_ctl_k(&c);
 *         k == 0: one plain step, timed -> vx_spec_ctl_plain(&c, seconds)
 *         else:   k draft steps + one verify of k + 1 positions, timed ->
 *                 vx_spec_ctl_round(&c, k, accepted, draft_s, verify_s)
 *
 * Auto: k maximizes expected tokens per second, E(k) / (k·t_draft +
 * t_verify(k)) with E(k) = 1 + a + … + a^k (a = acceptance per proposal,
 * the last term is the verify's own token) and t_verify(k) = t_plain +
 * k·t_row fitted from the rounds seen. When no k beats a plain step, it
 * runs plain steps and probes again after a while (backing off while
 * probes keep failing), so poor acceptance costs at most a few percent. */
#ifndef VX_SPECULATE_H
#define VX_SPECULATE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "kernels/kernels.h"

enum { VX_SPEC_OFF = -1, VX_SPEC_AUTO = 0 };
#define VX_SPEC_KMAX 16 /* proposals per round at most */

/* "off" | "auto" | N (1..VX_SPEC_KMAX) -> *setting; -1 (and *setting
 * untouched) when s is none of these. */
int vx_spec_parse(const char *s, int *setting);
/* "off", "auto" or the number (static buffer for N: not thread-safe). */
const char *vx_spec_name(int setting);

typedef struct vx_spec_ctl {
    int setting;        /* VX_SPEC_OFF, VX_SPEC_AUTO or a fixed k */
    double acc;         /* running acceptance per proposed token */
    double t_draft;     /* seconds per draft step (running mean; 0 = not yet seen) */
    double t_plain;     /* seconds per plain step (0 = not yet seen) */
    double t_row;       /* verify seconds per proposal beyond a plain step */
    int plain_left;     /* plain steps before the next probe */
    int backoff;        /* plain steps after the next failed probe */
    /* totals for reports */
    int64_t rounds, proposed, accepted, tokens, plain_steps;
} vx_spec_ctl;

void vx_spec_ctl_init(vx_spec_ctl *c, int setting);
/* Proposals for the next round; 0 = run a plain step. */
int vx_spec_ctl_k(vx_spec_ctl *c);
/* A round of k proposals of which the first `accepted` (0..k) matched;
 * it yielded accepted + 1 tokens (fewer when a stop token or the token cap
 * ended it: pass the tokens kept as `tokens`). */
void vx_spec_ctl_round(vx_spec_ctl *c, int k, int accepted, int tokens, double draft_s, double verify_s);
void vx_spec_ctl_plain(vx_spec_ctl *c, double step_s);
/* accepted / proposed (0 when none), tokens per verify forward. */
double vx_spec_accept_rate(const vx_spec_ctl *c);
double vx_spec_tokens_per_verify(const vx_spec_ctl *c);

/* Speculation runs when asked for by number, or by auto on an exact model
 * (judged by one of its linears: the bf16 and q8 modes are already fast,
 * and their own draws are kept). */
int vx_spec_active(int setting, const vx_mat *linear);

/* The draft a generation proposes with: the quantized copy of the model,
 * or for tests the exact model itself (every proposal right) or its
 * proposals shifted by one token (every proposal wrong). */
enum { VX_DRAFT_QUANT = 0, VX_DRAFT_SAME = 1, VX_DRAFT_CONTRARY = 2 };

/* The draft's matrices: copies in the draft format (kernels/precision.h
 * vx_draft_quantize) in memory the kernels stream, owned by this list; an
 * already-q8 source (the q8 precision mode) is shared, not copied. */
typedef struct vx_draft_mem {
    void **buf;
    int n, cap;
    size_t bytes; /* memory the copies take */
} vx_draft_mem;
vocis_status vx_draft_mat(vx_draft_mem *m, const vx_mat *src, vx_mat *out, int nthreads, vx_err *err);
void vx_draft_mem_free(vx_draft_mem *m);

#endif
