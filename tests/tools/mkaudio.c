/* mkaudio KIND SRC.wav OUT: writes test recordings derived from SRC (mono)
 * for the voice-cloning input cases. KIND:
 *   pcm8 pcm24 float stereo flac ogg mp3 (valid, odd encodings; same samples)
 *   r8k r48k (the same samples declared at 8 / 48 kHz)
 *   short05, short005 (first 0.5 / 0.05 s)   one (a single sample)   headeronly (a WAV with no frames)
 *   nan inf (float WAV with one non-finite sample)
 *   long2h, long125s (two hours / 125 s: 8 kHz 8-bit, SRC repeated) */
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_file(const char *out, int sr, int ch, int fmt, const float *x, sf_count_t frames) {
    SF_INFO info = {0};
    info.samplerate = sr;
    info.channels = ch;
    info.format = fmt;
    SNDFILE *f = sf_open(out, SFM_WRITE, &info);
    if (!f) {
        fprintf(stderr, "mkaudio: %s: %s\n", out, sf_strerror(NULL));
        return 1;
    }
    if (frames > 0) sf_command(f, SFC_SET_CLIPPING, NULL, SF_TRUE);
    if (frames > 0 && sf_writef_float(f, x, frames) != frames) {
        fprintf(stderr, "mkaudio: %s: write failed\n", out);
        sf_close(f);
        return 1;
    }
    sf_close(f);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: mkaudio KIND SRC.wav OUT\n");
        return 2;
    }
    const char *kind = argv[1], *out = argv[3];
    SF_INFO si = {0};
    SNDFILE *sf = sf_open(argv[2], SFM_READ, &si);
    if (!sf || si.channels != 1) {
        fprintf(stderr, "mkaudio: %s: need a mono audio file\n", argv[2]);
        return 1;
    }
    float *x = malloc(sizeof(float) * (size_t)si.frames);
    if (!x || sf_readf_float(sf, x, si.frames) != si.frames) return 1;
    sf_close(sf);
    const sf_count_t n = si.frames;
    const int wav = SF_FORMAT_WAV;
    int rc = 1;
    if (!strcmp(kind, "pcm8")) rc = write_file(out, si.samplerate, 1, wav | SF_FORMAT_PCM_U8, x, n);
    else if (!strcmp(kind, "pcm24")) rc = write_file(out, si.samplerate, 1, wav | SF_FORMAT_PCM_24, x, n);
    else if (!strcmp(kind, "float")) rc = write_file(out, si.samplerate, 1, wav | SF_FORMAT_FLOAT, x, n);
    else if (!strcmp(kind, "flac")) rc = write_file(out, si.samplerate, 1, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, x, n);
    else if (!strcmp(kind, "ogg")) rc = write_file(out, si.samplerate, 1, SF_FORMAT_OGG | SF_FORMAT_VORBIS, x, n);
    else if (!strcmp(kind, "mp3")) rc = write_file(out, si.samplerate, 1, SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III, x, n);
    else if (!strcmp(kind, "r8k")) rc = write_file(out, 8000, 1, wav | SF_FORMAT_PCM_16, x, n);
    else if (!strcmp(kind, "r48k")) rc = write_file(out, 48000, 1, wav | SF_FORMAT_PCM_16, x, n);
    else if (!strcmp(kind, "short05")) rc = write_file(out, si.samplerate, 1, wav | SF_FORMAT_PCM_16, x, si.samplerate / 2);
    else if (!strcmp(kind, "short005")) rc = write_file(out, si.samplerate, 1, wav | SF_FORMAT_PCM_16, x, si.samplerate / 20);
    else if (!strcmp(kind, "one")) rc = write_file(out, si.samplerate, 1, wav | SF_FORMAT_PCM_16, x, 1);
    else if (!strcmp(kind, "headeronly")) rc = write_file(out, si.samplerate, 1, wav | SF_FORMAT_PCM_16, x, 0);
    else if (!strcmp(kind, "stereo")) {
        float *y = malloc(sizeof(float) * 2 * (size_t)n);
        if (!y) return 1;
        for (sf_count_t i = 0; i < n; i++) y[2 * i] = x[i], y[2 * i + 1] = 0.5f * x[i];
        rc = write_file(out, si.samplerate, 2, wav | SF_FORMAT_PCM_16, y, n);
        free(y);
    } else if (!strcmp(kind, "nan") || !strcmp(kind, "inf")) {
        x[n / 2] = !strcmp(kind, "nan") ? NAN : INFINITY;
        rc = write_file(out, si.samplerate, 1, wav | SF_FORMAT_FLOAT, x, n);
    } else if (!strcmp(kind, "long2h") || !strcmp(kind, "long125s")) {
        SF_INFO info = {0};
        info.samplerate = 8000;
        info.channels = 1;
        info.format = wav | SF_FORMAT_PCM_U8;
        SNDFILE *f = sf_open(out, SFM_WRITE, &info);
        if (!f) return 1;
        rc = 0;
        const sf_count_t total = !strcmp(kind, "long2h") ? (sf_count_t)2 * 3600 * 8000 : (sf_count_t)125 * 8000;
        for (sf_count_t done = 0; done < total && !rc; done += n)
            if (sf_writef_float(f, x, n) != n) rc = 1;
        sf_close(f);
    } else {
        fprintf(stderr, "mkaudio: unknown kind '%s'\n", kind);
        rc = 2;
    }
    free(x);
    return rc;
}
