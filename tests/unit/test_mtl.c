/* Chatterbox-Multilingual model-side helpers: drop_invalid_tokens and the
 * invalid ids upstream would crash on, the last-token cut, torch state dicts
 * as weight sets (s3gen.pt / ve.pt), and the folder's part lookup. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/ptweights.h"
#include "models/chatterbox/mtl.h"
#include "testlib.h"

static int clean(const int32_t *in, int n, int32_t *out, int *dropped) {
    memcpy(out, in, sizeof(int32_t) * (size_t)n);
    return vx_mtl_clean_tokens(out, n, 6561, 6562, 6561, dropped);
}

static void tokens(void) {
    int32_t o[16];
    int d;
    /* upstream's drop_invalid_tokens: after the first 6561, before the first 6562; nothing else filtered */
    const int32_t a[] = {5, 6, 7, 6562};
    CHECK(clean(a, 4, o, &d) == 3 && o[0] == 5 && o[2] == 7 && d == 0);
    const int32_t b[] = {1, 6561, 2, 3, 6562};
    CHECK(clean(b, 5, o, &d) == 2 && o[0] == 2 && o[1] == 3 && d == 0);
    const int32_t c[] = {4, 5}; /* no stop token (max_new_tokens reached) */
    CHECK(clean(c, 2, o, &d) == 2 && d == 0);
    /* where upstream crashes (S3Gen IndexError on 6563..8193; two 6561 break drop_invalid_tokens), vocis drops */
    const int32_t e[] = {7, 6563, 8193, 8, 6562};
    CHECK(clean(e, 5, o, &d) == 2 && o[0] == 7 && o[1] == 8 && d == 2);
    const int32_t f[] = {6561, 1, 6561, 2, 6562};
    CHECK(clean(f, 5, o, &d) == 2 && o[0] == 1 && o[1] == 2 && d == 1);
    const int32_t g[] = {6562};
    CHECK(clean(g, 1, o, &d) == 0);
    /* wav[: max(1, n - 1) * 960] */
    CHECK(vx_mtl_keep_samples(45, 43200) == 42240);
    CHECK(vx_mtl_keep_samples(1, 1920) == 960);
    CHECK(vx_mtl_keep_samples(0, 1920) == 960);
    CHECK(vx_mtl_keep_samples(3, 1000) == 1000);
}

static void pt_weights(void) {
    vx_err err = {0};
    vx_weights *w = NULL;
    char p[4200];
    snprintf(p, sizeof p, "%s", tl_path("chatterbox-mtl/ckpt/ve.pt"));
    CHECK(vx_weights_open_pt(p, &w, &err) == VOCIS_OK);
    if (w) {
        CHECK(vx_weights_count(w) == 16);
        const char *file = NULL;
        const vx_tensor *t = vx_weights_find(w, "lstm.weight_ih_l0", &file);
        CHECK(t && t->dtype == VX_F32 && t->ndim == 2 && t->shape[1] == 40);
        CHECK(file && strcmp(file, p) == 0);
        vx_weights_close(w);
    }
    /* the folder's parts: s3gen / ve resolve to the .pt files; a missing part names both spellings */
    snprintf(p, sizeof p, "%s", tl_path("chatterbox-mtl/ckpt"));
    CHECK(vx_cb_weights_open(p, "s3gen", &w, &err) == VOCIS_OK);
    CHECK(w && vx_weights_has(w, "tokenizer._mel_filters") && vx_weights_has(w, "flow.input_embedding.weight"));
    vx_weights_close(w);
    CHECK(vx_cb_weights_open(p, "nothing", &w, &err) == VOCIS_E_IO && !w);
    CHECK(strstr(err.msg, "nothing.safetensors nor nothing.pt") != NULL);
    char s3[4400];
    snprintf(s3, sizeof s3, "%s/s3gen.safetensors", p);
    CHECK(vx_cb_weights_open_path(s3, &w, &err) == VOCIS_OK && w);
    vx_weights_close(w);
    CHECK(vx_mtl_is_folder(p) && vx_mtl_check_folder(p, &err) == VOCIS_OK);
    CHECK(vx_cb_t3_path(p, s3, sizeof s3) == 0 && strstr(s3, "t3_mtl23ls_v2.safetensors"));
    /* not a state dict: conds.pt holds dicts */
    snprintf(p, sizeof p, "%s", tl_path("chatterbox-mtl/ckpt/conds.pt"));
    CHECK(vx_weights_open_pt(p, &w, &err) == VOCIS_E_FORMAT && !w);
    CHECK(strstr(err.msg, "expected a tensor") != NULL);
    snprintf(p, sizeof p, "%s", tl_path("chatterbox-mtl/ckpt/chatterbox_tiny_config.json"));
    CHECK(vx_weights_open_pt(p, &w, &err) != VOCIS_OK && !w);
}

int main(int argc, char **argv) {
    tl_data_dir = argc > 1 ? argv[1] : "tests/data";
    tokens();
    pt_weights();
    return tl_finish("test_mtl");
}
