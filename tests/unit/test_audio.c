/* Audio I/O: round trips per format, mono down-mix, soxr resampling length
 * and quality, raw PCM to stdout, and error cases. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/audio.h"
#include "testlib.h"

static char dir[256];

static const char *tmp(const char *name) {
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

/* No writer's temporary (NAME.XXXXXX.tmp) is left in the scratch folder. */
static int temp_left(void) {
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));) found |= strstr(e->d_name, ".tmp") != NULL;
    if (d) closedir(d);
    return found;
}


static void sine(float *x, int64_t n, double freq, double sr, double amp) {
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(amp * sin(2 * M_PI * freq * (double)i / sr));
}

static void round_trip(vx_audio_fmt fmt, double atol) {
    enum { N = 4801 };
    float x[N];
    sine(x, N, 440, 24000, 0.5);
    x[10] = 1.5f; /* clipped by integer formats */
    char name[64];
    snprintf(name, sizeof name, "rt_%s.audio", vx_audio_fmt_name(fmt));
    const char *p = tmp(name);
    char path[512];
    snprintf(path, sizeof path, "%s", p);
    vx_err err = {0};
    CHECK_MSG(vx_audio_write(path, fmt, 24000, x, N, &err) == VOCIS_OK, "%s", err.msg);
    CHECK(!temp_left());
    float *y = NULL;
    int64_t n = 0;
    int sr = 0;
    CHECK_MSG(vx_audio_read_sr(path, 0, &y, &n, &sr, &err) == VOCIS_OK, "%s", err.msg);
    CHECK(sr == 24000);
    CHECK_MSG(n == N, "%s: %lld samples", vx_audio_fmt_name(fmt), (long long)n);
    if (y && n == N) {
        if (fmt == VX_AUDIO_F32) {
            CHECK(memcmp(x, y, sizeof x) == 0);
        } else {
            x[10] = 1.0f;
            CHECK_CLOSE(y, x, N, atol);
        }
    }
    free(y);
}

static void test_stereo_and_native(void) {
    /* 2-channel 16-bit WAV at 24 kHz written directly with libsndfile */
    SF_INFO info = {0};
    info.samplerate = 24000;
    info.channels = 2;
    info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
    const char *p = tmp("stereo.wav");
    SNDFILE *sf = sf_open(p, SFM_WRITE, &info);
    CHECK(sf != NULL);
    short fr[6] = {1000, 3000, -2000, -4000, 32767, 32767};
    sf_writef_short(sf, fr, 3);
    sf_close(sf);
    float *y = NULL;
    int64_t n = 0;
    vx_err err = {0};
    CHECK_MSG(vx_audio_read(p, 24000, &y, &n, &err) == VOCIS_OK, "%s", err.msg);
    CHECK(n == 3);
    if (n == 3) {
        CHECK(y[0] == 2000.0f / 32768.0f);
        CHECK(y[1] == -3000.0f / 32768.0f);
        CHECK(y[2] == 32767.0f / 32768.0f);
    }
    free(y);
}

static void test_resample(void) {
    /* 16 kHz -> 24 kHz: length ceil(n * 1.5); a 300 Hz tone survives */
    enum { N = 16001 };
    static float x[N];
    sine(x, N, 300, 16000, 0.5);
    const char *p = tmp("tone16k.wav");
    char path[512];
    snprintf(path, sizeof path, "%s", p);
    vx_err err = {0};
    CHECK_MSG(vx_audio_write(path, VX_AUDIO_F32, 16000, x, N, &err) == VOCIS_OK, "%s", err.msg);
    float *y = NULL;
    int64_t n = 0;
    int sr = 0;
    CHECK_MSG(vx_audio_read_sr(path, 24000, &y, &n, &sr, &err) == VOCIS_OK, "%s", err.msg);
    CHECK(sr == 24000);
    CHECK_MSG(n == 24002, "resampled length %lld, expected 24002", (long long)n);
    if (n == 24002) {
        /* soxr is linear-phase with its delay compensated: compare away from the edges */
        double worst = 0;
        for (int64_t i = 2000; i < 22000; i++) {
            double want = 0.5 * sin(2 * M_PI * 300 * (double)i / 24000);
            double d = fabs(y[i] - want);
            if (d > worst) worst = d;
        }
        CHECK_MSG(worst < 1e-3, "resampled tone deviates by %g", worst);
    }
    free(y);

    /* direct API: downsampling and odd lengths; librosa's ceil(n * ratio) */
    float *z = NULL;
    int64_t m = 0;
    CHECK(vx_audio_resample(x, 1001, 16000, 24000, &z, &m, &err) == VOCIS_OK && m == 1502);
    free(z);
    CHECK(vx_audio_resample(x, 1001, 44100, 24000, &z, &m, &err) == VOCIS_OK &&
          m == (int64_t)ceil(1001 * (24000.0 / 44100.0)));
    free(z);
    CHECK(vx_audio_resample(x, 7, 24000, 24000, &z, &m, &err) == VOCIS_OK && m == 7 && z[3] == x[3]);
    free(z);
    CHECK(vx_audio_resample(x, 7, 0, 24000, &z, &m, &err) == VOCIS_E_ARG);
}

