/* Audio files: reading any format libsndfile knows (mono float32, resampled
 * with libsoxr the way librosa.load(path, sr=..., mono=True) does), and
 * writing WAV / FLAC / Ogg Vorbis / MP3 / Opus files or raw PCM to stdout. */
#ifndef VX_AUDIO_H
#define VX_AUDIO_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Read an audio file as mono float32 in [-1, 1] (integer PCM scaled like
 * libsndfile / soundfile: int16 / 32768). Channels are averaged. When
 * target_sr > 0 and differs from the file's rate, the signal is resampled
 * with soxr "HQ" (librosa's default res_type soxr_hq) and its length fixed
 * to ceil(n * target_sr / file_sr) (librosa's fix_length). target_sr <= 0
 * keeps the file's rate. *samples is malloc'd (free()); *n >= 1.
 * Errors: missing/unreadable file (VOCIS_E_IO), unknown or corrupt format,
 * a file without samples, or one whose header gives a rate outside
 * [VX_AUDIO_MIN_RATE, VX_AUDIO_MAX_RATE] or more than VX_AUDIO_MAX_CHANNELS channels (VOCIS_E_FORMAT). */
#define VX_AUDIO_MIN_RATE 1000
#define VX_AUDIO_MAX_RATE 768000 /* the highest PCM rate of audio hardware (4 x 192 kHz) */
#define VX_AUDIO_MAX_CHANNELS 1024
vocis_status vx_audio_read(const char *path, int target_sr, float **samples, int64_t *n, vx_err *err);

/* Same, also reporting the rate of the returned samples (*sr may be NULL). */
vocis_status vx_audio_read_sr(const char *path, int target_sr, float **samples, int64_t *n, int *sr, vx_err *err);

/* What vx_audio_read_head saw in the file. */
typedef struct vx_audio_info {
    int sample_rate;     /* the file's rate */
    int channels;
    int64_t file_frames; /* frames the header announces (may be inexact for some containers) */
    int truncated;       /* 1 when reading stopped at max_seconds */
} vx_audio_info;

/* vx_audio_read_sr reading at most the first max_seconds of the file (> 0;
 * 0 = all) plus one second of look-ahead for the resampler, then keeping
 * ceil(max_seconds · rate) samples: a long recording is never decoded whole.
 * info (optional) describes the file. Files holding NaN/Inf float samples are
 * refused (VOCIS_E_FORMAT). */
vocis_status vx_audio_read_head(const char *path, int target_sr, double max_seconds, float **samples, int64_t *n,
                                vx_audio_info *info, vx_err *err);

/* Resample mono float32 from sr_in to sr_out as python-soxr's
 * soxr.resample(x, sr_in, sr_out, 'soxr_hq') followed by librosa's
 * fix_length to ceil(n * sr_out / sr_in) samples. sr_in == sr_out copies.
 * *y is malloc'd. */
vocis_status vx_audio_resample(const float *x, int64_t n, int sr_in, int sr_out, float **y, int64_t *m, vx_err *err);

typedef enum vx_audio_fmt {
    VX_AUDIO_WAV16 = 0, /* WAV, 16-bit PCM (default) */
    VX_AUDIO_F32,       /* WAV, 32-bit float */
    VX_AUDIO_FLAC,      /* FLAC, 16-bit */
    VX_AUDIO_OGG,       /* Ogg Vorbis */
    VX_AUDIO_MP3,       /* MPEG layer III (LAME) */
    VX_AUDIO_OPUS,      /* Ogg Opus */
    VX_AUDIO_S16LE,     /* raw little-endian 16-bit PCM (no header) */
    VX_AUDIO_F32LE      /* raw little-endian 32-bit float */
} vx_audio_fmt;

/* "wav16" | "wav" | "f32" | "flac" | "ogg" | "mp3" | "opus" -> fmt; 0 on success, -1 if unknown. */
int vx_audio_fmt_parse(const char *name, vx_audio_fmt *out);
const char *vx_audio_fmt_name(vx_audio_fmt fmt);
/* The format a path's extension names (.wav .flac .ogg .mp3 .opus, any case);
 * 0 on success, -1 when the extension names none of them. */
int vx_audio_fmt_from_path(const char *path, vx_audio_fmt *out);

/* The one float -> 16-bit PCM conversion of every 16-bit output (WAV, FLAC,
 * raw s16le, the server's): x * 32768 rounded to nearest, clipped to
 * [-32768, 32767], NaN -> 0, so that reading back (int16 / 32768) and writing
 * again gives the same samples. */
void vx_audio_to_s16(const float *x, int16_t *y, size_t n);

/* Write n mono float samples at rate sr in fmt (not the raw ones: "-" picks
 * those). Integer and lossy formats clip to [-1, 1]. path is written as
 * io/outfile.h says: a regular file is replaced atomically (a failure leaves
 * the old file, or none), a symlink's target is written, a device or pipe is
 * written through. path "-" writes raw little-endian PCM to stdout: s16le, or
 * f32le for VX_AUDIO_F32 (the other formats are refused for "-"). */
vocis_status vx_audio_write(const char *path, vx_audio_fmt fmt, int sr, const float *x, int64_t n, vx_err *err);

#endif
