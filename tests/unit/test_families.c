/* The family tables behind the public API (src/api/family.h): every folder of
 * the tiny checkpoints is told apart as its family, every table has what the
 * API cannot do without, and each public call a family lacks answers with an
 * error instead of reaching into another family's state. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/family.h"
#include "testlib.h"
#include "vocis.h"

typedef struct {
    const char *dir;   /* under tests/data; "" for the voice-conversion folder made below */
    const vx_family *family;
    const char *kind;
} folder;

static char vc_dir[256];

/* ChatterboxVC.from_local: s3gen.safetensors and conds.pt, nothing else */
static void make_vc_folder(void) {
    snprintf(vc_dir, sizeof vc_dir, "/tmp/vocis_test_families_%d", (int)getpid());
    mkdir(vc_dir, 0755);
    const char *files[] = {"s3gen.safetensors", "conds.pt", "chatterbox_tiny_config.json"};
    for (int i = 0; i < 3; i++) {
        char ckpt[PATH_MAX], src[PATH_MAX + 64], dst[512];
        if (!realpath(tl_path("chatterbox/ckpt"), ckpt)) abort();
        snprintf(src, sizeof src, "%s/%s", ckpt, files[i]);
        snprintf(dst, sizeof dst, "%s/%s", vc_dir, files[i]);
        unlink(dst);
        CHECK_MSG(symlink(src, dst) == 0, "symlink %s", dst);
    }
}

static void remove_vc_folder(void) {
    const char *files[] = {"s3gen.safetensors", "conds.pt", "chatterbox_tiny_config.json"};
    for (int i = 0; i < 3; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", vc_dir, files[i]);
        unlink(p);
    }
    rmdir(vc_dir);
}

static void check_tables(void) {
    int n = 0;
    const vx_family *const *all = vx_family_list(&n);
    CHECK(n >= 6);
    for (int i = 0; i < n; i++) {
        const vx_family *f = all[i];
        CHECK_MSG(f->name && f->detect && f->open && f->close && (f->kind || f->kind_name),
                  "family %d (%s) lacks an entry", i, f->name ? f->name : "?");
        CHECK_MSG(f->speak || f->convert, "%s can neither speak nor convert", f->name);
        CHECK_MSG(!f->clone_samples == !f->clone, "%s: clone and clone_samples come together", f->name);
        CHECK_MSG(!f->set_voice_cache == !f->voice_cache, "%s: voice cache setter without getter", f->name);
        for (int j = 0; j < i; j++) CHECK_MSG(all[j] != f && strcmp(all[j]->name, f->name), "%s listed twice", f->name);
    }
}

