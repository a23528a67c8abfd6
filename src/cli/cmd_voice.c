/* `vocis voice`: create and inspect vocis voice files. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "vocis.h"

static int voice_create(int argc, char **argv) {
    const char *model = ".", *conds = NULL, *out = NULL;
    const cli_opt opts[] = {
        {"--from-conds", CLI_STR, &conds, "a Chatterbox conds.pt (torch.save) to convert (required)", 0, -1},
        {"--out|-o", CLI_STR, &out, "voice file to write, e.g. NAME.voice (required)", 0, -1},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis voice create --from-conds conds.pt -o NAME.voice\n\n"
                      "Converts upstream's Conditionals (conds.pt) into a vocis voice file: a safetensors with\n"
                      "speaker_emb [1,256], cond_prompt_speech_tokens [1,P], emotion_adv [1,1,1],\n"
                      "prompt_token [1,Tp], prompt_feat [1,Nm,80] and embedding [1,192].");
    if (r) return r == 1 ? 0 : 2;
    if (!conds) return cli_error("voice create", "--from-conds FILE is required"), 2;
    if (!out) return cli_error("voice create", "-o FILE is required"), 2;
    (void)model;
    vocis_model *m = NULL;
    /* A voice needs no weights: an empty handle carries the error messages. */
    vocis_model_open("", NULL, &m);
    vocis_voice *v = NULL;
    int rc = 0;
    if (!m) return cli_error("voice create", "out of memory");
    if (vocis_voice_load(m, conds, &v) != VOCIS_OK || vocis_voice_save(m, v, out) != VOCIS_OK)
        rc = cli_error("voice create", "%s", vocis_errmsg(m));
    vocis_voice_free(v);
    vocis_model_close(m);
    return rc;
}

int cmd_voice(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: vocis voice create --from-conds conds.pt -o NAME.voice   (vocis voice create --help)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "create")) return voice_create(argc - 1, argv + 1);
    return cli_error("voice", "unknown subcommand '%s' (see vocis voice --help)", argv[1]), 2;
}
