#include "cli/bench_limits.h"

#include <math.h>
#include <stdio.h>

#include "kernels/precision.h"

/* Big enough to leave the caches far behind (L3 of a CCD is 32 MiB), small enough to measure in
 * a few tenths of a second. */
#define LIMIT_BUFFER_BYTES ((size_t)256 << 20)
#define LIMIT_READ_REPS 3
#define LIMIT_PEAK_SECONDS 0.25

void bench_limits_measure(bench_limits *l, int threads, int skip) {
    *l = (bench_limits){.threads = threads};
    if (skip) {
        printf("limits: not measured (--no-limits)\n");
        fflush(stdout);
        return;
    }
    l->read_gbs = vx_peak_read_gbs(LIMIT_BUFFER_BYTES, LIMIT_READ_REPS, threads);
    l->read_gbs_1t = threads > 1 ? vx_peak_read_gbs(LIMIT_BUFFER_BYTES, LIMIT_READ_REPS, 1) : l->read_gbs;
    l->f32_gflops = vx_peak_gflops(0, LIMIT_PEAK_SECONDS, threads);
    l->bf16_gflops = vx_peak_gflops(1, LIMIT_PEAK_SECONDS, threads);
    const int mib = (int)(LIMIT_BUFFER_BYTES >> 20);
    printf("limit_mem_read: %.1f GB/s (%d threads, %d MiB buffer, best of %d)\n", l->read_gbs, threads, mib,
           LIMIT_READ_REPS);
    printf("limit_mem_read_1t: %.1f GB/s (1 thread)\n", l->read_gbs_1t);
    printf("limit_f32_peak: %.0f GFLOP/s (%d threads, f32 FMA, registers only)\n", l->f32_gflops, threads);
    if (l->bf16_gflops > 0)
        printf("limit_bf16_peak: %.0f GFLOP/s (%d threads, vdpbf16ps, registers only)\n", l->bf16_gflops, threads);
    else printf("limit_bf16_peak: none (no AVX512_BF16; bf16 work is bound by the f32 peak)\n");
    fflush(stdout);
}

/* v as "1.02e9" (3 significant digits, exponent without sign padding) */
static void sci(char *buf, size_t n, double v) {
    if (!(v > 0) || !isfinite(v)) {
        snprintf(buf, n, "0");
        return;
    }
    int e = (int)floor(log10(v));
    double m = v / pow(10.0, e);
    if (m >= 9.995) m /= 10, e++;
    snprintf(buf, n, "%.2fe%d", m, e);
}

/* the time w takes at the limit that binds it; *mem = 1 when that is the bandwidth */
static double bound_s(const bench_limits *l, bench_work w, double *peak, int *mem) {
    *peak = w.bf16 && l->bf16_gflops > 0 ? l->bf16_gflops : l->f32_gflops;
    const double t_mem = w.bytes / (l->read_gbs * 1e9), t_flop = *peak > 0 ? w.flops / (*peak * 1e9) : 0;
    *mem = t_mem >= t_flop;
    return *mem ? t_mem : t_flop;
}

/* the counts into buf; the length written, or -1 when the buffer is full or there is no fraction to add */
static int counts(char *buf, size_t n, const bench_limits *l, double bytes, double flops, const char *unit,
                  double seconds) {
    char b[32], f[32];
    sci(b, sizeof b, bytes);
    sci(f, sizeof f, flops);
    const int k = snprintf(buf, n, "bytes %s/%s, flops %s/%s", b, unit, f, unit);
    return k < 0 || (size_t)k >= n || l->read_gbs <= 0 || !(seconds > 0) ? -1 : k;
}

/* a small fraction keeps a digit rather than reading 0 % */
static int pct_decimals(double pct) { return pct < 9.95 ? 1 : 0; }

const char *bench_limit_note(char *buf, size_t n, const bench_limits *l, bench_work w, const char *unit,
                             double seconds) {
    const int k = counts(buf, n, l, w.bytes, w.flops, unit, seconds);
    if (k < 0) return buf;
    double peak;
    int mem;
    const double pct = 100 * bound_s(l, w, &peak, &mem) / seconds;
    if (mem)
        snprintf(buf + k, n - (size_t)k, ", %.*f %% of %.1f GB/s memory read", pct_decimals(pct), pct, l->read_gbs);
    else
        snprintf(buf + k, n - (size_t)k, ", %.*f %% of %.0f GFLOP/s %s peak", pct_decimals(pct), pct, peak,
                 w.bf16 && l->bf16_gflops > 0 ? "bf16" : "f32");
    return buf;
}