static void test_stdout(void) {
    float x[4] = {0.5f, -0.25f, 2.0f, -2.0f};
    const char *p = tmp("stdout.raw");
    char path[512];
    snprintf(path, sizeof path, "%s", p);
    for (int f32 = 0; f32 < 2; f32++) {
        fflush(stdout);
        int saved = dup(STDOUT_FILENO);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, STDOUT_FILENO);
        close(fd);
        vx_err err = {0};
        vocis_status st = vx_audio_write("-", f32 ? VX_AUDIO_F32 : VX_AUDIO_WAV16, 24000, x, 4, &err);
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        close(saved);
        CHECK_MSG(st == VOCIS_OK, "%s", err.msg);
        FILE *fp = fopen(path, "rb");
        unsigned char b[64];
        size_t got = fp ? fread(b, 1, sizeof b, fp) : 0;
        if (fp) fclose(fp);
        if (f32) {
            CHECK(got == 16);
            float v[4];
            for (int i = 0; i < 4; i++) {
                uint32_t u = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 |
                             (uint32_t)b[4 * i + 3] << 24;
                memcpy(&v[i], &u, 4);
            }
            CHECK(memcmp(v, x, sizeof v) == 0);
        } else {
            CHECK(got == 8);
            int16_t v[4];
            for (int i = 0; i < 4; i++)
                v[i] = (int16_t)(b[2 * i] | b[2 * i + 1] << 8);
            CHECK(v[0] == 16384 || v[0] == 16383);
            CHECK(v[1] == -8192 || v[1] == -8191);
            CHECK(v[2] >= 32767);
            CHECK(v[3] <= -32767);
        }
    }
    vx_err err = {0};
    CHECK(vx_audio_write("-", VX_AUDIO_FLAC, 24000, x, 4, &err) == VOCIS_E_ARG);
}

