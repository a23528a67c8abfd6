/* vocis serve: the HTTP server (libmicrohttpd, one thread per connection)
 * on the public API. Each model has a FIFO queue and worker threads: for
 * Chatterbox (all four T3 families) and VibeVoice, --batch workers call
 * vocis_speak at once and the library runs their steps as one batched forward
 * (continuous batching: requests join and leave at any step); Realtime runs
 * one request at a time. A
 * connection thread parses the request, queues a job and waits for its
 * bytes; streaming responses hand the bytes on as the worker's encoder
 * produces them. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sndfile.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/limits.h"
#include "base/threads.h"
#include "io/outfile.h"
#include "models/vibevoice/processor.h"
#include "server/server.h"
#include "vocis.h"

void vx_server_config_default(vx_server_config *c) {
    memset(c, 0, sizeof *c);
    c->host = "127.0.0.1";
    c->port = 8080;
    c->max_queue = 16;
    c->batch = 4;
    c->max_chars = 4096;
    c->max_body = 1 << 20;
    c->max_upload = 16 << 20;
    c->request_timeout = 300;
    c->idle_timeout = 30;
    c->header_timeout = 10;
    c->body_timeout = 60;
    c->max_header_kb = 32;
    c->max_connections = 64;
}

/* ---- types ---- */

typedef struct server server;
typedef struct job job;

/* An open connection as the guard sees it (socket context of libmicrohttpd's
 * connection notifications): what it is doing and until when it may. */
enum { CONN_HEADERS, CONN_BODY, CONN_ACTIVE };
typedef struct conn {
    struct conn *prev, *next;
    int fd;
    int phase;       /* CONN_*: sending headers / sending the body / being answered */
    double since;    /* start of the phase */
    double deadline; /* for CONN_HEADERS and CONN_BODY: closed when passed */
    int dropped;     /* shut down by the guard: its thread is closing it */
} conn;

typedef struct srv_model {
    char name[128];
    char kind[48]; /* vocis_model_kind: "chatterbox-multilingual", "vibevoice-realtime", ... */
    const char *dir;
    vocis_model *m;
    server *srv;
    pthread_t thr[VX_SRV_MAX_WORKERS];
    int n_thr; /* workers started: several when the model batches concurrent requests */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *head, *tail;
    int queued;  /* waiting + running */
    int running;
    double busy_s, n_done; /* for Retry-After estimates */
} srv_model;

enum { JOB_SPEAK, JOB_CLONE };

struct job {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    int kind;
    srv_model *sm;
    server *srv;
    job *next;
    vx_speech_req req;
    char voice_path[1200]; /* "" = built-in */
    char ref_path[1200];   /* the saved recording of that voice ("" = none): cloned when voice_path is for another model */
    char (*script_voice)[1200]; /* NULL, or VibeVoice: the recordings of req.voices[0 .. req.n_voices) (malloc'd) */
    /* clone */
    char upload_path[1200], voice_out[1200];
    float clone_exaggeration;
    char warning[300];
    int voice_failed;                /* the chosen voice could not be loaded for this model */
    int text_tokens, speech_tokens; /* as last reported by the library (vocis_progress) */
    unsigned long long req_id;      /* the request's id, for log lines */
    atomic_int cancel;
    int timed_out;
    int sse_ended; /* the SSE stream's last event (done or error) is queued: it ends cleanly */
    double t_enq, t_start, t_end, deadline;
    /* output (guarded by mu) */
    uint8_t *out;
    size_t out_len, out_cap;
    size_t total_out;
    int done;
    vocis_status st;
    char errmsg[400];
    size_t samples;
    int sample_rate;
    /* worker-only */
    vx_enc *enc;
    uint8_t *pend;
    size_t pend_len, pend_cap;
};

#define N_STATUS 14
static const int status_codes[N_STATUS] = {200, 201, 204, 400, 401, 404, 405, 409, 413, 429, 500, 503, 0, 0};
#define N_RTF_BUCKETS 8
static const double rtf_buckets[N_RTF_BUCKETS] = {0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10};

struct server {
    const vx_server_config *cfg;
    srv_model models[VX_SRV_MAX_MODELS];
    int n_models;
    struct MHD_Daemon *d;
    atomic_int stopping, hard_stop, quit_workers;
    atomic_ullong next_id;
    char voices_dir[1024];
    pthread_mutex_t mmu; /* metrics */
    unsigned long long req_count[VX_R_COUNT][N_STATUS];
    double audio_seconds, chars_total;
    unsigned long long rtf_hist[N_RTF_BUCKETS + 1];
    double rtf_sum;
    unsigned long long rtf_n;
    atomic_int inflight_conns;
    /* connection guard: every open connection, oldest first (cmu) */
    pthread_mutex_t cmu;
    conn *conns_head, *conns_tail;
    int n_conns;                               /* open and not dropped */
    unsigned long long dropped_slow, dropped_full; /* past their deadline / for a new connection */
    pthread_t guard_thr;
};

typedef struct rq {
    unsigned long long id;
    double t0;
    vx_route route;
    const char *arg;
    char method[8];
    char path[200];
    int status;
    uint8_t *body;
    size_t len, cap, limit;
    int too_big;
    int responded;
    job *job;
    struct MHD_Connection *conn;
    char model[128];
    char cors[256]; /* Access-Control-Allow-Origin of the answer ("" = none) */
} rq;

/* ---- jobs ---- */

static job *job_new(server *s, srv_model *sm, int kind) {
    job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    j->refs = 1;
    j->kind = kind;
    j->sm = sm;
    j->srv = s;
    j->t_enq = vx_now_s();
    j->deadline = j->t_enq + s->cfg->request_timeout;
    return j;
}

static void job_unref(job *j) {
    if (!j) return;
    pthread_mutex_lock(&j->mu);
    int r = --j->refs;
    pthread_mutex_unlock(&j->mu);
    if (r) return;
    vx_speech_req_free(&j->req);
    free(j->script_voice);
    free(j->out);
    free(j->pend);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}

static int job_append(job *j, const uint8_t *p, size_t n) {
    pthread_mutex_lock(&j->mu);
    if (j->out_len + n > j->out_cap) {
        size_t c = j->out_cap ? j->out_cap : 65536;
        while (c < j->out_len + n) c *= 2;
        uint8_t *b = realloc(j->out, c);
        if (!b) {
            pthread_mutex_unlock(&j->mu);
            return -1;
        }
        j->out = b, j->out_cap = c;
    }
    memcpy(j->out + j->out_len, p, n);
    j->out_len += n;
    j->total_out += n;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return 0;
}

static int job_stop_wanted(job *j) {
    if (atomic_load(&j->cancel) || atomic_load(&j->srv->hard_stop)) return 1;
    if (vx_now_s() > j->deadline) {
        j->timed_out = 1;
        return 1;
    }
    return 0;
}

/* The error a failed job answers: the client's mistakes (its voice, text or options) are
 * 400, failures of the server (its files, memory, a bug) 500, cancellation 503. The
 * message goes out without server paths; the log keeps it whole. */
static void job_client_error(const job *j, vx_srv_error *e) {
    const server *s = j->srv;
    if (j->timed_out) {
        vx_srv_seterr(e, 503, "timeout", NULL, "the request exceeded the per-request time limit");
        return;
    }
    const char *msg = j->errmsg[0] ? j->errmsg : "failed";
    const int own_voice = j->voice_path[0] || j->upload_path[0] || j->script_voice; /* a saved or uploaded voice */
    int status = 500;
    switch (j->st) {
    case VOCIS_E_CANCELLED: status = 503; break;
    case VOCIS_E_ARG:
    case VOCIS_E_INVALID:
    case VOCIS_E_UNSUPPORTED: status = 400; break;
    case VOCIS_E_FORMAT:
    case VOCIS_E_SHAPE: status = own_voice ? 400 : 500; break; /* the voice does not fit; else the model files */
    default: break;                                             /* IO, NOMEM, INTERNAL: the server's */
    }
    const int voice_err = status == 400 && (j->voice_failed || j->st == VOCIS_E_FORMAT || j->st == VOCIS_E_SHAPE);
    const char *code = status == 503   ? "unavailable"
                       : status == 500 ? "synthesis_failed"
                       : voice_err     ? "invalid_voice"
                                       : "invalid_request";
    const char *paths[6 + VX_SRV_MAX_MODELS + VX_SRV_MAX_VOICES], *names[6 + VX_SRV_MAX_MODELS + VX_SRV_MAX_VOICES];
    int n = 0;
    for (int i = 0; j->script_voice && i < j->req.n_voices; i++) paths[n] = j->script_voice[i], names[n++] = j->req.voices[i];
    const char *vname = j->kind == JOB_SPEAK && j->req.voice[0] ? j->req.voice : "default";
    paths[n] = j->voice_path, names[n++] = vname;
    paths[n] = j->ref_path, names[n++] = vname;
    paths[n] = j->upload_path, names[n++] = "the upload";
    paths[n] = j->voice_out, names[n++] = "the voice file";
    paths[n] = s->voices_dir, names[n++] = "voices";
    paths[n] = s->cfg->config_path, names[n++] = "the config file";
    for (int i = 0; i < s->n_models; i++) paths[n] = s->models[i].dir, names[n++] = s->models[i].name;
    char clean[sizeof e->message];
    vx_srv_scrub_paths(msg, paths, names, n, clean, sizeof clean);
    if (!s->cfg->quiet) fprintf(stderr, "vocis serve: model %s: %s failed: %s\n", j->sm->name,
                                j->kind == JOB_SPEAK ? "speech" : "voice cloning", msg);
    vx_srv_seterr(e, status, code, voice_err ? "voice" : NULL, "%s", clean);
}

/* ---- worker ---- */

