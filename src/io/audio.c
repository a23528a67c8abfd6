#include "io/audio.h"

#include "io/encode.h"
#include "io/outfile.h"

#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <soxr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reading ------------------------------------------------------------ */

/* Reads every frame of an open file, averaging channels in float32 the way
 * numpy's mean over the channel axis does (sequential sum, then / C). */
static vocis_status read_mono(SNDFILE *sf, const char *path, int channels, int64_t max_frames, float **out,
                              int64_t *n, vx_err *err) {
    enum { CHUNK = 16384 };
    float *buf = vx_malloc(err, (size_t)CHUNK * (size_t)channels * sizeof(float), "audio read buffer");
    if (!buf) return VOCIS_E_NOMEM;
    size_t cap = 0, len = 0;
    float *mono = NULL;
    for (;;) {
        sf_count_t want = CHUNK;
        if (max_frames > 0 && (int64_t)len + want > max_frames) want = (sf_count_t)(max_frames - (int64_t)len);
        if (want <= 0) break;
        sf_count_t got = sf_readf_float(sf, buf, want);
        if (got <= 0) break;
        for (sf_count_t i = 0; i < got * channels; i++) {
            if (!isfinite(buf[i])) {
                const int is_nan = isnan(buf[i]);
                free(buf);
                free(mono);
                return vx_fail(err, VOCIS_E_FORMAT, "%s: sample %lld is %s (the file holds non-finite floats)", path,
                               (long long)(len + (size_t)(i / channels)), is_nan ? "NaN" : "infinite");
            }
        }
        if (len + (size_t)got > cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            while (ncap < len + (size_t)got)
                ncap *= 2;
            float *p = realloc(mono, ncap * sizeof(float));
            if (!p) {
                free(buf);
                free(mono);
                return vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory reading %zu samples", path, ncap);
            }
            mono = p;
            cap = ncap;
        }
        if (channels == 1) {
            memcpy(mono + len, buf, (size_t)got * sizeof(float));
        } else {
            for (sf_count_t i = 0; i < got; i++) {
                const float *fr = buf + (size_t)i * (size_t)channels;
                float s = fr[0];
                for (int c = 1; c < channels; c++)
                    s += fr[c];
                mono[len + (size_t)i] = s / (float)channels;
            }
        }
        len += (size_t)got;
    }
    free(buf);
    int e = sf_error(sf);
    if (e != SF_ERR_NO_ERROR) {
        free(mono);
        return vx_fail(err, VOCIS_E_FORMAT, "%s: cannot decode audio: %s", path, sf_strerror(sf));
    }
    if (len == 0) {
        free(mono);
        return vx_fail(err, VOCIS_E_FORMAT, "%s: the file contains no audio samples", path);
    }
    *out = mono;
    *n = (int64_t)len;
    return VOCIS_OK;
}