static void test_errors(void) {
    vx_err err = {0};
    float *y = NULL;
    int64_t n = 0;
    /* missing file */
    CHECK(vx_audio_read(tmp("nope.wav"), 24000, &y, &n, &err) == VOCIS_E_IO);
    CHECK(strstr(err.msg, "nope.wav") != NULL && strchr(err.msg, '\n') == NULL);
    /* garbage bytes */
    const char *g = tmp("garbage.wav");
    char gp[512];
    snprintf(gp, sizeof gp, "%s", g);
    FILE *fp = fopen(gp, "wb");
    for (int i = 0; i < 1000; i++)
        fputc((i * 7919) & 0xff, fp);
    fclose(fp);
    err = (vx_err){0};
    CHECK(vx_audio_read(gp, 24000, &y, &n, &err) == VOCIS_E_FORMAT);
    CHECK(strstr(err.msg, "garbage.wav") != NULL);
    /* a WAV header that claims data but holds none / truncated */
    fp = fopen(gp, "wb");
    fclose(fp);
    err = (vx_err){0};
    CHECK(vx_audio_read(gp, 24000, &y, &n, &err) == VOCIS_E_FORMAT);
    /* a valid WAV file with zero samples */
    float one = 0.f;
    char ep[512];
    snprintf(ep, sizeof ep, "%s", tmp("empty.wav"));
    CHECK(vx_audio_write(ep, VX_AUDIO_WAV16, 24000, &one, 0, &err) == VOCIS_OK);
    err = (vx_err){0};
    CHECK(vx_audio_read(ep, 24000, &y, &n, &err) == VOCIS_E_FORMAT);
    CHECK(strstr(err.msg, "no audio samples") != NULL);
    /* a directory */
    err = (vx_err){0};
    CHECK(vx_audio_read(dir, 24000, &y, &n, &err) == VOCIS_E_IO);
    CHECK(y == NULL);

    /* unwritable: missing folder; and a target that is a folder (rename fails) */
    float x[16] = {0};
    char wp[512];
    snprintf(wp, sizeof wp, "%s/no/such/dir/out.wav", dir);
    err = (vx_err){0};
    CHECK(vx_audio_write(wp, VX_AUDIO_WAV16, 24000, x, 16, &err) == VOCIS_E_IO);
    CHECK(strstr(err.msg, "out.wav") != NULL);
    char dp[512];
    snprintf(dp, sizeof dp, "%s/adir", dir);
    mkdir(dp, 0755);
    err = (vx_err){0};
    CHECK(vx_audio_write(dp, VX_AUDIO_WAV16, 24000, x, 16, &err) == VOCIS_E_IO);
    CHECK(!temp_left());
    err = (vx_err){0};
    CHECK(vx_audio_write(tmp("bad.wav"), VX_AUDIO_WAV16, 0, x, 16, &err) == VOCIS_E_ARG);

    /* a header claiming 1 Hz (found by fuzz_audio: resampling to 24 kHz blew
     * 4000 samples up to 96 million), and one above VX_AUDIO_MAX_RATE; the bounds themselves are accepted */
    const unsigned rates[4] = {1, VX_AUDIO_MIN_RATE, VX_AUDIO_MAX_RATE + 1, VX_AUDIO_MAX_RATE};
    for (int k = 0; k < 4; k++) {
        unsigned rate = rates[k], nfr = 4000;
        unsigned char h[44];
        memcpy(h, "RIFF\0\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0", 24);
        unsigned vals[4] = {rate, rate * 2, 2u | (16u << 16), 0};
        for (int v = 0; v < 3; v++)
            for (int b = 0; b < 4; b++) h[24 + 4 * v + b] = (unsigned char)(vals[v] >> (8 * b));
        memcpy(h + 36, "data", 4);
        for (int b = 0; b < 4; b++) {
            h[40 + b] = (unsigned char)((nfr * 2) >> (8 * b));
            h[4 + b] = (unsigned char)((36 + nfr * 2) >> (8 * b));
        }
        fp = fopen(gp, "wb");
        fwrite(h, 1, sizeof h, fp);
        for (unsigned i = 0; i < nfr * 2; i++) fputc(0, fp);
        fclose(fp);
        err = (vx_err){0};
        y = NULL;
        vocis_status st = vx_audio_read(gp, 24000, &y, &n, &err);
        if (k % 2) {
            CHECK_MSG(st == VOCIS_OK && n == (int64_t)ceil(4000.0 * 24000 / rate), "%u Hz: %s", rate, err.msg);
        } else {
            char want[32];
            snprintf(want, sizeof want, " %u Hz", rate);
            CHECK_MSG(st == VOCIS_E_FORMAT && strstr(err.msg, want) && y == NULL, "%s", err.msg);
        }
        free(y);
    }

    vx_audio_fmt f;
    CHECK(vx_audio_fmt_parse("wav16", &f) == 0 && f == VX_AUDIO_WAV16);
    CHECK(vx_audio_fmt_parse("f32", &f) == 0 && f == VX_AUDIO_F32);
    CHECK(vx_audio_fmt_parse("flac", &f) == 0 && f == VX_AUDIO_FLAC);
    CHECK(vx_audio_fmt_parse("ogg", &f) == 0 && f == VX_AUDIO_OGG);
    CHECK(vx_audio_fmt_parse("mp3", &f) == 0 && f == VX_AUDIO_MP3);
    CHECK(vx_audio_fmt_parse("opus", &f) == 0 && f == VX_AUDIO_OPUS);
    CHECK(vx_audio_fmt_parse("aiff", &f) == -1);
    CHECK(vx_audio_fmt_parse("s16le", &f) == -1); /* raw PCM only through "-" */
    CHECK(vx_audio_fmt_from_path("a/b.FLAC", &f) == 0 && f == VX_AUDIO_FLAC);
    CHECK(vx_audio_fmt_from_path("x.opus", &f) == 0 && f == VX_AUDIO_OPUS);
    CHECK(vx_audio_fmt_from_path("x.mp3", &f) == 0 && f == VX_AUDIO_MP3);
    CHECK(vx_audio_fmt_from_path("x.ogg", &f) == 0 && f == VX_AUDIO_OGG);
    CHECK(vx_audio_fmt_from_path("x.wav", &f) == 0 && f == VX_AUDIO_WAV16);
    CHECK(vx_audio_fmt_from_path("x.raw", &f) == -1 && vx_audio_fmt_from_path("dir.flac/x", &f) == -1);
    CHECK(vx_audio_fmt_from_path("-", &f) == -1);
}

