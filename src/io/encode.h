/* Samples -> encoded audio bytes (every format of vx_audio_fmt) through
 * libsndfile's virtual I/O, an in-memory file: the one encoder of
 * vx_audio_write (files, stdout) and of vocis serve. Output is reproducible:
 * one float -> int16 conversion for every 16-bit format, no PEAK chunk (it
 * holds a timestamp), and a fixed Ogg stream serial number (libsndfile draws
 * a random one; every page is rewritten with VX_ENC_OGG_SERIAL and its CRC). */
#ifndef VX_ENCODE_H
#define VX_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "io/audio.h"

#define VX_ENC_OGG_SERIAL 0x76786f63u

typedef int (*vx_audio_sink)(void *user, const uint8_t *p, size_t n); /* 0 ok */
typedef struct vx_enc vx_audio_enc;

/* streaming: bytes go to sink as the encoder produces them (a WAV then gets a
 * header of unknown length, as streaming servers send); otherwise the whole
 * file goes to sink at close. */
vocis_status vx_audio_enc_open(vx_audio_fmt fmt, int sample_rate, int streaming, vx_audio_sink sink, void *user,
                               vx_audio_enc **out, vx_err *err);
int vx_audio_enc_write(vx_audio_enc *e, const float *x, size_t n); /* 0 ok, -1 encoder / sink failure */
int vx_audio_enc_close(vx_audio_enc *e);                           /* flushes and frees; 0 ok */

#endif
