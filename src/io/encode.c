#include "io/encode.h"

#include <errno.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct vx_enc {
    SNDFILE *sf;
    uint8_t *buf;        /* the bytes from offset base on (memory: all of them, base 0) */
    sf_count_t len, cap, pos, base;
    sf_count_t fwd;      /* bytes already handed to the sink (streaming) */
    sf_count_t ogg_done; /* bytes of whole Ogg pages already given the fixed serial */
    int streaming, failed, ogg, s16, clip;
    vx_audio_sink sink;
    void *user;
    /* set: the bytes go into this seekable file as they come, except an Ogg page, which waits in buf
     * until it is whole and has its fixed serial (the file never holds a page of another stream) */
    vx_outfile *file;
};

/* pread / pwrite of all n bytes at off; 0 ok. */
static int file_read(int fd, void *p, size_t n, sf_count_t off) {
    while (n > 0) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p = (uint8_t *)p + r, n -= (size_t)r, off += r;
    }
    return 0;
}
static int file_write(int fd, const void *p, size_t n, sf_count_t off) {
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p = (const uint8_t *)p + w, n -= (size_t)w, off += w;
    }
    return 0;
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

/* Gives the Ogg page at pg (avail bytes there) the fixed serial number: its
 * size, or 0 when pg holds no whole page. */
static size_t ogg_fix_page(uint8_t *pg, size_t avail) {
    if (avail < 27 || memcmp(pg, "OggS", 4)) return 0;
    size_t head = 27 + (size_t)pg[26], size = head;
    if (head > avail) return 0;
    for (size_t i = 0; i < pg[26]; i++) size += pg[27 + i];
    if (size > avail) return 0;
    put32(pg + 14, VX_ENC_OGG_SERIAL);
    put32(pg + 22, 0);
    put32(pg + 22, ogg_crc(pg, size));
    return size;
}

/* Gives every whole Ogg page from e->ogg_done on the fixed serial number (in memory). */
static void ogg_fix_serials(vx_audio_enc *e) {
    for (size_t size; (size = ogg_fix_page(e->buf + e->ogg_done, (size_t)(e->len - e->ogg_done)));)
        e->ogg_done += (sf_count_t)size;
}

