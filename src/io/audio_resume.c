#include "io/audio_resume.h"

#include <sndfile.h>
#include <stdlib.h>

int vx_audio_fmt_resumable(vx_audio_fmt fmt) { return fmt == VX_AUDIO_WAV16 || fmt == VX_AUDIO_F32; }

vocis_status vx_audio_file_prefill(vx_audio_file *f, const char *src, vx_audio_fmt fmt, int sr, int64_t samples,
                                   vx_err *err) {
    if (!vx_audio_fmt_resumable(fmt))
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: only a WAV output can be resumed exactly", src);
    SF_INFO info = {0};
    SNDFILE *sf = sf_open(src, SFM_READ, &info);
    if (!sf)
        return vx_fail(err, VOCIS_E_IO, "%s: cannot resume into it: %s", src, sf_strerror(NULL));
    const int want = SF_FORMAT_WAV | (fmt == VX_AUDIO_F32 ? SF_FORMAT_FLOAT : SF_FORMAT_PCM_16);
    vocis_status st = VOCIS_OK;
    if ((info.format & (SF_FORMAT_TYPEMASK | SF_FORMAT_SUBMASK)) != want || info.channels != 1 ||
        info.samplerate != sr)
        st = vx_fail(err, VOCIS_E_FORMAT, "%s is not this job's output (another format, rate or channel count)", src);
    else if (info.frames < samples)
        st = vx_fail(err, VOCIS_E_FORMAT, "%s holds %lld samples, the checkpoint %lld: it is not the output the "
                     "checkpointed run left", src, (long long)info.frames, (long long)samples);
    float *buf = st ? NULL : malloc(sizeof(float) * 65536);
    if (!st && !buf) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int64_t done = 0; !st && done < samples;) {
        const sf_count_t want_n = samples - done < 65536 ? (sf_count_t)(samples - done) : 65536;
        if (sf_readf_float(sf, buf, want_n) != want_n) {
            st = vx_fail(err, VOCIS_E_IO, "%s: reading its samples failed: %s", src, sf_strerror(sf));
        } else if (vx_audio_enc_write(f->enc, buf, (size_t)want_n) != 0) {
            st = vx_fail(err, VOCIS_E_IO, "%s: writing the audio failed", f->out.name);
        } else {
            f->frames += want_n;
            done += want_n;
        }
    }
    free(buf);
    sf_close(sf);
    return st;
}
