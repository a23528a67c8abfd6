/* KV-cache behaviour of the shared transformer on the tiny VibeVoice Qwen2:
 * cached decode == one-shot prefill (across several KV growth steps, past the
 * doubling limit), a two-sequence batch == separate runs, and resetting one
 * sequence of a pair leaves the other bit-identical. */
#include <stdlib.h>
#include <string.h>

#include "models/vibevoice/lm.h"
#include "testlib.h"

static float *random_rows(int64_t n, int D, unsigned seed) {
    float *x = malloc(sizeof(float) * (size_t)(n * D));
    tl_fill_random(x, (size_t)(n * D), seed);
    return x;
}

/* Residual stream of a one-shot prefill of n rows. */
static float *prefill(const vx_tf *tf, const float *x, int64_t n) {
    vx_err err = {0};
    vx_kv_cache kv;
    float *y = malloc(sizeof(float) * (size_t)(n * tf->dim));
    memcpy(y, x, sizeof(float) * (size_t)(n * tf->dim));
    CHECK(vx_kv_init(&kv, tf, 1, 0, &err) == VOCIS_OK);
    CHECK_MSG(vx_tf_forward(tf, &kv, NULL, 1, n, y, 2, NULL, NULL, &err) == VOCIS_OK, "%s", err.msg);
    vx_kv_free(&kv);
    return y;
}

static void test_decode_matches_prefill(const vx_tf *tf, int64_t n, int64_t n0, int64_t min_growths) {
    const int D = tf->dim;
    float *x = random_rows(n, D, 7);
    float *ref = prefill(tf, x, n);
    vx_err err = {0};
    vx_kv_cache kv;
    CHECK(vx_kv_init(&kv, tf, 1, 0, &err) == VOCIS_OK);
    float *y = malloc(sizeof(float) * (size_t)(n * D));
    memcpy(y, x, sizeof(float) * (size_t)(n * D));
    CHECK(vx_tf_forward(tf, &kv, NULL, 1, n0, y, 2, NULL, NULL, &err) == VOCIS_OK);
    int64_t growths = 0, cap = kv.cap;
    for (int64_t i = n0; i < n; i++) {
        CHECK(vx_tf_forward(tf, &kv, NULL, 1, 1, y + i * D, 2, NULL, NULL, &err) == VOCIS_OK);
        if (kv.cap != cap) growths++, cap = kv.cap;
    }
    CHECK(kv.len[0] == n);
    CHECK_MSG(growths >= min_growths, "only %lld KV growth steps", (long long)growths);
    CHECK_MSG(kv.cap >= n && kv.cap < n + 2 * VX_KV_DOUBLING_LIMIT, "capacity %lld", (long long)kv.cap);
    CHECK_CLOSE(y, ref, (size_t)(n * D), 2e-5);
    printf("decode %lld positions after a prefill of %lld: %lld KV growth steps, final capacity %lld\n",
           (long long)(n - n0), (long long)n0, (long long)growths, (long long)kv.cap);
    vx_kv_free(&kv);
    free(x), free(ref), free(y);
}

/* Steps a pair; after `reset_at` steps sequence 1 is reset (when reset_at >= 0). */
static float *run_pair(const vx_tf *tf, const float *a, const float *b, int64_t steps, int64_t reset_at) {
    const int D = tf->dim;
    vx_err err = {0};
    vx_kv_cache kv;
    CHECK(vx_kv_init(&kv, tf, 2, 0, &err) == VOCIS_OK);
    float *out = malloc(sizeof(float) * (size_t)(2 * steps * D));
    for (int64_t i = 0; i < steps; i++) {
        if (i == reset_at) vx_kv_reset(&kv, 1);
        float *row = out + 2 * i * D;
        memcpy(row, a + i * D, sizeof(float) * D);
        memcpy(row + D, b + i * D, sizeof(float) * D);
        CHECK(vx_tf_forward(tf, &kv, NULL, 2, 1, row, 2, NULL, NULL, &err) == VOCIS_OK);
    }
    vx_kv_free(&kv);
    return out;
}

static void test_pairs(const vx_tf *tf) {
    const int D = tf->dim;
    const int64_t steps = 150;
    float *a = random_rows(steps, D, 11), *b = random_rows(steps, D, 12);
    float *pa = prefill(tf, a, steps), *pb = prefill(tf, b, steps);
    float *pair = run_pair(tf, a, b, steps, -1);
    float *ga = malloc(sizeof(float) * (size_t)(steps * D)), *gb = malloc(sizeof(float) * (size_t)(steps * D));
    for (int64_t i = 0; i < steps; i++) {
        memcpy(ga + i * D, pair + 2 * i * D, sizeof(float) * D);
        memcpy(gb + i * D, pair + (2 * i + 1) * D, sizeof(float) * D);
    }
    CHECK_CLOSE(ga, pa, (size_t)(steps * D), 2e-5);
    CHECK_CLOSE(gb, pb, (size_t)(steps * D), 2e-5);

    /* Reset sequence 1 half-way: sequence 0 must not change by a single bit,
     * and sequence 1 restarts as a fresh sequence at position 0. */
    float *reset = run_pair(tf, a, b, steps, 75);
    int same = 1;
    for (int64_t i = 0; i < steps; i++) same &= !memcmp(reset + 2 * i * D, pair + 2 * i * D, sizeof(float) * D);
    CHECK_MSG(same, "sequence 0 changed when sequence 1 was reset");
    float *fresh = prefill(tf, b + 75 * D, steps - 75);
    for (int64_t i = 75; i < steps; i++) memcpy(gb + (i - 75) * D, reset + (2 * i + 1) * D, sizeof(float) * D);
    CHECK_CLOSE(gb, fresh, (size_t)((steps - 75) * D), 2e-5);
    free(a), free(b), free(pa), free(pb), free(pair), free(ga), free(gb), free(reset), free(fresh);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    vx_err err = {0};
    vx_vv_config cfg;
    vx_weights *w = NULL;
    vx_vv_lm lm;
    const char *dir = tl_path("vibevoice/model");
    char dirbuf[4096];
    snprintf(dirbuf, sizeof dirbuf, "%s", dir);
    if (vx_vv_config_load(dirbuf, &cfg, &err) || vx_vv_weights_open(dirbuf, &w, &err) ||
        vx_vv_lm_init(&lm, w, &cfg, "model.language_model.", &err)) {
        fprintf(stderr, "load: %s\n", err.msg);
        return 1;
    }
    test_decode_matches_prefill(&lm.tf, 600, 37, 4); /* doubling region: 64 -> 1024 */
    /* 2048 -> 4096 (last doubling) -> 8192 (first fixed step) */
    test_decode_matches_prefill(&lm.tf, VX_KV_DOUBLING_LIMIT + 700, 2000, 2);
    test_pairs(&lm.tf);

    /* A sequence longer than the context bound is refused, not overrun. */
    vx_kv_cache kv;
    CHECK(vx_kv_init(&kv, &lm.tf, 1, 16, &err) == VOCIS_OK);
    float *x = random_rows(17, lm.tf.dim, 3);
    CHECK(vx_tf_forward(&lm.tf, &kv, NULL, 1, 17, x, 1, NULL, NULL, &err) == VOCIS_E_ARG);
    CHECK(strstr(err.msg, "exceeds the model context") != NULL);
    free(x);
    vx_kv_free(&kv);

    vx_vv_lm_free(&lm);
    vx_weights_close(w);
    return tl_finish("test_lm_cache");
}
