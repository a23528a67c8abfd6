/* -o OUT and --format of the commands that write audio (speak, convert). */
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/audio.h"

int cli_output_format(const char *cmd, const char *out, const char *format, const char **resolved) {
    vx_audio_fmt f, ext;
    if (format && vx_audio_fmt_parse(format, &f) != 0)
        return cli_error(cmd, "--format must be wav, f32, flac, ogg, mp3 or opus (found '%s')", format), 2;
    const int to_stdout = !strcmp(out, "-");
    if (to_stdout) {
        if (format && f != VX_AUDIO_WAV16 && f != VX_AUDIO_F32)
            return cli_error(cmd, "-o - writes raw PCM: use --format wav (s16le) or f32 (f32le)"), 2;
        if (isatty(STDOUT_FILENO))
            return cli_error(cmd, "-o - writes raw PCM and stdout is a terminal: redirect it to a file or a pipe"), 2;
    } else if (vx_audio_fmt_from_path(out, &ext) == 0) {
        if (!format) {
            *resolved = vx_audio_fmt_name(ext);
            return 0;
        }
        if (f != ext && !(ext == VX_AUDIO_WAV16 && f == VX_AUDIO_F32))
            return cli_error(cmd, "--format %s contradicts the extension of %s (change one, or drop --format)", format,
                             out), 2;
    }
    *resolved = format ? format : "wav";
    return 0;
}
