#include "io/encode.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vx_enc {
    SNDFILE *sf;
    uint8_t *buf;
    sf_count_t len, cap, pos;
    sf_count_t fwd;      /* bytes already handed to the sink (streaming) */
    sf_count_t ogg_done; /* bytes of whole Ogg pages already given the fixed serial */
    int streaming, failed, ogg, s16, clip;
    vx_audio_sink sink;
    void *user;
};

static sf_count_t m_len(void *u) { return ((vx_audio_enc *)u)->len; }
static sf_count_t m_tell(void *u) { return ((vx_audio_enc *)u)->pos; }
static sf_count_t m_seek(sf_count_t off, int whence, void *u) {
    vx_audio_enc *e = u;
    sf_count_t p = whence == SEEK_SET ? off : whence == SEEK_CUR ? e->pos + off : e->len + off;
    if (p < 0) return -1;
    e->pos = p;
    return p;
}
static sf_count_t m_read(void *ptr, sf_count_t n, void *u) {
    vx_audio_enc *e = u;
    sf_count_t a = e->pos < e->len ? e->len - e->pos : 0;
    if (n > a) n = a;
    if (n > 0) memcpy(ptr, e->buf + e->pos, (size_t)n);
    e->pos += n;
    return n;
}
static sf_count_t m_write(const void *ptr, sf_count_t n, void *u) {
    vx_audio_enc *e = u;
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
        memset(b + e->cap, 0, (size_t)(c - e->cap));
        e->buf = b, e->cap = c;
    }
    memcpy(e->buf + e->pos, ptr, (size_t)n);
    e->pos += n;
    if (e->pos > e->len) e->len = e->pos;
    return n;
}

/* Ogg's CRC-32 (polynomial 0x04c11db7, not reflected, initial 0) of a page. */
static uint32_t ogg_crc(const uint8_t *p, size_t n) {
    uint32_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint32_t)p[i] << 24;
        for (int b = 0; b < 8; b++) crc = crc & 0x80000000u ? (crc << 1) ^ 0x04c11db7u : crc << 1;
    }
    return crc;
}

static void put32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24); }

/* Gives every whole Ogg page from e->ogg_done on the fixed serial number. */
static void ogg_fix_serials(vx_audio_enc *e) {
    size_t off = (size_t)e->ogg_done, len = (size_t)e->len;
    while (off + 27 <= len && !memcmp(e->buf + off, "OggS", 4)) {
        uint8_t *pg = e->buf + off;
        size_t head = 27 + (size_t)pg[26], size = head;
        if (off + head > len) break;
        for (size_t i = 0; i < pg[26]; i++) size += pg[27 + i];
        if (off + size > len) break;
        put32(pg + 14, VX_ENC_OGG_SERIAL);
        put32(pg + 22, 0);
        put32(pg + 22, ogg_crc(pg, size));
        off += size;
    }
    e->ogg_done = (sf_count_t)off;
}

/* Hands the sink what it has not had yet: whole Ogg pages only, until the end. */
static int forward(vx_audio_enc *e, int final) {
    sf_count_t ready = e->len;
    if (e->ogg) {
        ogg_fix_serials(e);
        if (!final) ready = e->ogg_done;
    }
    if (ready > e->fwd) {
        if (e->sink(e->user, e->buf + e->fwd, (size_t)(ready - e->fwd))) return -1;
        e->fwd = ready;
    }
    return 0;
}

