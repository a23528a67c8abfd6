/* Stage harness entry for the S3 speech tokenizer (golden 03_s3tokenizer): the two tokenizer calls
 * of ChatterboxTTS.prepare_conditionals.
 *
 * inputs:  ref_16k_torchaudio [1, L] or [L]  (S3Gen embed_ref: tokens of the torchaudio-resampled clip)
 *          ref_16k_soxr [L'] or [1, L']      (optional; T3 prompt: ref_16k_soxr[:96000], max_len 150)
 *          source_16k [Ls] or [1, Ls]        (optional; voice conversion: the whole source)
 *          ref_24k [L24] or [1, L24]         (only its length: the 24 kHz reference mel has
 *                                             M = floor(min(L24, 240000) / 480) frames)
 * outputs: s3gen_log_mel [1, 128, F], s3gen_mel_len [1], s3gen_tokens [1, T], s3gen_token_lens [1],
 *          t3cond_log_mel [1, 128, F'], t3cond_mel_len [1], t3cond_tokens [1, T'], t3cond_token_lens [1],
 *          t3cond_prompt_tokens [1, T'], s3gen_prompt_tokens [1, T''] (T'' = T, or min(T, M/2) when M ≠ 2T),
 *          source_log_mel, source_mel_len, source_tokens, source_token_lens */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/chatterbox/config.h"
#include "models/chatterbox/s3tokenizer.h"
#include "models/stages.h"
#include "models/chatterbox/mtl.h"
#include "models/chatterbox/turbo.h"

#define DEC_COND_LEN 240000 /* 10 s at 24 kHz: what embed_ref gets */
#define MEL24_HOP 480

/* log-mel of wav (first `keep_max` frames when > 0), tokens; writes PREFIX_log_mel/_mel_len/_tokens/_token_lens. */
static vocis_status run_one(const vx_stage_args *a, const vx_s3tok *t, const char *prefix, const char *what,
                            const float *wav, int64_t n, int64_t keep_max, int64_t **tokens, int64_t *ntok,
                            vx_err *err) {
    float *mel = NULL, *melk = NULL;
    int64_t F = 0;
    vocis_status st = vx_s3tok_log_mel(wav, n, &mel, &F, a->nthreads, err);
    if (st != VOCIS_OK) return vx_errctx(err, "%s", what);
    const int64_t keep = keep_max > 0 && keep_max < F ? keep_max : F;
    if ((st = vx_s3tok_quantize(t, mel, keep, F, tokens, ntok, a->nthreads, err))) goto done;
    const float *mout = mel;
    if (keep < F) {
        if (!(melk = vx_malloc(err, sizeof(float) * (size_t)(VX_S3TOK_NMELS * keep), "log-mel"))) {
            st = VOCIS_E_NOMEM;
            goto done;
        }
        for (int m = 0; m < VX_S3TOK_NMELS; m++) memcpy(melk + m * keep, mel + m * F, sizeof(float) * (size_t)keep);
        mout = melk;
    }
    char name[64];
    snprintf(name, sizeof name, "%s_log_mel", prefix);
    if ((st = vx_stage_out_f32(a, name, VX_DIMS(1, VX_S3TOK_NMELS, keep), mout, err))) goto done;
    snprintf(name, sizeof name, "%s_mel_len", prefix);
    if ((st = vx_stage_out_i64(a, name, VX_DIMS(1), &keep, err))) goto done;
    snprintf(name, sizeof name, "%s_tokens", prefix);
    if ((st = vx_stage_out_i64(a, name, VX_DIMS(1, *ntok), *tokens, err))) goto done;
    snprintf(name, sizeof name, "%s_token_lens", prefix);
    st = vx_stage_out_i64(a, name, VX_DIMS(1), ntok, err);
done:
    free(mel), free(melk);
    return st;
}

