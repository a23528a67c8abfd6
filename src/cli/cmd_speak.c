/* `vocis speak`: text -> 24 kHz speech (Chatterbox, or VibeVoice with one
 * voice recording per speaker of a "Speaker N:" script). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/threads.h"
#include "cli/cli.h"
#include "cli/subtitles.h"
#include "io/audio.h"
#include "io/audio_resume.h"
#include "io/encode.h"
#include "text/sentences.h"
#include "vocis.h"

#define MAX_TEXT_BYTES (16u << 20)
#define SPEAK_SR 24000 /* every model speaks at 24 kHz */

/* Reads all of fp (at most MAX_TEXT_BYTES). NULL with *too_big set when over. */
static char *read_all(FILE *fp, int *too_big) {
    size_t n = 0, cap = 65536;
    char *buf = malloc(cap);
    *too_big = 0;
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n - 1, fp);
        n += r;
        if (n > MAX_TEXT_BYTES) {
            *too_big = 1;
            free(buf);
            return NULL;
        }
        if (r == 0) break;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    if (buf) buf[n] = '\0';
    return buf;
}

typedef struct {
    int quiet, tty, f32, raw_stdout, write_failed;
    char last_stage[16];
    double t0;         /* the first progress report: speed and ETA count from there */
    int first_chunk;   /* the chunk (VibeVoice: session) of that report (a resumed job starts later) */
    int last_chunk;    /* the chunk of the last plain-log summary line */
    int64_t samples, samples0; /* audio in the output / there before this run (a resumed job's) */
    vx_audio_file *file; /* -o FILE: the audio goes in as it becomes final */
    vocis_status file_st; /* its write failure (message in file_err) */
    vx_err file_err;
    const char *path; /* -o FILE, and its format */
    vx_audio_fmt fmt;
    cli_subs *subs; /* --subtitles: the cues go in as they are reported */
} speak_ui;

static int on_cue(void *user, const vocis_cue *c) {
    speak_ui *ui = user;
    return ui->subs && cli_subs_write(ui->subs, c) != 0;
}

/* "1 h 05 min", "12 min", "40 s" */
static void put_duration(char *buf, size_t n, double s) {
    if (s >= 3600) snprintf(buf, n, "%d h %02d min", (int)(s / 3600), (int)(s / 60) % 60);
    else if (s >= 60) snprintf(buf, n, "%d min", (int)(s / 60 + 0.5));
    else snprintf(buf, n, "%d s", (int)(s + 0.5));
}

/* The job so far: "4.2 min of audio, 0.45x real time, ETA 1 h 05 min". Speed counts this run's
 * audio since its first report; the ETA, when chunks (VibeVoice: --split-turns sessions) have been
 * finished in this run, assumes the rest go at the pace of those (a session's own end is the
 * model's choice: no ETA within one). */
static void progress_summary(speak_ui *ui, const vocis_progress *p, int64_t samples, char *buf, size_t n) {
    const double now = vx_now_s(), el = now - ui->t0, audio = (double)samples / SPEAK_SR;
    const double made = (double)(samples - ui->samples0) / SPEAK_SR;
    char eta[48] = "", d[24];
    const int done = p->chunk - ui->first_chunk;
    if (done > 0 && p->n_chunks > 1) {
        put_duration(d, sizeof d, el / done * (p->n_chunks - p->chunk));
        snprintf(eta, sizeof eta, ", ETA %s", d);
    }
    if (audio >= 60) snprintf(d, sizeof d, "%.1f min", audio / 60);
    else snprintf(d, sizeof d, "%.1f s", audio);
    snprintf(buf, n, "%s of audio, %.2fx real time%s", d, el > 0 ? made / el : 0.0, eta);
}

