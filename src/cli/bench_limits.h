/* The limits a `vocis bench` figure is a fraction of, measured in the bench's own process before
 * its timed work (memory read bandwidth; f32 FMA and bf16 dot-product peaks, as `vocis bench peak`
 * measures them, shorter), and the work of one unit of a figure (bytes read, FLOPs done) counted
 * from the model's actual matrices, so that each figure can say how close to its bound it runs. */
#ifndef VX_BENCH_LIMITS_H
#define VX_BENCH_LIMITS_H

#include <stddef.h>

#include "kernels/kernels.h"
#include "nn/transformer.h"

typedef struct bench_limits {
    int threads;
    double read_gbs, read_gbs_1t; /* GB/s with `threads` and with 1 thread; 0: not measured */
    double f32_gflops, bf16_gflops; /* GFLOP/s; bf16 0 where the CPU lacks AVX512_BF16 */
} bench_limits;

/* Measures the limits with `threads` threads (about 1 s) and prints them as
 *   limit_mem_read: X GB/s (...), limit_mem_read_1t, limit_f32_peak, limit_bf16_peak
 * skip = 1 (--no-limits) measures nothing: every limit stays 0 and one line says so. */
void bench_limits_measure(bench_limits *l, int threads, int skip);
#define BENCH_NO_LIMITS_HELP "skip measuring the machine's limits (no '% of' in the figures)"

/* The work of one unit of a figure. bf16 = 1: its multiplies run as bf16 dot products (the
 * matrices' act_bf16), so its compute bound is the bf16 peak; else the f32 FMA peak. */
typedef struct bench_work {
    double bytes, flops;
    int bf16;
} bench_work;

/* The note of a figure one unit of which (`unit`: "step", "position", "frame", ...) took `seconds`:
 *   "bytes 1.02e9/step, flops 2.04e9/step, 84 % of 57.3 GB/s memory read"
 * The bound is whichever of bytes / bandwidth and flops / peak takes longer; the line names it
 * ("memory read", "f32 peak", "bf16 peak"). Without measured limits only the counts. Returns buf. */
const char *bench_limit_note(char *buf, size_t n, const bench_limits *l, bench_work w, const char *unit,
                             double seconds);

/* A figure made of parts that each have their own bound (a frame: LM step, diffusion, decode, ...):
 * the summed counts, and the sum of the parts' bound times (each at the limit that binds it) as
 * the fraction of `seconds`: "bytes B/frame, flops F/frame, NN % of its parts' bounds". */
const char *bench_limit_note_parts(char *buf, size_t n, const bench_limits *l, const bench_work *parts, int n_parts,
                                   const char *unit, double seconds);

/* ---- counting helpers ---- */

/* Bytes of a matrix as stored (q8: codes and block scales), of one of its rows, and its
 * multiply-adds per input row (rows x cols). */
double bench_mat_bytes(const vx_mat *m);
double bench_mat_row_bytes(const vx_mat *m);
double bench_mat_macs(const vx_mat *m);

/* A transformer stack: the bytes of all its layers' matrices, their multiply-adds per row and
 * whether they compute in bf16 (act_bf16). */
double bench_tf_weight_bytes(const vx_tf *tf);
double bench_tf_macs(const vx_tf *tf);
int bench_tf_bf16(const vx_tf *tf);

/* One decode step of nseq sequences through the stack at `ctx` positions each (the new one
 * included): the weights once (read for all rows together) and each sequence's keys and values of
 * ctx positions; FLOPs of the linears and of attention (QKᵀ and P·V). kv_bytes_per_pos: K + V of
 * one position over all layers, as stored. */
bench_work bench_tf_decode(const vx_tf *tf, int nseq, double ctx, double kv_bytes_per_pos);
/* Prefill of n positions of each of nseq sequences after ctx0 cached ones, causal: the weights
 * once per pass of tf->chunk positions, the keys and values written and read back; FLOPs of the
 * linears and of attention over the growing context. */
bench_work bench_tf_prefill(const vx_tf *tf, int nseq, double ctx0, double n, double kv_bytes_per_pos);

/* w scaled by s (a per-run work spread over s^-1 units, or repeated s times). */
bench_work bench_work_scale(bench_work w, double s);

#endif
