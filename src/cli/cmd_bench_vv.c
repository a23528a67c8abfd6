/* `vocis bench vibevoice --synthetic 1.5b|7b`: the per-frame cost of VibeVoice's generation
 * loop on random weights at the release's dimensions and dtype (BF16), split into its parts:
 * the positive/negative LM pair step (at a given context), the diffusion head's N DPM-Solver
 * steps with CFG, the streaming acoustic decode and semantic encode of one 3200-sample frame,
 * and the two connectors. A frame is 133 ms of audio, so rtf = frame time / 0.1333 s.
 * Plus the one-off prompt costs: encoding a 10 s voice and prefilling the prompt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/threads.h"
#include "cli/bench_limits.h"
#include "cli/bench_util.h"
#include "cli/cli.h"
#include "kernels/precision.h"
#include "vocis.h"
#include "models/synthetic.h"
#include "models/vibevoice/diffusion.h"
#include "models/vibevoice/dpm_solver.h"
#include "models/vibevoice/generate.h"
#include "models/vibevoice/lm.h"
#include "models/vibevoice/vae.h"

/* median (min, max) of v[0..n) seconds, in ms, with the work of one of them */
static void print_ms(const char *name, const double *v, int n, const bench_limits *lim, bench_work w) {
    char note[256];
    bench_limit_note(note, sizeof note, lim, w, "frame", bench_stats_of(v, n).median);
    bench_print_stats(name, v, n, 1e3, 1, "ms", "%s", note);
}

/* shared with cmd_bench_rt.c */
bench_work bench_vv_diffusion_work(const vx_vv_diffhead *h, int steps);
bench_work bench_vv_vae_work(const vx_vv_vae *v, int decoder);

static void add_mat(bench_work *w, const vx_mat *m, double reads, double rows) {
    w->bytes += reads * bench_mat_bytes(m);
    w->flops += 2 * rows * bench_mat_macs(m);
}

/* vx_vv_sample_latent of `steps` DPM-Solver steps with CFG: the condition projection of both rows
 * once; the timestep MLP and the modulations (adaLN) of all steps x 2 rows in one batched call
 * (weights read once; the sampler repeats that call per 20 steps, not counted); then per step the
 * x-dependent body of both rows together (its weights read once per step). */
bench_work bench_vv_diffusion_work(const vx_vv_diffhead *h, int steps) {
    bench_work w = {0, 0, h->x_proj.act_bf16};
    add_mat(&w, &h->cond_proj, 1, 2);
    add_mat(&w, &h->t_mlp0, 1, steps);
    add_mat(&w, &h->t_mlp2, 1, steps);
    add_mat(&w, &h->final_ada, 1, 2.0 * steps);
    add_mat(&w, &h->x_proj, steps, 2.0 * steps);
    add_mat(&w, &h->final_linear, steps, 2.0 * steps);
    for (int i = 0; i < h->n_layers; i++) {
        const vx_vv_head_layer *ly = &h->layers[i];
        add_mat(&w, &ly->ada, 1, 2.0 * steps);
        add_mat(&w, &ly->gate, steps, 2.0 * steps);
        add_mat(&w, &ly->up, steps, 2.0 * steps);
        add_mat(&w, &ly->down, steps, 2.0 * steps);
    }
    return w;
}

/* one decode (decoder = 1) or encode step of a σ-VAE */
bench_work bench_vv_vae_work(const vx_vv_vae *v, int decoder) {
    bench_work w;
    double macs;
    vx_vv_vae_step_work(v, decoder, &w.bytes, &macs, &w.bf16);
    w.flops = 2 * macs;
    return w;
}

static bench_work connectors_work(const vx_vv_connector *a, const vx_vv_connector *b) {
    bench_work w = {0, 0, a->fc1.act_bf16};
    const vx_vv_connector *c[2] = {a, b};
    for (int i = 0; i < 2; i++) add_mat(&w, &c[i]->fc1, 1, 1), add_mat(&w, &c[i]->fc2, 1, 1);
    return w;
}

/* the LM pair step at ctx positions: the stack for both sequences, the 4 LM-head rows of the logits */
static bench_work lm_pair_work(const vx_vv_lm *lm, double ctx) {
    bench_work w = bench_tf_decode(&lm->tf, 2, ctx, (double)vx_kv_bytes_per_token(&lm->tf));
    w.bytes += 4 * bench_mat_row_bytes(&lm->lm_head);
    w.flops += 2.0 * 4 * (double)lm->lm_head.cols;
    return w;
}

