/* One pre-norm decoder-only transformer for every Llama-family backbone:
 * Llama (Chatterbox T3) and Qwen2 (VibeVoice) differ only in options
 * (QKV bias, GQA head counts, RoPE frequencies, eps), not in code.
 *
 *   x += Wo · attn(rope(Wq·n1(x) + bq), rope(Wk·n1(x) + bk), Wv·n1(x) + bv)
 *   x += Wdown · (silu(Wgate·n2(x)) ⊙ Wup·n2(x))            n = RMSNorm
 *
 * Several independent sequences can run through one call (e.g. the CFG pair):
 * their rows go through each linear layer together, so every weight is read
 * once per step, while attention and positions stay per sequence. */
#ifndef VX_TRANSFORMER_H
#define VX_TRANSFORMER_H

#include "base/err.h"
#include "io/safetensors.h"
#include "kernels/kernels.h"

typedef struct vx_tf_layer {
    vx_mat q, k, v, o;       /* q: [H·hd, D]  k, v: [KV·hd, D]  o: [D, H·hd] */
    vx_mat gate, up, down;   /* gate, up: [F, D]  down: [D, F] */
    float *q_bias, *k_bias, *v_bias; /* NULL when the model has none */
    float *in_norm, *post_norm;      /* [D] */
} vx_tf_layer;

typedef struct vx_tf {
    int n_layers, dim, n_heads, n_kv_heads, head_dim, ffn_dim;
    float norm_eps;
    float *inv_freq;   /* [head_dim / 2] RoPE frequencies */
    vx_tf_layer *layers;
    float *final_norm; /* [D], NULL when the stack has none */
    int64_t chunk;     /* prefill positions per pass (bounds scratch memory) */
    void *owned;       /* f32 copies of small vectors (freed with the model) */
    vx_dtype kv_dtype; /* storage of the KV caches vx_kv_init makes for this stack:
                          VX_F32 (0, the default, exact) or VX_BF16 (vx_tf_set_kv) */
} vx_tf;

/* Loads a stack from tensors named "<prefix>layers.{i}.…" and "<prefix>norm.weight"
 * (HF Llama / Qwen2 naming). The layer count and all sizes come from tensor
 * shapes; n_heads (and head_dim when it is not D / n_heads) from the caller. */
typedef struct vx_tf_options {
    int n_heads;
    int head_dim;       /* 0 = dim / n_heads */
    float norm_eps;
    float rope_theta;
    int qkv_bias;       /* 1: q/k/v biases are required */
    int final_norm;     /* 1: "<prefix>norm.weight" is required */
    /* Llama-3 RoPE scaling (factor 0 = none) */
    float rope_factor, rope_low_freq_factor, rope_high_freq_factor, rope_original_max_pos;
} vx_tf_options;

vocis_status vx_tf_load(vx_tf *tf, const vx_weights *w, const char *prefix, const vx_tf_options *opt, vx_err *err);

/* KV-cache storage for the stack (applies to caches made afterwards):
 * VX_KV_F32 (0) keeps float32 keys and values, VX_KV_BF16 rounds each key
 * (after RoPE) and value to bf16 (nearest even) as it is written, halving the
 * cache; attention then reads bf16 and computes in float32. The new
 * positions of a forward are read back from the cache too, so a sequence
 * gives the same result alone, batched, prefilled or decoded step by step.
 * vx_kv_parse: "f32" | "bf16" (NULL = f32) -> VX_KV_*, -1 when unknown. */
enum { VX_KV_F32 = 0, VX_KV_BF16 = 1 };
int vx_kv_parse(const char *s);
const char *vx_kv_name(int kv); /* "f32" | "bf16" */
void vx_tf_set_kv(vx_tf *tf, int kv);

/* Weight helpers for model loaders: a [rows, cols] float matrix as a vx_mat
 * view (file dtype, or the converted copy the set's precision policy asks
 * for: kernels/precision.h), and a float vector of n values copied to f32. */
vocis_status vx_weights_mat(const vx_weights *w, const char *name, int64_t rows, int64_t cols, vx_mat *m,
                            vx_err *err);
/* vx_weights_mat for a transformer linear (role VX_W_TF_LINEAR: int8 under q8). */
vocis_status vx_weights_linear(const vx_weights *w, const char *name, int64_t rows, int64_t cols, vx_mat *m,
                               vx_err *err);
vocis_status vx_weights_vec_f32(const vx_weights *w, const char *name, int64_t n, float *dst, vx_err *err);
void vx_tf_free(vx_tf *tf);

/* The speculative draft of a stack: tf with its seven linears per layer in
 * the draft format, their copies owned by mem (nn/speculate.h); norms,
 * biases and RoPE shared with tf. Release with free(d->layers) and
 * vx_draft_mem_free(mem) (also after a failure), never vx_tf_free. */
struct vx_draft_mem;
vocis_status vx_tf_draft(const vx_tf *tf, vx_tf *d, struct vx_draft_mem *mem, int nthreads, vx_err *err);

/* KV cache for nseq sequences, position-major per (layer, sequence):
 * k[l][s] = [capacity][n_kv_heads · head_dim] (keys after RoPE). Capacity
 * grows by doubling up to VX_KV_DOUBLING_LIMIT positions, then in fixed steps
 * of that size, never per token. */
