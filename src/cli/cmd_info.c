/* `vocis info`: which model a folder holds, and how vocis will run it. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "vocis.h"

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
                      "languages where it has several, and the build it runs on.");
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
        printf("precision: %s\n", precision ? precision : "exact (default)");
        printf("build: %s\n", vocis_version_info());
    }
    vocis_model_close(m);
    return rc;
}
