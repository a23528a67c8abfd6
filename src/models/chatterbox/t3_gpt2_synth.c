/* Random-weight Turbo / Nano T3 (GPT-2 backbone) at the release's dimensions
 * (spec chatterbox.md §13.2), for benchmarks. Tensor names and layouts are the
 * release file's (GPT-2 Conv1D weights stored (in, out)), so vx_t3_gpt2_init
 * reads them exactly as it reads t3_turbo_v1 / t3_nano_v1.safetensors. The two
 * tensors inference never reads (tfmr.wte, deleted by upstream after loading,
 * and text_head) are left out. */
#include "models/chatterbox/t3_gpt2.h"

#include <string.h>

#include "models/synthetic.h"

vocis_status vx_t3_gpt2_synthetic_weights(int nano, vx_dtype dt, uint64_t seed, vx_weights **out, vx_err *err) {
    /* GPT2_medium (Turbo) / GPT2_small (Nano); both: 8196 positions, text vocab 50276, speech vocab 6563 */
    const vx_gpt2_synth_dims d = {nano ? 768 : 1024, nano ? 12 : 24, 8196, 50276, 6563, 256, 0.03125f, 0.015625f};
    return vx_t3_gpt2_synthetic_dims(&d, dt, seed, out, err);
}

vocis_status vx_t3_gpt2_synthetic_dims(const vx_gpt2_synth_dims *d, vx_dtype dt, uint64_t seed, vx_weights **out,
                                       vx_err *err) {
    const int64_t E = d->width, L = d->layers, F = 4 * E, P = d->positions, Vt = d->text_vocab, Vs = d->speech_vocab,
                  S = d->speaker_dim;
    vx_synth *s = vx_synth_new(seed);
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    const float wd = d->scale_in, wf = d->scale_ffn, b = 0.01f; /* ~1/sqrt(fan-in), small biases */
    vocis_status st = VOCIS_OK;
#define ADD(scale, name, ...)                                                                                          \
    if (st == VOCIS_OK) st = vx_synth_add(s, dt, scale, VX_DIMS(__VA_ARGS__), err, name)
#define ADDL(scale, fmt, l, ...)                                                                                       \
    if (st == VOCIS_OK) st = vx_synth_add(s, dt, scale, VX_DIMS(__VA_ARGS__), err, fmt, l)
    ADD(0.02f, "tfmr.wpe.weight", P, E);
    for (int l = 0; l < L; l++) {
        ADDL(-1.0f, "tfmr.h.%d.ln_1.weight", l, E);
        ADDL(b, "tfmr.h.%d.ln_1.bias", l, E);
        ADDL(wd, "tfmr.h.%d.attn.c_attn.weight", l, E, 3 * E);
        ADDL(b, "tfmr.h.%d.attn.c_attn.bias", l, 3 * E);
        ADDL(wd, "tfmr.h.%d.attn.c_proj.weight", l, E, E);
        ADDL(b, "tfmr.h.%d.attn.c_proj.bias", l, E);
        ADDL(-1.0f, "tfmr.h.%d.ln_2.weight", l, E);
        ADDL(b, "tfmr.h.%d.ln_2.bias", l, E);
        ADDL(wd, "tfmr.h.%d.mlp.c_fc.weight", l, E, F);
        ADDL(b, "tfmr.h.%d.mlp.c_fc.bias", l, F);
        ADDL(wf, "tfmr.h.%d.mlp.c_proj.weight", l, F, E);
        ADDL(b, "tfmr.h.%d.mlp.c_proj.bias", l, E);
    }
    ADD(-1.0f, "tfmr.ln_f.weight", E);
    ADD(b, "tfmr.ln_f.bias", E);
    ADD(0.0625f, "cond_enc.spkr_enc.weight", E, S);
    ADD(b, "cond_enc.spkr_enc.bias", E);
    ADD(0.5f, "text_emb.weight", Vt, E);
    ADD(0.5f, "speech_emb.weight", Vs, E);
    ADD(wd, "speech_head.weight", Vs, E);
    ADD(b, "speech_head.bias", Vs);
#undef ADD
#undef ADDL
    if (st == VOCIS_OK) st = vx_synth_open(s, out, err);
    vx_synth_free(s);
    return st;
}

vocis_status vx_t3_gpt2_synthetic(vx_t3_gpt2 *t, int nano, vx_dtype dt, int precision, uint64_t seed, vx_err *err) {
    vx_weights *w = NULL;
    memset(t, 0, sizeof *t);
    VX_TRY(vx_t3_gpt2_synthetic_weights(nano, dt, seed, &w, err));
    if (precision > 0) vx_weights_set_precision(w, precision); /* the same load-time conversion as a file */
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    vocis_status st = vx_t3_gpt2_init(t, w, &cfg, 0, err);
    if (st) {
        vx_weights_close(w);
        return st;
    }
    t->w = w;
    t->nano = nano;
    return VOCIS_OK;
}
