/* T3 -> S3Gen token hand-over: upstream's drop_invalid_tokens + (< 6561)
 * filter, and a clear error for an empty token list. */
#include <string.h>

#include "models/chatterbox/s3gen_flow.h"
#include "models/chatterbox/t3.h"
#include "testlib.h"

static void expect_clean(const int32_t *in, int n, const int32_t *want, int nwant) {
    vx_t3 t3;
    memset(&t3, 0, sizeof t3);
    vx_cb_config_default(&t3.cfg);
    int32_t buf[64];
    memcpy(buf, in, sizeof(int32_t) * (size_t)n);
    int m = vx_t3_clean_tokens(&t3, buf, n);
    CHECK_MSG(m == nwant, "%d tokens kept, want %d", m, nwant);
    for (int i = 0; i < m && i < nwant; i++) CHECK(buf[i] == want[i]);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    /* normal: the final stop token is dropped */
    expect_clean((const int32_t[]){10, 20, 6562}, 3, (const int32_t[]){10, 20}, 2);
    /* everything up to a start token is dropped; out-of-codebook ids (>= 6561) anywhere are removed */
    expect_clean((const int32_t[]){5, 6561, 7, 7000, 8193, 3, 6562, 9}, 8, (const int32_t[]){7, 3}, 2);
    /* no stop token: all valid ids kept */
    expect_clean((const int32_t[]){1, 6560, 0}, 3, (const int32_t[]){1, 6560, 0}, 3);
    /* only specials: nothing left */
    expect_clean((const int32_t[]){6562}, 1, NULL, 0);

    vx_err err = {0};
    vx_weights *w;
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tl_path("chatterbox/ckpt"));
    CHECK(vx_cb_config_load(&cfg, dir, NULL, &err) == VOCIS_OK);
    CHECK_MSG(vx_weights_open(tl_path("chatterbox/ckpt/s3gen.safetensors"), &w, &err) == VOCIS_OK, "%s", err.msg);
    vx_s3gen_flow *flow = NULL;
    CHECK_MSG(vx_s3gen_flow_load(w, &cfg, &flow, &err) == VOCIS_OK, "%s", err.msg);
    float feat[4 * 80] = {0}, emb[192] = {0};
    int64_t prompt[2] = {1, 2}, bad[1] = {6561};
    float *mel = NULL;
    int64_t tm = 0;
    vx_rng rng;
    vx_rng_seed(&rng, 0);
    emb[0] = 1;
    vocis_status st = vx_s3gen_flow_infer(flow, prompt, 0, prompt, 2, feat, 4, emb, 10, &rng, NULL, &mel, &tm, 1, &err);
    CHECK_MSG(st == VOCIS_E_ARG, "empty token list: status %d (%s)", st, err.msg);
    printf("empty token list: %s\n", err.msg);
    st = vx_s3gen_flow_infer(flow, bad, 1, prompt, 2, feat, 4, emb, 10, &rng, NULL, &mel, &tm, 1, &err);
    CHECK_MSG(st == VOCIS_E_ARG, "token 6561: status %d (%s)", st, err.msg);
    printf("token 6561: %s\n", err.msg);
    vx_s3gen_flow_free(flow);
    vx_weights_close(w);
    return tl_finish("test_s3gen_tokens");
}
