/* vocis serve: samples -> mp3 / opus / flac / wav / pcm bytes through
 * libsndfile's virtual I/O (an in-memory file). Debian 12's libsndfile 1.2
 * writes MPEG layer III (LAME) and Ogg Opus. */
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

struct vx_enc {
    SNDFILE *sf;
    uint8_t *buf;
    sf_count_t len, cap, pos;
    sf_count_t fwd; /* bytes already handed to the sink (streaming) */
    int streaming, failed;
    vx_enc_sink sink;
    void *user;
};

static sf_count_t m_len(void *u) { return ((vx_enc *)u)->len; }
static sf_count_t m_tell(void *u) { return ((vx_enc *)u)->pos; }
static sf_count_t m_seek(sf_count_t off, int whence, void *u) {
    vx_enc *e = u;
    sf_count_t p = whence == SEEK_SET ? off : whence == SEEK_CUR ? e->pos + off : e->len + off;
    if (p < 0) return -1;
    e->pos = p;
    return p;
}
static sf_count_t m_read(void *ptr, sf_count_t n, void *u) {
    vx_enc *e = u;
    sf_count_t a = e->pos < e->len ? e->len - e->pos : 0;
    if (n > a) n = a;
    if (n > 0) memcpy(ptr, e->buf + e->pos, (size_t)n);
    e->pos += n;
    return n;
}
static sf_count_t m_write(const void *ptr, sf_count_t n, void *u) {
    vx_enc *e = u;
    if (n <= 0) return 0;
    sf_count_t need = e->pos + n;
    if (need > e->cap) {
        sf_count_t c = e->cap ? e->cap : 65536;
        while (c < need) c *= 2;
        uint8_t *b = realloc(e->buf, (size_t)c);
        if (!b) {
            e->failed = 1;
            return 0;
        }
        if (c > e->cap) memset(b + e->cap, 0, (size_t)(c - e->cap));
        e->buf = b, e->cap = c;
    }
    memcpy(e->buf + e->pos, ptr, (size_t)n);
    e->pos += n;
    if (e->pos > e->len) e->len = e->pos;
    return n;
}

static int forward(vx_enc *e) {
    if (e->len > e->fwd) {
        if (e->sink(e->user, e->buf + e->fwd, (size_t)(e->len - e->fwd))) return -1;
        e->fwd = e->len;
    }
    return 0;
}

static void put32(uint8_t *p, uint32_t v) { p[0] = v, p[1] = v >> 8, p[2] = v >> 16, p[3] = v >> 24; }

vx_enc *vx_enc_open(vx_srv_fmt f, int sr, int streaming, vx_enc_sink sink, void *user, char *err, size_t errlen) {
    SF_INFO info;
    memset(&info, 0, sizeof info);
    info.samplerate = sr;
    info.channels = 1;
    int raw_wav = 0;
    switch (f) {
    case VX_FMT_MP3: info.format = SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III; break;
    case VX_FMT_OPUS: info.format = SF_FORMAT_OGG | SF_FORMAT_OPUS; break;
    case VX_FMT_FLAC: info.format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16; break;
    case VX_FMT_WAV:
        raw_wav = streaming;
        info.format = streaming ? SF_FORMAT_RAW | SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE : SF_FORMAT_WAV | SF_FORMAT_PCM_16;
        break;
    case VX_FMT_PCM: info.format = SF_FORMAT_RAW | SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE; break;
    default: snprintf(err, errlen, "unknown format"); return NULL;
    }
    if (!sf_format_check(&info)) {
        snprintf(err, errlen, "this libsndfile cannot write %s at %d Hz", vx_srv_fmt_name(f), sr);
        return NULL;
    }
    vx_enc *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    e->streaming = streaming, e->sink = sink, e->user = user;
    if (raw_wav) { /* a WAV header of unknown length, as streaming servers send */
        uint8_t h[44] = {'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'A', 'V', 'E', 'f', 'm', 't', ' ', 16, 0, 0, 0, 1, 0, 1, 0};
        put32(h + 4, 0xFFFFFFFFu);
        put32(h + 24, (uint32_t)sr);
        put32(h + 28, (uint32_t)sr * 2);
        h[32] = 2, h[34] = 16;
        memcpy(h + 36, "data", 4);
        put32(h + 40, 0xFFFFFFFFu);
        if (sink(user, h, sizeof h)) {
            free(e);
            snprintf(err, errlen, "client gone");
            return NULL;
        }
    }
    SF_VIRTUAL_IO io = {m_len, m_seek, m_read, m_write, m_tell};
    e->sf = sf_open_virtual(&io, SFM_WRITE, &info, e);
    if (!e->sf) {
        snprintf(err, errlen, "cannot open the %s encoder: %s", vx_srv_fmt_name(f), sf_strerror(NULL));
        free(e->buf);
        free(e);
        return NULL;
    }
    sf_command(e->sf, SFC_SET_CLIPPING, NULL, SF_TRUE);
    return e;
}

int vx_enc_write(vx_enc *e, const float *x, size_t n) {
    float buf[4096];
    for (size_t i = 0; i < n;) {
        size_t k = n - i < 4096 ? n - i : 4096;
        for (size_t j = 0; j < k; j++) { /* as vocis_audio_save: NaN -> 0, clip to [-1, 1] */
            float v = x[i + j];
            buf[j] = v != v ? 0.0f : v > 1.0f ? 1.0f : v < -1.0f ? -1.0f : v;
        }
        if (sf_writef_float(e->sf, buf, (sf_count_t)k) != (sf_count_t)k || e->failed) return -1;
        i += k;
    }
    return e->streaming ? forward(e) : 0;
}

int vx_enc_close(vx_enc *e) {
    if (!e) return 0;
    int rc = sf_close(e->sf) ? -1 : 0;
    if (e->failed) rc = -1;
    if (rc == 0) {
        if (e->streaming) rc = forward(e);
        else if (e->sink(e->user, e->buf, (size_t)e->len)) rc = -1;
    }
    free(e->buf);
    free(e);
    return rc;
}