static int sink_pend(void *u, const uint8_t *p, size_t n) {
    job *j = u;
    if (j->pend_len + n > j->pend_cap) {
        size_t c = j->pend_cap ? j->pend_cap : 65536;
        while (c < j->pend_len + n) c *= 2;
        uint8_t *b = realloc(j->pend, c);
        if (!b) return -1;
        j->pend = b, j->pend_cap = c;
    }
    memcpy(j->pend + j->pend_len, p, n);
    j->pend_len += n;
    return 0;
}

static int sink_out(void *u, const uint8_t *p, size_t n) { return job_append(u, p, n); }

/* SSE: pending encoded bytes -> one speech.audio.delta event */
static int sse_flush(job *j) {
    if (!j->pend_len) return 0;
    char *b64 = vx_srv_base64(j->pend, j->pend_len);
    if (!b64) return -1;
    size_t n = strlen(b64);
    char *ev = malloc(n + 80);
    int rc = -1;
    if (ev) {
        int k = snprintf(ev, n + 80, "data: {\"type\":\"speech.audio.delta\",\"audio\":\"%s\"}\n\n", b64);
        rc = job_append(j, (const uint8_t *)ev, (size_t)k);
        free(ev);
    }
    free(b64);
    j->pend_len = 0;
    return rc;
}

static int on_progress(void *u, const vocis_progress *p) {
    job *j = u;
    j->text_tokens = p->text_tokens;
    j->speech_tokens = p->speech_tokens;
    return job_stop_wanted(j);
}

static int on_audio(void *u, const float *x, size_t n, int sr) {
    job *j = u;
    if (job_stop_wanted(j)) return 1;
    if (!j->enc) {
        char err[200];
        j->sample_rate = sr;
        j->enc = vx_enc_open(j->req.format, sr, 1, j->req.stream == 2 ? sink_pend : sink_out, j, err, sizeof err);
        if (!j->enc) {
            snprintf(j->errmsg, sizeof j->errmsg, "%s", err);
            return 1;
        }
    }
    if (vx_enc_write(j->enc, x, n)) return 1;
    if (j->req.stream == 2 && sse_flush(j)) return 1;
    pthread_mutex_lock(&j->mu);
    j->samples += n;
    pthread_mutex_unlock(&j->mu);
    return 0;
}

static void on_warning(void *u, const char *msg) {
    job *j = u;
    if (!j->srv->cfg->quiet) fprintf(stderr, "vocis serve: req=%llu warning: %s\n", j->req_id, msg);
}

static void run_speak(job *j) {
    vocis_model *m = j->sm->m;
    vocis_voice *voice = NULL;
    vocis_audio a = {0};
    vocis_status st = VOCIS_OK;
    const vx_speech_req *r = &j->req;
    vocis_voice *speakers[VX_SRV_MAX_VOICES] = {0};
    for (int i = 0; j->script_voice && i < r->n_voices && !st; i++) {
        st = vocis_voice_load(m, j->script_voice[i], &speakers[i]);
        if (st) snprintf(j->errmsg, sizeof j->errmsg, "voice[%d] '%s': %s", i, r->voices[i], vocis_errmsg(m));
        j->voice_failed = st != VOCIS_OK;
    }
    if (!j->script_voice && (j->voice_path[0] || strcmp(j->sm->kind, "vibevoice"))) {
        st = vocis_voice_load(m, j->voice_path[0] ? j->voice_path : NULL, &voice);
        if (st == VOCIS_E_INVALID && j->ref_path[0]) st = vocis_voice_load(m, j->ref_path, &voice);
        if (st) snprintf(j->errmsg, sizeof j->errmsg, "voice '%s': %s", r->voice[0] ? r->voice : "default",
                         vocis_errmsg(m));
        j->voice_failed = st != VOCIS_OK;
    }
    if (!st) {
        vocis_speak_options o;
        vocis_speak_options_for_model(m, &o); /* Realtime's own CFG and steps, as vocis speak */
        o.t3.seed = r->seed;
        if (r->language[0]) o.t3.language = r->language;
        if (!isnan(r->temperature)) o.t3.temperature = r->temperature;
        if (!isnan(r->exaggeration)) o.t3.exaggeration = r->exaggeration;
        if (!isnan(r->cfg_weight)) o.t3.cfg_weight = r->cfg_weight;
        if (!isnan(r->min_p)) o.t3.min_p = r->min_p;
        if (!isnan(r->top_p)) o.t3.top_p = r->top_p;
        if (r->top_k >= 0) o.t3.top_k = r->top_k;
        if (!isnan(r->repetition_penalty)) o.t3.repetition_penalty = r->repetition_penalty;
        if (r->max_new_tokens > 0) o.t3.max_new_tokens = r->max_new_tokens;
        if (!isnan(r->cfg_scale)) o.vv.cfg_scale = r->cfg_scale;
        if (r->diffusion_steps > 0) o.vv.diffusion_steps = r->diffusion_steps;
        if (r->cfm_steps > 0) o.cfm_steps = r->cfm_steps;
        o.on_progress = on_progress;
        if (r->stream) { /* Chatterbox: audio while T3 generates (stream_tokens 0: the whole-chunk path) */
            o.on_audio = on_audio;
            o.stream_tokens = r->stream_tokens < 0 ? VOCIS_STREAM_AUTO : r->stream_tokens;
        }
        o.on_warning = on_warning;
        o.user = j;
        st = j->script_voice
                 ? vocis_speak_script(m, (const vocis_voice *const *)speakers, r->n_voices, r->input, &o, &a)
                 : vocis_speak(m, voice, r->input, &o, &a);
        if (st && !j->errmsg[0]) snprintf(j->errmsg, sizeof j->errmsg, "%s", vocis_errmsg(m));
    }
    if (!st && !r->stream) { /* the whole file at once */
        char err[200];
        j->sample_rate = a.sample_rate;
        vx_enc *e = vx_enc_open(r->format, a.sample_rate, 0, sink_out, j, err, sizeof err);
        if (!e || vx_enc_write(e, a.samples, a.n) || vx_enc_close(e)) {
            st = VOCIS_E_INTERNAL;
            snprintf(j->errmsg, sizeof j->errmsg, "encoding %s failed%s%s", vx_srv_fmt_name(r->format), e ? "" : ": ",
                     e ? "" : err);
        }
        pthread_mutex_lock(&j->mu);
        j->samples = a.n;
        pthread_mutex_unlock(&j->mu);
    }
    if (r->stream) {
        if (!st && !j->enc) { /* no audio at all: still a valid (empty) stream */
            char err[200];
            j->enc = vx_enc_open(r->format, 24000, 1, r->stream == 2 ? sink_pend : sink_out, j, err, sizeof err);
        }
        if (j->enc && vx_enc_close(j->enc) && !st) st = VOCIS_E_INTERNAL;
        j->enc = NULL;
        if (r->stream == 2) {
            char ev[700];
            if (!st) {
                sse_flush(j);
                double secs = j->sample_rate ? (double)j->samples / j->sample_rate : 0;
                int k = snprintf(ev, sizeof ev,
                                 "data: {\"type\":\"speech.audio.done\",\"usage\":{\"input_tokens\":%d,"
                                 "\"output_tokens\":%d,\"total_tokens\":%d},\"audio_seconds\":%.3f,"
                                 "\"seed\":%lld}\n\n",
                                 j->text_tokens, j->speech_tokens, j->text_tokens + j->speech_tokens, secs,
                                 (long long)r->seed);
                job_append(j, (const uint8_t *)ev, (size_t)k);
                j->sse_ended = 1;
            } else if (st != VOCIS_E_CANCELLED || j->timed_out) {
                j->st = st;
                vx_srv_error e;
                job_client_error(j, &e);
                char *js = vx_srv_error_json(&e);
                if (js) {
                    int k = snprintf(ev, sizeof ev, "data: {\"type\":\"error\",%s\n\n", js + 1);
                    job_append(j, (const uint8_t *)ev, (size_t)k);
                    j->sse_ended = 1;
                    free(js);
                }
            }
        }
    }
    vocis_audio_free(&a);
    vocis_voice_free(voice);
    for (int i = 0; i < VX_SRV_MAX_VOICES; i++) vocis_voice_free(speakers[i]);
    j->st = st;
}

/* 1 when libsndfile reads the file as audio of at least one frame; else a message in err. */
static int readable_audio(const char *path, char *err, size_t cap) {
    SF_INFO info = {0};
    SNDFILE *f = sf_open(path, SFM_READ, &info);
    if (!f) {
        snprintf(err, cap, "the upload is not an audio file that can be read (%s)", sf_strerror(NULL));
        return 0;
    }
    sf_close(f);
    if (info.frames < 1 || info.samplerate < 1) snprintf(err, cap, "the uploaded recording holds no audio");
    return info.frames >= 1 && info.samplerate >= 1;
}

/* An upload checked and saved for its model before the 201: Chatterbox clones the recording
 * into voice_out (NAME.voice; the recording is kept as NAME.ref), VibeVoice-Realtime loads the
 * preset (.pt or vocis voice file) and saves it as NAME.voice, VibeVoice checks that the
 * recording reads (kept as NAME.ref, read when speaking). */
static void run_clone(job *j) {
    vocis_model *m = j->sm->m;
    vocis_voice *v = NULL;
    vocis_status st;
    j->voice_failed = 1; /* a failure is the upload's (400 invalid_voice) unless it is the server's (job_client_error) */
    const char *kind = j->sm->kind;
    if (!strcmp(kind, "vibevoice")) {
        st = vocis_voice_load(m, j->upload_path, &v);
        if (st) snprintf(j->errmsg, sizeof j->errmsg, "%s", vocis_errmsg(m));
        else if (!readable_audio(j->upload_path, j->errmsg, sizeof j->errmsg)) st = VOCIS_E_FORMAT;
        vocis_voice_free(v);
        j->st = st;
        return;
    }
    if (!strcmp(kind, "vibevoice-realtime")) {
        st = vocis_voice_load(m, j->upload_path, &v);
    } else {
        vocis_clone_options co;
        vocis_clone_options_default(&co);
        if (!isnan(j->clone_exaggeration)) co.exaggeration = j->clone_exaggeration;
        st = vocis_voice_clone(m, j->upload_path, &co, &v);
    }
    if (!st) st = vocis_voice_save(m, v, j->voice_out);
    if (st) snprintf(j->errmsg, sizeof j->errmsg, "%s", vocis_errmsg(m));
    else snprintf(j->warning, sizeof j->warning, "%s", vocis_voice_warning(v));
    vocis_voice_free(v);
    j->st = st;
}

