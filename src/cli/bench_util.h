/* Small helpers shared by the `vocis bench` subcommands. */
#ifndef VX_BENCH_UTIL_H
#define VX_BENCH_UTIL_H

#include "tensor/tensor.h"

double bench_peak_rss_mib(void);
double bench_rss_now_mib(void); /* resident set now (VmRSS) */
/* "bf16" | "f16" | "f32" -> dtype; 0 on success, -1 if unknown. */
int bench_parse_dtype(const char *s, vx_dtype *dt);

/* "N[,N...]": at most `max` comma-separated positions in 1..hi into out -> their count, or -1 when
 * the list is empty, malformed, too long or holds a value out of range. */
int bench_parse_positions(const char *s, int64_t *out, int max, int64_t hi);

/* The Chatterbox family member a synthetic bench builds (--variant). */
enum { BENCH_ENGLISH, BENCH_MTL, BENCH_TURBO, BENCH_NANO };
#define BENCH_VARIANT_HELP "english (default), mtl (Multilingual), turbo or nano"
/* "english" | "mtl" | "turbo" | "nano" (NULL = english) -> BENCH_*; -1 if unknown. */
int bench_parse_variant(const char *s);
const char *bench_variant_name(int v); /* "English", "Multilingual", "Turbo", "Nano" */

/* The benches' fixed T3 request: a speaker embedding spk[speaker_dim], n_prompt voice prompt speech
 * tokens and n_text text ids; with start >= 0, text[0] = start and text[n_text - 1] = stop. */
void bench_t3_request(float *spk, int speaker_dim, int64_t *prompt, int n_prompt, int32_t *text, int n_text, int start,
                      int stop);

/* Statistics of a timed figure over its repetitions: min, median (the mean of the two middle
 * values when n is even) and max of v[0..n), n >= 1; v is left as it is. */
typedef struct bench_stats {
    double min, median, max;
    int n;
} bench_stats;
bench_stats bench_stats_of(const double *v, int n);

/* The one way every `vocis bench` figure with repetitions is printed:
 *   name: MEDIAN unit (min MIN, max MAX, n=N[; note])
 * with each value multiplied by `scale` (1e3: seconds -> ms) and printed with `decimals` digits;
 * unit "" for a ratio (rtf). The first number after the colon is the figure (the median). */
void bench_print_stats(const char *name, const double *v, int n, double scale, int decimals, const char *unit,
                       const char *note_fmt, ...) __attribute__((format(printf, 7, 8)));

#endif