typedef struct vv_parts {
    vx_vv_config cfg;
    vx_weights *lm_w, *head_w;
    vx_vv_lm lm;
    int has_lm;
    vx_vv_diffhead *head;
    vx_vv_connector ac, se;
    vx_vv_vae *acoustic, *semantic;
} vv_parts;

static void parts_free(vv_parts *p) {
    vx_vv_vae_free(p->semantic);
    vx_vv_vae_free(p->acoustic);
    vx_vv_connector_free(&p->se);
    vx_vv_connector_free(&p->ac);
    vx_vv_diffhead_free(p->head);
    if (p->has_lm) vx_vv_lm_free(&p->lm);
    vx_weights_close(p->head_w);
    vx_weights_close(p->lm_w);
}

/* prec: the precision policy, applied at load as for a real folder (kernels/precision.h). */
static vocis_status parts_new(vv_parts *p, const char *size, vx_dtype dt, int prec, vx_err *err) {
    memset(p, 0, sizeof *p);
    VX_TRY(vx_vv_lm_preset(size, &p->cfg, err));
    const vx_vv_config *c = &p->cfg;
    VX_TRY(vx_vv_lm_synthetic_weights(c, dt, 1234, &p->lm_w, err));
    vx_weights_set_precision(p->lm_w, prec);
    VX_TRY(vx_vv_lm_init(&p->lm, p->lm_w, c, "model.language_model.", err));
    p->has_lm = 1;
    vx_synth *s = vx_synth_new(99);
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    vocis_status st = vx_vv_diffusion_synth_add(s, c->hidden_size, c->diffusion.ffn_dim, c->diffusion.head_layers,
                                                c->acoustic_vae_dim, c->semantic_vae_dim, dt, err);
    if (!st) st = vx_synth_open(s, &p->head_w, err);
    vx_synth_free(s);
    if (!st) vx_weights_set_precision(p->head_w, prec);
    if (!st) st = vx_vv_diffhead_load(p->head_w, c, &p->head, err);
    if (!st) st = vx_vv_connector_load(p->head_w, "model.acoustic_connector.", &p->ac, err);
    if (!st) st = vx_vv_connector_load(p->head_w, "model.semantic_connector.", &p->se, err);
    if (!st) st = vx_vv_vae_random(&c->acoustic, VX_VV_VAE_ENCODER_DECODER, 7, prec, &p->acoustic, err);
    if (!st) st = vx_vv_vae_random(&c->semantic, VX_VV_VAE_ENCODER, 8, prec, &p->semantic, err);
    return st;
}

/* cmd_bench_rt.c */
int bench_vv_realtime(int threads, int frames, int steps, const char *dtype, const bench_limits *lim,
                      const int64_t *conc, int nconc);

/* N requests' LM pair steps as vocis serve runs them (vx_tf_forward_steps_kvs over the 2N rows of
 * N caches of ctx positions) and their diffusions (vx_vv_sample_latents: the 2N CFG rows in each head
 * call), their acoustic decodes and semantic encodes (one σ-VAE step each for all N streams), for
 * each N in conc; t_own: a frame's parts that run per request (the connectors). */
