/* vocis_speak with stream_tokens (vocis speak --stream) on the tiny checkpoints of every T3
 * family: the audio has the whole path's length (the same seed draws the same T3 tokens; one
 * hop of slack), comes in several on_audio pieces that add up, in order, to the returned audio,
 * and its first piece arrives while T3 is still generating (before T3's last progress report). */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "vocis.h"

#define HOP 480 /* samples per mel frame */

typedef struct {
    float *x;
    size_t n, pieces;
    int events, first_audio_event, last_t3_event;
} run_log;

static int collect(void *user, const float *x, size_t n, int sr) {
    run_log *r = user;
    float *nx = realloc(r->x, sizeof(float) * (r->n + n));
    if (!nx || sr != 24000) return 1;
    memcpy(nx + r->n, x, sizeof(float) * n);
    r->x = nx, r->n += n, r->pieces++;
    if (r->first_audio_event < 0) r->first_audio_event = r->events;
    r->events++;
    return 0;
}

static int progress(void *user, const vocis_progress *p) {
    run_log *r = user;
    if (!strcmp(p->stage, "t3")) r->last_t3_event = r->events;
    r->events++;
    return 0;
}

static int speak(vocis_model *m, const char *text, const vocis_speak_options *base, int stream_tokens, run_log *r,
                 vocis_audio *a) {
    vocis_speak_options o = *base;
    memset(r, 0, sizeof *r);
    r->first_audio_event = -1;
    o.stream_tokens = stream_tokens;
    o.on_audio = collect;
    o.on_progress = progress;
    o.user = r;
    if (vocis_speak(m, NULL, text, &o, a) == VOCIS_OK) return 0;
    fprintf(stderr, "vocis_speak: %s\n", vocis_errmsg(m));
    return 1;
}

static void check_family(const char *dir, const char *language, float temperature, int64_t seed, int first) {
    vocis_open_options oo = {2, NULL, VOCIS_PRECISION_EXACT};
    vocis_model *m;
    if (vocis_model_open(tl_path(dir), &oo, &m) != VOCIS_OK) {
        CHECK_MSG(0, "%s: %s", dir, vocis_errmsg(m));
        vocis_model_close(m);
        return;
    }
    const char *text = "Hello there, this is a somewhat longer sentence to test streaming.";
    vocis_speak_options o;
    vocis_speak_options_default(&o);
    o.t3.seed = seed;
    o.t3.temperature = temperature;
    o.t3.language = language;
    run_log whole, streamed;
    vocis_audio wa = {0}, sa = {0};
    if (!speak(m, text, &o, 0, &whole, &wa) && !speak(m, text, &o, first, &streamed, &sa)) {
        const size_t d = sa.n > wa.n ? sa.n - wa.n : wa.n - sa.n;
        CHECK_MSG(d <= HOP, "%s: %zu samples streamed, %zu whole", dir, sa.n, wa.n);
        CHECK_MSG(whole.pieces == 1, "%s: the whole path gave %zu pieces", dir, whole.pieces);
        CHECK_MSG(streamed.pieces > 1, "%s: streamed audio in %zu piece(s)", dir, streamed.pieces);
        CHECK_MSG(streamed.n == sa.n && !memcmp(streamed.x, sa.samples, sizeof(float) * sa.n),
                  "%s: the pieces (%zu samples) are not the returned audio (%zu)", dir, streamed.n, sa.n);
        CHECK_MSG(streamed.first_audio_event >= 0 && streamed.first_audio_event < streamed.last_t3_event,
                  "%s: first audio at event %d, T3's last report at %d", dir, streamed.first_audio_event,
                  streamed.last_t3_event);
        CHECK_MSG(whole.first_audio_event > whole.last_t3_event, "%s: the whole path spoke before T3 ended", dir);
    } else {
        CHECK_MSG(0, "%s: synthesis failed", dir);
    }
    /* several text chunks: each streamed, joined as without streaming */
    o.max_chunk_chars = 24;
    run_log chunked;
    vocis_audio ca = {0};
    if (!speak(m, "One sentence here. Another one follows. A third to end with.", &o, first, &chunked, &ca)) {
        CHECK_MSG(chunked.pieces > 3, "%s: %zu pieces for three streamed chunks", dir, chunked.pieces);
        CHECK_MSG(chunked.n == ca.n && !memcmp(chunked.x, ca.samples, sizeof(float) * ca.n),
                  "%s: chunked pieces (%zu samples) are not the returned audio (%zu)", dir, chunked.n, ca.n);
    } else {
        CHECK_MSG(0, "%s: chunked streaming failed", dir);
    }
    vocis_speak_options bad = o;
    bad.stream_tokens = -2;
    vocis_audio none;
    CHECK_MSG(vocis_speak(m, NULL, text, &bad, &none) == VOCIS_E_ARG, "%s: stream_tokens -2 accepted", dir);
    vocis_audio_free(&wa), vocis_audio_free(&sa), vocis_audio_free(&ca);
    free(whole.x), free(streamed.x), free(chunked.x);
    vocis_model_close(m);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    check_family("chatterbox/ckpt", NULL, 0.8f, 1, 4);
    check_family("chatterbox-mtl/ckpt", "en", 0.8f, 1, 4);
    /* the tiny GPT-2 T3s stop early at 0.8: a hotter draw gives them a dozen tokens */
    check_family("chatterbox-turbo/ckpt", NULL, 1.5f, 4, 2);
    check_family("chatterbox-nano/ckpt", NULL, 1.5f, 4, 2);
    return tl_finish("test_speak_stream");
}
