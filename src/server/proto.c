/* vocis serve: request parsing, routing and OpenAI-style JSON errors.
 * Pure functions on buffers (no sockets, no models) so that they can be fuzzed. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/limits.h"
#include "server/server.h"

/* ---- routes ---- */

vx_route vx_srv_route(const char *path, const char **arg) {
    *arg = NULL;
    if (!path) return VX_R_NONE;
    if (!strcmp(path, "/") || !strcmp(path, "/index.html")) return VX_R_PAGE;
    if (!strcmp(path, "/health")) return VX_R_HEALTH;
    if (!strcmp(path, "/ready")) return VX_R_READY;
    if (!strcmp(path, "/metrics")) return VX_R_METRICS;
    if (!strcmp(path, "/v1/models")) return VX_R_MODELS;
    if (!strcmp(path, "/v1/audio/speech")) return VX_R_SPEECH;
    if (!strcmp(path, "/v1/voices")) return VX_R_VOICES;
    if (!strncmp(path, "/v1/models/", 11) && path[11]) {
        *arg = path + 11;
        return VX_R_MODEL;
    }
    if (!strncmp(path, "/v1/voices/", 11) && path[11]) {
        *arg = path + 11;
        return VX_R_VOICE;
    }
    return VX_R_NONE;
}

const char *vx_srv_route_name(vx_route r) {
    static const char *const names[VX_R_COUNT] = {"other",  "page",   "health", "ready",  "metrics",
                                                  "models", "model",  "speech", "voices", "voice"};
    return r >= 0 && r < VX_R_COUNT ? names[r] : "other";
}

const char *vx_srv_route_methods(vx_route r) {
    switch (r) {
    case VX_R_SPEECH: return "POST";
    case VX_R_VOICES: return "GET, POST";
    case VX_R_VOICE: return "GET, DELETE";
    case VX_R_NONE: return "";
    default: return "GET, HEAD";
    }
}

int vx_srv_method_ok(vx_route r, const char *method) {
    const char *m = vx_srv_route_methods(r);
    size_t n = strlen(method);
    if (!n) return 0;
    for (const char *p = m; (p = strstr(p, method)) != NULL; p += n)
        if ((p == m || p[-1] == ' ') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}

/* ---- errors ---- */

void vx_srv_seterr(vx_srv_error *e, int status, const char *code, const char *param, const char *fmt, ...) {
    e->status = status;
    const char *type = status == 401   ? "invalid_request_error"
                       : status == 429 ? "rate_limit_error"
                       : status >= 500 ? "server_error"
                                       : "invalid_request_error";
    snprintf(e->type, sizeof e->type, "%s", type);
    snprintf(e->code, sizeof e->code, "%s", code ? code : "");
    snprintf(e->param, sizeof e->param, "%s", param ? param : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
}

char *vx_srv_error_json(const vx_srv_error *e) {
    cJSON *root = cJSON_CreateObject(), *o = cJSON_CreateObject();
    if (!root || !o) {
        cJSON_Delete(root), cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddItemToObject(root, "error", o);
    cJSON_AddStringToObject(o, "message", e->message);
    cJSON_AddStringToObject(o, "type", e->type);
    if (e->param[0]) cJSON_AddStringToObject(o, "param", e->param);
    else cJSON_AddNullToObject(o, "param");
    if (e->code[0]) cJSON_AddStringToObject(o, "code", e->code);
    else cJSON_AddNullToObject(o, "code");
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

/* ---- formats ---- */

const char *vx_srv_fmt_name(vx_srv_fmt f) {
    static const char *const n[] = {"mp3", "opus", "flac", "wav", "pcm"};
    return f >= 0 && f <= VX_FMT_PCM ? n[f] : "?";
}

const char *vx_srv_fmt_mime(vx_srv_fmt f) {
    static const char *const n[] = {"audio/mpeg", "audio/ogg; codecs=opus", "audio/flac", "audio/wav",
                                    "audio/pcm"};
    return f >= 0 && f <= VX_FMT_PCM ? n[f] : "application/octet-stream";
}

/* ---- names ---- */

int vx_srv_valid_name(const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > VX_SRV_NAME_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 (i > 0 && (c == '_' || c == '-' || c == '.'));
        if (!ok) return 0;
    }
    return strstr(s, "..") == NULL;
}

int vx_srv_openai_voice(const char *s) {
    static const char *const v[] = {"alloy", "ash",  "ballad",  "coral", "echo",  "fable", "onyx",
                                    "nova",  "sage", "shimmer", "verse", "marin", "cedar"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!strcmp(s, v[i])) return 1;
    return 0;
}

int vx_srv_openai_model(const char *s) {
    return !strcmp(s, "tts-1") || !strcmp(s, "tts-1-hd") || !strcmp(s, "gpt-4o-mini-tts");
}

/* ---- speech request ---- */

static size_t utf8_chars(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

void vx_speech_req_free(vx_speech_req *r) {
    free(r->input);
    r->input = NULL;
}

/* number field within [lo, hi]; 0 absent, 1 ok, -1 error */
static int get_num(const cJSON *root, const char *key, double lo, double hi, int integer, double *out,
                   vx_srv_error *e) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!it || cJSON_IsNull(it)) return 0;
    if (!cJSON_IsNumber(it)) {
        vx_srv_seterr(e, 400, "invalid_type", key, "'%s' must be a number", key);
        return -1;
    }
    double v = it->valuedouble;
    if (!isfinite(v) || v < lo || v > hi || (integer && v != floor(v))) {
        vx_srv_seterr(e, 400, "invalid_value", key, "'%s' must be %s in [%.16g, %.16g]", key,
                      integer ? "an integer" : "a number", lo, hi);
        return -1;
    }
    *out = v;
    return 1;
}

/* a knob of the table shared with vocis speak (api/limits.h) */
static int get_limited(const cJSON *root, vx_limit_id id, double *out, vx_srv_error *e) {
    const vx_limit *l = &vx_limits[id];
    return get_num(root, l->json, l->min, l->max, l->integer, out, e);
}

static int get_str(const cJSON *root, const char *key, char *out, size_t cap, vx_srv_error *e) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!it || cJSON_IsNull(it)) return 0;
    if (!cJSON_IsString(it)) {
        vx_srv_seterr(e, 400, "invalid_type", key, "'%s' must be a string", key);
        return -1;
    }
    if (strlen(it->valuestring) >= cap) {
        vx_srv_seterr(e, 400, "invalid_value", key, "'%s' is too long (at most %zu bytes)", key, cap - 1);
        return -1;
    }
    snprintf(out, cap, "%s", it->valuestring);
    return 1;
}