static void *worker_main(void *arg) {
    srv_model *sm = arg;
    for (;;) {
        pthread_mutex_lock(&sm->mu);
        while (!sm->head && !atomic_load(&sm->srv->quit_workers)) pthread_cond_wait(&sm->cv, &sm->mu);
        job *j = sm->head;
        if (!j) {
            pthread_mutex_unlock(&sm->mu);
            return NULL;
        }
        sm->head = j->next;
        if (!sm->head) sm->tail = NULL;
        sm->running++;
        pthread_mutex_unlock(&sm->mu);

        j->t_start = vx_now_s();
        if (atomic_load(&j->cancel) || atomic_load(&sm->srv->stopping) || job_stop_wanted(j)) {
            j->st = VOCIS_E_CANCELLED;
            snprintf(j->errmsg, sizeof j->errmsg, "%s",
                     j->timed_out ? "the request timed out in the queue" : "the server is shutting down");
        } else if (j->kind == JOB_SPEAK) {
            run_speak(j);
        } else {
            run_clone(j);
        }
        j->t_end = vx_now_s();
        pthread_mutex_lock(&sm->mu);
        sm->running--;
        sm->queued--;
        sm->busy_s += j->t_end - j->t_start;
        sm->n_done += 1;
        pthread_mutex_unlock(&sm->mu);
        pthread_mutex_lock(&j->mu);
        j->done = 1;
        pthread_cond_broadcast(&j->cv);
        pthread_mutex_unlock(&j->mu);
        job_unref(j);
    }
}

/* 0 queued; else the Retry-After seconds (queue full) or -1 (stopping) */
static int enqueue(srv_model *sm, job *j) {
    server *s = sm->srv;
    pthread_mutex_lock(&sm->mu);
    if (atomic_load(&s->stopping)) {
        pthread_mutex_unlock(&sm->mu);
        return -1;
    }
    if (sm->queued >= s->cfg->max_queue) {
        double avg = sm->n_done > 0 ? sm->busy_s / sm->n_done : 1.0;
        int ra = (int)ceil(avg * sm->queued);
        pthread_mutex_unlock(&sm->mu);
        return ra < 1 ? 1 : ra > 3600 ? 3600 : ra;
    }
    j->refs++; /* the worker's */
    if (sm->tail) sm->tail->next = j;
    else sm->head = j;
    sm->tail = j;
    sm->queued++;
    pthread_cond_signal(&sm->cv);
    pthread_mutex_unlock(&sm->mu);
    return 0;
}

/* ---- connections ---- */

static int client_gone(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return 0;
    struct pollfd p = {ci->connect_fd, POLLRDHUP, 0};
    if (poll(&p, 1, 0) <= 0) return 0;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/* waits until the job is done (need_done) or has output; -1 when the client went away */
static int wait_job(struct MHD_Connection *c, job *j, int need_done) {
    pthread_mutex_lock(&j->mu);
    while (!j->done && (need_done || j->out_len == 0)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&j->cv, &j->mu, &ts);
        if (j->done) break;
        pthread_mutex_unlock(&j->mu);
        int gone = client_gone(c);
        pthread_mutex_lock(&j->mu);
        if (gone) {
            atomic_store(&j->cancel, 1);
            pthread_mutex_unlock(&j->mu);
            return -1;
        }
    }
    pthread_mutex_unlock(&j->mu);
    return 0;
}

static void count_status(server *s, vx_route r, int status) {
    int k = N_STATUS - 1;
    for (int i = 0; i < N_STATUS - 2; i++)
        if (status_codes[i] == status) k = i;
    pthread_mutex_lock(&s->mmu);
    s->req_count[r][k]++;
    pthread_mutex_unlock(&s->mmu);
}

static enum MHD_Result queue(struct MHD_Connection *c, rq *q, int status, struct MHD_Response *resp) {
    if (!resp) return MHD_NO;
    char id[32];
    snprintf(id, sizeof id, "%llu", q->id);
    MHD_add_response_header(resp, "X-Request-Id", id);
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    if (q->cors[0]) {
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", q->cors);
        MHD_add_response_header(resp, "Access-Control-Expose-Headers", "X-Request-Id, Retry-After");
        if (strcmp(q->cors, "*")) MHD_add_response_header(resp, "Vary", "Origin");
    }
    q->status = status;
    q->responded = 1;
    enum MHD_Result r = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return r;
}

static enum MHD_Result send_buf(struct MHD_Connection *c, rq *q, int status, const char *ctype, void *buf, size_t n,
                                int take) {
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(n, buf, take ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
    if (!resp) {
        if (take) free(buf);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", ctype);
    return queue(c, q, status, resp);
}

static enum MHD_Result send_json(struct MHD_Connection *c, rq *q, int status, char *json /* taken */) {
    if (!json) return MHD_NO;
    return send_buf(c, q, status, "application/json", json, strlen(json), 1);
}

static enum MHD_Result send_error_hdr(struct MHD_Connection *c, rq *q, const vx_srv_error *e, const char *hname,
                                      const char *hval) {
    char *js = vx_srv_error_json(e);
    if (!js) return MHD_NO;
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(js), js, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(js);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    if (hname) MHD_add_response_header(resp, hname, hval);
    return queue(c, q, e->status, resp);
}

static enum MHD_Result send_error(struct MHD_Connection *c, rq *q, const vx_srv_error *e) {
    return send_error_hdr(c, q, e, NULL, NULL);
}

static enum MHD_Result fail(struct MHD_Connection *c, rq *q, int status, const char *code, const char *param,
                            const char *msg) {
    vx_srv_error e;
    vx_srv_seterr(&e, status, code, param, "%s", msg);
    return send_error(c, q, &e);
}

/* ---- models / voices ---- */

static srv_model *find_model(server *s, const char *name) {
    if (!name[0] || vx_srv_openai_model(name)) return &s->models[0];
    for (int i = 0; i < s->n_models; i++)
        if (!strcmp(s->models[i].name, name)) return &s->models[i];
    return NULL;
}

static int file_exists(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* saved voice files of a name: .voice (Chatterbox conditioning) and .ref (the recording) */
static void voice_paths(server *s, const char *name, char *voice, char *ref, size_t cap) {
    snprintf(voice, cap, "%s/%s.voice", s->voices_dir, name);
    snprintf(ref, cap, "%s/%s.ref", s->voices_dir, name);
}

static char *models_json(server *s, const char *only) {
    cJSON *root = cJSON_CreateObject(), *data = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "object", "list");
    cJSON_AddItemToObject(root, "data", data);
    cJSON *found = NULL;
    static const char *const aliases[] = {"tts-1", "tts-1-hd", "gpt-4o-mini-tts"};
    for (int i = 0; i < s->n_models + 3; i++) {
        const char *id = i < s->n_models ? s->models[i].name : aliases[i - s->n_models];
        if (only && strcmp(only, id)) continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", id);
        cJSON_AddStringToObject(o, "object", "model");
        cJSON_AddNumberToObject(o, "created", 0);
        cJSON_AddStringToObject(o, "owned_by", "vocis");
        const srv_model *sm = &s->models[i < s->n_models ? i : 0];
        cJSON_AddStringToObject(o, "kind", sm->kind);
        if (i >= s->n_models) cJSON_AddStringToObject(o, "alias_of", sm->name);
        cJSON_AddNumberToObject(o, "batch", sm->n_thr); /* requests of this model run at once */
        const char *langs = vocis_model_languages(sm->m);
        if (langs) { /* "ar, da, de, ..." -> ["ar", "da", "de", ...] */
            cJSON *a = cJSON_AddArrayToObject(o, "languages");
            for (const char *p = langs; *p;) {
                size_t k = strcspn(p, ", ");
                char code[16];
                snprintf(code, sizeof code, "%.*s", (int)(k < sizeof code ? k : sizeof code - 1), p);
                if (k) cJSON_AddItemToArray(a, cJSON_CreateString(code));
                p += k;
                p += strspn(p, ", ");
            }
        }
        if (only) found = o;
        else cJSON_AddItemToArray(data, o);
    }
    char *js = NULL;
    if (only) js = found ? cJSON_PrintUnformatted(found) : NULL;
    else js = cJSON_PrintUnformatted(root);
    cJSON_Delete(found);
    cJSON_Delete(root);
    return js;
}

/* 1 when a model has a built-in voice (Chatterbox's conds.pt), which "default" and OpenAI's names select. */
static int has_builtin_voice(server *s) {
    for (int i = 0; i < s->n_models; i++)
        if (!strncmp(s->models[i].kind, "chatterbox", 10) && strcmp(s->models[i].kind, "chatterbox-vc")) return 1;
    return 0;
}

static int builtin_voice(server *s, const char *name) {
    return has_builtin_voice(s) && (!strcmp(name, "default") || vx_srv_openai_voice(name));
}

static cJSON *voice_obj(const char *name, const char *type) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", name);
    cJSON_AddStringToObject(o, "object", "voice");
    cJSON_AddStringToObject(o, "type", type);
    return o;
}

/* The object's JSON text; the object is freed. */
static char *json_text_of(cJSON *o) {
    char *js = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return js;
}

static char *voices_json(server *s) {
    cJSON *root = cJSON_CreateObject(), *data = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "object", "list");
    cJSON_AddItemToObject(root, "data", data);
    char saved[256][VX_SRV_NAME_MAX + 8];
    int ns = 0;
    if (s->voices_dir[0]) {
        DIR *d = opendir(s->voices_dir);
        struct dirent *de;
        while (d && (de = readdir(d)) && ns < 256) {
            size_t n = strlen(de->d_name);
            const char *ext = n > 6 && !strcmp(de->d_name + n - 6, ".voice") ? ".voice"
                              : n > 4 && !strcmp(de->d_name + n - 4, ".ref") ? ".ref"
                                                                             : NULL;
            if (!ext) continue;
            char nm[VX_SRV_NAME_MAX + 80];
            size_t k = n - strlen(ext);
            if (k > VX_SRV_NAME_MAX) continue;
            memcpy(nm, de->d_name, k);
            nm[k] = 0;
            if (!vx_srv_valid_name(nm)) continue;
            int dup = 0;
            for (int i = 0; i < ns; i++) dup |= !strcmp(saved[i], nm);
            if (!dup) memcpy(saved[ns++], nm, k + 1);
        }
        if (d) closedir(d);
    }
    for (int i = 0; i < ns; i++) cJSON_AddItemToArray(data, voice_obj(saved[i], "saved"));
    if (has_builtin_voice(s)) {
        static const char *const builtin[] = {"default", "alloy", "ash",  "ballad",  "coral", "echo",  "fable",
                                              "onyx",    "nova",  "sage", "shimmer", "verse", "marin", "cedar"};
        for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
            int dup = 0;
            for (int k = 0; k < ns; k++) dup |= !strcmp(saved[k], builtin[i]);
            if (!dup) cJSON_AddItemToArray(data, voice_obj(builtin[i], "builtin"));
        }
    }
    char *js = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return js;
}

