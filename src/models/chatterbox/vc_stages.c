/* Stage harness entry of the voice-conversion golden files that the s3tokenizer, s3gen-flow and
 * hift stages do not cover: 07_source_long_tokenizer (the S3 tokenizer's long-audio path).
 *
 * source-long-tokenizer --source FILE (read as librosa.load(FILE, sr=16000); or the input's
 * source_16k [L]) -> mel_len [1], window_mel_start [W], window_mel_len [W], window_codes [W, 750]
 * (entries past window_code_lens are left 0: upstream fills them from the padding, unused),
 * window_code_lens [W], tokens [1, M], token_lens [1] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/audio.h"
#include "models/chatterbox/config.h"
#include "models/chatterbox/s3tokenizer.h"
#include "models/stages.h"

#define WIN_STRIDE 2600 /* window starts every 26 s of mel frames */

vocis_status vx_stage_source_long_tokenizer(const vx_stage_args *a, vx_err *err) {
    const char *source = NULL;
    for (int i = 0; i < a->argc; i++) {
        if (!strcmp(a->argv[i], "--source") && i + 1 < a->argc) source = a->argv[++i];
        else return vx_fail(err, VOCIS_E_ARG, "source-long-tokenizer: unknown option '%s' (--source FILE)", a->argv[i]);
    }
    float *wav = NULL, *mel = NULL;
    int64_t n = 0, F = 0, *tok = NULL, ntok = 0;
    if (source) {
        vx_audio_info info;
        VX_TRY(vx_audio_read_head(source, 16000, 0, &wav, &n, &info, err));
    } else if (a->in) {
        VX_TRY(vx_stage_in_wave(a, "source_16k", &wav, &n, err));
    } else {
        return vx_fail(err, VOCIS_E_ARG, "source-long-tokenizer: give --source FILE or --in with source_16k");
    }
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    vx_weights *w = NULL;
    vx_s3tok *t = NULL;
    int64_t *starts = NULL, *lens = NULL, *clens = NULL, *codes = NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/s3gen.safetensors", a->model_dir);
    vocis_status st = vx_cb_config_load(&cfg, a->model_dir, NULL, err);
    if (!st) st = vx_weights_open(path, &w, err);
    if (!st) st = vx_s3tok_load(w, cfg.s3tok_heads, &t, err);
    if (!st) st = vx_s3tok_log_mel(wav, n, &mel, &F, a->nthreads, err);
    if (st) goto done;
    const int64_t W = F <= VX_S3TOK_WINDOW ? 1 : (F - 1) / WIN_STRIDE + 1, maxc = vx_s3tok_num_tokens(VX_S3TOK_WINDOW);
    starts = calloc((size_t)W, sizeof *starts), lens = calloc((size_t)W, sizeof *lens);
    clens = calloc((size_t)W, sizeof *clens), codes = calloc((size_t)(W * maxc), sizeof *codes);
    if (!starts || !lens || !clens || !codes) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    for (int64_t k = 0; k < W && !st; k++) {
        int64_t *c = NULL, nc = 0;
        starts[k] = k * WIN_STRIDE;
        lens[k] = F - starts[k] < VX_S3TOK_WINDOW ? F - starts[k] : VX_S3TOK_WINDOW;
        st = vx_s3tok_quantize(t, mel + starts[k], lens[k], F, &c, &nc, a->nthreads, err);
        if (!st) {
            clens[k] = nc;
            memcpy(codes + k * maxc, c, sizeof *c * (size_t)(nc < maxc ? nc : maxc));
        }
        free(c);
    }
    if (!st) st = vx_s3tok_quantize(t, mel, F, F, &tok, &ntok, a->nthreads, err);
    if (!st) st = vx_stage_out_i64(a, "mel_len", VX_DIMS(1), &F, err);
    if (!st) st = vx_stage_out_i64(a, "window_mel_start", VX_DIMS(W), starts, err);
    if (!st) st = vx_stage_out_i64(a, "window_mel_len", VX_DIMS(W), lens, err);
    if (!st) st = vx_stage_out_i64(a, "window_codes", VX_DIMS(W, maxc), codes, err);
    if (!st) st = vx_stage_out_i64(a, "window_code_lens", VX_DIMS(W), clens, err);
    if (!st) st = vx_stage_out_i64(a, "tokens", VX_DIMS(1, ntok), tok, err);
    if (!st) st = vx_stage_out_i64(a, "token_lens", VX_DIMS(1), &ntok, err);
done:
    free(wav), free(mel), free(tok), free(starts), free(lens), free(clens), free(codes);
    vx_s3tok_free(t);
    vx_weights_close(w);
    return st;
}
