/* vocis serve: samples -> mp3 / opus / flac / wav / pcm bytes, through the
 * library's encoder (io/encode.c) that `vocis speak -o` uses too. */
#include <stdio.h>

#include "io/encode.h"
#include "server/server.h"

vx_enc *vx_enc_open(vx_srv_fmt f, int sr, int streaming, vx_enc_sink sink, void *user, char *err, size_t errlen) {
    static const vx_audio_fmt fmt_of[] = {[VX_FMT_MP3] = VX_AUDIO_MP3, [VX_FMT_OPUS] = VX_AUDIO_OPUS,
                                          [VX_FMT_FLAC] = VX_AUDIO_FLAC, [VX_FMT_WAV] = VX_AUDIO_WAV16,
                                          [VX_FMT_PCM] = VX_AUDIO_S16LE};
    if ((int)f < 0 || f > VX_FMT_PCM) {
        snprintf(err, errlen, "unknown format");
        return NULL;
    }
    vx_err e = {0};
    vx_audio_enc *enc;
    if (vx_audio_enc_open(fmt_of[f], sr, streaming, sink, user, &enc, &e) != VOCIS_OK) {
        snprintf(err, errlen, "%s", e.msg);
        return NULL;
    }
    return enc;
}

int vx_enc_write(vx_enc *e, const float *x, size_t n) { return vx_audio_enc_write(e, x, n); }

int vx_enc_close(vx_enc *e) { return vx_audio_enc_close(e); }