/* ---- connection guard ----
 * libmicrohttpd's own timeout is an idle one that every byte resets, so a client
 * sending its request a byte a second would hold a connection (and its thread)
 * for ever, and once --max-connections of them are open nothing more is
 * accepted, /health included. The guard closes a connection whose headers are
 * not in within header_timeout of its start, or whose body is not in within
 * body_timeout of its headers, and keeps the last eighth of the connections
 * for new arrivals: once the others are taken, each new connection closes the
 * oldest one still sending its request. One whose whole headers wait unread in
 * the socket (a health probe accepted in a burst of slow clients, its thread
 * not yet run) is not slow and is kept, as is one younger than CONN_GRACE_S
 * (its request may still be on the way). Shutting the socket down makes the
 * connection's thread close it; the fd stays valid while cmu is held, as
 * libmicrohttpd notifies the close (conn_notify) before closing the fd. */

#define CONN_GRACE_S 0.02

/* connections that may be open before a new one closes an old one */
static int conn_quota(const vx_server_config *c) { return c->max_connections - (c->max_connections + 7) / 8; }

/* 1 when a whole request head waits in the socket, unread */
static int headers_waiting(int fd) {
    char b[8192];
    const ssize_t n = recv(fd, b, sizeof b, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 && memmem(b, (size_t)n, "\r\n\r\n", 4) != NULL;
}

/* the oldest connection still sending its request, or NULL (cmu held) */
static conn *conn_slowest(server *s, double now) {
    for (conn *k = s->conns_head; k; k = k->next)
        if (!k->dropped && k->phase != CONN_ACTIVE && now - k->since >= CONN_GRACE_S &&
            !(k->phase == CONN_HEADERS && headers_waiting(k->fd)))
            return k;
    return NULL;
}

static void conn_drop(server *s, conn *k, int for_new) {
    shutdown(k->fd, SHUT_RDWR);
    k->dropped = 1;
    s->n_conns--;
    if (for_new) s->dropped_full++;
    else s->dropped_slow++;
}

static void conn_notify(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode code) {
    server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn *k = *ctx;
        if (!k) return;
        pthread_mutex_lock(&s->cmu);
        if (k->prev) k->prev->next = k->next;
        else s->conns_head = k->next;
        if (k->next) k->next->prev = k->prev;
        else s->conns_tail = k->prev;
        if (!k->dropped) s->n_conns--;
        pthread_mutex_unlock(&s->cmu);
        free(k);
        *ctx = NULL;
        return;
    }
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    conn *k = ci ? calloc(1, sizeof *k) : NULL;
    *ctx = k;
    if (!k) return; /* unguarded: libmicrohttpd's idle timeout still applies */
    k->fd = ci->connect_fd;
    k->phase = CONN_HEADERS;
    k->since = vx_now_s();
    k->deadline = k->since + s->cfg->header_timeout;
    pthread_mutex_lock(&s->cmu);
    conn *old = s->n_conns >= conn_quota(s->cfg) ? conn_slowest(s, k->since) : NULL;
    if (old) conn_drop(s, old, 1);
    k->prev = s->conns_tail;
    if (s->conns_tail) s->conns_tail->next = k;
    else s->conns_head = k;
    s->conns_tail = k;
    s->n_conns++;
    pthread_mutex_unlock(&s->cmu);
}

/* The connection of c enters phase, which it may stay in for timeout seconds (CONN_ACTIVE: no limit). */
static void conn_phase(server *s, struct MHD_Connection *c, int phase, double timeout) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    conn *k = ci ? ci->socket_context : NULL;
    if (!k) return;
    pthread_mutex_lock(&s->cmu);
    k->phase = phase;
    k->since = vx_now_s();
    k->deadline = k->since + timeout;
    pthread_mutex_unlock(&s->cmu);
}

static void *guard_main(void *arg) {
    server *s = arg;
    while (!atomic_load(&s->quit_workers)) {
        usleep(20 * 1000);
        const double now = vx_now_s();
        pthread_mutex_lock(&s->cmu);
        for (conn *k = s->conns_head; k; k = k->next)
            if (!k->dropped && k->phase != CONN_ACTIVE && now > k->deadline) conn_drop(s, k, 0);
        /* a burst that took the reserve while every other connection was young: new ones
         * wait in the listen queue until this makes room */
        for (conn *k; s->n_conns > conn_quota(s->cfg) && (k = conn_slowest(s, now));) conn_drop(s, k, 1);
        pthread_mutex_unlock(&s->cmu);
    }
    return NULL;
}

/* ---- handlers ---- */