/* One float -> int16 conversion: rounds to nearest, clips, and inverts reading (int16 / 32768). */
static void test_s16(void) {
    const float x[] = {0.0f, 1.0f, -1.0f, 2.0f, -2.0f, NAN, 100.6f / 32768, -100.6f / 32768, 0.25f};
    const int16_t want[] = {0, 32767, -32768, 32767, -32768, 0, 101, -101, 8192};
    int16_t y[9];
    vx_audio_to_s16(x, y, 9);
    CHECK(memcmp(y, want, sizeof y) == 0);
    int bad = 0;
    for (int k = -32768; k < 32768; k++) {
        float v = (float)k / 32768.0f;
        int16_t q;
        vx_audio_to_s16(&v, &q, 1);
        bad += q != k;
    }
    CHECK_MSG(bad == 0, "%d int16 values do not survive read + write", bad);
}

/* Same samples -> same bytes in every format (no timestamp, fixed Ogg serial),
 * and the same decoded samples in every 16-bit format. */
static void test_reproducible(void) {
    enum { N = 24000 };
    static float x[N];
    sine(x, N, 220, 24000, 0.6);
    for (int i = 0; i < N; i += 7) x[i] += 0.37f / 32768; /* values between two int16 steps */
    const vx_audio_fmt fmts[] = {VX_AUDIO_WAV16, VX_AUDIO_F32, VX_AUDIO_FLAC, VX_AUDIO_OGG, VX_AUDIO_MP3, VX_AUDIO_OPUS};
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        unsigned char *b[2] = {0};
        size_t len[2] = {0};
        for (int r = 0; r < 2; r++) {
            char name[64];
            snprintf(name, sizeof name, "same%d.%s", r, vx_audio_fmt_name(fmts[k]));
            vx_err err = {0};
            CHECK_MSG(vx_audio_write(tmp(name), fmts[k], 24000, x, N, &err) == VOCIS_OK, "%s", err.msg);
            b[r] = tl_slurp(tmp(name), &len[r]);
            if (r == 0) usleep(1100000 * (fmts[k] == VX_AUDIO_F32)); /* a PEAK chunk's timestamp has 1 s steps */
        }
        CHECK_MSG(b[0] && b[1] && len[0] > 44 && len[0] == len[1] && !memcmp(b[0], b[1], len[0]),
                  "%s: two writes of the same samples differ", vx_audio_fmt_name(fmts[k]));
        free(b[0]);
        free(b[1]);
        float *y = NULL;
        int64_t n = 0;
        vx_err err = {0};
        char name[64];
        snprintf(name, sizeof name, "same0.%s", vx_audio_fmt_name(fmts[k]));
        CHECK_MSG(vx_audio_read(tmp(name), 24000, &y, &n, &err) == VOCIS_OK && n > N / 2, "%s: %s",
                  vx_audio_fmt_name(fmts[k]), err.msg);
        free(y);
    }
    float *w = NULL, *f = NULL;
    int64_t nw = 0, nf = 0;
    vx_err err = {0};
    CHECK(vx_audio_read(tmp("same0.wav16"), 0, &w, &nw, &err) == VOCIS_OK);
    CHECK(vx_audio_read(tmp("same0.flac"), 0, &f, &nf, &err) == VOCIS_OK);
    CHECK_MSG(w && f && nw == N && nf == N && !memcmp(w, f, sizeof(float) * N), "WAV and FLAC samples differ");
    int16_t q[N];
    vx_audio_to_s16(x, q, N);
    int bad = 0;
    for (int i = 0; w && nw == N && i < N; i++) bad += w[i] != (float)q[i] / 32768.0f;
    CHECK_MSG(bad == 0, "%d WAV samples are not vx_audio_to_s16's", bad);
    free(w);
    free(f);
    CHECK(!temp_left());
}

static void test_golden_voice(void) {
    /* the VibeVoice golden voices are 24 kHz PCM16: no resampling, int16 / 32768 */
    float *y = NULL;
    int64_t n = 0;
    vx_err err = {0};
    CHECK_MSG(vx_audio_read(tl_path("vibevoice/inputs/voice_0.wav"), 24000, &y, &n, &err) == VOCIS_OK, "%s", err.msg);
    CHECK(n == 60000);
    free(y);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    snprintf(dir, sizeof dir, "/tmp/vocis_test_audio_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    round_trip(VX_AUDIO_WAV16, 1.0 / 32767 + 1e-7);
    round_trip(VX_AUDIO_F32, 0);
    round_trip(VX_AUDIO_FLAC, 1.0 / 32767 + 1e-7);
    round_trip(VX_AUDIO_OGG, 0.2); /* lossy: only checks that it decodes to the same length */
    test_stereo_and_native();
    test_resample();
    test_stdout();
    test_errors();
    test_golden_voice();
    test_s16();
    test_reproducible();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return tl_finish("test_audio");
}