static int on_progress(void *user, const vocis_progress *p) {
    speak_ui *ui = user;
    if (ui->quiet) return 0;
    if (!ui->t0) ui->t0 = vx_now_s(), ui->first_chunk = ui->last_chunk = p->chunk;
    char chunk[32] = "", sum[128];
    if (p->n_chunks > 1) snprintf(chunk, sizeof chunk, "[%d/%d] ", p->chunk + 1, p->n_chunks);
    if (!strcmp(p->stage, "vibevoice")) {
        if (ui->tty || p->step % 50 == 0) {
            progress_summary(ui, p, p->n_steps, sum, sizeof sum);
            fprintf(stderr, "%svocis speak: %s%d tokens, %d frames, %s%s", ui->tty ? "\r" : "", chunk, p->step,
                    p->n_steps / 3200, sum, ui->tty ? "   " : "\n");
        }
    } else if (!strcmp(p->stage, "t3")) {
        if (ui->tty && (p->step % 10 == 0 || p->step == 1)) {
            progress_summary(ui, p, ui->samples, sum, sizeof sum);
            fprintf(stderr, "\rvocis speak: %st3: %d speech tokens | %s   ", chunk, p->step, sum);
        } else if (!ui->tty && p->step % 100 == 0) { /* a log: one plain line per 4 s of speech */
            fprintf(stderr, "vocis speak: %st3: %d speech tokens\n", chunk, p->step);
        }
        if (!ui->tty && p->step == 1 && p->chunk > ui->last_chunk) { /* a log: one summary line per chunk */
            ui->last_chunk = p->chunk;
            progress_summary(ui, p, ui->samples, sum, sizeof sum);
            fprintf(stderr, "vocis speak: %s%s\n", chunk, sum);
        }
    } else if (p->step == 0) {
        fprintf(stderr, ui->tty ? "\rvocis speak: %s%s...            " : "vocis speak: %s%s...\n", chunk, p->stage);
    }
    if (!strcmp(p->stage, "hift") && p->step == p->n_steps && ui->tty) fprintf(stderr, "\r%60s\r", "");
    return 0;
}

static void on_warning(void *user, const char *msg) {
    speak_ui *ui = user;
    if (!ui->quiet) fprintf(stderr, "%svocis speak: warning: %s\n", ui->tty ? "\r" : "", msg);
}

/* Each piece of final audio into the output file, or as raw PCM to stdout. */
static int on_audio(void *user, const float *x, size_t n, int sr) {
    speak_ui *ui = user;
    ui->samples += (int64_t)n;
    if (ui->file) {
        if (sr != SPEAK_SR)
            ui->file_st = vx_fail(&ui->file_err, VOCIS_E_INTERNAL, "audio at %d Hz, the file is %d Hz", sr, SPEAK_SR);
        else
            ui->file_st = vx_audio_file_write(ui->file, x, n);
        return ui->file_st != VOCIS_OK;
    }
    if (!ui->raw_stdout) return 0;
    size_t ok;
    if (ui->f32) {
        ok = fwrite(x, sizeof(float), n, stdout) == n;
    } else {
        int16_t buf[4096];
        ok = 1;
        for (size_t i = 0; i < n && ok; i += 4096) {
            size_t m = n - i < 4096 ? n - i : 4096;
            vx_audio_to_s16(x + i, buf, m); /* the samples a WAV or FLAC of the same run holds */
            ok = fwrite(buf, sizeof(int16_t), m, stdout) == m;
        }
    }
    if (ok && fflush(stdout) != 0) ok = 0;
    if (!ok) ui->write_failed = errno ? errno : EIO;
    return !ok;
}

/* --checkpoint / --resume: before generation resumes the new output starts with the first
 * `samples` of the one the killed run left; before a checkpoint the output is made durable. */
static int on_checkpoint(void *user, int64_t samples, int resuming) {
    speak_ui *ui = user;
    if (!ui->file) return 1;
    if (resuming) {
        ui->file_st = vx_audio_file_prefill(ui->file, ui->path, ui->fmt, SPEAK_SR, samples, &ui->file_err);
        ui->samples = ui->samples0 = samples;
    }
    else if (fsync(ui->file->out.fd) != 0)
        ui->file_st = vx_fail(&ui->file_err, VOCIS_E_IO, "%s: fsync failed: %s", ui->path, strerror(errno));
    return ui->file_st != VOCIS_OK;
}

#define MAX_VOICES 64

/* What each synthesis of a run needs: the model, its voice(s), the options, where the text comes from. */
typedef struct {
    vocis_model *m;
    const vocis_voice *v;         /* one voice (NULL: the model's own) */
    const vocis_voice *const *vs; /* a VibeVoice script's voices, when nvoices > 1 */
    int nvoices, stream_text;
    const char *text_file, *format;
    const vocis_speak_options *o;
    speak_ui *ui;
} speak_job;