/* 'voice' as a list of names: one per speaker of a VibeVoice script (checked against the model
 * and the script by the server); each element is named in its error as voice[i]. */
static int get_voice_list(const cJSON *list, vx_speech_req *r, vx_srv_error *e) {
    const int n = cJSON_GetArraySize(list);
    if (n == 0) {
        vx_srv_seterr(e, 400, "invalid_value", "voice",
                      "'voice' is an empty list: name one voice per speaker, Speaker 1's first (or send one name "
                      "as a string)");
        return -1;
    }
    if (n > VX_SRV_MAX_VOICES) {
        vx_srv_seterr(e, 400, "invalid_value", "voice", "'voice' lists %d voices; this server takes at most %d", n,
                      VX_SRV_MAX_VOICES);
        return -1;
    }
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, list) {
        char param[24];
        snprintf(param, sizeof param, "voice[%d]", i);
        if (!cJSON_IsString(it)) {
            vx_srv_seterr(e, 400, "invalid_type", param, "'%s' must be a string: the name of Speaker %d's voice", param,
                          i + 1);
            return -1;
        }
        if (strlen(it->valuestring) >= sizeof r->voices[i]) {
            vx_srv_seterr(e, 400, "invalid_value", param, "'%s' is too long (at most %zu bytes)", param,
                          sizeof r->voices[i] - 1);
            return -1;
        }
        snprintf(r->voices[i++], sizeof r->voices[0], "%s", it->valuestring);
    }
    r->n_voices = n;
    return 0;
}