vocis_status vx_audio_read_head(const char *path, int target_sr, double max_seconds, float **samples, int64_t *n,
                                vx_audio_info *out_info, vx_err *err) {
    *samples = NULL;
    *n = 0;
    struct stat st;
    if (stat(path, &st) != 0) return vx_fail(err, VOCIS_E_IO, "%s: cannot open audio file: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return vx_fail(err, VOCIS_E_IO, "%s: not a regular file", path);
    if (st.st_size == 0) return vx_fail(err, VOCIS_E_FORMAT, "%s: the file is empty", path);

    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *sf = sf_open(path, SFM_READ, &info);
    if (!sf) {
        int code = sf_error(NULL);
        const char *why = sf_strerror(NULL);
        if (code == SF_ERR_SYSTEM) return vx_fail(err, VOCIS_E_IO, "%s: cannot open audio file: %s", path, why);
        return vx_fail(err, VOCIS_E_FORMAT, "%s: not a readable audio file: %s", path, why);
    }
    /* Real audio is sampled at 4 kHz or more; a header claiming a few Hz
     * would make resampling blow a small file up by target_sr / rate (found
     * by fuzz_audio: an 8 KB WAV at 1 Hz took 30 s and 1 GB at 24 kHz). */
    if (info.channels < 1 || info.channels > VX_AUDIO_MAX_CHANNELS || info.samplerate < VX_AUDIO_MIN_RATE ||
        info.samplerate > VX_AUDIO_MAX_RATE) {
        sf_close(sf);
        return vx_fail(err, VOCIS_E_FORMAT, "%s: implausible audio header (%d channels, %d Hz)", path, info.channels,
                       info.samplerate);
    }
    float *mono = NULL;
    int64_t len = 0;
    /* librosa resamples the whole file; reading one extra second past the cut
     * keeps the resampler's look-ahead identical over the samples that are kept */
    const int64_t max_frames = max_seconds > 0 ? (int64_t)ceil((max_seconds + 1.0) * info.samplerate) : 0;
    vocis_status stt = read_mono(sf, path, info.channels, max_frames, &mono, &len, err);
    sf_close(sf);
    if (stt == VOCIS_OK && out_info) {
        out_info->sample_rate = info.samplerate;
        out_info->channels = info.channels;
        out_info->file_frames = info.frames;
        out_info->truncated = max_frames > 0 && len >= max_frames;
    }
    if (stt != VOCIS_OK) return stt;

    if (target_sr > 0 && target_sr != info.samplerate) {
        float *res;
        int64_t m;
        stt = vx_audio_resample(mono, len, info.samplerate, target_sr, &res, &m, err);
        free(mono);
        if (stt != VOCIS_OK) return vx_errctx(err, "%s", path);
        mono = res;
        len = m;
    }
    if (max_seconds > 0) {
        const int64_t keep = (int64_t)ceil(max_seconds * (target_sr > 0 ? target_sr : info.samplerate));
        if (len > keep) len = keep;
    }
    *samples = mono;
    *n = len;
    return VOCIS_OK;
}

vocis_status vx_audio_read_sr(const char *path, int target_sr, float **samples, int64_t *n, int *sr, vx_err *err) {
    vx_audio_info info;
    VX_TRY(vx_audio_read_head(path, target_sr, 0, samples, n, &info, err));
    if (sr) *sr = target_sr > 0 ? target_sr : info.sample_rate;
    return VOCIS_OK;
}

vocis_status vx_audio_read(const char *path, int target_sr, float **samples, int64_t *n, vx_err *err) {
    return vx_audio_read_sr(path, target_sr, samples, n, NULL, err);
}

/* ---- resampling ----------------------------------------------------------- */

vocis_status vx_audio_resample(const float *x, int64_t n, int sr_in, int sr_out, float **y, int64_t *m, vx_err *err) {
    *y = NULL;
    *m = 0;
    if (sr_in <= 0 || sr_out <= 0)
        return vx_fail(err, VOCIS_E_ARG, "resample: invalid sample rates %d -> %d", sr_in, sr_out);
    if (n < 0) return vx_fail(err, VOCIS_E_ARG, "resample: negative length");
    /* librosa: n_out = int(ceil(n * (target / orig))) in float64. */
    double want_d = ceil((double)n * ((double)sr_out / (double)sr_in));
    if (want_d > 4e12) return vx_fail(err, VOCIS_E_ARG, "resample: output of %.0f samples is too long", want_d);
    size_t want = (size_t)want_d;
    if (sr_in == sr_out) {
        float *c = vx_malloc(err, (size_t)n * sizeof(float), "resampled audio");
        if (!c) return VOCIS_E_NOMEM;
        if (n) memcpy(c, x, (size_t)n * sizeof(float));
        *y = c;
        *m = n;
        return VOCIS_OK;
    }

    /* python-soxr's resample(): float32 in/out, HQ, default runtime spec,
     * input fed in chunks of 48000 * in / out frames, then one flush, into an
     * output buffer of int(n * out / in) + 1 frames. */
    double in_rate = sr_in, out_rate = sr_out;
    size_t olen = (size_t)((double)n * out_rate / in_rate) + 1;
    size_t chunk = (size_t)(48000.0 * in_rate / out_rate);
    if (chunk < 1) chunk = 1;
    size_t alloc = olen > want ? olen : want;
    float *out = calloc(alloc ? alloc : 1, sizeof(float));
    if (!out) return vx_fail(err, VOCIS_E_NOMEM, "resample: out of memory for %zu samples", alloc);

    soxr_error_t e = NULL;
    soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
    soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
    soxr_t s = soxr_create(in_rate, out_rate, 1, &e, &io, &q, NULL);
    if (!s || e) {
        free(out);
        if (s) soxr_delete(s);
        return vx_fail(err, VOCIS_E_INTERNAL, "resample %d -> %d Hz: soxr_create failed: %s", sr_in, sr_out,
                       e ? e : "unknown error");
    }
    size_t pos = 0, done = 0;
    for (size_t i = 0; i < (size_t)n && !e; i += chunk) {
        size_t len = (size_t)n - i < chunk ? (size_t)n - i : chunk;
        done = 0;
        e = soxr_process(s, x + i, len, NULL, out + pos, olen - pos, &done);
        pos += done;
    }
    if (!e) {
        done = 0;
        e = soxr_process(s, NULL, 0, NULL, out + pos, olen - pos, &done);
        pos += done;
    }
    soxr_delete(s);
    if (e) {
        free(out);
        return vx_fail(err, VOCIS_E_INTERNAL, "resample %d -> %d Hz: %s", sr_in, sr_out, e);
    }
    /* librosa's fix_length: zero-pad or cut to the expected length. */
    for (size_t i = pos; i < want; i++)
        out[i] = 0.0f;
    *y = out;
    *m = (int64_t)want;
    return VOCIS_OK;
}

/* ---- writing -------------------------------------------------------------- */

static const struct {
    const char *name;
    vx_audio_fmt fmt;
} fmt_names[] = {{"wav16", VX_AUDIO_WAV16}, {"wav", VX_AUDIO_WAV16}, {"f32", VX_AUDIO_F32},
                 {"flac", VX_AUDIO_FLAC},   {"ogg", VX_AUDIO_OGG},   {"mp3", VX_AUDIO_MP3},
                 {"opus", VX_AUDIO_OPUS},   {"s16le", VX_AUDIO_S16LE}, {"f32le", VX_AUDIO_F32LE}};

int vx_audio_fmt_parse(const char *name, vx_audio_fmt *out) {
    for (size_t i = 0; name && i < sizeof fmt_names / sizeof fmt_names[0]; i++)
        if (fmt_names[i].fmt <= VX_AUDIO_OPUS && !strcmp(name, fmt_names[i].name)) {
            *out = fmt_names[i].fmt;
            return 0;
        }
    return -1;
}

const char *vx_audio_fmt_name(vx_audio_fmt fmt) {
    for (size_t i = 0; i < sizeof fmt_names / sizeof fmt_names[0]; i++)
        if (fmt_names[i].fmt == fmt) return fmt_names[i].name;
    return "?";
}

int vx_audio_fmt_from_path(const char *path, vx_audio_fmt *out) {
    static const char *const ext[] = {"wav", "flac", "ogg", "mp3", "opus"};
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/')) return -1;
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (!strcasecmp(dot + 1, ext[i])) return vx_audio_fmt_parse(ext[i], out);
    return -1;
}

void vx_audio_to_s16(const float *x, int16_t *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const float v = x[i] * 32768.0f;
        y[i] = v != v ? 0 : v >= 32767.0f ? 32767 : v <= -32768.0f ? -32768 : (int16_t)lrintf(v);
    }
}

