/* Chatterbox-Multilingual folder and post-processing (spec chatterbox.md §12). */
#include "models/chatterbox/mtl.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/ptweights.h"
#include "text/mtl_text.h"

static int exists(const char *dir, const char *name) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

int vx_mtl_is_folder(const char *dir) { return vx_mtl_t3_name(dir) != NULL; }

const char *vx_mtl_t3_name(const char *dir) {
    return exists(dir, VX_MTL_T3_V2) ? VX_MTL_T3_V2 : exists(dir, VX_MTL_T3_V3) ? VX_MTL_T3_V3 : NULL;
}

int vx_cb_part_exists(const char *dir, const char *stem) {
    char n[256];
    snprintf(n, sizeof n, "%s.safetensors", stem);
    if (exists(dir, n)) return 1;
    snprintf(n, sizeof n, "%s.pt", stem);
    return exists(dir, n);
}

vocis_status vx_mtl_check_folder(const char *dir, vx_err *err) {
    const char *t3 = vx_mtl_t3_name(dir);
    if (!t3) return vx_fail(err, VOCIS_E_IO, "%s: no %s or %s", dir, VX_MTL_T3_V2, VX_MTL_T3_V3);
    if (exists(dir, "t3_cfg.safetensors"))
        return vx_fail(err, VOCIS_E_ARG,
                       "%s: holds both the English T3 (t3_cfg.safetensors) and the multilingual one (%s): keep one "
                       "model per folder",
                       dir, t3);
    static const char *const stems[] = {"s3gen", "ve"};
    for (int i = 0; i < 2; i++)
        if (!vx_cb_part_exists(dir, stems[i]))
            return vx_fail(err, VOCIS_E_IO, "%s: multilingual Chatterbox folder without %s.pt", dir, stems[i]);
    if (!exists(dir, VX_MTL_TOKENIZER_FILE))
        return vx_fail(err, VOCIS_E_IO, "%s: multilingual Chatterbox folder without its tokenizer %s", dir,
                       VX_MTL_TOKENIZER_FILE);
    return VOCIS_OK;
}

int vx_cb_t3_path(const char *dir, char *path, size_t n) {
    const char *name = exists(dir, "t3_cfg.safetensors") ? "t3_cfg.safetensors" : vx_mtl_t3_name(dir);
    snprintf(path, n, "%s/%s", dir, name ? name : "t3_cfg.safetensors");
    return name ? 0 : -1;
}

vocis_status vx_cb_weights_open(const char *dir, const char *stem, vx_weights **out, vx_err *err) {
    char st[4200], pt[4200];
    snprintf(st, sizeof st, "%s/%s.safetensors", dir, stem);
    snprintf(pt, sizeof pt, "%s/%s.pt", dir, stem);
    if (access(st, F_OK) == 0) return vx_weights_open(st, out, err);
    if (access(pt, F_OK) == 0) return vx_weights_open_pt(pt, out, err);
    *out = NULL;
    return vx_fail(err, VOCIS_E_IO, "%s: neither %s.safetensors nor %s.pt found", dir, stem, stem);
}

vocis_status vx_cb_weights_open_path(const char *path, vx_weights **out, vx_err *err) {
    const size_t n = strlen(path), sl = strlen(".safetensors");
    if (access(path, F_OK) != 0 && n > sl && n < 4100 && strcmp(path + n - sl, ".safetensors") == 0) {
        char pt[4200];
        snprintf(pt, sizeof pt, "%.*s.pt", (int)(n - sl), path);
        if (access(pt, F_OK) == 0) return vx_weights_open_pt(pt, out, err);
    }
    return vx_weights_open(path, out, err);
}

int vx_mtl_clean_tokens(int32_t *tokens, int n, int start, int stop, int n_valid, int *n_dropped) {
    int s = 0, e = n, m = 0, dropped = 0;
    for (int i = 0; i < n; i++)
        if (tokens[i] == start) {
            s = i + 1;
            break;
        }
    for (int i = s; i < n; i++)
        if (tokens[i] == stop) {
            e = i;
            break;
        }
    for (int i = s; i < e; i++) {
        if (tokens[i] >= 0 && tokens[i] < n_valid) tokens[m++] = tokens[i];
        else dropped++;
    }
    if (n_dropped) *n_dropped = dropped;
    return m;
}

int64_t vx_mtl_keep_samples(int n_tokens, int64_t n_samples) {
    const int64_t keep = (int64_t)(n_tokens > 1 ? n_tokens - 1 : 1) * VX_MTL_SAMPLES_PER_TOKEN;
    return keep < n_samples ? keep : n_samples;
}