/* --stream-text (VibeVoice-Realtime): text pushed as it is read (stdin or a file, read(2) as data
 * arrives), audio out as it is decoded. 0 ok, 1 error on the model handle, 2 error printed here. */
static int speak_streamed(vocis_model *m, const vocis_voice *v, const char *text, const char *text_file,
                          const vocis_speak_options *o, vocis_audio *a) {
    vocis_stream *s;
    if (vocis_stream_open(m, v, o, &s) != VOCIS_OK) return 1;
    int rc = 0;
    if (text) {
        rc = vocis_stream_push(s, text, strlen(text)) != VOCIS_OK;
    } else {
        FILE *fp = text_file ? fopen(text_file, "rb") : stdin;
        if (!fp) {
            vocis_stream_close(s);
            return cli_error("speak", "%s: cannot open: %s", text_file, strerror(errno)), 2;
        }
        char buf[4096];
        size_t total = 0;
        for (;;) {
            ssize_t n = read(fileno(fp), buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                cli_error("speak", "%s: read failed: %s", text_file ? text_file : "stdin", strerror(errno));
                rc = 2;
                break;
            }
            if (n == 0) break;
            if ((total += (size_t)n) > MAX_TEXT_BYTES) {
                cli_error("speak", "%s: text larger than 16 MiB", text_file ? text_file : "stdin");
                rc = 2;
                break;
            }
            if (vocis_stream_push(s, buf, (size_t)n) != VOCIS_OK) {
                rc = 1;
                break;
            }
        }
        if (text_file) fclose(fp);
    }
    if (!rc && vocis_stream_finish(s, a) != VOCIS_OK) rc = 1;
    vocis_stream_close(s);
    return rc;
}

/* text (with --stream-text, NULL: read from the file or stdin as it arrives) -> path, written as
 * the audio becomes final, or raw PCM on stdout; subs_path (NULL = none) gets its cues.
 * 0 ok, else 1 with the error printed. */
static int speak_to(speak_job *j, const char *text, const char *path, const char *subs_path) {
    speak_ui *ui = j->ui;
    vx_audio_file file;
    vx_audio_fmt fmt = VX_AUDIO_WAV16;
    vx_audio_fmt_parse(j->format, &fmt);
    ui->file_st = VOCIS_OK;
    ui->path = path, ui->fmt = fmt;
    ui->t0 = 0, ui->samples = ui->samples0 = 0; /* progress per output file (a --chapters chapter) */
    if (!ui->raw_stdout) {
        if (vx_audio_file_open(&file, path, fmt, SPEAK_SR, &ui->file_err) != VOCIS_OK)
            return cli_error("speak", "%s", ui->file_err.msg);
        ui->file = &file;
    }
    cli_subs subs;
    if (subs_path && cli_subs_open(&subs, subs_path, (cli_subs_format)cli_subs_format_of(subs_path))) {
        cli_subs_close(&subs);
        if (ui->file) vx_audio_file_abort(&file);
        ui->file = NULL;
        return cli_error("speak", "%s: cannot write: %s", subs_path, strerror(subs.err));
    }
    ui->subs = subs_path ? &subs : NULL;
    vocis_audio a = {0}; /* the audio goes through on_audio: none is kept but a VibeVoice script's */
    int sret = 0, rc = 0;
    const int ok = j->nvoices > 1 ? vocis_speak_script(j->m, j->vs, j->nvoices, text, j->o, &a) == VOCIS_OK
                   : j->stream_text ? (sret = speak_streamed(j->m, j->v, text, j->text_file, j->o, NULL)) == 0
                                    : vocis_speak(j->m, j->v, text, j->o, NULL) == VOCIS_OK;
    vocis_audio_free(&a);
    const double seconds = ui->file ? (double)file.frames / SPEAK_SR : 0;
    if (!ok) {
        char kept[600] = ""; /* what the file holds of a run that failed midway */
        if (seconds > 0) snprintf(kept, sizeof kept, " (%s keeps the audio written before)", path);
        if (ui->tty && !ui->quiet) fputc('\n', stderr);
        if (sret == 2) rc = 1;
        else if (ui->subs && ui->subs->err)
            rc = cli_error("speak", "%s: write failed: %s", subs_path, strerror(ui->subs->err));
        else if (ui->file_st) rc = cli_error("speak", "%s%s", ui->file_err.msg, kept);
        else if (ui->write_failed) rc = cli_error("speak", "writing to stdout failed: %s", strerror(ui->write_failed));
        else rc = cli_error("speak", "%s%s", vocis_errmsg(j->m), kept);
    }
    if (ui->file && !ok) {
        vx_audio_file_abort(&file);
    } else if (ui->file && vx_audio_file_close(&file) != VOCIS_OK) {
        rc = cli_error("speak", "%s", ui->file_err.msg);
    } else if (ui->file && !ui->quiet) {
        fprintf(stderr, "vocis speak: wrote %s (%.2f s at %d Hz)\n", path, seconds, SPEAK_SR);
    }
    const vocis_checkpoint_options *ck = j->o->checkpoint;
    if (!rc && ck && ck->path) unlink(ck->path); /* the job is done: nothing left to resume */
    ui->file = NULL;
    if (ui->subs && cli_subs_close(ui->subs) && !rc)
        rc = cli_error("speak", "%s: write failed: %s", subs_path, strerror(subs.err));
    if (ui->subs && !ok && !subs.written) unlink(subs_path); /* a run that failed before its first cue */
    ui->subs = NULL;
    return rc;
}

