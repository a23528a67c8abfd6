/* `vocis info`: which model a folder holds, and how vocis will run it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "vocis.h"

static const char *precision_name(int p) {
    return p == VOCIS_PRECISION_EXACT ? "exact"
           : p == VOCIS_PRECISION_BF16 ? "bf16"
           : p == VOCIS_PRECISION_Q8   ? "q8"
                                       : "?";
}

/* "precision: T3 exact, S3Gen flow bf16, HiFT exact (default)": each part as the open model runs
 * it, and what chose it (the flag, the environment, or the per-part default). */
static void print_precision(const vocis_model *m, const char *flag) {
    static const struct { int part; const char *chatterbox, *vibevoice; } parts[] = {
        {VOCIS_PART_LM, "T3", "LM"}, {VOCIS_PART_FLOW, "S3Gen flow", NULL}, {VOCIS_PART_VOCODER, "HiFT", NULL}};
    const int vv = !strncmp(vocis_model_kind(m), "vibevoice", 9);
    printf("precision:");
    const char *sep = " ";
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        const int p = vocis_model_precision(m, parts[i].part);
        if (!p) continue;
        printf("%s%s %s", sep, vv && parts[i].vibevoice ? parts[i].vibevoice : parts[i].chatterbox, precision_name(p));
        sep = ", ";
    }
    const char *env = getenv("VOCIS_PRECISION");
    if (flag && strcmp(flag, "default") != 0) printf(" (--precision %s)\n", flag);
    else if (env && *env && strcmp(env, "default") != 0) printf(" (VOCIS_PRECISION=%s)\n", env);
    else printf(" (default)\n");
}

int cmd_info(int argc, char **argv) {
    const char *model = NULL, *precision = NULL, *config = NULL;
    int threads = 0;
    const cli_opt opts[] = {
        {"--model", CLI_STR, &model, "model folder (required)", 0, -1},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--config", CLI_STR, &config, "hyper-parameter override file", 0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis info --model DIR\n\n"
                      "Opens a model folder and says which model it found (chatterbox, chatterbox-multilingual,\n"
                      "chatterbox-turbo, chatterbox-nano, chatterbox-vc, vibevoice, vibevoice-realtime), its\n"
                      "languages where it has several, the precision each part runs in (and whether --precision,\n"
                      "VOCIS_PRECISION or the default chose it), and the build it runs on.");
    if (r) return r == 1 ? 0 : 2;
    if (!model) return cli_error("info", "--model DIR is required"), 2;
    int prec;
    if (cli_precision("info", precision, &prec)) return 2;
    vocis_open_options oo = {threads, config, prec};
    vocis_model *m;
    int rc = 0;
    if (vocis_model_open(model, &oo, &m) != VOCIS_OK) {
        rc = cli_error("info", "%s", vocis_errmsg(m));
    } else {
        printf("model: %s\nfolder: %s\n", vocis_model_kind(m), model);
        const char *langs = vocis_model_languages(m);
        if (langs && *langs) printf("languages: %s\n", langs);
        print_precision(m, precision);
        printf("build: %s\n", vocis_version_info());
    }
    vocis_model_close(m);
    return rc;
}
