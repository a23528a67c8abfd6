/* vocis tokenize: the T3 text token ids of a Chatterbox text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "models/chatterbox/mtl.h"
#include "text/chatterbox_text.h"
#include "text/tokenizer.h"
#include "text/unicode.h"
#include "text/turbo_text.h"
#include "models/chatterbox/turbo.h"

/* T3's text position table has 2050 rows (spec chatterbox.md §4.3). */
#define T3_MAX_TEXT_POSITIONS 2050

static const char usage[] =
    "usage: vocis tokenize --model DIR --text TEXT [--language xx]\n"
    "\n"
    "Prints the Chatterbox T3 text token ids of TEXT on one line, space-separated:\n"
    "[START] (255), the ids of punc_norm(TEXT) with spaces encoded as [SPACE], [STOP] (0).\n"
    "DIR must hold the model's tokenizer.json. An empty or whitespace-only TEXT is refused\n"
    "(upstream would silently speak a placeholder sentence instead). Characters the\n"
    "vocabulary lacks (emoji, ...) are named in a warning on stderr. Texts longer than T3's\n"
    "2050 text positions are printed in full with a warning on stderr.\n"
    "Chatterbox-Multilingual folders (grapheme_mtl_merged_expanded_v1.json) need --language:\n"
    "its lower-case/NFKD/language steps and [xx] tag come before the ids.";

void cli_warn_unknown(const char *cmd, const vx_tokenizer *t, const vx_tok_unknown *u) {
    if (!u->n) return;
    char msg[512];
    vx_tok_unknown_message(t, u, 0, msg, sizeof msg);
    fprintf(stderr, "vocis %s: warning: %s\n", cmd, msg);
}

int cmd_tokenize(int argc, char **argv) {
    const char *cmd = argv[0];
    const char *model = NULL, *text = NULL, *language = NULL;
    const cli_opt opts[] = {
        {"--model|-m", CLI_STR, &model, "Chatterbox model folder (with tokenizer.json)", 0, -1},
        {"--text|-t", CLI_STR, &text, "text to tokenize (UTF-8)", 0, -1},
        {"--language|--lang", CLI_STR, &language, "Chatterbox-Multilingual: language code (ar da de el en es fi fr he "
                                                  "hi it ja ko ms nl no pl pt ru sv sw tr zh)", 0, -1},
    };
    int rc = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), usage);
    if (rc == 1) return 0;
    if (rc) return rc;
    if (!model) return cli_error(cmd, "missing --model DIR (see --help)");
    if (!text) return cli_error(cmd, "missing --text TEXT (see --help)");
    if (vx_utf8_blank(text, strlen(text))) return cli_error(cmd, "text is empty"); /* as speak says */
    if (vx_turbo_is_folder(model)) { /* Chatterbox-Turbo / -Nano: the GPT-2 ids T3 consumes (no start/stop) */
        vx_err terr = {0};
        vx_tokenizer *ttok = NULL;
        int max_len = 0;
        int32_t *tids = NULL;
        size_t tn = 0;
        if (vx_turbo_tokenizer_load(model, &ttok, &max_len, &terr) != VOCIS_OK ||
            vx_turbo_text_to_ids(ttok, max_len, text, &tids, &tn, &terr) != VOCIS_OK) {
            vx_tokenizer_free(ttok);
            return cli_error(cmd, "%s", terr.msg);
        }
        for (size_t i = 0; i < tn; i++) printf(i ? " %d" : "%d", tids[i]);
        printf("\n");
        free(tids);
        vx_tokenizer_free(ttok);
        if (fflush(stdout) != 0 || ferror(stdout)) return cli_error(cmd, "cannot write the ids to stdout");
        return 0;
    }
    if (vx_mtl_is_folder(model)) return cmd_tokenize_mtl(cmd, model, text, language);
    if (language && strcmp(language, "en") != 0)
        return cli_error(cmd, "language '%.32s': only Chatterbox-Multilingual takes a language", language);

    size_t plen = strlen(model) + sizeof "/tokenizer.json";
    char *path = malloc(plen);
    if (!path) return cli_error(cmd, "out of memory");
    snprintf(path, plen, "%s/tokenizer.json", model);

    vx_err err;
    vx_err_clear(&err);
    vx_tokenizer *tok = NULL;
    if (vx_tokenizer_load(path, &tok, &err) != VOCIS_OK) {
        free(path);
        return cli_error(cmd, "%s", err.msg);
    }
    int32_t start = vx_tokenizer_token_id(tok, "[START]"), stop = vx_tokenizer_token_id(tok, "[STOP]");
    if (start != VX_CB_START_TEXT_TOKEN || stop != VX_CB_STOP_TEXT_TOKEN) {
        rc = cli_error(cmd, "%s: [START]/[STOP] are ids %d/%d, but T3 uses %d/%d (not a Chatterbox tokenizer?)",
                       path, start, stop, VX_CB_START_TEXT_TOKEN, VX_CB_STOP_TEXT_TOKEN);
        vx_tokenizer_free(tok);
        free(path);
        return rc;
    }
    free(path);

    int32_t *ids = NULL;
    size_t n = 0;
    vx_tok_unknown unknown = {{0}, 0};
    if (vx_cb_text_to_ids(tok, text, &ids, &n, &unknown, &err) != VOCIS_OK) {
        vx_tokenizer_free(tok);
        return cli_error(cmd, "%s", err.msg);
    }
    cli_warn_unknown(cmd, tok, &unknown);
    vx_tokenizer_free(tok);

    printf("%d", VX_CB_START_TEXT_TOKEN);
    for (size_t i = 0; i < n; i++) printf(" %d", ids[i]);
    printf(" %d\n", VX_CB_STOP_TEXT_TOKEN);
    free(ids);
    if (fflush(stdout) != 0 || ferror(stdout)) return cli_error(cmd, "cannot write the ids to stdout");
    if (n + 2 > T3_MAX_TEXT_POSITIONS)
        fprintf(stderr, "vocis %s: warning: %zu text tokens (with start/stop) exceed T3's %d text positions; "
                        "synthesis would refuse this text\n", cmd, n + 2, T3_MAX_TEXT_POSITIONS);
    return 0;
}
