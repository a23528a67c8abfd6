/* Incremental audio files (io/encode.h vx_audio_file): written in pieces, a
 * copy of the file taken after each piece, while the writer still has it open,
 * opens with libsndfile and holds exactly the samples written so far (WAV; FLAC
 * and Ogg: at least everything but the encoder's unfinished block / page; Ogg
 * only whole pages, all of the fixed serial number). The
 * old file stays until the first samples; the finished file has the bytes of
 * vx_audio_write of all the samples. */
#include <dirent.h>
#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/audio.h"
#include "io/encode.h"
#include "testlib.h"

static char dir[256];

static const char *tmp(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}


static int copy_file(const char *from, const char *to) {
    size_t n;
    unsigned char *b = tl_slurp(from, &n);
    FILE *fp = b ? fopen(to, "wb") : NULL;
    int ok = fp && fwrite(b, 1, n, fp) == n;
    if (fp) ok &= fclose(fp) == 0;
    free(b);
    return ok ? 0 : -1;
}

/* Frames libsndfile reads from path (its header's count and what it decodes); -1 if it cannot open it. */
static int64_t frames_in(const char *path, int64_t *header, float *y, int64_t cap) {
    SF_INFO info = {0};
    SNDFILE *sf = sf_open(path, SFM_READ, &info);
    if (!sf) return -1;
    *header = info.frames;
    int64_t got = 0;
    for (sf_count_t r; got < cap && (r = sf_readf_float(sf, y + got, cap - got)) > 0;) got += r;
    float extra;
    if (got == cap && sf_readf_float(sf, &extra, 1) > 0) got++;
    sf_close(sf);
    return got;
}

/* The Ogg file at path is whole pages, every one of the fixed serial number. */
static int ogg_whole_pages(const char *path) {
    size_t n, off = 0;
    unsigned char *b = tl_slurp(path, &n);
    while (b && off + 27 <= n && !memcmp(b + off, "OggS", 4)) {
        const unsigned char *pg = b + off;
        const uint32_t serial = pg[14] | pg[15] << 8 | pg[16] << 16 | (uint32_t)pg[17] << 24;
        size_t size = 27 + pg[26];
        for (int i = 0; i < pg[26] && off + 27 + i < n; i++) size += pg[27 + i];
        if (serial != VX_ENC_OGG_SERIAL) break;
        off += size;
    }
    free(b);
    return b && off == n;
}

