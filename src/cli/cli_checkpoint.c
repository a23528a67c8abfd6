/* vocis speak --checkpoint / --resume: which command lines can be resumed exactly. */
#include <string.h>

#include "cli/cli.h"
#include "io/audio.h"
#include "io/audio_resume.h"

int cli_checkpoint_check(vocis_checkpoint_options *ck, const char *out, const char *format, int seeded,
                         int chapters, int stream_text) {
    if (!ck->path && !ck->resume_path) return 0;
    if (!ck->path) ck->path = ck->resume_path; /* a resumed job keeps checkpointing where it was */
    vx_audio_fmt fmt = VX_AUDIO_WAV16;
    vx_audio_fmt_parse(format, &fmt);
    if (!strcmp(out, "-"))
        return cli_error("speak", "--checkpoint/--resume need -o FILE: audio sent to stdout cannot be taken back");
    if (chapters || stream_text)
        return cli_error("speak", "--checkpoint/--resume are not available with %s",
                         chapters ? "--chapters" : "--stream-text");
    if (!vx_audio_fmt_resumable(fmt))
        return cli_error("speak", "--checkpoint/--resume need a WAV output (--format wav or f32), not %s: a killed "
                         "%s file cannot be continued sample-exactly", format, format);
    if (!seeded)
        return cli_error("speak", "--checkpoint/--resume need --seed N: the resumed run must draw the same random "
                         "stream");
    return 0;
}
