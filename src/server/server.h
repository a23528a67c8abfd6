/* `vocis serve`: an OpenAI-compatible HTTP speech server (libmicrohttpd) on
 * the public API (include/vocis.h). server.c runs it; proto.c holds the pure
 * request parsing / routing / JSON helpers (no sockets, fuzzed by
 * tests/fuzz/fuzz_server.c); encode.c turns samples into mp3/opus/flac/wav/pcm
 * bytes with libsndfile; webpage.c is the page served at "/". */
#ifndef VX_SERVER_H
#define VX_SERVER_H

#include <stddef.h>
#include <stdint.h>

#define VX_SRV_MAX_MODELS 8
#define VX_SRV_MAX_WORKERS 16 /* concurrent requests per model */

typedef struct vx_server_config {
    const char *models[VX_SRV_MAX_MODELS]; /* "DIR" or "NAME=DIR"; the first is the default */
    int n_models;
    const char *voices_dir;  /* saved voices (NULL = none: voice upload refused) */
    const char *host;        /* "127.0.0.1" */
    int port;                /* 0 = any free port */
    const char *port_file;   /* write the bound port here once listening (NULL = no) */
    const char *api_key;     /* NULL = no authentication */
    const char *config_path; /* hyper-parameter override file for every model */
    int max_queue;           /* requests waiting or running per model before 429 */
    int batch;               /* requests of one Chatterbox model run at once, their T3 steps batched (4) */
    int max_chars;           /* longest input, in characters */
    size_t max_body;         /* largest JSON body, bytes */
    size_t max_upload;       /* largest voice upload, bytes */
    double request_timeout;  /* seconds a request may take, queue included */
    int idle_timeout;        /* seconds a connection may send or take nothing */
    double header_timeout;   /* seconds from a connection's start (or its previous request's end plus
                              * idle_timeout) to the end of the request's headers; then it is closed */
    double body_timeout;     /* seconds from the end of the headers to the end of the body */
    int max_header_kb;       /* request line + headers at most, KiB (libmicrohttpd's connection memory) */
    int max_connections;     /* open at most; when all but a reserve are taken, a new one closes the
                              * oldest connection still sending its request */
    int max_per_ip;          /* open connections from one address at most (0 = no limit) */
    int threads;             /* model threads (0 = physical cores) */
    int precision;           /* VOCIS_PRECISION_* (0 = the library's default) */
    int voice_cache_mb;      /* vocis_open_options.voice_cache_mb (0 = the library's default) */
    int quiet;               /* no per-request log lines */
    const char *cors;        /* Access-Control-Allow-Origin: "*" or comma-separated origins (NULL = no CORS) */
} vx_server_config;

void vx_server_config_default(vx_server_config *c);
/* Runs until SIGINT / SIGTERM; returns the process exit status (0 after a clean shutdown). */
int vx_server_run(const vx_server_config *c);

/* ---- proto.c: pure helpers ---------------------------------------------- */

typedef enum {
    VX_R_NONE = 0, VX_R_PAGE, VX_R_HEALTH, VX_R_READY, VX_R_METRICS, VX_R_MODELS, VX_R_MODEL,
    VX_R_SPEECH, VX_R_VOICES, VX_R_VOICE, VX_R_COUNT
} vx_route;

/* Route of a path (query string already stripped); *arg points into path for
 * VX_R_MODEL / VX_R_VOICE (the {id} part). Returns VX_R_NONE when unknown. */
vx_route vx_srv_route(const char *path, const char **arg);
const char *vx_srv_route_name(vx_route r);
/* Methods a route takes ("GET", "GET, POST", ...); 1 when method is one of them. */
const char *vx_srv_route_methods(vx_route r);
int vx_srv_method_ok(vx_route r, const char *method);