/* -o book.wav -> book-01.wav, book-02.wav, ...: the chapter's number (from 1; two digits, more when the
 * count needs them) before the extension. malloc'd. */
static char *chapter_path(const char *out, int k, int n) {
    const char *slash = strrchr(out, '/'), *base = slash ? slash + 1 : out, *dot = strrchr(base, '.');
    if (!dot || dot == base) dot = base + strlen(base);
    int width = 2;
    for (int x = n; x >= 100 && width < 10; x /= 10) width++;
    const size_t cap = strlen(out) + 16;
    char *p = malloc(cap);
    if (p) snprintf(p, cap, "%.*s-%0*d%s", (int)(dot - out), out, width, k + 1, dot);
    return p;
}

/* --chapters: each chapter of text spoken into its own file, in order. 0 ok, else 1 (printed). */
static int speak_chapters(speak_job *j, const char *text, const char *out, const char *subs_out) {
    vx_chunks ch;
    vx_err err = {0};
    if (vx_split_chapters(text, &ch, &err) != VOCIS_OK) return cli_error("speak", "%s", err.msg);
    int rc = ch.n ? 0 : cli_error("speak", "text is empty");
    for (int k = 0; k < ch.n && !rc; k++) {
        char *path = chapter_path(out, k, ch.n), *subs = subs_out ? chapter_path(subs_out, k, ch.n) : NULL;
        rc = path && (subs || !subs_out) ? speak_to(j, ch.text[k], path, subs) : cli_error("speak", "out of memory");
        free(path);
        free(subs);
    }
    vx_chunks_free(&ch);
    return rc;
}

