/* vocis serve's pure helpers (src/server/proto.c): every knob of the shared
 * limits table (api/limits.h) accepted at its bounds and refused just past
 * them, naming its field; the language field; and error messages for clients
 * stripped of server paths. */
#include <stdio.h>
#include <string.h>

#include "api/limits.h"
#include "server/server.h"
#include "testlib.h"

static int parse(const char *json, vx_speech_req *r, vx_srv_error *e) {
    memset(e, 0, sizeof *e);
    int rc = vx_srv_parse_speech(json, strlen(json), 0, r, e);
    vx_speech_req_free(r);
    return rc;
}

static void check_knob(const vx_limit *l) {
    char js[200];
    vx_speech_req r;
    vx_srv_error e;
    const double step = l->integer ? 1 : 1e-3 * (l->max - l->min);
    const double ok[2] = {l->min, l->max}, bad[2] = {l->min - step, l->max + step};
    for (int k = 0; k < 2; k++) {
        snprintf(js, sizeof js, "{\"input\":\"hi\",\"%s\":%.17g}", l->json, ok[k]);
        CHECK_MSG(parse(js, &r, &e) == 0, "%s refused: %s", js, e.message);
        snprintf(js, sizeof js, "{\"input\":\"hi\",\"%s\":%.17g}", l->json, bad[k]);
        CHECK_MSG(parse(js, &r, &e) == -1 && e.status == 400 && !strcmp(e.param, l->json) &&
                      !strcmp(e.code, "invalid_value"),
                  "%s: %d %s %s", js, e.status, e.param, e.code);
    }
    if (l->integer) {
        snprintf(js, sizeof js, "{\"input\":\"hi\",\"%s\":%.17g}", l->json, l->min + 0.5);
        CHECK_MSG(parse(js, &r, &e) == -1 && !strcmp(e.param, l->json), "%s accepted", js);
    }
}

static void check_scrub(const char *msg, const char *want) {
    const char *paths[] = {"srv/voices/bob.ref", "srv/voices", "/opt/models/chatterbox", NULL};
    const char *names[] = {"bob", "voices", "cb", "x"};
    char out[200];
    vx_srv_scrub_paths(msg, paths, names, 4, out, sizeof out);
    CHECK_MSG(!strcmp(out, want), "scrub(\"%s\") = \"%s\", want \"%s\"", msg, out, want);
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    for (int i = 0; i < VX_LIM_COUNT; i++) check_knob(&vx_limits[i]);
    vx_speech_req r;
    vx_srv_error e;
    memset(&r, 0, sizeof r);
    const char *js = "{\"input\":\"Bonjour\",\"language\":\"fr\",\"top_k\":7,\"seed\":9007199254740991}";
    CHECK(vx_srv_parse_speech(js, strlen(js), 0, &r, &e) == 0);
    CHECK(!strcmp(r.language, "fr") && r.top_k == 7 && r.seed == 9007199254740991LL);
    vx_speech_req_free(&r);
    CHECK(parse("{\"input\":\"hi\",\"language\":5}", &r, &e) == -1 && !strcmp(e.param, "language"));
    CHECK(parse("{\"input\":\"hi\",\"seed\":9007199254740992}", &r, &e) == -1 && !strcmp(e.param, "seed"));

    check_scrub("srv/voices/bob.ref: not a WAV file", "bob: not a WAV file");
    check_scrub("srv/voices/.upload-38.tmp: unreadable", "voices/.upload-38.tmp: unreadable");
    check_scrub("cannot read /opt/models/chatterbox/s3gen.safetensors (no such file)",
                "cannot read cb/s3gen.safetensors (no such file)");
    check_scrub("/home/me/x.wav, ./a/b.pt and ../c/d.pt", "x.wav, b.pt and d.pt");
    check_scrub("[START]/[STOP] have ids 1/2; 0.5 s", "[START]/[STOP] have ids 1/2; 0.5 s");
    check_scrub("srv/voicesX/a: no", "srv/voicesX/a: no"); /* a known folder only as a whole word */
    char small[8];
    const char *p1[] = {"aaaa"}, *n1[] = {"a-very-long-name"};
    vx_srv_scrub_paths("aaaa: b", p1, n1, 1, small, sizeof small);
    CHECK(strlen(small) == 7);
    if (tl_failures) fprintf(stderr, "%d failure(s)\n", tl_failures);
    else printf("server proto: all cases passed\n");
    return tl_failures != 0;
}