/* The calls the family lacks must fail with a message; those it has must not be refused as missing. */
static void check_refusals(vocis_model *m, const vx_family *f, const char *what) {
    vocis_audio a;
    int32_t *ids = NULL;
    size_t nids = 0;
    if (!f->speak_script) {
        CHECK_MSG(vocis_speak_script(m, NULL, 0, "Speaker 1: Hi.", NULL, &a) == VOCIS_E_UNSUPPORTED, "%s", what);
        CHECK(strstr(vocis_errmsg(m), "VibeVoice") != NULL);
    }
    if (!f->convert) {
        CHECK_MSG(vocis_convert(m, "/nonexistent.wav", NULL, NULL, &a) == VOCIS_E_UNSUPPORTED, "%s", what);
        CHECK(strstr(vocis_errmsg(m), "voice conversion") != NULL);
    }
    if (!f->stream_open) {
        vocis_stream *s = NULL;
        CHECK_MSG(vocis_stream_open(m, NULL, NULL, &s) == VOCIS_E_UNSUPPORTED && !s, "%s", what);
    }
    if (!f->t3_generate) {
        CHECK_MSG(vocis_t3_generate(m, NULL, "Hello.", NULL, &ids, &nids) == VOCIS_E_UNSUPPORTED && !ids, "%s", what);
    }
    if (!f->tokenize) {
        CHECK_MSG(vocis_tokenize(m, "Hello.", &ids, &nids) != VOCIS_OK && !ids, "%s", what);
    } else {
        const char *lang = f->languages ? "en" : NULL; /* Multilingual needs one */
        CHECK_MSG(vocis_tokenize_language(m, "Hello.", lang, &ids, &nids) == VOCIS_OK && nids > 0, "%s: %s", what,
                  vocis_errmsg(m));
        vocis_free(ids);
        ids = NULL;
    }
    if (!f->clone) {
        vocis_voice *v = NULL;
        CHECK_MSG(vocis_voice_clone(m, "/nonexistent.wav", NULL, &v) != VOCIS_OK && !v, "%s", what);
        CHECK(strstr(vocis_errmsg(m), "cloning") != NULL);
    }
    if (!f->speak) {
        CHECK_MSG(vocis_speak(m, NULL, "Hello.", NULL, &a) == VOCIS_E_UNSUPPORTED, "%s", what);
    }
    vocis_voice_cache_stats st;
    vocis_voice_cache_stats_get(m, &st); /* zero for families without one, never a crash */
    if (!f->voice_cache) CHECK(st.max_bytes == 0);
    CHECK_MSG((vocis_model_languages(m) != NULL) == (f->languages != NULL), "%s", what);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    check_tables();
    make_vc_folder();
    const folder folders[] = {
        {"chatterbox/ckpt", &vx_family_chatterbox, "chatterbox"},
        {"chatterbox-mtl/ckpt", &vx_family_mtl, "chatterbox-multilingual"},
        {"chatterbox-turbo/ckpt", &vx_family_turbo, "chatterbox-turbo"},
        {"chatterbox-nano/ckpt", &vx_family_turbo, "chatterbox-nano"},
        {"", &vx_family_vc, "chatterbox-vc"},
        {"vibevoice/model", &vx_family_vv, "vibevoice"},
        {"vibevoice-realtime/model", &vx_family_rt, "vibevoice-realtime"},
    };
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
        const folder *fo = &folders[i];
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", fo->dir[0] ? tl_path(fo->dir) : vc_dir);
        const vx_family *f = vx_family_of_folder(dir);
        CHECK_MSG(f == fo->family, "%s: told apart as %s, expected %s", dir, f ? f->name : "none", fo->family->name);
        vocis_open_options oo = {.threads = 1};
        vocis_model *m = NULL;
        vocis_status st = vocis_model_open(dir, &oo, &m);
        CHECK_MSG(st == VOCIS_OK, "%s: %s", dir, vocis_errmsg(m));
        if (st == VOCIS_OK) {
            CHECK_MSG(!strcmp(vocis_model_kind(m), fo->kind), "%s: kind %s, expected %s", dir, vocis_model_kind(m),
                      fo->kind);
            CHECK((vocis_model_precision(m, VOCIS_PART_LM) != 0) == ((fo->family->parts & VX_FAMILY_LM) != 0));
            CHECK((vocis_model_precision(m, VOCIS_PART_FLOW) != 0) == ((fo->family->parts & VX_FAMILY_S3GEN) != 0));
            check_refusals(m, fo->family, dir);
        }
        vocis_model_close(m);
        /* a bf16 KV cache: refused before the weights are read by families without one */
        vocis_open_options kb = {.threads = 1, .kv_cache = VOCIS_KV_BF16};
        m = NULL;
        st = vocis_model_open(dir, &kb, &m);
        CHECK_MSG((st == VOCIS_OK) == (fo->family->kv_bf16 != NULL), "%s: bf16 KV gave %d", dir, (int)st);
        if (st) CHECK(strstr(vocis_errmsg(m), fo->family->name) != NULL);
        vocis_model_close(m);
    }
    CHECK(vx_family_of_folder(tl_path("text")) == NULL);

    /* no folder: a handle that still converts voice files, and refuses the rest */
    vocis_model *m = NULL;
    CHECK(vocis_model_open("", NULL, &m) != VOCIS_OK && m);
    CHECK(!strcmp(vocis_model_kind(m), ""));
    check_refusals(m, &vx_family_none, "no folder");
    vocis_voice *v = NULL;
    char conds[4096];
    snprintf(conds, sizeof conds, "%s/conds.pt", tl_path("chatterbox/ckpt"));
    CHECK_MSG(vocis_voice_load(m, conds, &v) == VOCIS_OK && v, "%s", vocis_errmsg(m));
    char out[300];
    snprintf(out, sizeof out, "%s/voice.voice", vc_dir);
    CHECK_MSG(v && vocis_voice_save(m, v, out) == VOCIS_OK, "%s", vocis_errmsg(m));
    unlink(out);
    vocis_voice_free(v);
    vocis_model_close(m);
    remove_vc_folder();
    return tl_failures ? 1 : 0;
}
