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
/* HF MinPLogitsWarper (min_tokens_to_keep 1); min_p <= 0 disables. */
void vx_logits_min_p(float *logits, int n, float min_p);
/* HF TopPLogitsWarper (min_tokens_to_keep 1); top_p >= 1 disables. Needs n floats+ints of scratch internally. */
void vx_logits_top_p(float *logits, int n, float top_p);
int vx_argmax(const float *x, int n); /* first index of the maximum */
/* torch.multinomial(probs, 1) on CPU: q = exponential_(n floats), argmax probs/q.
 * q (n floats) receives the drawn noise (may be used for checks). */
int vx_sample_multinomial(const float *probs, int n, vx_rng *rng, float *q);

#endif