int vx_srv_parse_speech(const char *body, size_t len, int max_chars, vx_speech_req *r, vx_srv_error *e) {
    memset(r, 0, sizeof *r);
    r->format = VX_FMT_MP3;
    r->speed = 1.0;
    r->seed = -1;
    r->temperature = r->exaggeration = r->cfg_weight = r->cfg_scale = NAN;
    r->min_p = r->top_p = r->repetition_penalty = NAN;
    r->diffusion_steps = r->cfm_steps = r->max_new_tokens = r->top_k = r->stream_tokens = -1;
    if (!body || len == 0) {
        vx_srv_seterr(e, 400, "invalid_json", NULL, "the request body is empty: send a JSON object");
        return -1;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    if (!root) {
        vx_srv_seterr(e, 400, "invalid_json", NULL, "the request body is not valid JSON (near byte %zu)",
                      end && end >= body ? (size_t)(end - body) : (size_t)0);
        return -1;
    }
    int rc = -1;
    char tmp[32];
    double v;
    int g;
    if (!cJSON_IsObject(root)) {
        vx_srv_seterr(e, 400, "invalid_json", NULL, "the request body must be a JSON object");
        goto out;
    }
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(root, "input");
    if (!in || cJSON_IsNull(in)) {
        vx_srv_seterr(e, 400, "missing_required_parameter", "input", "'input' is required");
        goto out;
    }
    if (!cJSON_IsString(in)) {
        vx_srv_seterr(e, 400, "invalid_type", "input", "'input' must be a string");
        goto out;
    }
    r->input_chars = utf8_chars(in->valuestring);
    if (r->input_chars == 0 || strspn(in->valuestring, " \t\r\n") == strlen(in->valuestring)) {
        vx_srv_seterr(e, 400, "invalid_value", "input", "'input' is empty");
        goto out;
    }
    if (max_chars > 0 && r->input_chars > (size_t)max_chars) {
        vx_srv_seterr(e, 400, "input_too_long", "input", "'input' has %zu characters; this server takes at most %d",
                      r->input_chars, max_chars);
        goto out;
    }
    if (get_str(root, "model", r->model, sizeof r->model, e) < 0) goto out;
    const cJSON *voice_list = cJSON_GetObjectItemCaseSensitive(root, "voice");
    if (cJSON_IsArray(voice_list)) {
        if (get_voice_list(voice_list, r, e)) goto out;
    } else if (get_str(root, "voice", r->voice, sizeof r->voice, e) < 0) {
        /* OpenAI also accepts {"voice": {"id": "..."}} for custom voices */
        const cJSON *vo = cJSON_GetObjectItemCaseSensitive(root, "voice");
        const cJSON *id = cJSON_IsObject(vo) ? cJSON_GetObjectItemCaseSensitive(vo, "id") : NULL;
        if (!cJSON_IsString(id) || strlen(id->valuestring) >= sizeof r->voice) goto out;
        snprintf(r->voice, sizeof r->voice, "%s", id->valuestring);
    }
    if ((g = get_str(root, "response_format", tmp, sizeof tmp, e)) < 0) goto out;
    if (g) {
        static const char *const names[] = {"mp3", "opus", "flac", "wav", "pcm"};
        int f = -1;
        for (int i = 0; i < 5; i++)
            if (!strcmp(tmp, names[i])) f = i;
        if (f < 0) {
            if (!strcmp(tmp, "aac"))
                vx_srv_seterr(e, 400, "unsupported_response_format", "response_format",
                              "response_format 'aac' is not supported by this server (libsndfile has no AAC "
                              "encoder); use mp3, opus, flac, wav or pcm");
            else
                vx_srv_seterr(e, 400, "invalid_value", "response_format",
                              "unknown response_format '%s' (mp3, opus, flac, wav, pcm)", tmp);
            goto out;
        }
        r->format = (vx_srv_fmt)f;
    }
    if ((g = get_str(root, "stream_format", tmp, sizeof tmp, e)) < 0) goto out;
    if (g) {
        if (!strcmp(tmp, "audio")) r->stream = 1;
        else if (!strcmp(tmp, "sse")) r->stream = 2;
        else {
            vx_srv_seterr(e, 400, "invalid_value", "stream_format", "unknown stream_format '%s' (audio, sse)", tmp);
            goto out;
        }
    }
    if ((g = get_num(root, "stream_tokens", 0, 1000, 1, &v, e)) < 0) goto out;
    if (g) r->stream_tokens = (int)v;
    if ((g = get_num(root, "speed", 0.25, 4.0, 0, &v, e)) < 0) goto out;
    if (g) {
        r->speed = v;
        if (v != 1.0) {
            vx_srv_seterr(e, 400, "unsupported_value", "speed",
                          "speed %g is not supported: vocis speaks at the model's natural rate (send 1.0 or "
                          "leave it out)", v);
            goto out;
        }
    }
#define KNOB(id, dst)                                                                                           \
    if ((g = get_limited(root, id, &v, e)) < 0) goto out;                                                     \
    if (g) dst = v;
    KNOB(VX_LIM_SEED, r->seed)
    KNOB(VX_LIM_TEMPERATURE, r->temperature)
    KNOB(VX_LIM_EXAGGERATION, r->exaggeration)
    KNOB(VX_LIM_CFG_WEIGHT, r->cfg_weight)
    KNOB(VX_LIM_CFG_SCALE, r->cfg_scale)
    KNOB(VX_LIM_MIN_P, r->min_p)
    KNOB(VX_LIM_TOP_P, r->top_p)
    KNOB(VX_LIM_TOP_K, r->top_k)
    KNOB(VX_LIM_REPETITION_PENALTY, r->repetition_penalty)
    KNOB(VX_LIM_DIFFUSION_STEPS, r->diffusion_steps)
    KNOB(VX_LIM_CFM_STEPS, r->cfm_steps)
    KNOB(VX_LIM_MAX_TOKENS, r->max_new_tokens)
#undef KNOB
    if (get_str(root, "language", r->language, sizeof r->language, e) < 0) goto out;
    const cJSON *instr = cJSON_GetObjectItemCaseSensitive(root, "instructions");
    if (instr && !cJSON_IsNull(instr) && !cJSON_IsString(instr)) {
        vx_srv_seterr(e, 400, "invalid_type", "instructions", "'instructions' must be a string");
        goto out;
    }
    if (!(r->input = strdup(in->valuestring))) {
        vx_srv_seterr(e, 500, "out_of_memory", NULL, "out of memory");
        goto out;
    }
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

/* ---- multipart/form-data ---- */

static const uint8_t *memfind(const uint8_t *h, size_t hn, const char *needle, size_t nn) {
    if (nn == 0 || hn < nn) return NULL;
    for (size_t i = 0; i + nn <= hn; i++)
        if (h[i] == (uint8_t)needle[0] && !memcmp(h + i, needle, nn)) return h + i;
    return NULL;
}

/* value of key="..." (or key=token) inside a header line [p, end) */
static void header_param(const char *p, const char *end, const char *key, char *out, size_t cap) {
    out[0] = 0;
    size_t kn = strlen(key);
    for (const char *q = p; q + kn + 1 <= end; q++) {
        if ((q == p || q[-1] == ' ' || q[-1] == ';') && !strncasecmp(q, key, kn) && q[kn] == '=') {
            const char *v = q + kn + 1, *ve;
            if (v < end && *v == '"') {
                v++;
                for (ve = v; ve < end && *ve != '"'; ve++) {}
            } else {
                for (ve = v; ve < end && *ve != ';' && *ve != ' ' && *ve != '\r'; ve++) {}
            }
            size_t n = (size_t)(ve - v);
            if (n >= cap) n = cap - 1;
            memcpy(out, v, n);
            out[n] = 0;
            return;
        }
    }
}

int vx_srv_parse_multipart(const char *content_type, const uint8_t *body, size_t len, vx_form_part *parts, int max) {
    if (!content_type || strncasecmp(content_type, "multipart/form-data", 19)) return -1;
    char bnd[80];
    const char *ct_end = content_type + strlen(content_type);
    header_param(content_type, ct_end, "boundary", bnd, sizeof bnd);
    if (!bnd[0] || strlen(bnd) > 70) return -1;
    char delim[80];
    int dn = snprintf(delim, sizeof delim, "--%s", bnd);
    const uint8_t *p = memfind(body, len, delim, (size_t)dn);
    if (!p) return -1;
    const uint8_t *end = body + len;
    int n = 0;
    for (int guard = 0; guard < 1000; guard++) {
        p += dn;
        if (end - p >= 2 && p[0] == '-' && p[1] == '-') return n; /* closing delimiter */
        if (end - p < 2 || p[0] != '\r' || p[1] != '\n') return -1;
        p += 2;
        const uint8_t *hend = memfind(p, (size_t)(end - p), "\r\n\r\n", 4);
        if (!hend) return -1;
        vx_form_part part;
        memset(&part, 0, sizeof part);
        for (const uint8_t *line = p; line < hend;) {
            const uint8_t *le = memfind(line, (size_t)(hend - line), "\r\n", 2);
            if (!le) le = hend;
            if ((size_t)(le - line) > 20 && !strncasecmp((const char *)line, "content-disposition:", 20)) {
                header_param((const char *)line + 20, (const char *)le, "name", part.name, sizeof part.name);
                header_param((const char *)line + 20, (const char *)le, "filename", part.filename,
                             sizeof part.filename);
            }
            line = le + 2;
        }
        const uint8_t *data = hend + 4;
        char nd[84];
        int ndn = snprintf(nd, sizeof nd, "\r\n%s", delim);
        const uint8_t *next = memfind(data, (size_t)(end - data), nd, (size_t)ndn);
        if (!next) return -1;
        part.data = data;
        part.len = (size_t)(next - data);
        if (n < max) parts[n++] = part;
        p = next + 2;
    }
    return -1;
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int vx_srv_query_get(const char *query, const char *key, char *out, size_t cap) {
    if (!query || cap == 0) return 0;
    size_t kn = strlen(key);
    for (const char *p = query; *p;) {
        const char *amp = strchr(p, '&');
        const char *e = amp ? amp : p + strlen(p);
        if ((size_t)(e - p) >= kn && !strncmp(p, key, kn) && (p[kn] == '=' || p + kn == e)) {
            const char *v = p + kn + (p[kn] == '=');
            size_t o = 0;
            for (; v < e && o + 1 < cap; v++) {
                if (*v == '+') out[o++] = ' ';
                else if (*v == '%' && e - v >= 3 && hexval(v[1]) >= 0 && hexval(v[2]) >= 0) {
                    out[o++] = (char)(hexval(v[1]) * 16 + hexval(v[2]));
                    v += 2;
                } else out[o++] = *v;
            }
            out[o] = 0;
            return 1;
        }
        p = amp ? amp + 1 : e;
    }
    return 0;
}

char *vx_srv_base64(const uint8_t *p, size_t n) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *s = malloc((n + 2) / 3 * 4 + 1), *o = s;
    if (!s) return NULL;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = t[v >> 18], *o++ = t[(v >> 12) & 63], *o++ = t[(v >> 6) & 63], *o++ = t[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        *o++ = t[v >> 18], *o++ = t[(v >> 12) & 63], *o++ = '=', *o++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        *o++ = t[v >> 18], *o++ = t[(v >> 12) & 63], *o++ = t[(v >> 6) & 63], *o++ = '=';
    }
    *o = 0;
    return s;
}

/* ---- error messages for clients ---- */

static int path_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '.' ||
           c == '_' || c == '-' || c == '~' || c == '+';
}

void vx_srv_scrub_paths(const char *msg, const char *const *paths, const char *const *names, int n, char *out,
                        size_t cap) {
    size_t o = 0;
#define PUT(p, len)                                                                                             \
    do {                                                                                                         \
        size_t k_ = (len) < cap - 1 - o ? (len) : cap - 1 - o;                                                  \
        memcpy(out + o, p, k_);                                                                                  \
        o += k_;                                                                                                 \
    } while (0)
    if (cap == 0) return;
    for (size_t i = 0; msg[i];) {
        const int word_start = i == 0 || !path_char(msg[i - 1]);
        size_t best = 0;
        int bi = -1;
        for (int k = 0; k < n && word_start; k++) { /* whole words or leading folders only */
            size_t pl = paths[k] ? strlen(paths[k]) : 0;
            if (pl > best && !strncmp(msg + i, paths[k], pl) && (!path_char(msg[i + pl]) || msg[i + pl] == '/'))
                best = pl, bi = k;
        }
        if (bi >= 0) { /* a path the server knows: its name */
            PUT(names[bi], strlen(names[bi]));
            i += best;
            continue;
        }
        if (word_start && (msg[i] == '/' || msg[i] == '~' || !strncmp(msg + i, "./", 2) || !strncmp(msg + i, "../", 3))) {
            /* another absolute or relative path: only its last component */
            size_t j = i, slash = (size_t)-1;
            for (; path_char(msg[j]); j++)
                if (msg[j] == '/' && path_char(msg[j + 1])) slash = j;
            size_t from = slash == (size_t)-1 ? i : slash + 1;
            PUT(msg + from, j - from);
            i = j;
            continue;
        }
        PUT(msg + i, (size_t)1);
        i++;
    }
#undef PUT
    out[o] = 0;
}
