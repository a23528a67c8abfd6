/* A voice handle cloned by a Turbo model is refused by an English one (and the other way round)
 * with VOCIS_E_INVALID and a message naming both kinds, as a voice file of the other recipe is
 * at load; a handle of the same recipe (English -> Multilingual) is taken. */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "vocis.h"

static vocis_model *open_model(const char *dir) {
    vocis_open_options oo = {2, NULL, VOCIS_PRECISION_EXACT};
    vocis_model *m;
    if (vocis_model_open(tl_path(dir), &oo, &m) != VOCIS_OK) {
        fprintf(stderr, "%s: %s\n", dir, vocis_errmsg(m));
        exit(1);
    }
    return m;
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    vocis_model *en = open_model("chatterbox/ckpt"), *turbo = open_model("chatterbox-turbo/ckpt"),
                *mtl = open_model("chatterbox-mtl/ckpt");
    const char *ref = tl_path("chatterbox-turbo/golden/ref_24k.wav");
    vocis_voice *vt = NULL, *ve = NULL;
    if (vocis_voice_clone(turbo, ref, NULL, &vt) || vocis_voice_clone(en, ref, NULL, &ve)) {
        fprintf(stderr, "clone: %s\n", vocis_errmsg(en));
        return 1;
    }
    vocis_speak_options o;
    vocis_speak_options_default(&o);
    o.t3.seed = 1;
    o.t3.max_new_tokens = 20;
    vocis_audio a = {0};
    vocis_status st = vocis_speak(en, vt, "Hi there.", &o, &a);
    CHECK_MSG(st == VOCIS_E_INVALID &&
                  strstr(vocis_errmsg(en), "the voice (ref_24k.wav) was made for chatterbox-turbo; this model is chatterbox"),
              "English with a Turbo voice handle: %s", vocis_errmsg(en));
    vocis_audio_free(&a);
    int32_t *toks = NULL;
    size_t n = 0;
    st = vocis_t3_generate(turbo, ve, "Hi there.", &o.t3, &toks, &n);
    CHECK_MSG(st == VOCIS_E_INVALID && strstr(vocis_errmsg(turbo), "was made for chatterbox; this model is chatterbox-turbo"),
              "Turbo T3 with an English voice handle: %s", vocis_errmsg(turbo));
    vocis_free(toks);
    o.t3.language = "fr";
    st = vocis_t3_generate(mtl, ve, "Bonjour.", &o.t3, &toks, &n);
    CHECK_MSG(st == VOCIS_OK && n > 0, "Multilingual with an English voice handle: %s", vocis_errmsg(mtl));
    vocis_free(toks);
    vocis_voice_free(vt);
    vocis_voice_free(ve);
    vocis_model_close(en);
    vocis_model_close(turbo);
    vocis_model_close(mtl);
    return tl_finish("test_voice_kind");
}
