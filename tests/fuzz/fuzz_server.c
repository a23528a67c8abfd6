/* libFuzzer target for the request side of `vocis serve` (src/server/proto.c):
 * the input is "METHOD PATH\nCONTENT-TYPE\nBODY". The router, the method
 * check, the speech-request parser (JSON -> validated fields), the
 * multipart/form-data splitter, the query-string decoder, name validation,
 * the path scrubbing of client messages and the OpenAI error JSON all run on it; invariants are checked with abort(). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

static char *line(const uint8_t **p, const uint8_t *end) {
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    size_t n = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
    char *s = malloc(n + 1);
    if (!s) abort();
    memcpy(s, *p, n);
    s[n] = 0;
    *p += n + (nl != NULL);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *p = data, *end = data + size;
    char *first = line(&p, end), *ctype = line(&p, end);
    const uint8_t *body = p;
    size_t blen = (size_t)(end - p);

    char *sp = strchr(first, ' ');
    const char *method = first, *path = sp ? sp + 1 : "";
    if (sp) *sp = 0;
    char *q = strchr((char *)path, '?');
    if (q) *q++ = 0;
    const char *arg = NULL;
    vx_route r = vx_srv_route(path, &arg);
    if (r < 0 || r >= VX_R_COUNT) abort();
    if ((r == VX_R_MODEL || r == VX_R_VOICE) && (!arg || !*arg)) abort();
    (void)vx_srv_method_ok(r, method);
    (void)vx_srv_route_name(r);
    if (arg && vx_srv_valid_name(arg) && (strchr(arg, '/') || strstr(arg, "..") || arg[0] == '.')) abort();
    char val[256];
    if (q && vx_srv_query_get(q, "name", val, sizeof val) && strlen(val) >= sizeof val) abort();

    vx_speech_req req;
    vx_srv_error e;
    memset(&e, 0, sizeof e);
    if (vx_srv_parse_speech((const char *)body, blen, 4096, &req, &e) == 0) {
        if (!req.input || req.input_chars == 0 || req.input_chars > 4096) abort();
        if (req.format < VX_FMT_MP3 || req.format > VX_FMT_PCM || req.stream < 0 || req.stream > 2) abort();
        if (req.speed != 1.0) abort();
        if (req.voice[0]) (void)vx_srv_valid_name(req.voice);
        (void)vx_srv_openai_model(req.model);
        vx_speech_req_free(&req);
    } else {
        if (e.status != 400 && e.status != 500) abort();
        char *js = vx_srv_error_json(&e);
        cJSON *back = js ? cJSON_Parse(js) : NULL;
        if (js && !back) abort(); /* the error JSON must always parse */
        cJSON_Delete(back);
        free(js);
    }
    vx_form_part parts[8];
    int np = vx_srv_parse_multipart(ctype, body, blen, parts, 8);
    for (int i = 0; i < np; i++)
        if (parts[i].data < body || parts[i].data + parts[i].len > body + blen) abort();
    /* an error message for a client: stays within its buffer */
    const char *paths[] = {"srv/voices/a.ref", "srv/voices", "", NULL}, *names[] = {"a", "voices", "x", "y"};
    char scrubbed[64];
    vx_srv_scrub_paths(ctype, paths, names, 4, scrubbed, sizeof scrubbed);
    if (strlen(scrubbed) >= sizeof scrubbed) abort();
    char *b = vx_srv_base64(body, blen < 4096 ? blen : 4096);
    if (b && strlen(b) != ((blen < 4096 ? blen : 4096) + 2) / 3 * 4) abort();
    free(b);
    free(first);
    free(ctype);
    return 0;
}