static vocis_status bench_concurrency(vv_parts *p, const vx_dpm *dpm, const int64_t *conc, int nconc, int64_t ctx,
                                      int frames, double t_own, int threads, const bench_limits *lim, vx_err *err) {
    const vx_tf *tf = &p->lm.tf;
    const int64_t H = tf->dim;
    vocis_status st = VOCIS_OK;
    double solo = 0, solo_frame = 0;
    for (int c = 0; c < nconc && !st; c++) {
        const int N = (int)conc[c];
        vx_kv_cache *kv = calloc((size_t)N, sizeof *kv);
        vx_kv_cache **kvs = malloc(sizeof *kvs * (size_t)(2 * N));
        int *seqs = malloc(sizeof(int) * (size_t)(2 * N));
        int64_t *ns = malloc(sizeof(int64_t) * (size_t)(2 * N));
        float *x = malloc(sizeof(float) * (size_t)(2 * N * H));
        double *tv = calloc((size_t)frames, sizeof(double));
        int made = 0;
        if (!kv || !kvs || !seqs || !ns || !x || !tv) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        for (; made < N && !st; made++) {
            if ((st = vx_kv_init(&kv[made], tf, 2, 0, err))) break;
            if (!(st = vx_kv_reserve(&kv[made], ctx + frames + 8, err))) st = vx_kv_fill_synthetic(&kv[made], ctx, err);
        }
        for (int r = 0; r < 2 * N && !st; r++) kvs[r] = &kv[r / 2], seqs[r] = r % 2, ns[r] = 1;
        /* the diffusions of N frames at once: each request its conditions, rng and latent */
        const int64_t D = p->head->latent;
        vx_vv_sample_req *q = calloc((size_t)N, sizeof *q);
        vx_rng *rng = calloc((size_t)N, sizeof *rng);
        float *cond = malloc(sizeof(float) * (size_t)(2 * N * H)), *lat = malloc(sizeof(float) * (size_t)(N * D));
        double *td = calloc((size_t)frames, sizeof(double));
        if (!st && (!q || !rng || !cond || !lat || !td)) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        for (int i = 0; i < N && !st; i++) {
            vx_rng_seed(&rng[i], 42 + (uint64_t)i);
            for (int64_t j = 0; j < 2 * H; j++) cond[2 * i * H + j] = 0.01f * (float)((j + i) % 13 - 6);
            q[i] = (vx_vv_sample_req){cond + 2 * i * H, cond + (2 * i + 1) * H, 1.3f, &rng[i], NULL, lat + i * D, NULL};
        }
        for (int f = -1; f < frames && !st; f++) {
            const double a = vx_now_s();
            st = vx_vv_sample_latents(p->head, dpm, q, N, threads, err);
            if (f >= 0) td[f] = vx_now_s() - a;
        }
        /* the N frames' acoustic decodes and semantic encodes as one step of N streams each */
        const int64_t hop = vx_vv_vae_hop(p->acoustic), SD = vx_vv_vae_dim(p->semantic);
        vx_vv_vae_stream **as = calloc((size_t)N, sizeof *as), **ss = calloc((size_t)N, sizeof *ss);
        const float **lin = malloc(sizeof *lin * (size_t)N), **pin = malloc(sizeof *pin * (size_t)N);
        float **pout = malloc(sizeof *pout * (size_t)N), **sout = malloc(sizeof *sout * (size_t)N);
        float *pcm = malloc(sizeof(float) * (size_t)(N * hop)), *sem = malloc(sizeof(float) * (size_t)(N * SD));
        double *tc = calloc((size_t)frames, sizeof(double));
        if (!st && (!as || !ss || !lin || !pin || !pout || !sout || !pcm || !sem || !tc))
            st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        for (int i = 0; i < N && !st; i++) {
            if (!(st = vx_vv_vae_stream_new(p->acoustic, &as[i], err))) st = vx_vv_vae_stream_new(p->semantic, &ss[i], err);
            lin[i] = lat + i * D, pout[i] = pcm + i * hop, pin[i] = pout[i], sout[i] = sem + i * SD;
        }
        for (int f = -1; f < frames && !st; f++) {
            const double a = vx_now_s();
            if (!(st = vx_vv_vae_decode_steps(p->acoustic, as, N, lin, pout, threads, err)))
                st = vx_vv_vae_encode_steps(p->semantic, ss, N, pin, sout, threads, err);
            if (f >= 0) tc[f] = vx_now_s() - a;
        }
        for (int i = 0; as && ss && i < N; i++) vx_vv_vae_stream_free(as[i]), vx_vv_vae_stream_free(ss[i]);
        free(as), free(ss), free(lin), free(pin), free(pout), free(sout), free(pcm), free(sem);
        for (int f = -1; f < frames && !st; f++) {
            for (int64_t i = 0; i < 2 * N * H; i++) x[i] = 0.01f * (float)(i % 17 - 8);
            const double a = vx_now_s();
            st = vx_tf_forward_steps_kvs(tf, kvs, seqs, 2 * N, ns, x, threads, err);
            if (f >= 0) tv[f] = vx_now_s() - a;
        }
        if (!st) {
            const double step = bench_stats_of(tv, frames).median, diff = bench_stats_of(td, frames).median,
                         codec = bench_stats_of(tc, frames).median;
            if (N == 1) solo = step, solo_frame = step + diff + codec + t_own;
            /* one LM step, diffusion, decode and encode of all N requests, then each one's connectors */
            const double frame_s = step + diff + codec + N * t_own;
            /* the batched step's work: the weights once, N requests' rows (diffusion and σ-VAE: the
             * weights counted once, as the stacked layers read them; FLOPs N times) */
            char nl[256], nd[256], nc[256];
            bench_work wl = bench_tf_decode(tf, 2 * N, (double)ctx, (double)vx_kv_bytes_per_token(tf));
            bench_work wd = bench_vv_diffusion_work(p->head, dpm->n_steps), wa = bench_vv_vae_work(p->acoustic, 1),
                       ws = bench_vv_vae_work(p->semantic, 0);
            wd.flops *= N;
            const bench_work wc = {wa.bytes + ws.bytes, N * (wa.flops + ws.flops), wa.bf16};
            bench_limit_note(nl, sizeof nl, lim, wl, "step", step);
            bench_limit_note(nd, sizeof nd, lim, wd, "call", diff);
            bench_limit_note(nc, sizeof nc, lim, wc, "step", codec);
            printf("lm_pairs_c%d: %.1f pair-steps/s (%d requests: one batched step %.1f ms; %s)\n", N, N / step, N,
                   1e3 * step, nl);
            if (solo > 0 && N > 1) printf("lm_pairs_c%d_vs_c1: %.2f x\n", N, N * solo / step);
            printf("diffusion_c%d: %.1f ms (the %d frames' diffusions in one batched call; %s)\n", N, 1e3 * diff, N, nd);
            printf("codec_c%d: %.1f ms (the %d frames' acoustic decodes and semantic encodes, one step each; %s)\n", N,
                   1e3 * codec, N, nc);
            printf("frames_c%d: %.2f frames/s summed (LM step + diffusion + decode/encode + %d x %.1f ms of "
                   "connectors)\n",
                   N, N / frame_s, N, 1e3 * t_own);
            if (solo_frame > 0 && N > 1) printf("frames_c%d_vs_c1: %.2f x\n", N, N * solo_frame / frame_s);
            printf("audio_s_per_s_c%d: %.2f audio s per wall s\n", N, N / frame_s * 3200.0 / 24000.0);
            fflush(stdout);
        }
        for (int i = 0; i < made; i++) vx_kv_free(&kv[i]);
        free(kv), free(kvs), free(seqs), free(ns), free(x), free(tv);
        free(q), free(rng), free(cond), free(lat), free(td), free(tc);
    }
    return st;
}

