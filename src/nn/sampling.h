/* Logits processors and token choice, matching Hugging Face's processors
 * (RepetitionPenalty, Temperature, MinP, TopP) and torch.multinomial. */
#ifndef VX_SAMPLING_H
#define VX_SAMPLING_H

#include <stddef.h>
#include <stdint.h>

#include "base/rng.h"

/* For each distinct id in hist: l[id] *= p if l[id] < 0 else l[id] /= p. */
void vx_logits_repetition_penalty(float *logits, int n, const int32_t *hist, size_t nhist, float penalty);
void vx_logits_temperature(float *logits, int n, float temperature); /* no-op when t == 1 */
/* HF MinPLogitsWarper (min_tokens_to_keep 1: the first maximum always stays); min_p <= 0 disables. */
void vx_logits_min_p(float *logits, int n, float min_p);
/* HF TopPLogitsWarper (min_tokens_to_keep 1); top_p >= 1 disables. Needs n floats+ints of scratch internally. */
void vx_logits_top_p(float *logits, int n, float top_p);
/* Same with caller-provided scratch of vx_logits_top_p_scratch_size(n) bytes
 * (4-byte aligned; no allocation). vx_logits_top_p falls back to keeping only the best token
 * if its allocation fails. Ties between equal logits are ordered by index
 * (torch's CPU sort leaves their order unspecified). */
size_t vx_logits_top_p_scratch_size(int n);
void vx_logits_top_p_ws(float *logits, int n, float top_p, void *scratch);
int vx_argmax(const float *x, int n); /* first index of the maximum */
/* torch.multinomial(probs, 1) on CPU: q = exponential_(n floats), argmax probs/q.
 * q (n floats) receives the drawn noise (may be used for checks). */
int vx_sample_multinomial(const float *probs, int n, vx_rng *rng, float *q);
/* The choice alone, with given noise q (e.g. injected golden exp_noise):
 * first index of max probs[i] / q[i] over probs[i] > 0 (argmax of probs if
 * none is positive). */
int vx_sample_exp_race(const float *probs, const float *q, int n);

#endif
