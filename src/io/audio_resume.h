/* Resuming an output file (vocis speak --resume): the new file starts with the
 * first N samples of the one a killed run left. Only WAV (16-bit or float)
 * qualifies: its header counts every sample written, so the file of a killed
 * run holds all that a checkpoint recorded; FLAC keeps whole 4096-sample
 * blocks and Ogg/MP3/Opus are lossy, so neither can be continued exactly. */
#ifndef VX_AUDIO_RESUME_H
#define VX_AUDIO_RESUME_H

#include <stdint.h>

#include "io/encode.h"

/* 1 when a job written in fmt can be checkpointed and resumed. */
int vx_audio_fmt_resumable(vx_audio_fmt fmt);
/* Copies the first `samples` samples of the file at src (which must be of fmt, mono, at
 * sample_rate, and hold at least that many) into f, an open vx_audio_file of the same format,
 * without publishing it: until f's next write the old file stays in place. */
vocis_status vx_audio_file_prefill(vx_audio_file *f, const char *src, vx_audio_fmt fmt, int sample_rate,
                                   int64_t samples, vx_err *err);

#endif
