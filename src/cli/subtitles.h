/* --subtitles FILE.srt|FILE.vtt: the cues of a synthesis (vocis_cue) as SubRip or WebVTT, each
 * written and flushed as it is reported, so a job that is killed keeps the cues of its audio. */
#ifndef VX_CLI_SUBTITLES_H
#define VX_CLI_SUBTITLES_H

#include <stdio.h>

#include "vocis.h"

typedef enum { CLI_SUBS_SRT, CLI_SUBS_VTT } cli_subs_format;

typedef struct cli_subs {
    FILE *fp;
    cli_subs_format format;
    int written; /* cues in the file (the SRT counter) */
    int err;     /* errno of the first failed write (0: none) */
} cli_subs;

/* The format PATH's extension names (.srt / .vtt, any case); -1 for any other. */
int cli_subs_format_of(const char *path);
/* Creates PATH (replacing it) and writes the format's header; errno on failure, else 0. */
int cli_subs_open(cli_subs *s, const char *path, cli_subs_format format);
/* One cue (white space runs in its text become one space; an empty text is left out); errno on failure. */
int cli_subs_write(cli_subs *s, const vocis_cue *c);
/* Closes the file: errno when it or an earlier write failed, else 0. */
int cli_subs_close(cli_subs *s);

#endif
