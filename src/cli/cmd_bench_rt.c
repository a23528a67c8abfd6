/* `vocis bench vibevoice --synthetic realtime-0.5b`: VibeVoice-Realtime's generate() on random
 * weights at the release's dimensions and dtype (BF16; 4 lower + 20 upper Qwen2 layers, hidden
 * 896, decoder-only σ-VAE, 4-layer diffusion head) with a synthetic voice preset of en-Davis's
 * size (T_lm 60, T_tts 183): first_audio_ms = text given at once to the first decoded frame
 * (lower + upper stack on the first 5-token window, one 5-step CFG diffusion, one frame decode),
 * then the steady per-frame cost as rtf = frame time / 133.3 ms (each frame: diffusion, decode,
 * connector, the positive/negative upper-stack pair step, the EOS check; text windows included). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/threads.h"
#include "cli/bench_limits.h"
#include "cli/bench_util.h"
#include "cli/cli.h"
#include "models/vibevoice/realtime.h"

typedef struct rt_timer {
    double t0, *t;
    int n, cap;
} rt_timer;

static int on_frame(void *user, const float *pcm, int64_t n) {
    rt_timer *r = user;
    (void)pcm, (void)n;
    if (r->n < r->cap) r->t[r->n++] = vx_now_s();
    return 0;
}

static double cpu_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static vocis_status synth_preset(const vx_rt_model *m, vx_rt_preset *p, vx_err *err) {
    memset(p, 0, sizeof *p);
    p->H = m->upper.dim, p->kv_heads = m->upper.n_kv_heads, p->head_dim = m->upper.head_dim;
    snprintf(p->path, sizeof p->path, "synthetic preset");
    const int64_t T[VX_RT_N_ENTRIES] = {60, 183, 1, 1};
    uint32_t s = 12345;
    for (int i = 0; i < VX_RT_N_ENTRIES; i++) {
        vx_rt_entry *e = &p->e[i];
        e->T = T[i];
        e->n_layers = i == VX_RT_LM || i == VX_RT_NEG_LM ? m->lower.n_layers : m->upper.n_layers;
        const size_t nh = (size_t)(e->T * p->H), nk = (size_t)e->n_layers * (size_t)(p->kv_heads * e->T * p->head_dim);
        e->hidden = malloc(sizeof(float) * nh);
        e->k = malloc(sizeof(float) * nk);
        e->v = malloc(sizeof(float) * nk);
        if (!e->hidden || !e->k || !e->v) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        for (size_t j = 0; j < nh; j++) e->hidden[j] = ((s = s * 1664525u + 1013904223u) >> 8) * (2.0f / 16777216.0f) - 1.0f;
        for (size_t j = 0; j < nk; j++) {
            e->k[j] = ((s = s * 1664525u + 1013904223u) >> 8) * (1.0f / 16777216.0f) - 0.5f;
            e->v[j] = ((s = s * 1664525u + 1013904223u) >> 8) * (1.0f / 16777216.0f) - 0.5f;
        }
    }
    return VOCIS_OK;
}

bench_work bench_vv_diffusion_work(const vx_vv_diffhead *h, int steps); /* cmd_bench_vv.c */
bench_work bench_vv_vae_work(const vx_vv_vae *v, int decoder);

/* The parts of one speech frame of the session: the upper stack's positive/negative pair step at
 * about ctx_pos and ctx_neg cached positions, the diffusion, the frame decode, and the connector and
 * EOS classifier (one row each). The text windows (lower + upper stack on 5 tokens, every few
 * frames) are not counted. */
enum { RT_PARTS = 4 };
static void rt_frame_work(const vx_rt_model *m, int steps, double ctx_pos, double ctx_neg, bench_work part[RT_PARTS]) {
    part[0] = bench_tf_decode(&m->upper, 2, (ctx_pos + ctx_neg) / 2, (double)vx_kv_bytes_per_token(&m->upper));
    part[1] = bench_vv_diffusion_work(m->head, steps);
    part[2] = bench_vv_vae_work(m->acoustic, 1);
    part[3] = (bench_work){0, 0, m->eos_fc1.act_bf16};
    const vx_mat *one_row[4] = {&m->ac_conn.fc1, &m->ac_conn.fc2, &m->eos_fc1, &m->eos_fc2};
    for (int i = 0; i < 4; i++) {
        part[3].bytes += bench_mat_bytes(one_row[i]);
        part[3].flops += 2 * bench_mat_macs(one_row[i]);
    }
}