static enum MHD_Result job_error(struct MHD_Connection *c, rq *q, job *j) {
    vx_srv_error e;
    job_client_error(j, &e);
    return send_error(c, q, &e);
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    rq *q = cls;
    job *j = q->job;
    pthread_mutex_lock(&j->mu);
    for (int guard = 0;; guard++) {
        if (j->out_len > 0) {
            size_t n = j->out_len < max ? j->out_len : max;
            memcpy(buf, j->out, n);
            memmove(j->out, j->out + n, j->out_len - n);
            j->out_len -= n;
            pthread_mutex_unlock(&j->mu);
            return (ssize_t)n;
        }
        if (j->done) {
            /* an SSE error event is the stream's proper end (the terminating chunk follows); a raw
             * audio stream that failed is cut off, so that the client cannot take it as complete */
            int ok = j->st == VOCIS_OK || j->sse_ended;
            pthread_mutex_unlock(&j->mu);
            return ok ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&j->cv, &j->mu, &ts);
        if (j->out_len || j->done) continue;
        pthread_mutex_unlock(&j->mu);
        if (client_gone(q->conn)) {
            atomic_store(&j->cancel, 1);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        pthread_mutex_lock(&j->mu);
        (void)guard;
    }
}

/* The saved voice `name` of a speech request for model sm: *chosen its file (NAME.voice, or the
 * recording NAME.ref; "" for the built-in voice), *ref the recording when *chosen is a voice file
 * made for another model. 0, or e filled (about field param; an unknown name is missing_status). */
static int find_voice(server *s, const srv_model *sm, const char *name, const char *param, int missing_status,
                      char chosen[1200], char ref[1200], vx_srv_error *e) {
    chosen[0] = ref[0] = 0;
    char field[24] = ""; /* a list's element is named in the message, 'voice' itself is not */
    if (strcmp(param, "voice")) snprintf(field, sizeof field, "'%s': ", param);
    if (!vx_srv_valid_name(name)) {
        vx_srv_seterr(e, 400, "invalid_voice", param,
                      "%sinvalid voice name (letters, digits, '.', '_', '-'; at most 64; no '..')", field);
        return -1;
    }
    const int vv = !strcmp(sm->kind, "vibevoice"), rt = !strcmp(sm->kind, "vibevoice-realtime");
    if (s->voices_dir[0]) {
        char vpath[1200], rpath[1200];
        voice_paths(s, name, vpath, rpath, sizeof vpath);
        if (!vv && file_exists(vpath)) snprintf(chosen, 1200, "%s", vpath);
        else if (file_exists(rpath)) snprintf(chosen, 1200, "%s", rpath);
        if (strcmp(chosen, rpath) && file_exists(rpath)) snprintf(ref, 1200, "%s", rpath); /* NAME.voice made for another model */
    }
    if (chosen[0]) return 0;
    if (strcmp(name, "default") && !vx_srv_openai_voice(name)) {
        vx_srv_seterr(e, missing_status, "voice_not_found", param,
                      "%sthe voice '%s' does not exist (GET /v1/voices lists them)", field, name);
        return -1;
    }
    if (vv || rt) {
        vx_srv_seterr(e, 400, "voice_required", param, "%s%s", field,
                      vv ? "VibeVoice has no built-in voice: upload a recording (POST /v1/voices) and name it in 'voice'"
                         : "VibeVoice-Realtime has no built-in voice: upload a voice preset (.pt, POST /v1/voices) "
                           "and name it in 'voice'");
        return -1;
    }
    return 0;
}

/* Speakers of a VibeVoice input, counted as vocis_speak reads it (plain text: one speaker). -1 with
 * the reason in err when the input is a script that cannot be used. */
static int script_speakers(const char *text, vx_err *err) {
    const size_t len = strlen(text);
    if (!vx_vv_script_has_labels(text, len)) return 1;
    char *joined = NULL;
    int n_labels = 0, n = -1;
    vx_vv_script sc = {0};
    if (vx_vv_script_join(text, len, NULL, NULL, &joined, &n_labels, err) == VOCIS_OK) {
        if (!n_labels)
            vx_fail(err, VOCIS_E_ARG, "the text has no 'Speaker N:' lines: write one line per turn as 'Speaker 1: ...'");
        else if (!joined[0])
            vx_fail(err, VOCIS_E_ARG, "the script's 'Speaker N:' lines have no text: write the words after the "
                                       "label, as 'Speaker 1: Hello'");
        else if (vx_vv_script_parse(joined, strlen(joined), NULL, NULL, &sc, err) == VOCIS_OK) n = sc.n_speakers;
    }
    vx_vv_script_free(&sc);
    free(joined);
    return n;
}

/* 'voice' as a list: VibeVoice only, every name a saved recording, one per speaker of the input.
 * file[i] receives voice i's recording; 0, or e filled. */
static int check_voice_list(server *s, const srv_model *sm, const vx_speech_req *r, char (*file)[1200],
                            vx_srv_error *e) {
    if (strcmp(sm->kind, "vibevoice")) {
        vx_srv_seterr(e, 400, "invalid_value", "voice",
                      "'voice' is a list, but model '%s' (%s) speaks with one voice: send one name as a string "
                      "(a list of voices, one per speaker, is for VibeVoice models)", sm->name, sm->kind);
        return -1;
    }
    for (int i = 0; i < r->n_voices; i++) {
        char param[24], ref[1200];
        snprintf(param, sizeof param, "voice[%d]", i);
        if (find_voice(s, sm, r->voices[i], param, 400, file[i], ref, e)) return -1;
    }
    vx_err why = {0};
    const int n = script_speakers(r->input, &why);
    if (n < 0) {
        vx_srv_seterr(e, 400, "invalid_value", "input", "'input': %s", why.msg);
        return -1;
    }
    if (n != r->n_voices) {
        vx_srv_seterr(e, 400, "invalid_value", "voice",
                      "'voice' names %d voice%s but the input has %d speaker%s%s: give one voice per speaker, in "
                      "the order of their numbers", r->n_voices, r->n_voices == 1 ? "" : "s", n, n == 1 ? "" : "s",
                      n == 1 ? " (it has no 'Speaker N:' lines, or one speaker only)" : "");
        return -1;
    }
    return 0;
}

static enum MHD_Result handle_speech(struct MHD_Connection *c, server *s, rq *q) {
    vx_speech_req r;
    vx_srv_error e;
    if (vx_srv_parse_speech((const char *)q->body, q->len, s->cfg->max_chars, &r, &e)) return send_error(c, q, &e);
    srv_model *sm = find_model(s, r.model);
    snprintf(q->model, sizeof q->model, "%s", sm ? sm->name : r.model);
    if (!sm) {
        vx_srv_seterr(&e, 404, "model_not_found", "model", "the model '%s' does not exist (GET /v1/models lists them)",
                      r.model);
        vx_speech_req_free(&r);
        return send_error(c, q, &e);
    }
    char chosen[1200] = "", ref[1200] = "";
    char (*script_voice)[1200] = NULL; /* a list of two voices or more: one file per speaker */
    if (r.n_voices) {
        if (!(script_voice = calloc((size_t)r.n_voices, sizeof *script_voice))) {
            vx_speech_req_free(&r);
            return fail(c, q, 500, "out_of_memory", NULL, "out of memory");
        }
        if (check_voice_list(s, sm, &r, script_voice, &e)) {
            free(script_voice);
            vx_speech_req_free(&r);
            return send_error(c, q, &e);
        }
        if (r.n_voices == 1) { /* one speaker: as 'voice' sent as a string */
            snprintf(r.voice, sizeof r.voice, "%s", r.voices[0]);
            snprintf(chosen, sizeof chosen, "%s", script_voice[0]);
            free(script_voice);
            script_voice = NULL;
        }
    } else if (find_voice(s, sm, r.voice[0] ? r.voice : "default", "voice", 404, chosen, ref, &e)) {
        vx_speech_req_free(&r);
        return send_error(c, q, &e);
    }
    if (vocis_check_language(sm->m, r.language[0] ? r.language : NULL) != VOCIS_OK) {
        free(script_voice);
        vx_srv_seterr(&e, 400, r.language[0] ? "invalid_value" : "missing_required_parameter", "language",
                      "'language': %s", vocis_errmsg(sm->m));
        vx_speech_req_free(&r);
        return send_error(c, q, &e);
    }
    if (r.seed < 0) r.seed = vx_draw_seed(); /* told to the client, so that it can ask for the same audio again */
    job *j = job_new(s, sm, JOB_SPEAK);
    if (!j) {
        free(script_voice);
        vx_speech_req_free(&r);
        return fail(c, q, 500, "out_of_memory", NULL, "out of memory");
    }
    j->req = r;
    j->req_id = q->id;
    j->script_voice = script_voice;
    snprintf(j->voice_path, sizeof j->voice_path, "%s", chosen);
    snprintf(j->ref_path, sizeof j->ref_path, "%s", ref);
    int qr = enqueue(sm, j);
    if (qr) {
        job_unref(j);
        if (qr < 0) return fail(c, q, 503, "shutting_down", NULL, "the server is shutting down");
        char ra[16];
        snprintf(ra, sizeof ra, "%d", qr);
        vx_srv_seterr(&e, 429, "queue_full", NULL, "the queue of model '%s' is full (%d requests); retry after %d s",
                      sm->name, s->cfg->max_queue, qr);
        return send_error_hdr(c, q, &e, "Retry-After", ra);
    }
    q->job = j;
    if (wait_job(c, j, !j->req.stream)) return MHD_NO; /* client gone: the job is cancelled */
    pthread_mutex_lock(&j->mu);
    int failed_early = j->done && j->st != VOCIS_OK && j->total_out == 0;
    pthread_mutex_unlock(&j->mu);
    if (failed_early || (j->done && j->st != VOCIS_OK && !j->req.stream)) return job_error(c, q, j);
    struct MHD_Response *resp;
    if (!j->req.stream) {
        pthread_mutex_lock(&j->mu);
        uint8_t *b = j->out;
        size_t n = j->out_len;
        j->out = NULL, j->out_len = j->out_cap = 0;
        pthread_mutex_unlock(&j->mu);
        resp = MHD_create_response_from_buffer(n, b ? b : (uint8_t *)"", b ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (!resp) free(b);
    } else {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, stream_reader, q, NULL);
    }
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type",
                            j->req.stream == 2 ? "text/event-stream" : vx_srv_fmt_mime(j->req.format));
    if (j->req.stream == 2) MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    char seed[24];
    snprintf(seed, sizeof seed, "%lld", (long long)j->req.seed);
    MHD_add_response_header(resp, "X-Vocis-Seed", seed);
    return queue(c, q, 200, resp);
}

static enum MHD_Result handle_voice_upload(struct MHD_Connection *c, server *s, rq *q) {
    if (!s->voices_dir[0])
        return fail(c, q, 400, "voices_disabled", NULL, "this server was started without --voices DIR: it cannot save voices");
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    char name[128] = "", model[128] = "", exs[32] = "", ows[8] = "";
    const uint8_t *audio = NULL;
    size_t alen = 0;
    const char *v;
    if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "name"))) snprintf(name, sizeof name, "%s", v);
    if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "model"))) snprintf(model, sizeof model, "%s", v);
    if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "exaggeration"))) snprintf(exs, sizeof exs, "%s", v);
    if ((v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "overwrite"))) snprintf(ows, sizeof ows, "%s", v);
    if (ct && !strncasecmp(ct, "multipart/form-data", 19)) {
        vx_form_part parts[8];
        int np = vx_srv_parse_multipart(ct, q->body, q->len, parts, 8);
        if (np < 0) return fail(c, q, 400, "invalid_multipart", NULL, "malformed multipart/form-data body");
        for (int i = 0; i < np; i++) {
            char *dst = !strcmp(parts[i].name, "name") ? name : !strcmp(parts[i].name, "model") ? model
                        : !strcmp(parts[i].name, "exaggeration") ? exs : !strcmp(parts[i].name, "overwrite") ? ows : NULL;
            size_t cap = dst == exs ? sizeof exs : dst == ows ? sizeof ows : sizeof name;
            if (dst) {
                size_t n = parts[i].len < cap - 1 ? parts[i].len : cap - 1;
                memcpy(dst, parts[i].data, n);
                dst[n] = 0;
            } else if (!strcmp(parts[i].name, "file") || !strcmp(parts[i].name, "audio")) {
                audio = parts[i].data, alen = parts[i].len;
            }
        }
    } else {
        audio = q->body, alen = q->len;
    }
    if (!name[0]) return fail(c, q, 400, "missing_required_parameter", "name", "'name' is required (form field or ?name=)");
    if (!vx_srv_valid_name(name))
        return fail(c, q, 400, "invalid_voice", "name", "invalid voice name (letters, digits, '.', '_', '-'; at most 64; no '..')");
    if (!audio || alen == 0) return fail(c, q, 400, "missing_required_parameter", "file", "no audio was uploaded");
    float ex = NAN;
    if (exs[0]) {
        char *end;
        ex = strtof(exs, &end);
        if (*end || !isfinite(ex) || ex < 0 || ex > 2)
            return fail(c, q, 400, "invalid_value", "exaggeration", "'exaggeration' must be a number in [0, 2]");
    }
    const int overwrite = !strcasecmp(ows, "true") || !strcmp(ows, "1");
    if (ows[0] && !overwrite && strcasecmp(ows, "false") && strcmp(ows, "0"))
        return fail(c, q, 400, "invalid_value", "overwrite", "'overwrite' must be true or false");
    srv_model *sm = model[0] ? find_model(s, model) : &s->models[0]; /* the default model, as for speech */
    if (!sm) return fail(c, q, 404, "model_not_found", "model", "no such model");
    snprintf(q->model, sizeof q->model, "%s", sm->name);
    char tmp[1200], vpath[1200], rpath[1200];
    voice_paths(s, name, vpath, rpath, sizeof vpath);
    if (!overwrite && (file_exists(vpath) || file_exists(rpath))) {
        vx_srv_error e;
        vx_srv_seterr(&e, 409, "voice_exists", "name",
                      "a voice named '%s' exists: send overwrite=true to replace it, or DELETE /v1/voices/%s first", name, name);
        return send_error(c, q, &e);
    }
    snprintf(tmp, sizeof tmp, "%s/.upload-%llu.tmp", s->voices_dir, q->id);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(audio, 1, alen, f) != alen) {
        if (f) fclose(f);
        unlink(tmp);
        return fail(c, q, 500, "io_error", NULL, "cannot write the upload into the voices folder");
    }
    if (fclose(f)) {
        unlink(tmp);
        return fail(c, q, 500, "io_error", NULL, "cannot write the upload into the voices folder");
    }
    /* checked (cloned, loaded) by the model before the 201, on its worker */
    const int realtime = !strcmp(sm->kind, "vibevoice-realtime"), vv = !strcmp(sm->kind, "vibevoice");
    job *j = job_new(s, sm, JOB_CLONE);
    if (!j) {
        unlink(tmp);
        return fail(c, q, 500, "out_of_memory", NULL, "out of memory");
    }
    snprintf(j->upload_path, sizeof j->upload_path, "%s", tmp);
    snprintf(j->voice_out, sizeof j->voice_out, "%s", vpath);
    j->clone_exaggeration = ex;
    int qr = enqueue(sm, j);
    if (qr) {
        job_unref(j);
        unlink(tmp);
        if (qr < 0) return fail(c, q, 503, "shutting_down", NULL, "the server is shutting down");
        char ra[16];
        snprintf(ra, sizeof ra, "%d", qr);
        vx_srv_error e;
        vx_srv_seterr(&e, 429, "queue_full", NULL, "the queue is full; retry after %d s", qr);
        return send_error_hdr(c, q, &e, "Retry-After", ra);
    }
    q->job = j;
    if (wait_job(c, j, 1)) {
        unlink(tmp); /* the worker may still read it: it then fails, harmlessly */
        return MHD_NO;
    }
    if (j->st) {
        unlink(tmp);
        return job_error(c, q, j);
    }
    if (realtime) { /* the preset is NAME.voice; a recording of an older upload would no longer match */
        unlink(tmp);
        unlink(rpath);
    } else {
        if (vv) unlink(vpath); /* a stale Chatterbox voice of that name no longer matches the recording */
        if (rename(tmp, rpath)) {
            unlink(tmp);
            return fail(c, q, 500, "io_error", NULL, "cannot save the recording");
        }
    }
    cJSON *o = voice_obj(name, "saved");
    cJSON_AddStringToObject(o, "model", sm->name);
    cJSON_AddStringToObject(o, "warning", j->warning);
    return send_json(c, q, 201, json_text_of(o));
}