const char *bench_limit_note_parts(char *buf, size_t n, const bench_limits *l, const bench_work *parts, int n_parts,
                                   const char *unit, double seconds) {
    double bytes = 0, flops = 0, t = 0;
    for (int i = 0; i < n_parts; i++) {
        double peak;
        int mem;
        bytes += parts[i].bytes, flops += parts[i].flops;
        if (l->read_gbs > 0) t += bound_s(l, parts[i], &peak, &mem);
    }
    const int k = counts(buf, n, l, bytes, flops, unit, seconds);
    if (k < 0) return buf;
    const double pct = 100 * t / seconds;
    snprintf(buf + k, n - (size_t)k, ", %.*f %% of its parts' bounds", pct_decimals(pct), pct);
    return buf;
}

double bench_mat_bytes(const vx_mat *m) {
    if (!m->data) return 0;
    return (double)m->rows * bench_mat_row_bytes(m);
}

double bench_mat_row_bytes(const vx_mat *m) {
    if (m->dtype == VX_Q8) return (double)vx_q8_row_bytes(m->cols);
    return (double)m->cols * (double)vx_dtype_size(m->dtype);
}

double bench_mat_macs(const vx_mat *m) { return m->data ? (double)m->rows * (double)m->cols : 0; }

/* the matrices of layer i, in a fixed order */
static int layer_mats(const vx_tf *tf, int i, const vx_mat *out[7]) {
    const vx_tf_layer *ly = &tf->layers[i];
    const vx_mat *m[7] = {&ly->q, &ly->k, &ly->v, &ly->o, &ly->gate, &ly->up, &ly->down};
    for (int j = 0; j < 7; j++) out[j] = m[j];
    return 7;
}

double bench_tf_weight_bytes(const vx_tf *tf) {
    double s = 0;
    for (int i = 0; i < tf->n_layers; i++) {
        const vx_mat *m[7];
        for (int j = 0, n = layer_mats(tf, i, m); j < n; j++) s += bench_mat_bytes(m[j]);
    }
    return s;
}

double bench_tf_macs(const vx_tf *tf) {
    double s = 0;
    for (int i = 0; i < tf->n_layers; i++) {
        const vx_mat *m[7];
        for (int j = 0, n = layer_mats(tf, i, m); j < n; j++) s += bench_mat_macs(m[j]);
    }
    return s;
}

int bench_tf_bf16(const vx_tf *tf) { return tf->n_layers > 0 && tf->layers[0].q.act_bf16; }

/* QKᵀ and P·V of one query row over ctx positions, all layers: 2 FLOP per multiply-add */
static double attn_flops(const vx_tf *tf, double ctx) {
    return 4.0 * tf->n_layers * (double)tf->n_heads * tf->head_dim * ctx;
}

bench_work bench_tf_decode(const vx_tf *tf, int nseq, double ctx, double kv_bytes_per_pos) {
    bench_work w;
    w.bytes = bench_tf_weight_bytes(tf) + nseq * ctx * kv_bytes_per_pos;
    w.flops = nseq * (2 * bench_tf_macs(tf) + attn_flops(tf, ctx));
    w.bf16 = bench_tf_bf16(tf);
    return w;
}

bench_work bench_tf_prefill(const vx_tf *tf, int nseq, double ctx0, double n, double kv_bytes_per_pos) {
    const double passes = tf->chunk > 0 ? ceil(n / (double)tf->chunk) : 1;
    bench_work w;
    w.bytes = passes * bench_tf_weight_bytes(tf) + nseq * (ctx0 + n) * kv_bytes_per_pos;
    /* query i (1-based) of the n attends to ctx0 + i positions */
    w.flops = nseq * (2 * n * bench_tf_macs(tf) + attn_flops(tf, n * ctx0 + n * (n + 1) / 2));
    w.bf16 = bench_tf_bf16(tf);
    return w;
}

bench_work bench_work_scale(bench_work w, double s) {
    w.bytes *= s;
    w.flops *= s;
    return w;
}
