/* `vocis tokens`: Chatterbox T3 text -> speech tokens, printed on one line. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "vocis.h"

typedef struct {
    int show, tty;
} tokens_ui;

/* A line rewritten on a terminal; in a log, one plain line per 100 tokens (4 s of speech). */
static int print_progress(void *user, int step, int32_t token) {
    const tokens_ui *ui = user;
    (void)token;
    if (ui->show && ui->tty && (step + 1) % 25 == 0) fprintf(stderr, "\rvocis tokens: %d tokens", step + 1);
    else if (ui->show && !ui->tty && (step + 1) % 100 == 0) fprintf(stderr, "vocis tokens: %d tokens\n", step + 1);
    return 0;
}

int cmd_tokens(int argc, char **argv) {
    const char *model = NULL, *text = NULL, *cond = NULL, *config = NULL, *precision = NULL, *language = NULL;
    const char *kv_s = NULL, *speculate_s = NULL;
    int voice_cache_mb = 0;
    vocis_t3_options o;
    vocis_t3_options_default(&o);
    uint64_t seed = UINT64_MAX; /* unset */
    int threads = 0, quiet = 0;
    float exaggeration = NAN;
    const cli_opt opts[] = {
        {"--model", CLI_STR, &model, "model folder (required)", 0, -1},
        {"--text", CLI_STR, &text, "text to speak (required)", 0, -1},
        {"--language|--lang", CLI_STR, &language, "Chatterbox-Multilingual: language code, required there (ar da de el en es fi fr he hi it ja ko ms nl no pl pt ru sv sw tr zh)", 0, -1},
        {"--t3-cond", CLI_STR, &cond, "conditioning .safetensors (speaker_emb, cond_prompt_speech_tokens, "
                                      "emotion_adv) or a conds.pt; default: DIR/conds.pt", 0, -1},
        CLI_LIMITED(VX_LIM_SEED, CLI_U64, &seed, "reproduce torch.manual_seed(N) sampling (default: random)"),
        {"--greedy", CLI_FLAG, &o.greedy, "argmax instead of sampling", 0, -1},
        CLI_LIMITED(VX_LIM_TEMPERATURE, CLI_FLOAT, &o.temperature, "sampling temperature (0.8)"),
        CLI_LIMITED(VX_LIM_CFG_WEIGHT, CLI_FLOAT, &o.cfg_weight, "classifier-free guidance weight (0.5; 0 = off)"),
        CLI_LIMITED(VX_LIM_EXAGGERATION, CLI_FLOAT, &exaggeration, "emotion exaggeration (default: the voice's, 0.5)"),
        CLI_LIMITED(VX_LIM_MIN_P, CLI_FLOAT, &o.min_p, "min-p filter (0.05; 0 = off)"),
        CLI_LIMITED(VX_LIM_TOP_P, CLI_FLOAT, &o.top_p, "top-p filter (1.0 = off; default 1.0, Turbo/Nano 0.95)"),
        CLI_LIMITED(VX_LIM_TOP_K, CLI_INT, &o.top_k, "Turbo/Nano top-k filter (1000; 0 = off)"),
        CLI_LIMITED(VX_LIM_REPETITION_PENALTY, CLI_FLOAT, &o.repetition_penalty, "repetition penalty (1.2)"),
        CLI_LIMITED(VX_LIM_MAX_TOKENS, CLI_INT, &o.max_new_tokens, "maximum new speech tokens (1000)"),
        {"--config", CLI_STR, &config, "hyper-parameter override file: its keys replace those of the folder's config",
         0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--kv", CLI_STR, &kv_s, CLI_KV_HELP, 0, -1},
        {"--speculate", CLI_STR, &speculate_s, CLI_SPECULATE_HELP, 0, -1},
        {"--voice-cache-mb", CLI_INT, &voice_cache_mb, CLI_VOICE_CACHE_HELP, -1, 1 << 20},
        {"--quiet|-q", CLI_FLAG, &quiet, "no progress on stderr", 0, -1},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis tokens --model DIR --text TEXT [options]\n\n"
                      "Runs Chatterbox's T3 and prints the speech tokens exactly as upstream T3.inference\n"
                      "returns them (including the final stop token 6562 when it was drawn), space-separated.");
    if (r) return r == 1 ? 0 : 2;
    if (!model) return cli_error("tokens", "--model DIR is required"), 2;
    int prec;
    if (cli_precision("tokens", precision, &prec)) return 2;
    int kvc;
    if (cli_kv("tokens", kv_s, &kvc)) return 2;
    if (cli_speculate("tokens", speculate_s, &o.speculate)) return 2;
    if (!text) return cli_error("tokens", "--text TEXT is required"), 2;
    o.seed = cli_seed(seed);
    o.exaggeration = exaggeration;
    o.language = language;
    tokens_ui ui = {!quiet, isatty(STDERR_FILENO)};
    o.on_token = print_progress;
    o.user = &ui;

    vocis_open_options oo = {threads, config, prec, kvc, voice_cache_mb};
    vocis_model *m;
    if (vocis_model_open(model, &oo, &m) != VOCIS_OK) {
        cli_error("tokens", "%s", vocis_errmsg(m));
        vocis_model_close(m);
        return 1;
    }
    if (vocis_check_language(m, language) != VOCIS_OK) {
        cli_error("tokens", "--language: %s", vocis_errmsg(m));
        vocis_model_close(m);
        return 1;
    }
    if (!quiet) cli_warn_other_family("tokens", argc, argv, vocis_model_kind(m));
    vocis_voice *v = NULL;
    int rc = 0;
    int32_t *toks = NULL;
    size_t n = 0;
    if (vocis_voice_load(m, cond, &v) != VOCIS_OK || vocis_t3_generate(m, v, text, &o, &toks, &n) != VOCIS_OK) {
        if (ui.show && ui.tty) fputc('\n', stderr);
        rc = cli_error("tokens", "%s", vocis_errmsg(m));
    } else {
        if (ui.show && ui.tty && n >= 25) fputc('\n', stderr);
        cli_print_seed("tokens", seed, o.seed, quiet || o.greedy); /* argmax draws nothing */
        for (size_t i = 0; i < n; i++) printf(i ? " %d" : "%d", toks[i]);
        printf("\n");
    }
    vocis_free(toks);
    vocis_voice_free(v);
    vocis_model_close(m);
    return rc;
}