/* Moves every whole Ogg page waiting in buf, with the fixed serial, into the file. */
static void ogg_pages_to_file(vx_audio_enc *e) {
    for (size_t size; !e->failed && (size = ogg_fix_page(e->buf, (size_t)(e->len - e->base)));) {
        if (file_write(e->file->fd, e->buf, size, e->base)) e->failed = 1;
        memmove(e->buf, e->buf + size, (size_t)(e->len - e->base) - size);
        e->base += (sf_count_t)size;
    }
}

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
    if (n <= 0) return 0;
    const sf_count_t in_file = !e->file ? 0 : e->ogg ? e->base : e->len; /* bytes [0, in_file) are in the file */
    if (e->pos >= in_file) memcpy(ptr, e->buf + (e->pos - e->base), (size_t)n);
    else if (e->pos + n > in_file || file_read(e->file->fd, ptr, (size_t)n, e->pos)) return e->failed = 1, 0;
    e->pos += n;
    return n;
}
static sf_count_t m_write(const void *ptr, sf_count_t n, void *u) {
    vx_audio_enc *e = u;
    if (n <= 0) return 0;
    if (e->file && !e->ogg) {
        if (file_write(e->file->fd, ptr, (size_t)n, e->pos)) return e->failed = 1, 0;
        e->pos += n;
        if (e->pos > e->len) e->len = e->pos;
        return n;
    }
    if (e->pos < e->base) return e->failed = 1, 0; /* an Ogg page already in the file: never rewritten */
    sf_count_t need = e->pos - e->base + n;
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
    memcpy(e->buf + (e->pos - e->base), ptr, (size_t)n);
    e->pos += n;
    if (e->pos > e->len) e->len = e->pos;
    if (e->file) ogg_pages_to_file(e);
    return e->failed ? 0 : n;
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

static vocis_status enc_open(vx_audio_fmt fmt, int sr, int streaming, vx_audio_sink sink, void *user,
                             vx_outfile *file, vx_audio_enc **out, vx_err *err) {
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
    e->streaming = streaming, e->sink = sink, e->user = user, e->file = file;
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

vocis_status vx_audio_enc_open(vx_audio_fmt fmt, int sr, int streaming, vx_audio_sink sink, void *user,
                               vx_audio_enc **out, vx_err *err) {
    return enc_open(fmt, sr, streaming, sink, user, NULL, out, err);
}

vocis_status vx_audio_enc_open_file(vx_audio_fmt fmt, int sr, vx_outfile *f, vx_audio_enc **out, vx_err *err) {
    return enc_open(fmt, sr, 0, NULL, NULL, f, out, err);
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
    if (e->file) { /* the header counts what is in the file now */
        if (!e->ogg) sf_command(e->sf, SFC_UPDATE_HEADER_NOW, NULL, 0);
        return e->failed ? -1 : 0;
    }
    return e->streaming ? forward(e, 0) : 0;
}

int vx_audio_enc_close(vx_audio_enc *e) {
    if (!e) return 0;
    int rc = sf_close(e->sf) ? -1 : 0;
    if (rc == 0 && e->ogg && !e->streaming && !e->file) ogg_fix_serials(e); /* streaming: forward does */
    if (rc == 0 && e->file && e->ogg && e->len > e->base && !e->failed) /* not a whole page: as it is */
        e->failed = file_write(e->file->fd, e->buf, (size_t)(e->len - e->base), e->base) != 0;
    if (e->failed) rc = -1;
    if (rc == 0 && !e->file) rc = e->streaming ? forward(e, 1) : e->sink(e->user, e->buf, (size_t)e->len) ? -1 : 0;
    free(e->buf);
    free(e);
    return rc;
}

static int to_outfile(void *user, const uint8_t *p, size_t n) {
    vx_audio_file *f = user;
    return (f->sink_st = vx_outfile_write(&f->out, p, n, f->err)) != VOCIS_OK;
}

vocis_status vx_audio_file_open(vx_audio_file *f, const char *path, vx_audio_fmt fmt, int sr, vx_err *err) {
    memset(f, 0, sizeof *f);
    f->err = err;
    if ((unsigned)fmt > VX_AUDIO_OPUS) return vx_fail(err, VOCIS_E_ARG, "%s: unknown audio format %d", path, (int)fmt);
    VX_TRY(vx_outfile_open(&f->out, path, err));
    /* a device or pipe cannot be rewritten in place: it gets the whole file at the end */
    f->in_place = f->out.tmp != NULL;
    vocis_status st = f->in_place ? vx_audio_enc_open_file(fmt, sr, &f->out, &f->enc, err)
                                 : vx_audio_enc_open(fmt, sr, 0, to_outfile, f, &f->enc, err);
    if (st != VOCIS_OK) {
        vx_errctx(err, "%s", path);
        vx_outfile_abort(&f->out);
    }
    return st;
}

/* The encoder's failure as a status: the sink's own, else a generic one. */
static vocis_status enc_failed(vx_audio_file *f) {
    if (f->sink_st) return f->sink_st;
    return vx_fail(f->err, VOCIS_E_IO, "%s: writing the audio failed: %s", f->out.name,
                   errno ? strerror(errno) : "encoder error");
}

vocis_status vx_audio_file_write(vx_audio_file *f, const float *x, size_t n) {
    errno = 0;
    if (vx_audio_enc_write(f->enc, x, n) != 0) return enc_failed(f);
    f->frames += (int64_t)n;
    if (f->in_place && n > 0) VX_TRY(vx_outfile_publish(&f->out, f->err));
    return VOCIS_OK;
}

vocis_status vx_audio_file_close(vx_audio_file *f) {
    errno = 0;
    int bad = vx_audio_enc_close(f->enc) != 0;
    f->enc = NULL;
    if (bad) {
        vocis_status st = enc_failed(f);
        vx_outfile_abort(&f->out);
        return st;
    }
    return vx_outfile_commit(&f->out, f->err);
}

void vx_audio_file_abort(vx_audio_file *f) {
    vx_audio_enc_close(f->enc);
    f->enc = NULL;
    vx_outfile_abort(&f->out);
}