int cmd_speak(int argc, char **argv) {
    const char *voice_list[MAX_VOICES];
    cli_list voices = {voice_list, 0, MAX_VOICES};
    const char *model = NULL, *text = NULL, *text_file = NULL, *out = NULL, *format = NULL;
    const char *config = NULL, *precision = NULL, *language = NULL, *kv_s = NULL, *speculate_s = NULL;
    const char *subtitles = NULL;
    int voice_cache_mb = 0;
    vocis_speak_options o;
    vocis_speak_options_default(&o);
    o.vv.cfg_scale = NAN, o.vv.diffusion_steps = 0; /* the model's defaults, filled in after open */
    int stream_text = 0, chapters = 0, stream = 0, stream_first = 0;
    float checkpoint_every = 0;
    vocis_checkpoint_options ck = {0};
    uint64_t seed = UINT64_MAX;
    int threads = 0;
    float exaggeration = NAN;
    speak_ui ui = {0};
    const cli_opt opts[] = {
        {"--model", CLI_STR, &model, "model folder (required)", 0, -1},
        {"--text", CLI_STR, &text, "text to speak (else --text-file, else stdin)", 0, -1},
        {"--language|--lang", CLI_STR, &language, "Chatterbox-Multilingual: language code, required there (ar da de el en es fi fr he hi it ja ko ms nl no pl pt ru sv sw tr zh)", 0, -1},
        {"--text-file|--script", CLI_STR, &text_file, "read the text (VibeVoice: the script) from a UTF-8 file (- = stdin)", 0,
         -1},
        {"--out|-o", CLI_STR, &out, "output file, or - for raw PCM on stdout (required)", 0, -1},
        {"--format", CLI_STR, &format,
         "wav (16-bit PCM) | f32 (float WAV) | flac | ogg | mp3 | opus (default: -o's extension, else wav)", 0, -1},
        {"--voice", CLI_LIST, &voices,
         "Chatterbox: voice file, conds.pt, or a recording to clone (default: conds.pt); VibeVoice: a recording "
         "per speaker, repeat in speaker order", 0, -1},
        CLI_LIMITED(VX_LIM_SEED, CLI_U64, &seed, "reproduce torch.manual_seed(N) (default: random)"),
        {"--greedy", CLI_FLAG, &o.t3.greedy, "T3 argmax instead of sampling", 0, -1},
        CLI_LIMITED(VX_LIM_TEMPERATURE, CLI_FLOAT, &o.t3.temperature, "sampling temperature (0.8)"),
        CLI_LIMITED(VX_LIM_CFG_WEIGHT, CLI_FLOAT, &o.t3.cfg_weight, "T3 classifier-free guidance weight (0.5)"),
        CLI_LIMITED(VX_LIM_EXAGGERATION, CLI_FLOAT, &exaggeration, "emotion exaggeration (default: the voice's)"),
        CLI_LIMITED(VX_LIM_MIN_P, CLI_FLOAT, &o.t3.min_p, "min-p filter (0.05)"),
        CLI_LIMITED(VX_LIM_TOP_P, CLI_FLOAT, &o.t3.top_p, "top-p filter (1.0 = off; default 1.0, Turbo/Nano 0.95)"),
        CLI_LIMITED(VX_LIM_TOP_K, CLI_INT, &o.t3.top_k, "Turbo/Nano top-k filter (1000; 0 = off)"),
        CLI_LIMITED(VX_LIM_REPETITION_PENALTY, CLI_FLOAT, &o.t3.repetition_penalty, "repetition penalty (1.2)"),
        CLI_LIMITED(VX_LIM_MAX_TOKENS, CLI_INT, &o.t3.max_new_tokens, "max speech tokens per chunk (1000 = 40 s)"),
        CLI_LIMITED(VX_LIM_CFM_STEPS, CLI_INT, &o.cfm_steps, "flow-matching Euler steps (10)"),
        CLI_LIMITED(VX_LIM_CFG_SCALE, CLI_FLOAT, &o.vv.cfg_scale, "VibeVoice: diffusion guidance (1.3; Realtime 1.5)"),
        CLI_LIMITED(VX_LIM_DIFFUSION_STEPS, CLI_INT, &o.vv.diffusion_steps, "VibeVoice: DPM-Solver steps per frame (10; Realtime 5)"),
        {"--max-new-tokens", CLI_INT, &o.vv.max_new_tokens, "VibeVoice: token cap (0 = upstream's: 2 x prompt; Realtime: the context)", 0,
         100000000},
        {"--max-seconds", CLI_FLOAT, &o.vv.max_seconds, "VibeVoice: stop after this much audio (0 = no limit)", 0,
         1e7},
        {"--split-turns", CLI_FLAG, &o.vv.split_turns,
         "VibeVoice: a script too long for the context is spoken in sessions split at speaker turns, each "
         "re-prompted with the voices (not upstream's output)", 0, -1},
        {"--chunk-chars", CLI_INT, &o.max_chunk_chars, "split longer text into sentence chunks (300; 0 = never)", 0,
         1000000},
        {"--config", CLI_STR, &config, "hyper-parameter override file", 0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--kv", CLI_STR, &kv_s, CLI_KV_HELP, 0, -1},
        {"--speculate", CLI_STR, &speculate_s, CLI_SPECULATE_HELP, 0, -1},
        {"--voice-cache-mb", CLI_INT, &voice_cache_mb, CLI_VOICE_CACHE_HELP, -1, 1 << 20},
        {"--stream-text", CLI_FLAG, &stream_text,
         "VibeVoice-Realtime: read the text (stdin or --text-file) as it arrives and speak it meanwhile", 0, -1},
        {"--stream", CLI_FLAG, &stream,
         "Chatterbox: audio while T3 is still generating (S3Gen every few tokens, upstream's streaming "
         "parts); the same length as without, not the same samples", 0, -1},
        {"--stream-first", CLI_INT, &stream_first,
         "with --stream: speech tokens before the first audio (English/Multilingual 25, Turbo/Nano 10; "
         "later chunks double up to 100)", 1, 1000},
        {"--chapters", CLI_FLAG, &chapters,
         "one file per chapter (a '# Title' or 'Chapter N' line, or a form feed, starts one): -o book.wav "
         "writes book-01.wav, book-02.wav, ...", 0, -1},
        {"--checkpoint", CLI_STR, &ck.path,
         "save the job's state (Chatterbox long text, VibeVoice) to this file as it goes, for --resume (WAV "
         "output, --seed); removed when the job ends",
         0, -1},
        {"--checkpoint-every", CLI_FLOAT, &checkpoint_every,
         "seconds of generated audio between checkpoints (60)", 0, 1e9},
        {"--resume", CLI_STR, &ck.resume_path,
         "continue the job of this checkpoint (same command line); the output keeps the audio it recorded", 0, -1},
        {"--subtitles", CLI_STR, &subtitles,
         "also write timed text, FILE.srt (SubRip) or FILE.vtt (WebVTT): a cue per Chatterbox text chunk, per "
         "VibeVoice script turn (attributed by a rule: README); with --chapters one file per chapter", 0, -1},
        {"--quiet|-q", CLI_FLAG, &ui.quiet, "no progress on stderr", 0, -1},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis speak --model DIR (--text TEXT | --text-file F | < stdin) -o OUT [options]\n\n"
                      "Chatterbox text-to-speech: T3 speech tokens -> S3Gen flow matching -> HiFT vocoder,\n"
                      "24 kHz mono. A single short text takes exactly upstream's path (same audio for the\n"
                      "same --seed); text over --chunk-chars characters is split into sentences that are\n"
                      "synthesised with the same voice and joined with a 40 ms crossfade.\n\n"
                      "VibeVoice (1.5B / 7B): the text is a script of \"Speaker N: ...\" lines (plain text is\n"
                      "Speaker 1) and each speaker gets a --voice recording, in order; upstream's generate()\n"
                      "with greedy tokens, DPM-Solver++ diffusion and CFG; -o - streams each 133 ms frame.\n\n"
                      "--stream (Chatterbox): the first audio comes after --stream-first speech tokens, while\n"
                      "T3 goes on; S3Gen re-runs over the tokens so far (flow finalize=False, HiFT with the\n"
                      "cached source, crossfaded joins), as upstream's streaming token2wav. Not\n"
                      "sample-identical to the path without it (same length); -o - writes each piece at once.");
    if (r) return r == 1 ? 0 : 2;
    if (!model) return cli_error("speak", "--model DIR is required"), 2;
    int prec;
    if (cli_precision("speak", precision, &prec)) return 2;
    int kvc;
    if (cli_kv("speak", kv_s, &kvc)) return 2;
    if (cli_speculate("speak", speculate_s, &o.t3.speculate)) return 2;
    if (!out) return cli_error("speak", "-o FILE is required (use -o - for raw PCM on stdout)"), 2;
    if (text && text_file) return cli_error("speak", "give --text or --text-file, not both"), 2;
    if (cli_output_format("speak", out, format, &format)) return 2;
    if (chapters && (!strcmp(out, "-") || stream_text))
        return cli_error("speak", "--chapters writes a file per chapter of the whole text: not with %s",
                         stream_text ? "--stream-text" : "-o -"), 2;
    if (cli_checkpoint_check(&ck, out, format, seed != UINT64_MAX, chapters, stream_text)) return 2;
    ck.every_s = checkpoint_every;
    ck.on_checkpoint = on_checkpoint;
    if (ck.path) o.checkpoint = &ck;
    if (subtitles && cli_subs_format_of(subtitles) < 0)
        return cli_error("speak", "--subtitles %s: the extension must be .srt (SubRip) or .vtt (WebVTT)", subtitles), 2;
    if (subtitles && stream_text)
        return cli_error("speak", "--subtitles is not available with --stream-text (VibeVoice-Realtime reports no cues)"), 2;
    ui.raw_stdout = !strcmp(out, "-");
    ui.f32 = !strcmp(format, "f32");
    if (stream_first && !stream) return cli_error("speak", "--stream-first needs --stream"), 2;
    if (stream && stream_text) return cli_error("speak", "--stream is for Chatterbox, --stream-text for VibeVoice-Realtime: not both"), 2;
    o.stream_tokens = stream ? (stream_first ? stream_first : VOCIS_STREAM_AUTO) : 0;
    o.t3.seed = cli_seed(seed);
    if (text_file && !strcmp(text_file, "-")) text_file = NULL; /* stdin */
    o.t3.exaggeration = exaggeration;
    o.t3.language = language;

    char *owned_text = NULL;
    if (!text && !stream_text) {
        FILE *fp = text_file ? fopen(text_file, "rb") : stdin;
        if (!fp) return cli_error("speak", "%s: cannot open: %s", text_file, strerror(errno));
        int too_big;
        owned_text = read_all(fp, &too_big);
        if (text_file) fclose(fp);
        if (too_big) return cli_error("speak", "%s: text larger than 16 MiB", text_file ? text_file : "stdin");
        if (!owned_text) return cli_error("speak", "out of memory");
        text = owned_text;
    }
    ui.tty = isatty(2);
    o.on_progress = on_progress;
    o.on_audio = on_audio;
    o.on_warning = on_warning;
    o.on_cue = on_cue;
    o.user = &ui;

    vocis_open_options oo = {threads, config, prec, kvc, voice_cache_mb};
    vocis_model *m;
    vocis_voice *v = NULL;
    int rc = 0;
    vocis_voice *vs[MAX_VOICES] = {0};
    const int nvoices = voices.n;
    int ok = vocis_model_open(model, &oo, &m) == VOCIS_OK;
    const int bad_language = ok && vocis_check_language(m, language) != VOCIS_OK; /* before any voice is cloned */
    ok = ok && !bad_language;
    if (ok && !ui.quiet) cli_warn_other_family("speak", argc, argv, vocis_model_kind(m));
    if (ok) {
        vocis_speak_options d;
        vocis_speak_options_for_model(m, &d);
        if (isnan(o.vv.cfg_scale)) o.vv.cfg_scale = d.vv.cfg_scale;
        if (!o.vv.diffusion_steps) o.vv.diffusion_steps = d.vv.diffusion_steps;
    }
    if (ok && subtitles && !strcmp(vocis_model_kind(m), "vibevoice-realtime")) {
        cli_error("speak", "--subtitles: VibeVoice-Realtime reports no cues (Chatterbox and VibeVoice 1.5B / 7B do)");
        vocis_model_close(m);
        free(owned_text);
        return 2;
    }
    if (ok && nvoices > 1 && strcmp(vocis_model_kind(m), "vibevoice")) {
        cli_error("speak", "%s speaks with one voice: %d --voice options were given",
                  strcmp(vocis_model_kind(m), "vibevoice-realtime") ? "Chatterbox" : "VibeVoice-Realtime", nvoices);
        vocis_model_close(m);
        free(owned_text);
        return 2;
    }
    if (ok && nvoices > 1) { /* several speakers: VibeVoice script */
        for (int i = 0; i < nvoices && ok; i++) ok = vocis_voice_load(m, voice_list[i], &vs[i]) == VOCIS_OK;
    } else {
        const int vv_no_voice = ok && !nvoices && !strcmp(vocis_model_kind(m), "vibevoice");
        ok = ok && (vv_no_voice || vocis_voice_load(m, nvoices ? voice_list[0] : NULL, &v) == VOCIS_OK);
        if (ok && !ui.quiet && *vocis_voice_warning(v))
            fprintf(stderr, "vocis speak: warning: %s\n", vocis_voice_warning(v));
    }
    if (!ok) {
        if (ui.tty && !ui.quiet) fputc('\n', stderr);
        if (bad_language) rc = cli_error("speak", "--language: %s", vocis_errmsg(m));
        else rc = cli_error("speak", "%s", vocis_errmsg(m));
    } else {
        speak_job job = {m, v, (const vocis_voice *const *)vs, nvoices, stream_text, text_file, format, &o, &ui};
        rc = chapters ? speak_chapters(&job, text, out, subtitles) : speak_to(&job, text, out, subtitles);
        if (!rc) cli_print_seed("speak", seed, o.t3.seed, ui.quiet);
    }
    for (int i = 0; i < nvoices; i++) vocis_voice_free(vs[i]);
    vocis_voice_free(v);
    vocis_model_close(m);
    free(owned_text);
    return rc;
}