vocis_status vx_stage_s3tokenizer(const vx_stage_args *a, vx_err *err) {
    VX_TRY(vx_stage_no_options(a, err));
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    VX_TRY(vx_cb_config_load(&cfg, a->model_dir, NULL, err));

    float *ta = NULL, *sx = NULL, *r24 = NULL, *src = NULL;
    int64_t nta = 0, nsx = 0, n24 = 0, nsrc = 0, *tok_g = NULL, *tok_t = NULL, *tok_s = NULL, ng = 0, nt = 0, ns = 0;
    vx_weights *w = NULL;
    vx_s3tok *t = NULL;
    vocis_status st;
    if ((st = vx_stage_in_wave(a, "ref_16k_torchaudio", &ta, &nta, err))) goto done;
    /* optional: ref_16k_soxr (the T3 prompt; voice-conversion goldens have none), source_16k (the
     * voice-conversion source, tokenised whole) */
    if (vx_st_find(a->in, "ref_16k_soxr") && (st = vx_stage_in_wave(a, "ref_16k_soxr", &sx, &nsx, err))) goto done;
    if (vx_st_find(a->in, "source_16k") && (st = vx_stage_in_wave(a, "source_16k", &src, &nsrc, err))) goto done;
    if ((st = vx_stage_in_wave(a, "ref_24k", &r24, &n24, err))) goto done;
    const int64_t l24 = n24 < DEC_COND_LEN ? n24 : DEC_COND_LEN, m24 = l24 / MEL24_HOP;
    if (m24 < 2) {
        st = vx_fail(err, VOCIS_E_INVALID,
                     "ref_24k: %lld samples give %lld reference mel frames at 24 kHz; at least 2 (%d samples) are "
                     "needed for one S3Gen prompt token",
                     (long long)n24, (long long)m24, 2 * MEL24_HOP);
        goto done;
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/%s", a->model_dir,
             vx_turbo_s3gen_name(a->model_dir) ? vx_turbo_s3gen_name(a->model_dir) : "s3gen.safetensors");
    if ((st = vx_cb_weights_open_path(path, &w, err))) goto done;
    if ((st = vx_s3tok_load(w, cfg.s3tok_heads, &t, err))) goto done;
    if (vx_s3tok_n_mels(t) != VX_S3TOK_NMELS) {
        st = vx_fail(err, VOCIS_E_SHAPE, "%s: tokenizer.encoder.conv1.weight takes %lld mel bins; the log-mel gives %d",
                     path, (long long)vx_s3tok_n_mels(t), VX_S3TOK_NMELS);
        goto done;
    }

    /* S3Gen reference: tokenizer(ref_wav_16) without max_len */
    if ((st = run_one(a, t, "s3gen", "ref_16k_torchaudio", ta, nta, 0, &tok_g, &ng, err))) goto done;
    /* T3 prompt: forward([ref_16k[:96000]], max_len=150) */
    if (sx) {
        /* Turbo / Nano: ENC_COND_LEN 15 s, max_len 375 */
        const int turbo = vx_turbo_is_folder(a->model_dir);
        const int64_t t3s = turbo ? VX_TURBO_T3_SECONDS * 16000 : VX_S3TOK_T3_SAMPLES;
        const int64_t n3 = nsx < t3s ? nsx : t3s;
        if ((st = run_one(a, t, "t3cond", "ref_16k_soxr", sx, n3, 4 * (turbo ? 375 : VX_S3TOK_T3_MAX_LEN), &tok_t, &nt,
                          err)))
            goto done;
        if ((st = vx_stage_out_i64(a, "t3cond_prompt_tokens", VX_DIMS(1, nt), tok_t, err))) goto done;
    }
    if (src && (st = run_one(a, t, "source", "source_16k", src, nsrc, 0, &tok_s, &ns, err))) goto done;
    const int64_t np = vx_s3tok_s3gen_prompt_len(ng, m24);
    st = vx_stage_out_i64(a, "s3gen_prompt_tokens", VX_DIMS(1, np), tok_g, err);
done:
    free(ta), free(sx), free(r24), free(src), free(tok_g), free(tok_t), free(tok_s);
    vx_s3tok_free(t);
    vx_weights_close(w);
    return st;
}