/* An error for the client: HTTP status + OpenAI's error object fields. */
typedef struct vx_srv_error {
    int status;
    char type[32];
    char code[40];
    char param[32];
    char message[400];
} vx_srv_error;
void vx_srv_seterr(vx_srv_error *e, int status, const char *code, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* {"error":{"message":...,"type":...,"param":...,"code":...}} (malloc'd). */
char *vx_srv_error_json(const vx_srv_error *e);

typedef enum { VX_FMT_MP3 = 0, VX_FMT_OPUS, VX_FMT_FLAC, VX_FMT_WAV, VX_FMT_PCM } vx_srv_fmt;
const char *vx_srv_fmt_name(vx_srv_fmt f);
const char *vx_srv_fmt_mime(vx_srv_fmt f);

#define VX_SRV_NAME_MAX 64
#define VX_SRV_MAX_VOICES 16 /* names in a 'voice' list (VibeVoice: one per speaker) */

/* A parsed POST /v1/audio/speech body. NaN / -1 = not given (model default). */
typedef struct vx_speech_req {
    char *input;          /* malloc'd UTF-8 */
    size_t input_chars;   /* code points */
    char model[128];
    char voice[128];
    char voices[VX_SRV_MAX_VOICES][128]; /* 'voice' sent as a JSON list: one name per speaker, in order */
    int n_voices;                        /* 0: 'voice' was a string or absent */
    vx_srv_fmt format;
    int stream;           /* 0 = whole file, 1 = chunked audio bytes, 2 = SSE events */
    double speed;
    int64_t seed;         /* -1 = random */
    float temperature, exaggeration, cfg_weight, cfg_scale, min_p, top_p, repetition_penalty;
    int diffusion_steps, cfm_steps, max_new_tokens, top_k;
    char language[16];    /* Chatterbox-Multilingual: a language code; "" = none */
    int stream_tokens;    /* Chatterbox with stream_format: speech tokens before the first audio (0 = the
                             whole-chunk path, sample-identical to a file response); -1 = the model's default */
} vx_speech_req;

/* Parses and validates a speech request (max_chars = longest input).
 * Returns 0, or fills e (400) and returns -1. */
int vx_srv_parse_speech(const char *body, size_t len, int max_chars, vx_speech_req *r, vx_srv_error *e);
void vx_speech_req_free(vx_speech_req *r);

/* Voice / model names: [A-Za-z0-9][A-Za-z0-9._-]{0,63}, no "..". */
int vx_srv_valid_name(const char *s);
/* OpenAI's built-in voice names (alloy, echo, nova, ...). */
int vx_srv_openai_voice(const char *s);
/* OpenAI's model names (tts-1, tts-1-hd, gpt-4o-mini-tts). */
int vx_srv_openai_model(const char *s);

/* One part of a multipart/form-data body (pointers into the body). */
typedef struct vx_form_part {
    char name[64];
    char filename[128];
    const uint8_t *data;
    size_t len;
} vx_form_part;
/* Splits a multipart/form-data body; content_type carries the boundary.
 * Returns the number of parts (at most max), or -1 when malformed. */
int vx_srv_parse_multipart(const char *content_type, const uint8_t *body, size_t len, vx_form_part *parts, int max);
/* Value of query parameter key in a URL-encoded query string into out (decoded);
 * 1 when found. */
int vx_srv_query_get(const char *query, const char *key, char *out, size_t cap);

/* msg for a client: each of the n paths (a voice file, the voices folder, a
 * model folder) replaced by names[i], and any other word that is a path
 * (/..., ~/..., ./..., ../...) cut to its last component, so that no server
 * path leaves the server. */
void vx_srv_scrub_paths(const char *msg, const char *const *paths, const char *const *names, int n, char *out,
                        size_t cap);

/* Standard base64 of n bytes, NUL-terminated (malloc'd). */
char *vx_srv_base64(const uint8_t *p, size_t n);

/* ---- encode.c ----------------------------------------------------------- */

typedef int (*vx_enc_sink)(void *user, const uint8_t *p, size_t n);
typedef struct vx_enc vx_enc;
/* streaming: bytes are handed to sink as the encoder produces them (WAV gets a
 * header with unknown length); otherwise the whole file goes to sink at close
 * (a WAV is then byte-identical to `vocis speak -o x.wav`). NULL on failure with
 * a message in err. */
vx_enc *vx_enc_open(vx_srv_fmt f, int sample_rate, int streaming, vx_enc_sink sink, void *user, char *err,
                    size_t errlen);
int vx_enc_write(vx_enc *e, const float *x, size_t n); /* 0 ok, -1 encoder / sink failure */
int vx_enc_close(vx_enc *e);                          /* flushes and frees; 0 ok */

/* ---- webpage.c ---------------------------------------------------------- */
extern const char vx_srv_webpage[];

#endif
