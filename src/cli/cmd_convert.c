/* `vocis convert`: say a recording in another voice (Chatterbox voice conversion). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "vocis.h"

static int on_progress(void *user, const vocis_progress *p) {
    if (!*(const int *)user && p->step == 0) fprintf(stderr, "vocis convert: %s...\n", p->stage);
    return 0;
}

int cmd_convert(int argc, char **argv) {
    const char *model = NULL, *voice = NULL, *out = NULL, *format = NULL, *config = NULL, *source = NULL;
    const char *precision = NULL;
    int prec = 0;
    uint64_t seed = UINT64_MAX;
    int threads = 0, quiet = 0;
    vocis_convert_options o;
    vocis_convert_options_default(&o);
    const cli_opt opts[] = {
        {"SOURCE_AUDIO", CLI_POS, &source, "", 0, -1},
        {"--model", CLI_STR, &model, "Chatterbox folder, or a voice-conversion folder (s3gen.safetensors + conds.pt)", 0,
         -1},
        {"--voice", CLI_STR, &voice, "target: a recording, a vocis voice file or conds.pt (default: DIR/conds.pt)", 0,
         -1},
        {"--out|-o", CLI_STR, &out, "output file, or - for raw PCM on stdout (required)", 0, -1},
        {"--format", CLI_STR, &format,
         "wav (16-bit PCM) | f32 (float WAV) | flac | ogg | mp3 | opus (default: -o's extension, else wav)", 0, -1},
        CLI_LIMITED(VX_LIM_SEED, CLI_U64, &seed, "reproduce torch.manual_seed(N) (default: random)"),
        CLI_LIMITED(VX_LIM_CFM_STEPS, CLI_INT, &o.cfm_steps, "flow-matching Euler steps (10)"),
        {"--config", CLI_STR, &config, "hyper-parameter override file", 0, -1},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
        {"--quiet|-q", CLI_FLAG, &quiet, "no progress on stderr", 0, -1},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis convert --model DIR SOURCE_AUDIO [--voice TARGET] -o OUT [options]\n\n"
                      "Voice conversion as upstream's ChatterboxVC: the whole source recording (any format, rate\n"
                      "and channel count; at most 120 s) is turned into S3 speech tokens and spoken again by\n"
                      "S3Gen + HiFT in the target voice (10 flow-matching steps, CFG 0.7), 24 kHz mono.");
    if (r) return r == 1 ? 0 : 2;
    if (!model) return cli_error("convert", "--model DIR is required"), 2;
    if (cli_precision("convert", precision, &prec)) return 2;
    if (!source) return cli_error("convert", "a SOURCE_AUDIO recording is required"), 2;
    if (!out) return cli_error("convert", "-o FILE is required (use -o - for raw PCM on stdout)"), 2;
    if (cli_output_format("convert", out, format, &format)) return 2;
    o.seed = cli_seed(seed);
    o.on_progress = on_progress;
    o.user = &quiet;

    vocis_open_options oo = {threads, config, prec};
    vocis_model *m;
    vocis_voice *v = NULL;
    vocis_audio a = {0};
    int rc = 0;
    if (vocis_model_open(model, &oo, &m) != VOCIS_OK || (voice && vocis_voice_load(m, voice, &v) != VOCIS_OK) ||
        vocis_convert(m, source, v, &o, &a) != VOCIS_OK || vocis_audio_save(m, &a, out, format) != VOCIS_OK)
        rc = cli_error("convert", "%s", vocis_errmsg(m));
    else {
        cli_print_seed("convert", seed, o.seed, quiet);
        if (!quiet && strcmp(out, "-"))
            fprintf(stderr, "vocis convert: wrote %s (%.2f s at %d Hz)\n", out, (double)a.n / a.sample_rate,
                    a.sample_rate);
    }
    vocis_audio_free(&a);
    vocis_voice_free(v);
    vocis_model_close(m);
    return rc;
}
