/* vocis_speak with out NULL (how `vocis speak -o FILE` runs, keeping only the crossfade
 * tail between chunks): on_audio still gets every sample once, once per chunk, exactly
 * the samples that a run keeping its audio returns and streams. */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "vocis.h"

typedef struct {
    float *x;
    size_t n, calls;
} collected;

static int collect(void *user, const float *x, size_t n, int sr) {
    collected *c = user;
    float *nx = realloc(c->x, sizeof(float) * (c->n + n));
    if (!nx || sr != 24000) return 1;
    memcpy(nx + c->n, x, sizeof(float) * n);
    c->x = nx, c->n += n, c->calls++;
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    vocis_open_options oo = {2, NULL, VOCIS_PRECISION_EXACT};
    vocis_model *m;
    if (vocis_model_open(tl_path("chatterbox/ckpt"), &oo, &m) != VOCIS_OK) {
        fprintf(stderr, "%s\n", vocis_errmsg(m));
        return 1;
    }
    const char *text = "One sentence here. Another one follows. A third to end with. And a fourth.";
    collected kept = {0}, unkept = {0};
    vocis_speak_options o;
    vocis_speak_options_default(&o);
    o.t3.seed = 4;
    o.t3.max_new_tokens = 40;
    o.max_chunk_chars = 20; /* four chunks, joined with crossfades */
    o.on_audio = collect;
    o.user = &kept;
    vocis_audio a;
    CHECK_MSG(vocis_speak(m, NULL, text, &o, &a) == VOCIS_OK, "%s", vocis_errmsg(m));
    o.user = &unkept;
    CHECK_MSG(vocis_speak(m, NULL, text, &o, NULL) == VOCIS_OK, "%s", vocis_errmsg(m));
    CHECK_MSG(kept.calls == 4 && unkept.calls == 4, "on_audio calls: %zu kept, %zu not", kept.calls, unkept.calls);
    CHECK_MSG(kept.n == a.n && unkept.n == a.n, "%zu samples kept, %zu streamed, %zu streamed unkept", a.n, kept.n,
              unkept.n);
    CHECK(kept.n == a.n && !memcmp(kept.x, a.samples, sizeof(float) * a.n));
    CHECK(unkept.n == a.n && !memcmp(unkept.x, a.samples, sizeof(float) * a.n));
    vocis_audio_free(&a);
    free(kept.x), free(unkept.x);
    vocis_model_close(m);
    return tl_finish("test_speak_unkept");
}