int bench_vibevoice(int argc, char **argv) {
    const char *size = NULL, *dtype = "bf16", *kv_s = NULL, *precision = NULL;
    const char *ctx_s = NULL, *conc_s = NULL;
    int threads = 0, frames = 12, steps = 0, prefill = 512, kvc, prec, no_limits = 0;
    const cli_opt opts[] = {
        {"--synthetic", CLI_STR, &size, "random weights at the dims of VibeVoice 1.5b, 7b or realtime-0.5b (required)",
         0, -1},
        {"--dtype", CLI_STR, &dtype, "weight dtype: bf16 (default, as released), f16, f32", 0, -1},
        {"--frames", CLI_INT, &frames, "timed frames after one warm-up (12)", 1, 1000},
        {"--diffusion-steps", CLI_INT, &steps, "DPM-Solver steps per frame (10; realtime-0.5b: 5)", 1, 999},
        {"--context", CLI_STR, &ctx_s, "positions already in the LM caches: N[,N...], each timed in turn (1024)", 0,
         -1},
        {"--prefill", CLI_INT, &prefill, "prompt length for the prefill figure (512)", 1, 65536},
        {"--concurrency", CLI_STR, &conc_s, "requests stepped together: N[,N...] (continuous batching; off)", 0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
        {"--kv", CLI_STR, &kv_s, CLI_KV_HELP, 0, -1},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--no-limits", CLI_FLAG, &no_limits, BENCH_NO_LIMITS_HELP, 0, -1},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench vibevoice --synthetic 1.5b|7b|realtime-0.5b [--frames N] [--diffusion-steps N]\n"
                      "                             [--context N[,N...]] [--concurrency N[,N...]] [--threads N]\n\n"
                      "Per-frame time of VibeVoice's generation loop (LM pair step, diffusion, acoustic decode,\n"
                      "semantic encode, connectors) and rtf = frame time / 133 ms, on random weights at the\n"
                      "release's dimensions; plus encoding a 10 s voice and the prompt prefill. Each part also\n"
                      "prints its bytes and FLOPs per frame and the fraction of the limit that binds it. With a\n"
                      "list of contexts each is timed in turn: lm_pair_step_ctxN, frame_ctxN, rtf_ctxN and\n"
                      "rss_ctxN (the resident set while its caches are held) per context N. --concurrency: N\n"
                      "requests' LM pairs in one forward and their diffusions in one batched call (as vocis\n"
                      "serve batches them, at the first context): lm_pairs_cN pair-steps per second summed,\n"
                      "diffusion_cN, codec_cN (one σ-VAE decode and encode step of N streams), and frames_cN /\n"
                      "audio_s_per_s_cN with each request's connectors (timed above) run on its own.\n"
                      "realtime-0.5b --concurrency: N whole sessions stepped together as vocis serve runs\n"
                      "them (text windows included): frames_cN, windows_cN, windows_cN_vs_c1, audio_s_per_s_cN.");
    if (r) return r == 1 ? 0 : 2;
    if (!size) return cli_error("bench vibevoice", "--synthetic 1.5b|7b|realtime-0.5b is required"), 2;
    if (cli_kv("bench vibevoice", kv_s, &kvc)) return 2;
    int64_t ctxs[8] = {1024};
    int nctx = 1;
    if (ctx_s && (nctx = bench_parse_positions(ctx_s, ctxs, 8, 65536)) < 0)
        return cli_error("bench vibevoice", "--context: 1 to 8 comma-separated positions in 1..65536"), 2;
    int64_t conc[16];
    int nconc = 0;
    if (conc_s && (nconc = bench_parse_positions(conc_s, conc, 16, 64)) < 0)
        return cli_error("bench vibevoice", "--concurrency: 1 to 16 comma-separated counts in 1..64"), 2;
    if (cli_precision("bench vibevoice", precision, &prec)) return 2;
    prec = vx_precision_resolve(prec);
    if (kvc == VOCIS_KV_BF16 && !strcmp(size, "realtime-0.5b"))
        return cli_error("bench vibevoice", "--kv bf16 is not available for realtime-0.5b"), 2;
    vx_dtype dt;
    if (bench_parse_dtype(dtype, &dt)) return cli_error("bench vibevoice", "--dtype must be bf16, f16 or f32"), 2;
    if (threads <= 0) threads = vx_default_threads();
    bench_limits lim;
    bench_limits_measure(&lim, threads, no_limits);
    if (!strcmp(size, "realtime-0.5b"))
        return bench_vv_realtime(threads, frames < 24 ? 24 : frames, steps ? steps : 5, dtype, &lim, conc, nconc);
    if (!steps) steps = 10;

    vx_err err = {0};
    vv_parts p;
    double t0 = vx_now_s();
    vocis_status st = parts_new(&p, size, dt, prec, &err);
    if (st) {
        parts_free(&p);
        return cli_error("bench vibevoice", "%s", err.msg);
    }
    const vx_tf *tf = &p.lm.tf;
    const int64_t H = tf->dim, D = p.cfg.acoustic_vae_dim, SD = p.cfg.semantic_vae_dim, hop = 3200;
    printf("model: synthetic VibeVoice-%s (%d layers, hidden %lld), %s weights, %d threads\n", size, tf->n_layers,
           (long long)H, dtype, threads);
    printf("precision: %s\n", vx_precision_name(prec));
    printf("setup: %.1f s\n", vx_now_s() - t0);
    const double rss_weights = bench_rss_now_mib();
    printf("rss_weights: %.0f MiB (the process with its weights, before any cache)\n", rss_weights);
    fflush(stdout);

    vx_dpm dpm = {0};
    vx_kv_cache kv = {0};
    vx_vv_vae_stream *ast = NULL, *sst = NULL;
    const int n_parts = 5;
    double *tv = calloc((size_t)(n_parts + 1) * (size_t)frames, sizeof(double));
    double t_own = 0; /* a frame's per-request part (the connectors) at the first context, median */
    float *pair = malloc(sizeof(float) * (size_t)(2 * H)), *hp = malloc(sizeof(float) * (size_t)H);
    float *hn = malloc(sizeof(float) * (size_t)H), *lat = malloc(sizeof(float) * (size_t)D);
    float *pcm = malloc(sizeof(float) * (size_t)hop), *sem = malloc(sizeof(float) * (size_t)SD);
    float *e1 = malloc(sizeof(float) * (size_t)H), *e2 = malloc(sizeof(float) * (size_t)H);
    float *voice = NULL, *mean = NULL, *x = NULL;
    if (!tv || !pair || !hp || !hn || !lat || !pcm || !sem || !e1 || !e2) {
        st = vx_fail(&err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    if ((st = vx_dpm_init(&dpm, &p.cfg, steps, &err))) goto done;
    if ((st = vx_vv_vae_stream_new(p.acoustic, &ast, &err)) || (st = vx_vv_vae_stream_new(p.semantic, &sst, &err)))
        goto done;
    vx_rng rng;
    vx_rng_seed(&rng, 42);
    char note[256];
    for (int c = 0; c < nctx; c++) { /* each context with caches of its own size: its resident set too */
        const int64_t ctx = ctxs[c];
        /* no --kv: speak's default choice, bf16 past VX_VV_KV_AUTO_BF16_POSITIONS */
        const int bf16 = kvc == VOCIS_KV_BF16 || (kvc == VOCIS_KV_DEFAULT && ctx > VX_VV_KV_AUTO_BF16_POSITIONS);
        vx_tf_set_kv(&p.lm.tf, bf16 ? VX_KV_BF16 : VX_KV_F32);
        printf("kv_cache_ctx%lld: %s (%zu B per position per sequence%s)\n", (long long)ctx,
               vx_kv_name(bf16 ? VX_KV_BF16 : VX_KV_F32), vx_kv_bytes_per_token(tf),
               kvc == VOCIS_KV_DEFAULT ? "; the default choice" : "");
        vx_kv_free(&kv);
        if ((st = vx_kv_init(&kv, tf, 2, 0, &err)) || (st = vx_kv_reserve(&kv, ctx + frames + 8, &err))) goto done;
        if ((st = vx_kv_fill_synthetic(&kv, ctx, &err))) goto done;
        for (int64_t i = 0; i < 2 * H; i++) pair[i] = 0.01f * (float)(i % 17 - 8);
        for (int f = -1; f < frames; f++) { /* f = -1: warm-up */
            double t[n_parts + 1];
            t[0] = vx_now_s();
            /* LM pair step (the speculative negative rides along) + the 4 logits */
            if ((st = vx_tf_forward(tf, &kv, (const int[]){0, 1}, 2, 1, pair, threads, NULL, NULL, &err))) goto done;
            vx_tf_final_norm(tf, hp, pair, 1);
            vx_tf_final_norm(tf, hn, pair + H, 1);
            float lg[4];
            vx_vv_lm_logits_subset(&p.lm, hp, (const int32_t[]){0, 1, 2, 3}, 4, lg);
            t[1] = vx_now_s();
            if ((st = vx_vv_sample_latent(p.head, &dpm, hp, hn, 1.3f, &rng, NULL, lat, NULL, threads, &err))) goto done;
            t[2] = vx_now_s();
            if ((st = vx_vv_vae_decode_step(p.acoustic, ast, lat, pcm, threads, &err))) goto done;
            t[3] = vx_now_s();
            if ((st = vx_vv_vae_encode_step(p.semantic, sst, pcm, sem, threads, &err))) goto done;
            t[4] = vx_now_s();
            if ((st = vx_vv_connector_run(&p.ac, lat, 1, e1, threads, &err)) ||
                (st = vx_vv_connector_run(&p.se, sem, 1, e2, threads, &err)))
                goto done;
            t[5] = vx_now_s();
            for (int64_t i = 0; i < H; i++) pair[i] = pair[H + i] = e1[i] + e2[i];
            if (f < 0) continue;
            for (int k = 0; k < n_parts; k++) tv[(size_t)k * frames + f] = t[k + 1] - t[k];
            tv[(size_t)n_parts * frames + f] = t[n_parts] - t[0];
        }
        static const char *const names[5] = {"lm_pair_step", "diffusion", "acoustic_decode", "semantic_encode",
                                             "connectors"};
        double *total = tv + (size_t)n_parts * frames;
        if (c == 0)
            t_own = bench_stats_of(tv + (size_t)4 * frames, frames).median;
        /* the LM caches hold ctx + 1 (warm-up) + f positions before frame f's step */
        const bench_work work[5] = {lm_pair_work(&p.lm, ctx + 2 + (frames - 1) / 2.0),
                                    bench_vv_diffusion_work(p.head, steps), bench_vv_vae_work(p.acoustic, 1),
                                    bench_vv_vae_work(p.semantic, 0), connectors_work(&p.ac, &p.se)};
        char label[64];
        for (int k = 0; k < n_parts; k++) {
            snprintf(label, sizeof label, "%s", names[k]);
            if (k == 0) snprintf(label, sizeof label, "lm_pair_step_ctx%lld", (long long)ctx);
            else if (k == 1) snprintf(label, sizeof label, "diffusion_%dsteps", steps);
            print_ms(label, tv + (size_t)k * frames, frames, &lim, work[k]);
        }
        bench_limit_note_parts(note, sizeof note, &lim, work, n_parts, "frame", bench_stats_of(total, frames).median);
        /* one context: the figures' plain names, as before lists existed */
        char ctx_sfx[32] = "";
        if (nctx > 1) snprintf(ctx_sfx, sizeof ctx_sfx, "_ctx%lld", (long long)ctx);
        snprintf(label, sizeof label, "frame%s", ctx_sfx);
        bench_print_stats(label, total, frames, 1e3, 1, "ms", "%s", note);
        snprintf(label, sizeof label, "rtf%s", ctx_sfx);
        bench_print_stats(label, total, frames, 24000.0 / hop, 2, "", "frame time / 133.3 ms");
        /* the positions held (capacity past them is reserved, not touched) */
        const double rss = bench_rss_now_mib(),
                     kv_mib = (double)(kv.len[0] + kv.len[1]) * (double)vx_kv_bytes_per_token(tf) / 1048576.0;
        printf("rss_ctx%lld: %.0f MiB (KV caches %.0f MiB; beyond weights + KV %.0f MiB)\n", (long long)ctx, rss, kv_mib,
               rss - rss_weights - kv_mib);
        fflush(stdout);
    }

    if (nconc && (st = bench_concurrency(&p, &dpm, conc, nconc, ctxs[0], frames, t_own, threads, &lim, &err)))
        goto done;

    /* one-off prompt costs */
    const int64_t nv = 10 * 24000, fv = nv / hop;
    voice = malloc(sizeof(float) * (size_t)nv);
    mean = malloc(sizeof(float) * (size_t)(fv * D));
    x = malloc(sizeof(float) * (size_t)((int64_t)prefill * H));
    if (!voice || !mean || !x) {
        st = vx_fail(&err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    for (int64_t i = 0; i < nv; i++) voice[i] = 0.1f * (float)((i * 37) % 101 - 50) / 50.0f;
    double a = vx_now_s();
    if ((st = vx_vv_vae_encode(p.acoustic, voice, 1, nv, mean, threads, NULL, &err))) goto done;
    printf("voice_encode_10s: %.0f ms\n", 1e3 * (vx_now_s() - a));
    for (int64_t i = 0; i < (int64_t)prefill * H; i++) x[i] = 0.01f * (float)(i % 23 - 11);
    vx_kv_reset(&kv, 0);
    a = vx_now_s();
    if ((st = vx_tf_forward(tf, &kv, (const int[]){0}, 1, prefill, x, threads, NULL, NULL, &err))) goto done;
    const double t_prefill = vx_now_s() - a;
    bench_limit_note(note, sizeof note, &lim,
                     bench_work_scale(bench_tf_prefill(tf, 1, 0, prefill, (double)vx_kv_bytes_per_token(tf)),
                                      1.0 / prefill), "position", t_prefill / prefill);
    printf("prefill_%d: %.1f tokens/s (%s)\n", prefill, prefill / t_prefill, note);
    printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
done:
    free(tv), free(pair), free(hp), free(hn), free(lat), free(pcm), free(sem), free(e1), free(e2);
    free(voice), free(mean), free(x);
    vx_vv_vae_stream_free(ast);
    vx_vv_vae_stream_free(sst);
    vx_kv_free(&kv);
    vx_dpm_free(&dpm);
    parts_free(&p);
    if (st) return cli_error("bench vibevoice", "%s", err.msg);
    return 0;
}