#define VX_KV_DOUBLING_LIMIT 4096
typedef struct vx_kv_cache {
    int n_layers, nseq, kv_dim;
    int64_t cap;       /* positions allocated per (layer, sequence) */
    int64_t max_len;   /* hard bound (model context); 0 = unbounded */
    int64_t *len;      /* [nseq] positions held */
    float **k, **v;    /* [n_layers · nseq]; float32 storage (entries NULL for bf16) */
    vx_dtype dtype;    /* VX_F32 or VX_BF16 (from the stack's kv_dtype at init) */
    uint16_t **k16, **v16; /* [n_layers · nseq]; bf16 storage (NULL for f32) */
} vx_kv_cache;

vocis_status vx_kv_init(vx_kv_cache *kv, const vx_tf *tf, int nseq, int64_t max_len, vx_err *err);
void vx_kv_free(vx_kv_cache *kv);
void vx_kv_reset(vx_kv_cache *kv, int seq); /* forget one sequence, others untouched */
vocis_status vx_kv_reserve(vx_kv_cache *kv, int64_t positions, vx_err *err);
size_t vx_kv_bytes_per_token(const vx_tf *tf); /* K + V over all layers, one sequence, in tf->kv_dtype */
/* Writes n positions [pos0, pos0 + n) of layer l, sequence seq (capacity
 * reserved by the caller; len unchanged): k, v are [n][kv_dim] float32 rows
 * (either may be NULL), rounded to bf16 for a bf16 cache. */
void vx_kv_store(vx_kv_cache *kv, int l, int seq, int64_t pos0, int64_t n, const float *k, const float *v);
/* A sequence's first n positions as one block (per layer: keys, then values,
 * [n][kv_dim] each, in the cache's dtype), vx_kv_span_bytes(kv, n) long:
 * export copies them out; import copies them into sequence seq (reserving
 * capacity) and sets its length to n. */
size_t vx_kv_span_bytes(const vx_kv_cache *kv, int64_t n);
void vx_kv_export(const vx_kv_cache *kv, int seq, int64_t n, void *out);
vocis_status vx_kv_import(vx_kv_cache *kv, int seq, int64_t n, const void *in, vx_err *err);
/* The storage of layer l, sequence seq, keys (v 0) or values (v 1): [cap][kv_dim] in the cache's
 * dtype, vx_kv_row_bytes per position (checkpoints save and restore the first len rows in place). */
void *vx_kv_rows(const vx_kv_cache *kv, int l, int seq, int v);
size_t vx_kv_row_bytes(const vx_kv_cache *kv);
/* Benchmarks: every sequence holds `ctx` positions of a fixed filler pattern
 * (capacity reserved by the caller; the cost of attention does not depend on
 * the values). */
vocis_status vx_kv_fill_synthetic(vx_kv_cache *kv, int64_t ctx, vx_err *err);

/* Called after each layer with that layer's output rows (for stage dumps):
 * x holds rows [pos0, pos0 + n) of sequence `seq`, each `dim` floats. */
typedef void (*vx_tf_hook)(void *user, int layer, int seq, int64_t pos0, int64_t n, const float *x);

/* Runs n new positions of each of `nseq` sequences (seqs[i] picks the cache
 * slot; NULL = 0..nseq−1) through all layers, in place:
 * x: [nseq][n][dim] input embeddings → residual stream after the last layer
 * (before the final norm). Each sequence continues at its own cache length. */
vocis_status vx_tf_forward(const vx_tf *tf, vx_kv_cache *kv, const int *seqs, int nseq, int64_t n, float *x,
                           int nthreads, vx_tf_hook hook, void *user, vx_err *err);

/* Speculative verify: ns[s] new positions of sequence s (rows one sequence
 * after another in x: [Σ ns][dim]), each computed exactly as its own
 * one-position vx_tf_forward would (same kernels, same reduction order), so
 * that the rows equal step-by-step decoding bit for bit, whatever the other
 * rows. Each sequence continues at its own cache length; the caller rolls
 * kv->len back over positions it rejects. */
vocis_status vx_tf_forward_steps(const vx_tf *tf, vx_kv_cache *kv, const int *seqs, int nseq, const int64_t *ns,
                                 float *x, int nthreads, vx_err *err);
/* The same over sequences of several caches: sequence s is slot seqs[s] of kvs[s] (continuous
 * batching of requests that each own a cache; caches of either storage type may be mixed). */
vocis_status vx_tf_forward_steps_kvs(const vx_tf *tf, vx_kv_cache *const *kvs, const int *seqs, int nseq,
                                     const int64_t *ns, float *x, int nthreads, vx_err *err);
/* The CFG pairs of n caches in one such forward: pairs[i] ([2][dim], in place) is one position of
 * slots 0 and 1 of kvs[i] (VibeVoice's positive and negative branch of each request). */
vocis_status vx_tf_forward_pairs(const vx_tf *tf, vx_kv_cache *const *kvs, float *const *pairs, int n, int nthreads,
                                 vx_err *err);

/* Records every layer's output of a forward call (for stage dumps): pass
 * vx_tf_record_hook with the recorder as `user`. layers[l] is [nseq][len][dim]. */
typedef struct vx_tf_record {
    float **layers;
    int n_layers, nseq;
    int64_t len, dim;
} vx_tf_record;
vocis_status vx_tf_record_init(vx_tf_record *r, const vx_tf *tf, int nseq, int64_t len, vx_err *err);
void vx_tf_record_hook(void *user, int layer, int seq, int64_t pos0, int64_t n, const float *x);
void vx_tf_record_free(vx_tf_record *r);

/* y = final_norm(x) over rows (identity copy when the stack has no final norm). */
void vx_tf_final_norm(const vx_tf *tf, float *y, const float *x, int64_t rows);

#endif