static void pieces(vx_audio_fmt fmt) {
    enum { PIECE = 24000, PIECES = 5, N = PIECE * PIECES };
    static float x[N], y[N + 1];
    tl_fill_random(x, N, 7); /* noise: lossy encoders fill their pages quickly */
    for (int i = 0; i < N; i++) x[i] = 0.3f * x[i] + (float)(0.4 * sin(2 * M_PI * 440 * i / 24000.0));
    char name[64], ref[64];
    snprintf(name, sizeof name, "pieces.%s", vx_audio_fmt_name(fmt));
    snprintf(ref, sizeof ref, "whole.%s", vx_audio_fmt_name(fmt));
    const char *path = tmp(name), *copy = tmp("copy");
    FILE *old = fopen(path, "wb");
    fputs("old", old);
    fclose(old);
    vx_err err = {0};
    vx_audio_file f;
    CHECK_MSG(vx_audio_file_open(&f, path, fmt, 24000, &err) == VOCIS_OK, "%s", err.msg);
    size_t n;
    unsigned char *b = tl_slurp(path, &n);
    CHECK_MSG(n == 3 && !memcmp(b, "old", 3), "%s: the old file stays until the first samples", name);
    free(b);
    const int exact = fmt == VX_AUDIO_WAV16 || fmt == VX_AUDIO_F32;
    const double atol = fmt == VX_AUDIO_F32 ? 0 : fmt == VX_AUDIO_OGG ? 0.2 : 1.0 / 32767 + 1e-7;
    for (int k = 1; k <= PIECES; k++) {
        CHECK_MSG(vx_audio_file_write(&f, x + (k - 1) * PIECE, PIECE) == VOCIS_OK, "%s", err.msg);
        CHECK(copy_file(path, copy) == 0);
        int64_t header = -1, got = frames_in(copy, &header, y, N);
        const int64_t want = (int64_t)k * PIECE;
        if (exact) {
            CHECK_MSG(got == want && header == want, "%s after piece %d: header %lld, read %lld, written %lld",
                      name, k, (long long)header, (long long)got, (long long)want);
        } else { /* FLAC holds whole 4096-sample blocks; Ogg whole pages (the first one may only be headers) */
            const int64_t slack = fmt == VX_AUDIO_FLAC ? 4096 : 2 * PIECE;
            CHECK_MSG(got <= want && got >= want - slack, "%s after piece %d: read %lld of %lld written", name, k,
                      (long long)got, (long long)want);
        }
        if (fmt == VX_AUDIO_OGG || fmt == VX_AUDIO_OPUS)
            CHECK_MSG(ogg_whole_pages(copy), "%s after piece %d: not whole pages of the fixed serial", name, k);
        if (got > 0 && fmt != VX_AUDIO_OGG && fmt != VX_AUDIO_OPUS) CHECK_CLOSE(y, x, (size_t)(got < want ? got : want), atol);
    }
    CHECK_MSG(vx_audio_file_close(&f) == VOCIS_OK, "%s", err.msg);
    CHECK(vx_audio_write(tmp(ref), fmt, 24000, x, N, &err) == VOCIS_OK);
    size_t na, nb;
    unsigned char *a = tl_slurp(path, &na), *w = tl_slurp(tmp(ref), &nb);
    CHECK_MSG(a && w && na == nb && !memcmp(a, w, na), "%s: %zu bytes, vx_audio_write %zu", name, na, nb);
    free(a), free(w);
}

/* abort before any samples keeps the old file; after some, the file holds them. */
static void test_abort(void) {
    enum { N = 2400 };
    float x[N] = {0.25f};
    const char *path = tmp("abort.wav");
    vx_err err = {0};
    vx_audio_file f;
    FILE *old = fopen(path, "wb");
    fputs("old", old);
    fclose(old);
    CHECK(vx_audio_file_open(&f, path, VX_AUDIO_WAV16, 24000, &err) == VOCIS_OK);
    vx_audio_file_abort(&f);
    size_t n;
    unsigned char *b = tl_slurp(path, &n);
    CHECK(n == 3 && !memcmp(b, "old", 3));
    free(b);
    CHECK(vx_audio_file_open(&f, path, VX_AUDIO_WAV16, 24000, &err) == VOCIS_OK);
    CHECK(vx_audio_file_write(&f, x, N) == VOCIS_OK);
    vx_audio_file_abort(&f);
    float y[N + 1];
    int64_t header = -1;
    CHECK(frames_in(path, &header, y, N) == N && header == N);
    DIR *d = opendir(dir);
    int temps = 0;
    for (struct dirent *e; d && (e = readdir(d));) temps += strstr(e->d_name, ".tmp") != NULL;
    if (d) closedir(d);
    CHECK_MSG(temps == 0, "a temporary was left in %s", dir);
    CHECK(vx_audio_file_open(&f, tmp("no/such/dir.wav"), VX_AUDIO_WAV16, 24000, &err) == VOCIS_E_IO);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    snprintf(dir, sizeof dir, "/tmp/vocis_test_audio_file_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    pieces(VX_AUDIO_WAV16);
    pieces(VX_AUDIO_F32);
    pieces(VX_AUDIO_FLAC);
    pieces(VX_AUDIO_OGG);
    pieces(VX_AUDIO_OPUS);
    test_abort();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!getenv("KEEP") && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return tl_finish("test_audio_file");
}
