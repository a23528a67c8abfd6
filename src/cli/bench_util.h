/* Small helpers shared by the `vocis bench` subcommands. */
#ifndef VX_BENCH_UTIL_H
#define VX_BENCH_UTIL_H

#include "tensor/tensor.h"

double bench_now_s(void);      /* monotonic seconds */
double bench_peak_rss_mib(void);
double bench_rss_now_mib(void); /* resident set now (VmRSS) */
/* "bf16" | "f16" | "f32" -> dtype; 0 on success, -1 if unknown. */
int bench_parse_dtype(const char *s, vx_dtype *dt);

/* The Chatterbox family member a synthetic bench builds (--variant). */
enum { BENCH_ENGLISH, BENCH_MTL, BENCH_TURBO, BENCH_NANO };
#define BENCH_VARIANT_HELP "english (default), mtl (Multilingual), turbo or nano"
/* "english" | "mtl" | "turbo" | "nano" (NULL = english) -> BENCH_*; -1 if unknown. */
int bench_parse_variant(const char *s);
const char *bench_variant_name(int v); /* "English", "Multilingual", "Turbo", "Nano" */

#endif