/* N sessions of the same 20-token text (each its own seed) stepped together as vocis serve batches
 * speak calls (vx_rt_sessions_step: every session's upper-stack pair in one forward, the rest per
 * session), from the text to the length cap (20 + frames positions), for each N in conc. */
static vocis_status bench_rt_concurrency(const vx_rt_model *m, const vx_rt_preset *p, const int32_t *ids, int n_ids,
                                         const int64_t *conc, int nconc, int frames, int steps, int threads,
                                         vx_err *err) {
    vocis_status st = VOCIS_OK;
    double solo = 0;
    for (int c = 0; c < nconc && !st; c++) {
        const int N = (int)conc[c];
        vx_rt_session **ss = calloc((size_t)N, sizeof *ss);
        vx_rng *rng = calloc((size_t)N, sizeof *rng);
        if (!ss || !rng) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        for (int i = 0; i < N && !st; i++) {
            vx_rng_seed(&rng[i], 42 + (uint64_t)i);
            vx_rt_opts o;
            vx_rt_opts_default(&o);
            o.n_steps = steps;
            o.rng = &rng[i];
            o.max_new_tokens = n_ids + frames;
            o.nthreads = threads;
            o.batched = 1;
            if (!(st = vx_rt_session_new(m, p, &o, &ss[i], err))) st = vx_rt_session_run_ids(ss[i], ids, n_ids, err);
        }
        const double t0 = vx_now_s();
        int64_t nsteps = 0;
        for (;;) {
            vx_rt_session *live[64];
            int n = 0;
            for (int i = 0; i < N && !st; i++)
                if (vx_rt_session_ready(ss[i])) live[n++] = ss[i];
            if (st || n == 0) break;
            st = vx_rt_sessions_step(live, n, threads, err);
            nsteps++;
        }
        const double wall = vx_now_s() - t0;
        int64_t nframes = 0, ntext = 0;
        for (int i = 0; i < N && !st; i++) {
            vx_rt_stats rs;
            if ((st = vx_rt_session_status(ss[i], err))) break;
            vx_rt_session_stats(ss[i], &rs);
            nframes += rs.speech_steps, ntext += rs.text_tokens;
        }
        if (!st) {
            const double fps = (double)nframes / wall;
            if (N == 1) solo = fps;
            printf("frames_c%d: %.2f frames/s summed (%d sessions, %lld frames and %lld text tokens in %.2f s, %lld "
                   "steps; text windows included)\n",
                   N, fps, N, (long long)nframes, (long long)ntext, wall, (long long)nsteps);
            printf("windows_c%d: %.2f windows/s summed (%d speech frames per window)\n", N,
                   fps / VX_RT_SPEECH_WINDOW, VX_RT_SPEECH_WINDOW);
            if (solo > 0 && N > 1) printf("windows_c%d_vs_c1: %.2f x\n", N, fps / solo);
            printf("audio_s_per_s_c%d: %.2f audio s per wall s\n", N, fps * 3200.0 / 24000.0);
            fflush(stdout);
        }
        for (int i = 0; ss && i < N; i++) vx_rt_session_free(ss[i]);
        free(ss), free(rng);
    }
    return st;
}

int bench_vv_realtime(int threads, int frames, int steps, const char *dtype, const bench_limits *lim,
                      const int64_t *conc, int nconc);