static enum MHD_Result handle_voice(struct MHD_Connection *c, server *s, rq *q) {
    if (!vx_srv_valid_name(q->arg))
        return fail(c, q, 400, "invalid_voice", "name", "invalid voice name (letters, digits, '.', '_', '-'; at most 64; no '..')");
    char vpath[1200] = "", rpath[1200] = "";
    if (s->voices_dir[0]) voice_paths(s, q->arg, vpath, rpath, sizeof vpath);
    const int saved = s->voices_dir[0] && (file_exists(vpath) || file_exists(rpath));
    const int del = !strcmp(q->method, "DELETE");
    if (!saved && builtin_voice(s, q->arg)) { /* as GET /v1/voices lists it */
        if (del) return fail(c, q, 400, "builtin_voice", "name", "a built-in voice cannot be deleted");
        return send_json(c, q, 200, json_text_of(voice_obj(q->arg, "builtin")));
    }
    if (!saved)
        return fail(c, q, 404, "voice_not_found", NULL,
                    s->voices_dir[0] ? "no saved voice of that name" : "no saved voices (no --voices DIR)");
    if (del) {
        unlink(vpath);
        unlink(rpath);
    }
    cJSON *o = voice_obj(q->arg, "saved");
    if (del) cJSON_AddTrueToObject(o, "deleted");
    return send_json(c, q, 200, json_text_of(o));
}

static int ready(server *s) {
    if (atomic_load(&s->stopping)) return 0;
    for (int i = 0; i < s->n_models; i++) {
        srv_model *sm = &s->models[i];
        pthread_mutex_lock(&sm->mu);
        int full = sm->queued >= s->cfg->max_queue;
        pthread_mutex_unlock(&sm->mu);
        if (full) return 0;
    }
    return 1;
}

static char *metrics_text(server *s) {
    size_t cap = 65536, n = 0; /* ~40 lines per model at most (8 models), plus the route x status counters */
    char *b = malloc(cap);
    if (!b) return NULL;
#define P(...)                                                                                                   \
    do {                                                                                                         \
        int k_ = snprintf(b + n, cap - n, __VA_ARGS__);                                                          \
        if (k_ > 0 && (size_t)k_ < cap - n) n += (size_t)k_;                                                     \
    } while (0)
    pthread_mutex_lock(&s->mmu);
    P("# HELP vocis_requests_total HTTP requests by route and status.\n# TYPE vocis_requests_total counter\n");
    for (int r = 0; r < VX_R_COUNT; r++)
        for (int k = 0; k < N_STATUS; k++)
            if (s->req_count[r][k]) {
                char st[8];
                if (k < N_STATUS - 2) snprintf(st, sizeof st, "%d", status_codes[k]);
                else snprintf(st, sizeof st, "other");
                P("vocis_requests_total{route=\"%s\",status=\"%s\"} %llu\n", vx_srv_route_name(r), st,
                  s->req_count[r][k]);
            }
    P("# HELP vocis_audio_seconds_total Seconds of audio produced.\n# TYPE vocis_audio_seconds_total counter\n");
    P("vocis_audio_seconds_total %.3f\n", s->audio_seconds);
    P("# HELP vocis_input_characters_total Characters of input text synthesised.\n"
      "# TYPE vocis_input_characters_total counter\nvocis_input_characters_total %.0f\n", s->chars_total);
    P("# HELP vocis_rtf Real-time factor of finished speech requests (compute seconds / audio seconds).\n"
      "# TYPE vocis_rtf histogram\n");
    unsigned long long cum = 0;
    for (int i = 0; i < N_RTF_BUCKETS; i++) {
        cum += s->rtf_hist[i];
        P("vocis_rtf_bucket{le=\"%g\"} %llu\n", rtf_buckets[i], cum);
    }
    cum += s->rtf_hist[N_RTF_BUCKETS];
    P("vocis_rtf_bucket{le=\"+Inf\"} %llu\nvocis_rtf_sum %.6f\nvocis_rtf_count %llu\n", cum, s->rtf_sum, s->rtf_n);
    pthread_mutex_unlock(&s->mmu);
    P("# HELP vocis_queue_depth Requests waiting per model.\n# TYPE vocis_queue_depth gauge\n");
    int inflight = 0;
    for (int i = 0; i < s->n_models; i++) {
        srv_model *sm = &s->models[i];
        pthread_mutex_lock(&sm->mu);
        int waiting = sm->queued - sm->running, run = sm->running;
        pthread_mutex_unlock(&sm->mu);
        inflight += run;
        P("vocis_queue_depth{model=\"%s\"} %d\n", sm->name, waiting);
    }
    P("# HELP vocis_voice_cache Voices' conditioning prefixes computed once and reused (Chatterbox T3): lookups "
      "that found one (hits) or computed it (misses), entries held, their bytes and the bound.\n"
      "# TYPE vocis_voice_cache gauge\n");
    for (int i = 0; i < s->n_models; i++) {
        vocis_voice_cache_stats vc;
        vocis_voice_cache_stats_get(s->models[i].m, &vc);
        P("vocis_voice_cache{model=\"%s\",counter=\"hits\"} %lld\n"
          "vocis_voice_cache{model=\"%s\",counter=\"misses\"} %lld\n"
          "vocis_voice_cache{model=\"%s\",counter=\"entries\"} %lld\n"
          "vocis_voice_cache{model=\"%s\",counter=\"bytes\"} %zu\n"
          "vocis_voice_cache{model=\"%s\",counter=\"max_bytes\"} %zu\n",
          s->models[i].name, (long long)vc.hits, s->models[i].name, (long long)vc.misses, s->models[i].name,
          (long long)vc.entries, s->models[i].name, vc.bytes, s->models[i].name, vc.max_bytes);
    }
    P("# HELP vocis_batch_active Sequences in a model's shared batch now (continuous batching of concurrent "
      "requests' T3 steps).\n# TYPE vocis_batch_active gauge\n");
    vocis_batch_stats bs[VX_SRV_MAX_MODELS];
    for (int i = 0; i < s->n_models; i++) {
        vocis_batch_stats_get(s->models[i].m, &bs[i]);
        P("vocis_batch_active{model=\"%s\"} %d\n", s->models[i].name, bs[i].active);
    }
    P("# HELP vocis_batch_steps_total Batched forward steps run per model.\n# TYPE vocis_batch_steps_total counter\n");
    for (int i = 0; i < s->n_models; i++)
        P("vocis_batch_steps_total{model=\"%s\"} %lld\n", s->models[i].name, (long long)bs[i].steps);
    P("# HELP vocis_batch_rows_total Sequences those steps carried, summed (rows / steps: the mean batch size).\n"
      "# TYPE vocis_batch_rows_total counter\n");
    for (int i = 0; i < s->n_models; i++)
        P("vocis_batch_rows_total{model=\"%s\"} %lld\n", s->models[i].name, (long long)bs[i].rows);
    P("# HELP vocis_in_flight Requests being synthesised.\n# TYPE vocis_in_flight gauge\nvocis_in_flight %d\n", inflight);
    P("# HELP vocis_connections Open HTTP requests.\n# TYPE vocis_connections gauge\nvocis_connections %d\n",
      atomic_load(&s->inflight_conns));
    pthread_mutex_lock(&s->cmu);
    const unsigned long long slow = s->dropped_slow, full = s->dropped_full;
    pthread_mutex_unlock(&s->cmu);
    P("# HELP vocis_connections_dropped_total Connections closed while sending their request: past the header or "
      "body time limit (slow), or to make room for a new connection (full).\n"
      "# TYPE vocis_connections_dropped_total counter\n"
      "vocis_connections_dropped_total{reason=\"slow\"} %llu\nvocis_connections_dropped_total{reason=\"full\"} %llu\n",
      slow, full);
    P("# HELP vocis_ready 1 when /ready answers 200.\n# TYPE vocis_ready gauge\nvocis_ready %d\n", ready(s));
#undef P
    return b;
}

