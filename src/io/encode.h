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
#include "io/outfile.h"

#define VX_ENC_OGG_SERIAL 0x76786f63u

typedef int (*vx_audio_sink)(void *user, const uint8_t *p, size_t n); /* 0 ok */
typedef struct vx_enc vx_audio_enc;

/* streaming: bytes go to sink as the encoder produces them (a WAV then gets a
 * header of unknown length, as streaming servers send); otherwise the whole
 * file goes to sink at close. */
vocis_status vx_audio_enc_open(vx_audio_fmt fmt, int sample_rate, int streaming, vx_audio_sink sink, void *user,
                               vx_audio_enc **out, vx_err *err);
/* The encoder writing straight into f (a regular file, or a new one, that vx_outfile_open
 * made: seekable), never holding the file in memory: after each vx_audio_enc_write the
 * header counts the samples written (WAV) and every whole Ogg page has the fixed serial,
 * so the file is valid at every moment; vx_audio_enc_close finishes it (FLAC's STREAMINFO,
 * the last Ogg page). */
vocis_status vx_audio_enc_open_file(vx_audio_fmt fmt, int sample_rate, vx_outfile *f, vx_audio_enc **out,
                                    vx_err *err);
int vx_audio_enc_write(vx_audio_enc *e, const float *x, size_t n); /* 0 ok, -1 encoder / sink failure */
int vx_audio_enc_close(vx_audio_enc *e);                           /* flushes and frees; 0 ok */

/* An audio file written as the audio arrives. A regular path (or a new one):
 * encoded straight into a unique temporary that takes the path's place at the
 * first write of samples (until then the old file stays), then grows there,
 * valid and playable at every moment: a WAV's header counts exactly the
 * samples written so far, FLAC holds every whole 4096-sample block, Ogg every
 * whole page (a killed process leaves that). Close finishes the file (same
 * bytes as vx_audio_write of all the samples); abort before the first write
 * leaves the old file, after it the samples written so far. A device or named
 * pipe gets the whole file at close (the encoded file is held in memory, as
 * vx_audio_write does). */
typedef struct vx_audio_file {
    vx_outfile out;
    vx_audio_enc *enc;
    vx_err *err;
    vocis_status sink_st; /* a write failure of the whole-file sink */
    int in_place;         /* the encoder writes into the file (else it gets the whole file at close) */
    int64_t frames;       /* samples written */
} vx_audio_file;

vocis_status vx_audio_file_open(vx_audio_file *f, const char *path, vx_audio_fmt fmt, int sample_rate, vx_err *err);
vocis_status vx_audio_file_write(vx_audio_file *f, const float *x, size_t n);
vocis_status vx_audio_file_close(vx_audio_file *f); /* frees f's contents */
void vx_audio_file_abort(vx_audio_file *f);

#endif