typedef struct {
    vx_outfile *f;
    vx_err *err;
    vocis_status st; /* the write failure, if any */
} file_sink;

static int to_file(void *user, const uint8_t *p, size_t n) {
    file_sink *s = user;
    return (s->st = vx_outfile_write(s->f, p, n, s->err)) != VOCIS_OK;
}

vocis_status vx_audio_write(const char *path, vx_audio_fmt fmt, int sr, const float *x, int64_t n, vx_err *err) {
    if (sr <= 0) return vx_fail(err, VOCIS_E_ARG, "%s: invalid sample rate %d", path, sr);
    if (n < 0 || (n > 0 && !x)) return vx_fail(err, VOCIS_E_ARG, "%s: invalid sample buffer", path);
    if ((unsigned)fmt > VX_AUDIO_OPUS) return vx_fail(err, VOCIS_E_ARG, "%s: unknown audio format %d", path, (int)fmt);
    const int to_stdout = strcmp(path, "-") == 0;
    if (to_stdout && fmt != VX_AUDIO_WAV16 && fmt != VX_AUDIO_F32)
        return vx_fail(err, VOCIS_E_ARG, "-: only raw PCM (wav16 -> s16le, f32 -> f32le) can be written to stdout");
    if (to_stdout) fmt = fmt == VX_AUDIO_F32 ? VX_AUDIO_F32LE : VX_AUDIO_S16LE;

    vx_outfile f;
    if (to_stdout) {
        fflush(stdout);
        f = (vx_outfile){.fd = STDOUT_FILENO, .name = "stdout"};
    } else {
        VX_TRY(vx_outfile_open(&f, path, err));
    }
    file_sink sink = {&f, err, VOCIS_OK};
    vx_audio_enc *e;
    vocis_status st = vx_audio_enc_open(fmt, sr, 0, to_file, &sink, &e, err);
    if (st != VOCIS_OK) {
        vx_errctx(err, "%s", path);
    } else {
        int bad = vx_audio_enc_write(e, x, (size_t)n) != 0;
        bad |= vx_audio_enc_close(e) != 0;
        if (bad) st = sink.st ? sink.st : vx_fail(err, VOCIS_E_IO, "%s: encoding %s failed", path, vx_audio_fmt_name(fmt));
    }
    if (to_stdout) return st;
    if (st != VOCIS_OK) {
        vx_outfile_abort(&f);
        return st;
    }
    return vx_outfile_commit(&f, err);
}
