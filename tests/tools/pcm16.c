/* pcm16 FILE: decodes an audio file (vx_audio_read, at its own rate) and
 * writes its samples to stdout as s16le through vx_audio_to_s16, so that
 * files of several formats (and `vocis speak -o -`) can be compared with cmp. */
#include <stdio.h>
#include <stdlib.h>

#include "io/audio.h"

int main(int argc, char **argv) {
    if (argc != 2) return fprintf(stderr, "usage: pcm16 FILE\n"), 2;
    float *x;
    int64_t n;
    vx_err err = {0};
    if (vx_audio_read(argv[1], 0, &x, &n, &err) != VOCIS_OK) return fprintf(stderr, "pcm16: %s\n", err.msg), 1;
    int16_t *q = malloc(sizeof(int16_t) * (size_t)n);
    if (!q) return fprintf(stderr, "pcm16: out of memory\n"), 1;
    vx_audio_to_s16(x, q, (size_t)n);
    const int ok = fwrite(q, sizeof(int16_t), (size_t)n, stdout) == (size_t)n;
    free(q);
    free(x);
    return ok ? 0 : 1;
}
