/* SubRip and WebVTT output of vocis_cue reports (subtitles.h). */
#include "cli/subtitles.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cli_subs_format_of(const char *path) {
    const char *dot = strrchr(path, '.');
    if (dot && strchr(dot, '/')) dot = NULL;
    if (dot && !strcasecmp(dot, ".srt")) return CLI_SUBS_SRT;
    if (dot && !strcasecmp(dot, ".vtt")) return CLI_SUBS_VTT;
    return -1;
}

int cli_subs_open(cli_subs *s, const char *path, cli_subs_format format) {
    memset(s, 0, sizeof *s);
    s->format = format;
    if (!(s->fp = fopen(path, "w"))) return s->err = errno ? errno : EIO;
    if (format == CLI_SUBS_VTT && (fputs("WEBVTT\n\n", s->fp) < 0 || fflush(s->fp))) s->err = errno ? errno : EIO;
    return s->err;
}

/* HH:MM:SS,mmm (SRT) or HH:MM:SS.mmm (WebVTT), rounded to the millisecond; hours may exceed 99. */
static void put_time(FILE *fp, int64_t samples, int rate, char sep) {
    const int64_t ms = (samples * 1000 + rate / 2) / rate;
    fprintf(fp, "%02lld:%02lld:%02lld%c%03lld", (long long)(ms / 3600000), (long long)(ms / 60000 % 60),
            (long long)(ms / 1000 % 60), sep, (long long)(ms % 1000));
}

/* The text on one line, white space collapsed, escaped as the format needs: WebVTT's &, <, >
 * as entities (so no '-->' can remain); SubRip has no escapes, so its '-->' becomes '->'. */
static size_t put_text(FILE *fp, const char *t, cli_subs_format f) {
    size_t n = 0;
    int space = 0;
    for (; *t; t++) {
        if (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r' || *t == '\f' || *t == '\v') {
            space = n > 0;
            continue;
        }
        if (space) fputc(' ', fp), n++;
        space = 0;
        if (f == CLI_SUBS_VTT && (*t == '&' || *t == '<' || *t == '>'))
            n += (size_t)fprintf(fp, "%s", *t == '&' ? "&amp;" : *t == '<' ? "&lt;" : "&gt;");
        else if (f == CLI_SUBS_SRT && !strncmp(t, "-->", 3))
            n += (size_t)fprintf(fp, "->"), t += 2;
        else
            fputc(*t, fp), n++;
    }
    return n;
}

static int has_text(const char *t) {
    for (; t && *t; t++)
        if (!strchr(" \t\n\r\f\v", *t)) return 1;
    return 0;
}

int cli_subs_write(cli_subs *s, const vocis_cue *c) {
    if (s->err) return s->err;
    if (!has_text(c->text)) return 0;
    const char sep = s->format == CLI_SUBS_VTT ? '.' : ',';
    s->written++;
    if (s->format == CLI_SUBS_SRT) fprintf(s->fp, "%d\n", s->written);
    put_time(s->fp, c->start, c->sample_rate, sep);
    fputs(" --> ", s->fp);
    put_time(s->fp, c->end, c->sample_rate, sep);
    fputc('\n', s->fp);
    if (c->speaker >= 0) /* VibeVoice: who speaks the turn, numbered as the script's voices (from 1) */
        fprintf(s->fp, s->format == CLI_SUBS_VTT ? "<v Speaker %d>" : "Speaker %d: ", c->speaker + 1);
    put_text(s->fp, c->text, s->format);
    fputs("\n\n", s->fp);
    if (ferror(s->fp) || fflush(s->fp)) s->err = errno ? errno : EIO;
    return s->err;
}

int cli_subs_close(cli_subs *s) {
    if (!s->fp) return s->err;
    if (fclose(s->fp) && !s->err) s->err = errno ? errno : EIO;
    s->fp = NULL;
    return s->err;
}
