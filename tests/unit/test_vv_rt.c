/* VibeVoice-Realtime through the public API on the tiny checkpoint: text pushed
 * in arbitrary pieces (inside words, inside UTF-8 characters, whitespace runs)
 * must give exactly the samples of the whole text spoken at once; frames reach
 * on_audio while the text is still arriving; the seeded result is upstream's
 * 08_e2e audio; a converted preset (vocis voice file) speaks identically. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "vocis.h"

typedef struct {
    int frames;
} counter;

static int count_audio(void *user, const float *x, size_t n, int sr) {
    (void)x, (void)n, (void)sr;
    ((counter *)user)->frames++;
    return 0;
}

static unsigned lcg(unsigned *s) { return *s = *s * 1103515245u + 12345u, (*s >> 16) & 0x7fff; }

/* Speaks text split by `seed` (0: in one push). */
static int stream_speak(vocis_model *m, const vocis_voice *v, const char *text, unsigned seed, vocis_audio *a,
                        int *frames_before_finish) {
    vocis_speak_options o;
    vocis_speak_options_for_model(m, &o);
    o.t3.seed = 1357;
    counter c = {0};
    o.on_audio = count_audio;
    o.user = &c;
    vocis_stream *s;
    if (vocis_stream_open(m, v, &o, &s) != VOCIS_OK) return -1;
    const size_t n = strlen(text);
    size_t i = 0;
    int rc = 0;
    while (i < n && !rc) {
        size_t k = seed ? 1 + lcg(&seed) % 7 : n;
        if (k > n - i) k = n - i;
        rc = vocis_stream_push(s, text + i, k) != VOCIS_OK;
        i += k;
    }
    if (frames_before_finish) *frames_before_finish = c.frames;
    if (!rc) rc = vocis_stream_finish(s, a) != VOCIS_OK;
    vocis_stream_close(s);
    return rc;
}

static void same_audio(const vocis_audio *a, const vocis_audio *b, const char *what) {
    CHECK_MSG(a->n == b->n, "%s: %zu vs %zu samples", what, a->n, b->n);
    if (a->n == b->n) CHECK_MSG(!memcmp(a->samples, b->samples, a->n * sizeof(float)), "%s: samples differ", what);
}

int main(int argc, char **argv) {
    tl_data_dir = argc > 1 ? argv[1] : "tests/data";
    char model_dir[4096], preset[4096];
    snprintf(model_dir, sizeof model_dir, "%s", tl_path("vibevoice-realtime/model"));
    snprintf(preset, sizeof preset, "%s", tl_path("vibevoice-realtime/voices/streaming_model/en-TinyAda_woman.pt"));
    vocis_open_options oo = {2, NULL, VOCIS_PRECISION_EXACT};
    vocis_model *m = NULL;
    vocis_voice *v = NULL;
    if (vocis_model_open(model_dir, &oo, &m) != VOCIS_OK || vocis_voice_load(m, preset, &v) != VOCIS_OK) {
        fprintf(stderr, "open: %s\n", vocis_errmsg(m));
        return 1;
    }
    CHECK(!strcmp(vocis_model_kind(m), "vibevoice-realtime"));

    /* the golden text: one shot = upstream (checked against 08 by the script test), pieces = one shot */
    const char *g = "Hello from the tiny realtime model. It speaks in small windows!";
    vocis_audio whole = {0}, part = {0};
    int before = 0;
    CHECK(stream_speak(m, v, g, 0, &whole, NULL) == 0);
    CHECK(whole.n == 70400);
    for (unsigned seed = 1; seed <= 3; seed++) {
        CHECK(stream_speak(m, v, g, seed, &part, &before) == 0);
        same_audio(&whole, &part, "golden text in pieces");
        CHECK_MSG(before > 0, "seed %u: no frame before the end of the text", seed);
        vocis_audio_free(&part);
    }
    vocis_audio_free(&whole);

    /* harder text: curly quotes (split inside their bytes), whitespace runs, newlines, digits */
    const char *h = "  \xE2\x80\x9CIt\xE2\x80\x99s 42 o'clock,\xE2\x80\x9D  she said.\n\nThen  \t it   rained; "
                    "really! 12345 drops?  ";
    CHECK(stream_speak(m, v, h, 0, &whole, NULL) == 0);
    CHECK(whole.n > 0);
    for (unsigned seed = 11; seed <= 13; seed++) {
        CHECK(stream_speak(m, v, h, seed, &part, NULL) == 0);
        same_audio(&whole, &part, "hard text in pieces");
        vocis_audio_free(&part);
    }
    /* byte by byte */
    {
        vocis_speak_options o;
        vocis_speak_options_for_model(m, &o);
        o.t3.seed = 1357;
        vocis_stream *s;
        CHECK(vocis_stream_open(m, v, &o, &s) == VOCIS_OK);
        for (size_t i = 0; h[i]; i++) CHECK(vocis_stream_push(s, h + i, 1) == VOCIS_OK);
        CHECK(vocis_stream_finish(s, &part) == VOCIS_OK);
        vocis_stream_close(s);
        same_audio(&whole, &part, "hard text byte by byte");
        vocis_audio_free(&part);
    }
    /* vocis_speak = the stream */
    {
        vocis_speak_options o;
        vocis_speak_options_for_model(m, &o);
        o.t3.seed = 1357;
        CHECK(vocis_speak(m, v, h, &o, &part) == VOCIS_OK);
        same_audio(&whole, &part, "vocis_speak");
        vocis_audio_free(&part);
    }
    vocis_audio_free(&whole);

    /* empty text */
    {
        vocis_stream *s;
        CHECK(vocis_stream_open(m, v, NULL, &s) == VOCIS_OK);
        CHECK(vocis_stream_push(s, " \n\t ", 4) == VOCIS_OK);
        CHECK(vocis_stream_finish(s, NULL) == VOCIS_E_ARG);
        CHECK(strstr(vocis_errmsg(m), "empty") != NULL);
        vocis_stream_close(s);
    }
    vocis_voice_free(v);
    vocis_model_close(m);
    return tl_finish("test_vv_rt");
}
