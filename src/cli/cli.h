/* Command-line front end: one file per subcommand, a shared option parser. */
#ifndef VX_CLI_H
#define VX_CLI_H

#include <stdint.h>

#include "api/limits.h"
#include "vocis.h"

typedef enum { CLI_STR, CLI_INT, CLI_FLOAT, CLI_U64, CLI_FLAG, CLI_LIST, CLI_POS } cli_kind;

/* CLI_LIST: an option that may repeat (each value appended; at most cap). */
typedef struct cli_list {
    const char **v;
    int n, cap;
} cli_list;

typedef struct cli_opt {
    const char *name; /* "--seed"; a "-x" alias may follow after '|': "--out|-o"; CLI_POS: "SOURCE_AUDIO" */
    cli_kind kind;
    void *dest;       /* const char **, int *, float *, uint64_t *, int * (flag set to 1), cli_list *, const char ** */
    const char *help;
    double min, max;  /* numeric range (inclusive); ignored when min > max */
} cli_opt;

/* An option whose name and range are those of the shared table of src/api/limits.h
 * (the ones `vocis serve` applies to the same knob). */
#define CLI_LIMITED(id, kind, dest, help) {vx_limits[id].cli, kind, dest, help, vx_limits[id].min, vx_limits[id].max}

/* Parses argv[1..] (argv[0] is the subcommand name). Returns 0 to go on,
 * 1 when --help was printed (exit 0), 2 after printing a one-line error.
 * An option's value follows it ("--text hi") or is joined by '=' ("--text=hi",
 * the way to give a value starting with '-'); a separate value that is itself
 * an option of the command is refused ("--text -o a.wav": "option --text
 * needs a value"). Arguments that are not options fill the CLI_POS entries in
 * order ("-" included); more are refused. `usage` is printed above the option list. */
int cli_parse(int argc, char **argv, const cli_opt *opts, int nopts, const char *usage);

/* 1 when the option `name` (one spelling: "--top-k") was given in argv, as
 * cli_parse read it. */
int cli_given(int argc, char **argv, const char *name);

/* The seed to use: --seed's value (UINT64_MAX = not given; the option's range is the
 * limits table's, below 2^53), or one drawn here (vx_draw_seed), so that a good take
 * can be reproduced: cli_print_seed tells it. */
int64_t cli_seed(uint64_t seed);
/* "vocis CMD: seed N" on stderr when the seed was drawn (given == UINT64_MAX) and not quiet. */
void cli_print_seed(const char *cmd, uint64_t given, int64_t used, int quiet);

/* Checks -o OUT and --format (NULL = not given) of a command writing audio
 * and sets *resolved to the format to write: --format, else the one OUT's
 * extension names (.wav .flac .ogg .mp3 .opus), else wav. Refuses an unknown
 * format, a --format that contradicts OUT's extension (f32 suits .wav), a
 * non-PCM format for "-", and "-" when stdout is a terminal. 0, or 2 after a
 * one-line error. */
int cli_output_format(const char *cmd, const char *out, const char *format, const char **resolved);
/* speak --checkpoint / --resume: -o FILE in WAV, a --seed, no --chapters / --stream-text; a --resume
 * without --checkpoint keeps checkpointing into the file it resumes. 0 ok, else 1 (printed). */
int cli_checkpoint_check(vocis_checkpoint_options *ck, const char *out, const char *format, int seeded,
                         int chapters, int stream_text);

/* One stderr line per option of argv that the model kind (vocis_model_kind)
 * ignores because another family reads it ("--top-k" on chatterbox). */
void cli_warn_other_family(const char *cmd, int argc, char **argv, const char *kind);

/* Prints "vocis CMD: message" to stderr (one line) and returns 1. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --precision VALUE (NULL = not given → 0, the default) into *out, as for
 * vocis_open_options.precision; returns 2 after printing a one-line error
 * (unknown value). */
int cli_precision(const char *cmd, const char *s, int *out);
#define CLI_PRECISION_HELP \
    "exact (upstream's arithmetic, sample-identical), bf16 (matrices and many-row products in bf16: ~2x\n" \
    "                             faster, not sample-identical), q8 (transformer linears int8, the rest bf16);\n" \
    "                             default: T3/LM and HiFT exact (upstream's tokens), the S3Gen flow bf16 on\n" \
    "                             AVX512_BF16 CPUs"

/* --kv VALUE (NULL = not given → 0, the default: f32) into *out as for
 * vocis_open_options.kv_cache (VOCIS_KV_*); returns 2 after a one-line error. */
int cli_kv(const char *cmd, const char *s, int *out);
int cli_speculate(const char *cmd, const char *s, int *out);
#define CLI_SPECULATE_HELP                                                                                  \
    "T3 self-speculative decoding: auto (default: on at exact precision), off, or N proposals per round; " \
    "the tokens are plain decoding's either way, only the speed changes"
#define CLI_VOICE_CACHE_HELP \
    "Chatterbox: memory for voices' conditioning prefixes computed once and reused, in MiB (256; -1 = none)"
#define CLI_KV_HELP                                                                                      \
    "KV-cache storage: f32 (exact) or bf16 (half the cache memory; long contexts); default f32, except a " \
    "VibeVoice 1.5B/7B generation that may pass 16384 positions: bf16"

/* Subcommands: each returns the process exit status. */
int cmd_tokenize(int argc, char **argv);
/* `vocis tokenize` on a Chatterbox-Multilingual folder (cmd_tokenize_mtl.c). */
int cmd_tokenize_mtl(const char *cmd, const char *model, const char *text, const char *language);
/* `vocis CMD: warning: the tokenizer has no token for ...` on stderr when u noted characters. */
struct vx_tokenizer;
struct vx_tok_unknown;
void cli_warn_unknown(const char *cmd, const struct vx_tokenizer *t, const struct vx_tok_unknown *u);
int cmd_tokens(int argc, char **argv);
int cmd_debug(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* `vocis bench s3gen` / `vocis bench speak` (cmd_bench_s3gen.c), dispatched by cmd_bench. */
int bench_s3gen(int argc, char **argv);
int bench_speak(int argc, char **argv);
int bench_serve(int argc, char **argv);
int bench_convert(int argc, char **argv);
/* `vocis bench clone` (cmd_bench_clone.c). */
int bench_clone(int argc, char **argv);
/* `vocis bench vibevoice` (cmd_bench_vv.c). */
int bench_vibevoice(int argc, char **argv);
/* `vocis bench quality` (cmd_bench_quality.c): fast precision modes vs exact. */
int bench_quality(int argc, char **argv);
/* `vocis bench peak` (cmd_bench_peak.c): memory bandwidth and multiply-rate limits. */
int bench_peak(int argc, char **argv);
int cmd_speak(int argc, char **argv);
int cmd_voice(int argc, char **argv);
int cmd_serve(int argc, char **argv); /* cmd_serve.c */
int cmd_convert(int argc, char **argv);
int cmd_info(int argc, char **argv);

#endif