static int auth_ok(struct MHD_Connection *c, server *s) {
    if (!s->cfg->api_key || !s->cfg->api_key[0]) return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7)) return 0;
    h += 7;
    while (*h == ' ') h++;
    const char *k = s->cfg->api_key;
    size_t a = strlen(h), b = strlen(k);
    unsigned diff = a != b;
    for (size_t i = 0; i < a && i < b; i++) diff |= (unsigned)(h[i] ^ k[i]);
    return diff == 0;
}

/* While shutting down (the grace period of running work) every new request but /health and
 * /metrics is answered 503, and the connection closed so a proxy retries elsewhere. */
static enum MHD_Result shutting_down(struct MHD_Connection *c, rq *q) {
    vx_srv_error e;
    vx_srv_seterr(&e, 503, "shutting_down", NULL, "the server is shutting down");
    return send_error_hdr(c, q, &e, "Connection", "close");
}

static enum MHD_Result dispatch(struct MHD_Connection *c, server *s, rq *q) {
    const int get = !strcmp(q->method, "GET") || !strcmp(q->method, "HEAD");
    if (atomic_load(&s->stopping) && q->route != VX_R_HEALTH && q->route != VX_R_METRICS) return shutting_down(c, q);
    switch (q->route) {
    case VX_R_PAGE: return send_buf(c, q, 200, "text/html; charset=utf-8", (void *)vx_srv_webpage, strlen(vx_srv_webpage), 0);
    case VX_R_HEALTH: return send_json(c, q, 200, strdup("{\"status\":\"ok\"}"));
    case VX_R_READY:
        return ready(s) ? send_json(c, q, 200, strdup("{\"status\":\"ready\"}"))
                        : fail(c, q, 503, "queue_full", NULL, "the queue is full");
    case VX_R_METRICS: {
        char *m = metrics_text(s);
        return m ? send_buf(c, q, 200, "text/plain; version=0.0.4", m, strlen(m), 1) : MHD_NO;
    }
    case VX_R_MODELS: return send_json(c, q, 200, models_json(s, NULL));
    case VX_R_MODEL: {
        char *js = models_json(s, q->arg);
        return js ? send_json(c, q, 200, js) : fail(c, q, 404, "model_not_found", "model", "no such model");
    }
    case VX_R_SPEECH: return handle_speech(c, s, q);
    case VX_R_VOICES: return get ? send_json(c, q, 200, voices_json(s)) : handle_voice_upload(c, s, q);
    case VX_R_VOICE: return handle_voice(c, s, q);
    default: return fail(c, q, 404, "not_found", NULL, "no such route");
    }
}

/* --cors: "*", or a comma-separated list of origins of which the request's Origin is echoed. */
static void cors_origin(struct MHD_Connection *c, server *s, char *out, size_t cap) {
    out[0] = 0;
    const char *list = s->cfg->cors, *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (!list || !list[0]) return;
    if (!strcmp(list, "*")) {
        snprintf(out, cap, "*");
        return;
    }
    if (!origin || !origin[0]) return;
    const size_t n = strlen(origin);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',') p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ') e++;
        if ((size_t)(e - p) == n && !strncmp(p, origin, n)) {
            snprintf(out, cap, "%s", origin);
            return;
        }
        p = e;
    }
}

/* OPTIONS (a browser's CORS preflight: it carries no credentials): 204 with the route's methods. */
static enum MHD_Result preflight(struct MHD_Connection *c, rq *q) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!resp) return MHD_NO;
    const char *methods = vx_srv_route_methods(q->route);
    MHD_add_response_header(resp, "Allow", methods);
    if (q->cors[0]) {
        MHD_add_response_header(resp, "Access-Control-Allow-Methods", methods);
        MHD_add_response_header(resp, "Access-Control-Allow-Headers", "Authorization, Content-Type");
        MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
    }
    return queue(c, q, 204, resp);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    server *s = cls;
    rq *q = *con_cls;
    if (!q) {
        if (!(q = calloc(1, sizeof *q))) return MHD_NO;
        *con_cls = q;
        q->conn = c;
        atomic_fetch_add(&s->inflight_conns, 1);
        q->id = atomic_fetch_add(&s->next_id, 1) + 1;
        q->t0 = vx_now_s();
        snprintf(q->method, sizeof q->method, "%s", method);
        snprintf(q->path, sizeof q->path, "%s", url);
        q->route = vx_srv_route(url, &q->arg);
        q->limit = q->route == VX_R_VOICES ? s->cfg->max_upload : s->cfg->max_body;
        cors_origin(c, s, q->cors, sizeof q->cors);
        conn_phase(s, c, CONN_BODY, s->cfg->body_timeout);
        if (q->route == VX_R_NONE) return fail(c, q, 404, "not_found", NULL, "no such route");
        if (!strcmp(method, "OPTIONS")) return preflight(c, q);
        if (!vx_srv_method_ok(q->route, method)) {
            vx_srv_error e;
            vx_srv_seterr(&e, 405, "method_not_allowed", NULL, "%s is not allowed on %s (allowed: %s)", method,
                          vx_srv_route_name(q->route), vx_srv_route_methods(q->route));
            return send_error_hdr(c, q, &e, "Allow", vx_srv_route_methods(q->route));
        }
        if ((!strncmp(url, "/v1/", 4) || q->route == VX_R_METRICS) && !auth_ok(c, s)) {
            vx_srv_error e;
            vx_srv_seterr(&e, 401, "invalid_api_key", NULL, "missing or invalid API key (Authorization: Bearer KEY)");
            return send_error_hdr(c, q, &e, "WWW-Authenticate", "Bearer");
        }
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > q->limit) {
            vx_srv_error e;
            vx_srv_seterr(&e, 413, "request_too_large", NULL, "the request body is larger than %zu bytes", q->limit);
            return send_error_hdr(c, q, &e, "Connection", "close");
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!q->responded) {
            if (q->len + *upload_size > q->limit) {
                q->too_big = 1;
            } else if (!q->too_big) {
                if (q->len + *upload_size + 1 > q->cap) {
                    size_t cap = q->cap ? q->cap : 4096;
                    while (cap < q->len + *upload_size + 1) cap *= 2;
                    uint8_t *b = realloc(q->body, cap);
                    if (!b) return MHD_NO;
                    q->body = b, q->cap = cap;
                }
                memcpy(q->body + q->len, upload, *upload_size);
                q->len += *upload_size;
                q->body[q->len] = 0;
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (q->responded) return MHD_YES;
    conn_phase(s, c, CONN_ACTIVE, 0);
    if (q->too_big) {
        vx_srv_error e;
        vx_srv_seterr(&e, 413, "request_too_large", NULL, "the request body is larger than %zu bytes", q->limit);
        return send_error(c, q, &e);
    }
    /* the request is in: from here the per-request time limit applies, not the
     * idle timeout (a stream may be silent while a long chunk is synthesised) */
    if (q->route == VX_R_SPEECH || q->route == VX_R_VOICES) {
        double t = s->cfg->request_timeout + 10;
        MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)(t > 86400 ? 86400 : t));
    }
    return dispatch(c, s, q);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
    server *s = cls;
    rq *q = *con_cls;
    if (!q) return;
    *con_cls = NULL;
    double audio = 0, wait = 0, rtf = 0;
    size_t chars = 0;
    job *j = q->job;
    if (j) {
        if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK) atomic_store(&j->cancel, 1);
        pthread_mutex_lock(&j->mu);
        int done = j->done;
        size_t samples = j->samples;
        int sr = j->sample_rate;
        pthread_mutex_unlock(&j->mu);
        if (j->kind == JOB_SPEAK) chars = j->req.input_chars;
        audio = sr > 0 ? (double)samples / sr : 0;
        if (j->t_start > 0) wait = j->t_start - j->t_enq;
        if (done && audio > 0) rtf = (j->t_end - j->t_start) / audio;
        if (done && j->kind == JOB_SPEAK && j->st == VOCIS_OK) {
            pthread_mutex_lock(&s->mmu);
            s->audio_seconds += audio;
            s->chars_total += (double)chars;
            if (audio > 0) {
                int b = 0;
                while (b < N_RTF_BUCKETS && rtf > rtf_buckets[b]) b++;
                s->rtf_hist[b]++;
                s->rtf_sum += rtf;
                s->rtf_n++;
            }
            pthread_mutex_unlock(&s->mmu);
        }
    }
    int status = q->responded ? q->status : 499; /* 499: the client went away before a response */
    count_status(s, q->route, status);
    if (!s->cfg->quiet) {
        const char *how = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? ""
                          : toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT ? " (client aborted)"
                          : toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED ? " (timed out)"
                                                                          : " (terminated)";
        char seed[32] = "";
        if (j && j->kind == JOB_SPEAK) snprintf(seed, sizeof seed, " seed=%lld", (long long)j->req.seed);
        fprintf(stderr, "vocis serve: req=%llu %s %s %d%s model=%s chars=%zu audio=%.2fs wait=%.3fs rtf=%.3f time=%.3fs%s\n",
                q->id, q->method, q->path, status, how, q->model[0] ? q->model : "-", chars, audio, wait, rtf,
                vx_now_s() - q->t0, seed);
    }
    job_unref(j);
    free(q->body);
    free(q);
    atomic_fetch_sub(&s->inflight_conns, 1);
    /* keep-alive: the next request's headers are due after the idle time and the header time */
    conn_phase(s, c, CONN_HEADERS, s->cfg->idle_timeout + s->cfg->header_timeout);
}

