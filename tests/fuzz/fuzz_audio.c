/* libFuzzer target: arbitrary bytes as an audio file (any format libsndfile
 * reads) through vx_audio_read at 24 kHz, i.e. decoding, channel averaging
 * and soxr resampling, then through the head-only reader (first 0.1 s at
 * 16 kHz). Run with a bounded -max_len (a few KiB).
 *
 * libsndfile is not instrumented, so the target reports what the file opened
 * as (container, codec, channels, rate, length, or the open error) as extra
 * libFuzzer features: inputs that reach another decoder stay in the corpus. */
#define _GNU_SOURCE
#include <math.h>
#include <sndfile.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "io/audio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* The codec libraries under libsndfile leak on some corrupt streams (e.g.
 * vorbis_info_init's allocation when a Vorbis header is bad): not ours to fix.
 * Leaks whose allocation stack has no codec frame (an SNDFILE never closed,
 * our buffers) are still reported. */
const char *__lsan_default_suppressions(void) {
    return "leak:libvorbis.so\nleak:libvorbisenc.so\nleak:libogg.so\nleak:libFLAC.so\nleak:libopus.so\n"
           "leak:libmpg123.so\nleak:libmp3lame.so\n";
}

static fz_memfile mf;

__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t features[512];

static int log2_bucket(int64_t v) {
    int b = 0;
    while (v > 1 && b < 40) v >>= 1, b++;
    return b;
}

static void note_format(void) {
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *sf = sf_open(mf.path, SFM_READ, &info);
    if (!sf) {
        const char *why = sf_strerror(NULL);
        unsigned h = 0;
        while (why && *why) h = h * 31u + (unsigned char)*why++;
        features[448 + h % 64] = 1;
        return;
    }
    features[(info.format >> 16) & 63] = 1;
    features[64 + (info.format & 0xff)] = 1;
    features[320 + (info.channels < 1 ? 0 : info.channels > 8 ? 9 : info.channels)] = 1;
    features[330 + log2_bucket(info.samplerate) % 40] = 1;
    features[370 + log2_bucket(info.frames) % 40] = 1;
    float buf[64];
    sf_count_t got = info.channels >= 1 && info.channels <= 16 ? sf_readf_float(sf, buf, 64 / info.channels) : 0;
    features[410 + (got > 0) + 2 * (sf_error(sf) != 0)] = 1;
    sf_close(sf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_memfile_set(&mf, data, size);
    note_format();
    vx_err e = {0};
    float *x = NULL;
    int64_t n = 0;
    int sr = 0;
    if (vx_audio_read_sr(mf.path, 24000, &x, &n, &sr, &e) == VOCIS_OK) {
        if (!x || n < 1 || sr != 24000) abort();
        volatile float sink = 0;
        for (int64_t i = 0; i < n; i++) sink += x[i];
        (void)sink;
    } else if (x || !e.msg[0]) {
        abort();
    }
    free(x);
    /* the head-only reader of voice cloning and conversion: at most max_seconds come back */
    vx_audio_info info;
    x = NULL;
    if (vx_audio_read_head(mf.path, 16000, 0.1, &x, &n, &info, &e) == VOCIS_OK && (!x || n < 1 || n > 1600))
        abort();
    free(x);
    return 0;
}