vocis_status vx_audio_enc_open(vx_audio_fmt fmt, int sr, int streaming, vx_audio_sink sink, void *user,
                               vx_audio_enc **out, vx_err *err) {
    *out = NULL;
    SF_INFO info;
    memset(&info, 0, sizeof info);
    info.samplerate = sr;
    info.channels = 1;
    const int raw_wav = streaming && fmt == VX_AUDIO_WAV16;
    switch (fmt) {
    case VX_AUDIO_WAV16: info.format = raw_wav ? SF_FORMAT_RAW | SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE : SF_FORMAT_WAV | SF_FORMAT_PCM_16; break;
    case VX_AUDIO_F32: info.format = SF_FORMAT_WAV | SF_FORMAT_FLOAT; break;
    case VX_AUDIO_FLAC: info.format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16; break;
    case VX_AUDIO_OGG: info.format = SF_FORMAT_OGG | SF_FORMAT_VORBIS; break;
    case VX_AUDIO_MP3: info.format = SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III; break;
    case VX_AUDIO_OPUS: info.format = SF_FORMAT_OGG | SF_FORMAT_OPUS; break;
    case VX_AUDIO_S16LE: info.format = SF_FORMAT_RAW | SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE; break;
    case VX_AUDIO_F32LE: info.format = SF_FORMAT_RAW | SF_FORMAT_FLOAT | SF_ENDIAN_LITTLE; break;
    default: return vx_fail(err, VOCIS_E_ARG, "unknown audio format %d", (int)fmt);
    }
    if (!sf_format_check(&info))
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "this libsndfile cannot write %s at %d Hz", vx_audio_fmt_name(fmt), sr);
    vx_audio_enc *e = calloc(1, sizeof *e);
    if (!e) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    e->streaming = streaming, e->sink = sink, e->user = user;
    e->ogg = (info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_OGG;
    e->s16 = (info.format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_16;
    e->clip = fmt != VX_AUDIO_F32 && fmt != VX_AUDIO_F32LE;
    if (raw_wav) { /* a WAV header of unknown length */
        uint8_t h[44] = {'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'A', 'V', 'E', 'f', 'm', 't', ' ', 16, 0, 0, 0, 1, 0, 1, 0};
        put32(h + 4, 0xFFFFFFFFu);
        put32(h + 24, (uint32_t)sr);
        put32(h + 28, (uint32_t)sr * 2);
        h[32] = 2, h[34] = 16;
        memcpy(h + 36, "data", 4);
        put32(h + 40, 0xFFFFFFFFu);
        if (sink(user, h, sizeof h)) {
            free(e);
            return vx_fail(err, VOCIS_E_IO, "the output is gone");
        }
    }
    SF_VIRTUAL_IO io = {m_len, m_seek, m_read, m_write, m_tell};
    e->sf = sf_open_virtual(&io, SFM_WRITE, &info, e);
    if (!e->sf) {
        vocis_status st = vx_fail(err, VOCIS_E_INTERNAL, "cannot open the %s encoder: %s", vx_audio_fmt_name(fmt),
                                  sf_strerror(NULL));
        free(e->buf);
        free(e);
        return st;
    }
    sf_command(e->sf, SFC_SET_ADD_PEAK_CHUNK, NULL, SF_FALSE); /* its timestamp would differ run to run */
    *out = e;
    return VOCIS_OK;
}

int vx_audio_enc_write(vx_audio_enc *e, const float *x, size_t n) {
    enum { CHUNK = 4096 };
    float f[CHUNK];
    int16_t s[CHUNK];
    for (size_t i = 0; i < n;) {
        size_t k = n - i < CHUNK ? n - i : CHUNK;
        sf_count_t w;
        if (e->s16) {
            vx_audio_to_s16(x + i, s, k);
            w = sf_writef_short(e->sf, s, (sf_count_t)k);
        } else if (e->clip) { /* NaN -> 0, clip to [-1, 1] */
            for (size_t j = 0; j < k; j++) {
                float v = x[i + j];
                f[j] = v != v ? 0.0f : v > 1.0f ? 1.0f : v < -1.0f ? -1.0f : v;
            }
            w = sf_writef_float(e->sf, f, (sf_count_t)k);
        } else {
            w = sf_writef_float(e->sf, x + i, (sf_count_t)k);
        }
        if (w != (sf_count_t)k || e->failed) return -1;
        i += k;
    }
    return e->streaming ? forward(e, 0) : 0;
}

int vx_audio_enc_close(vx_audio_enc *e) {
    if (!e) return 0;
    int rc = sf_close(e->sf) ? -1 : 0;
    if (e->failed) rc = -1;
    if (rc == 0) {
        if (e->streaming) {
            rc = forward(e, 1);
        } else {
            if (e->ogg) ogg_fix_serials(e);
            if (e->sink(e->user, e->buf, (size_t)e->len)) rc = -1;
        }
    }
    free(e->buf);
    free(e);
    return rc;
}