/* ---- run ---- */

static void model_name(const char *spec, char *name, size_t cap, const char **dir) {
    const char *eq = strchr(spec, '=');
    if (eq && eq != spec && (size_t)(eq - spec) < cap) {
        memcpy(name, spec, (size_t)(eq - spec));
        name[eq - spec] = 0;
        *dir = eq + 1;
        return;
    }
    *dir = spec;
    size_t n = strlen(spec);
    while (n > 1 && spec[n - 1] == '/') n--;
    const char *b = spec;
    for (size_t i = 0; i < n; i++)
        if (spec[i] == '/') b = spec + i + 1;
    size_t k = (size_t)(spec + n - b);
    if (k >= cap) k = cap - 1;
    memcpy(name, b, k);
    name[k] = 0;
}

static void shutdown_models(server *s) {
    atomic_store(&s->quit_workers, 1);
    for (int i = 0; i < s->n_models; i++) {
        srv_model *sm = &s->models[i];
        pthread_mutex_lock(&sm->mu);
        pthread_cond_broadcast(&sm->cv);
        pthread_mutex_unlock(&sm->mu);
        for (int w = 0; w < sm->n_thr; w++) pthread_join(sm->thr[w], NULL);
        vocis_model_close(sm->m);
        pthread_mutex_destroy(&sm->mu);
        pthread_cond_destroy(&sm->cv);
    }
}

static int all_idle(server *s) {
    for (int i = 0; i < s->n_models; i++) {
        srv_model *sm = &s->models[i];
        pthread_mutex_lock(&sm->mu);
        int q = sm->queued;
        pthread_mutex_unlock(&sm->mu);
        if (q) return 0;
    }
    return 1;
}

static int stop_pipe[2] = {-1, -1};

static void on_stop_signal(int sig) {
    const unsigned char b = (unsigned char)sig;
    const int saved = errno;
    const ssize_t r = write(stop_pipe[1], &b, 1); /* fails only with a full pipe: a signal is already waiting */
    (void)r;
    errno = saved;
}

/* --host: a numeric address or a host name (getaddrinfo; the first IPv4 address, else the first). */
static int resolve_host(const char *host, int port, struct sockaddr_storage *out) {
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc) {
        fprintf(stderr, "vocis serve: --host %s: %s\n", host, gai_strerror(rc));
        return -1;
    }
    const struct addrinfo *pick = res;
    for (const struct addrinfo *a = res; a; a = a->ai_next)
        if (a->ai_family == AF_INET) {
            pick = a;
            break;
        }
    memset(out, 0, sizeof *out);
    memcpy(out, pick->ai_addr, pick->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

int vx_server_run(const vx_server_config *cfg) {
    static server srv; /* one per process */
    server *s = &srv;
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    pthread_mutex_init(&s->mmu, NULL);
    pthread_mutex_init(&s->cmu, NULL);
    if (cfg->n_models < 1 || cfg->n_models > VX_SRV_MAX_MODELS) {
        fprintf(stderr, "vocis serve: give 1 to %d --model folders\n", VX_SRV_MAX_MODELS);
        return 2;
    }
    if (cfg->voices_dir) {
        if (strlen(cfg->voices_dir) >= sizeof s->voices_dir - 80) {
            fprintf(stderr, "vocis serve: --voices path is too long\n");
            return 2;
        }
        mkdir(cfg->voices_dir, 0755);
        struct stat sb;
        if (stat(cfg->voices_dir, &sb) || !S_ISDIR(sb.st_mode) || access(cfg->voices_dir, W_OK)) {
            fprintf(stderr, "vocis serve: %s: not a writable folder\n", cfg->voices_dir);
            return 2;
        }
        snprintf(s->voices_dir, sizeof s->voices_dir, "%s", cfg->voices_dir);
    }
    /* SIGINT / SIGTERM reach a handler in whichever thread takes them (threads that libraries
     * start before this point, OpenBLAS's, have them unblocked: a sigwait in this thread would
     * not see every one, and the default action would kill the process); the handler tells
     * this thread through a pipe. A second signal while shutting down changes nothing. */
    if (pipe(stop_pipe)) {
        fprintf(stderr, "vocis serve: cannot make a pipe: %s\n", strerror(errno));
        return 1;
    }
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_stop_signal;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    sigaction(SIGINT, &act, NULL);
    sigaction(SIGTERM, &act, NULL);
    signal(SIGPIPE, SIG_IGN);

    vocis_open_options oo = {cfg->threads, cfg->config_path, cfg->precision, 0, cfg->voice_cache_mb};
    for (int i = 0; i < cfg->n_models; i++) {
        srv_model *sm = &s->models[i];
        const char *dir;
        model_name(cfg->models[i], sm->name, sizeof sm->name, &dir);
        sm->dir = dir;
        sm->srv = s;
        pthread_mutex_init(&sm->mu, NULL);
        pthread_cond_init(&sm->cv, NULL);
        s->n_models = i + 1;
        for (int k = 0; k < i; k++)
            if (!strcmp(s->models[k].name, sm->name)) {
                fprintf(stderr, "vocis serve: two models are named '%s' (use NAME=DIR)\n", sm->name);
                shutdown_models(s);
                return 2;
            }
        if (!vx_srv_valid_name(sm->name)) {
            fprintf(stderr, "vocis serve: '%s' is not a usable model name (use NAME=DIR)\n", sm->name);
            shutdown_models(s);
            return 2;
        }
        if (vocis_model_open(dir, &oo, &sm->m) != VOCIS_OK) {
            fprintf(stderr, "vocis serve: %s\n", sm->m ? vocis_errmsg(sm->m) : "out of memory");
            shutdown_models(s);
            return 1;
        }
        snprintf(sm->kind, sizeof sm->kind, "%s", vocis_model_kind(sm->m));
        /* a model that batches (Chatterbox's T3 families, VibeVoice) steps the concurrent vocis_speak calls
         * of several workers together; the others (Realtime) run one request at a time */
        const int slots = vocis_model_batch_slots(sm->m), want = cfg->batch < 1 ? 1 : cfg->batch;
        const int nw = slots > 1 ? (want > slots ? slots : want > VX_SRV_MAX_WORKERS ? VX_SRV_MAX_WORKERS : want) : 1;
        for (int w = 0; w < nw; w++) {
            if (pthread_create(&sm->thr[w], NULL, worker_main, sm)) {
                fprintf(stderr, "vocis serve: cannot start a worker thread\n");
                shutdown_models(s);
                return 1;
            }
            sm->n_thr++;
        }
    }

    /* select, not poll: at the connection limit libmicrohttpd's select loop stops accepting (new
     * connections wait in the listen queue until the guard makes room), its poll loop accepts and
     * resets them; hence --max-connections stays under FD_SETSIZE */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC;
    struct sockaddr_storage sa;
    if (resolve_host(cfg->host, cfg->port, &sa)) {
        shutdown_models(s);
        return 2;
    }
    if (sa.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    s->d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, conn_notify, s,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->idle_timeout, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)cfg->max_per_ip,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)cfg->max_header_kb << 10, MHD_OPTION_END);
    if (!s->d) {
        fprintf(stderr, "vocis serve: cannot listen on %s:%d: %s\n", cfg->host, cfg->port, strerror(errno));
        shutdown_models(s);
        return 1;
    }
    if (pthread_create(&s->guard_thr, NULL, guard_main, s)) {
        fprintf(stderr, "vocis serve: cannot start the connection guard thread\n");
        MHD_stop_daemon(s->d);
        shutdown_models(s);
        return 1;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    int port = di ? di->port : cfg->port;
    fprintf(stderr, "vocis serve: listening on http://%s:%d/ (", cfg->host, port);
    for (int i = 0; i < s->n_models; i++)
        fprintf(stderr, "%smodel %s: %s", i ? ", " : "", s->models[i].name, s->models[i].kind);
    fprintf(stderr, "; queue %d, %d chars, voices %s)\n", cfg->max_queue, cfg->max_chars,
            s->voices_dir[0] ? s->voices_dir : "off");
    if (cfg->port_file) { /* as every vocis output: atomic replace, or written through to a FIFO / symlink target */
        char line[16];
        const int len = snprintf(line, sizeof line, "%d\n", port);
        vx_outfile f;
        vx_err e = {0};
        if (vx_outfile_open(&f, cfg->port_file, &e) == VOCIS_OK) {
            if (vx_outfile_write(&f, line, (size_t)len, &e) == VOCIS_OK) vx_outfile_commit(&f, &e);
            else vx_outfile_abort(&f);
        }
    }

    unsigned char sig = 0;
    while (read(stop_pipe[0], &sig, 1) < 0 && errno == EINTR) continue;
    fprintf(stderr, "vocis serve: %s: shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    atomic_store(&s->stopping, 1);
    /* queued jobs are dropped by the workers (stopping); running ones get a grace period, during
     * which the server keeps listening and answers /ready and new requests 503 (dispatch) */
    for (int i = 0; i < 100 && !all_idle(s); i++) usleep(100 * 1000);
    atomic_store(&s->hard_stop, 1);
    for (int i = 0; i < 50 && !all_idle(s); i++) usleep(100 * 1000);
    MHD_stop_daemon(s->d);
    shutdown_models(s); /* also ends the guard (quit_workers) */
    pthread_join(s->guard_thr, NULL);
    close(stop_pipe[0]);
    close(stop_pipe[1]);
    fprintf(stderr, "vocis serve: stopped\n");
    return 0;
}