int bench_vv_realtime(int threads, int frames, int steps, const char *dtype, const bench_limits *lim,
                      const int64_t *conc, int nconc) {
    vx_dtype dt;
    if (bench_parse_dtype(dtype, &dt)) return cli_error("bench vibevoice", "--dtype must be bf16, f16 or f32"), 2;
    if (threads <= 0) threads = vx_default_threads();
    if (frames < 2) frames = 2;
    vx_err err = {0};
    vx_rt_model m;
    vx_rt_preset p = {0};
    vx_rt_session *s = NULL;
    rt_timer r = {0};
    double *fd = NULL; /* fd[nfd]: frame times of the reported run */
    int nfd = 0;
    double t0 = vx_now_s();
    vocis_status st = vx_rt_model_synthetic(&m, dt, 0, 4321, &err);
    if (st) return cli_error("bench vibevoice", "%s", err.msg);
    printf("model: synthetic VibeVoice-Realtime-0.5B (%d lower + %d upper layers, hidden %d), %s weights, "
           "%d threads\n",
           m.lower.n_layers, m.upper.n_layers, m.upper.dim, dtype, threads);
    printf("setup: %.1f s\n", vx_now_s() - t0);
    fflush(stdout);
    if ((st = synth_preset(&m, &p, &err))) goto done;
    /* a sentence of 20 tokens: 4 text windows inside the timed frames, then speech-only windows */
    int32_t ids[20];
    for (int i = 0; i < 20; i++) ids[i] = 1000 + 37 * i;
    const int runs = 2; /* the first run warms caches and page faults; the second is reported */
    double first_ms = 0, rtf = 0, cpu = 0;
    for (int run = 0; run < runs; run++) {
        vx_rng rng;
        vx_rng_seed(&rng, 42);
        vx_rt_opts o;
        vx_rt_opts_default(&o);
        o.n_steps = steps;
        o.rng = &rng;
        o.max_new_tokens = run ? 20 + frames : 5 + 3; /* text + frame positions (warm-up: 3 frames) */
        o.on_audio = on_frame;
        o.user = &r;
        o.nthreads = threads;
        free(r.t);
        r = (rt_timer){0};
        r.cap = frames + 8;
        if (!(r.t = malloc(sizeof(double) * (size_t)r.cap))) {
            st = vx_fail(&err, VOCIS_E_NOMEM, "out of memory");
            goto done;
        }
        vx_rt_session_free(s);
        s = NULL;
        if ((st = vx_rt_session_new(&m, &p, &o, &s, &err))) goto done;
        r.t0 = vx_now_s();
        const double c0 = cpu_now_s();
        if ((st = vx_rt_session_run_ids(s, ids, 20, &err))) goto done;
        cpu = (cpu_now_s() - c0) / (r.n ? r.n : 1);
        if (r.n < 2) {
            st = vx_fail(&err, VOCIS_E_INTERNAL, "only %d frames generated", r.n);
            goto done;
        }
        first_ms = 1e3 * (r.t[0] - r.t0);
        const int nf = r.n - 1;
        double *d = malloc(sizeof(double) * (size_t)nf);
        if (!d) {
            st = vx_fail(&err, VOCIS_E_NOMEM, "out of memory");
            goto done;
        }
        for (int i = 0; i < nf; i++) d[i] = r.t[i + 1] - r.t[i];
        rtf = (r.t[r.n - 1] - r.t[0]) / nf / (3200.0 / 24000.0);
        free(fd);
        fd = d, nfd = nf;
    }
    printf("first_audio_ms: %.0f (5 text tokens through both stacks, one %d-step diffusion, one frame decode)\n",
           first_ms, steps);
    /* the positive sequence: the preset's positions, the 20 text tokens and the frames so far; the negative:
     * its preset and the frames (about half the reported frames on average) */
    char note[256];
    bench_work part[RT_PARTS];
    rt_frame_work(&m, steps, (double)p.e[VX_RT_TTS_LM].T + 20 + nfd / 2.0, (double)p.e[VX_RT_NEG_TTS_LM].T + nfd / 2.0,
                  part);
    bench_limit_note_parts(note, sizeof note, lim, part, RT_PARTS, "frame", bench_stats_of(fd, nfd).median);
    bench_print_stats("frame", fd, nfd, 1e3, 1, "ms", "text windows included; work without them: %s", note);
    printf("rtf: %.2f (mean frame time / 133.3 ms)\n", rtf);
    printf("cpu_per_frame_ms: %.0f (process CPU time over all threads; wall time on an idle machine is about this / "
           "threads)\n",
           1e3 * cpu);
    printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
    fflush(stdout);
    if (nconc) st = bench_rt_concurrency(&m, &p, ids, 20, conc, nconc, frames, steps, threads, &err);
done:
    free(r.t);
    free(fd);
    vx_rt_session_free(s);
    vx_rt_preset_free(&p);
    vx_rt_model_free(&m);
    if (st) return cli_error("bench vibevoice", "%s", err.msg);
    return 0;
}
