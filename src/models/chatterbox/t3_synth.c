/* Random-weight T3 at the English / Multilingual release's dimensions (for benchmarks). */
#include "models/chatterbox/t3.h"
#include "models/synthetic.h"

vocis_status vx_t3_synthetic_weights(vx_dtype dt, uint64_t seed, vx_weights **out, vx_err *err) {
    return vx_t3_synthetic_weights_vocab(dt, seed, 704, out, err);
}

vocis_status vx_t3_synthetic_weights_vocab(vx_dtype dt, uint64_t seed, int64_t Vt, vx_weights **out, vx_err *err) {
    if (Vt < 256) return vx_fail(err, VOCIS_E_ARG, "synthetic T3: text vocabulary of %lld ids is too small", (long long)Vt);
    const int64_t D = 1024, F = 4096, L = 30, Vs = 8194, Pt = 2050, Ps = 4100, S = 256, Q = 32;
    vx_synth *s = vx_synth_new(seed);
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    const float wd = 0.03125f, wf = 0.015625f; /* ~1/sqrt(fan-in) */
    vocis_status st = VOCIS_OK;
#define ADD(dtype, scale, name, ...)                                                                                   \
    if (st == VOCIS_OK) st = vx_synth_add(s, dtype, scale, VX_DIMS(__VA_ARGS__), err, name)
#define ADDL(dtype, scale, fmt, l, ...)                                                                                \
    if (st == VOCIS_OK) st = vx_synth_add(s, dtype, scale, VX_DIMS(__VA_ARGS__), err, fmt, l)
    for (int l = 0; l < L; l++) {
        ADDL(dt, wd, "tfmr.layers.%d.self_attn.q_proj.weight", l, D, D);
        ADDL(dt, wd, "tfmr.layers.%d.self_attn.k_proj.weight", l, D, D);
        ADDL(dt, wd, "tfmr.layers.%d.self_attn.v_proj.weight", l, D, D);
        ADDL(dt, wd, "tfmr.layers.%d.self_attn.o_proj.weight", l, D, D);
        ADDL(dt, wd, "tfmr.layers.%d.mlp.gate_proj.weight", l, F, D);
        ADDL(dt, wd, "tfmr.layers.%d.mlp.up_proj.weight", l, F, D);
        ADDL(dt, wf, "tfmr.layers.%d.mlp.down_proj.weight", l, D, F);
        ADDL(dt, -1.0f, "tfmr.layers.%d.input_layernorm.weight", l, D);
        ADDL(dt, -1.0f, "tfmr.layers.%d.post_attention_layernorm.weight", l, D);
    }
    ADD(dt, -1.0f, "tfmr.norm.weight", D);
    ADD(dt, 0.02f, "tfmr.embed_tokens.weight", 8, D);
    ADD(dt, 0.0625f, "cond_enc.spkr_enc.weight", D, S);
    ADD(dt, 0.01f, "cond_enc.spkr_enc.bias", D);
    ADD(dt, 0.5f, "cond_enc.emotion_adv_fc.weight", D, 1);
    ADD(dt, 0.3f, "cond_enc.perceiver.pre_attention_query", 1, Q, D);
    ADD(dt, -1.0f, "cond_enc.perceiver.attn.norm.weight", D);
    ADD(dt, 0.01f, "cond_enc.perceiver.attn.norm.bias", D);
    static const char *const proj[] = {"to_q", "to_k", "to_v", "proj_out"};
    for (int i = 0; i < 4; i++) {
        if (st == VOCIS_OK) st = vx_synth_add(s, dt, wd, VX_DIMS(D, D), err, "cond_enc.perceiver.attn.%s.weight", proj[i]);
        if (st == VOCIS_OK) st = vx_synth_add(s, dt, 0.01f, VX_DIMS(D), err, "cond_enc.perceiver.attn.%s.bias", proj[i]);
    }
    ADD(dt, 0.5f, "text_emb.weight", Vt, D);
    ADD(dt, 0.5f, "speech_emb.weight", Vs, D);
    ADD(dt, 0.02f, "text_pos_emb.emb.weight", Pt, D);
    ADD(dt, 0.02f, "speech_pos_emb.emb.weight", Ps, D);
    ADD(dt, wd, "text_head.weight", Vt, D);
    ADD(dt, wd, "speech_head.weight", Vs, D);
#undef ADD
#undef ADDL
    if (st == VOCIS_OK) st = vx_synth_open(s, out, err);
    vx_synth_free(s);
    return st;
}
