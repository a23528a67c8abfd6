/* vocis tokenize on a Chatterbox-Multilingual folder: the text front end only
 * (grapheme_mtl_merged_expanded_v1.json + Cangjie5_TC.json), no weights. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "text/chatterbox_text.h"
#include "text/mtl_text.h"
#include "text/tokenizer.h"

int cmd_tokenize_mtl(const char *cmd, const char *model, const char *text, const char *language) {
    if (!language || !*language)
        return cli_error(cmd, "this is a Chatterbox-Multilingual folder: give --language (one of %s)",
                         vx_mtl_language_list());
    if (vx_mtl_language_index(language) < 0)
        return cli_error(cmd, "unsupported language '%.32s' (supported: %s)", language, vx_mtl_language_list());
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", model, VX_MTL_TOKENIZER_FILE);
    vx_err err;
    vx_err_clear(&err);
    vx_tokenizer *tok = NULL;
    vx_mtl_text *t = NULL;
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = 0;
    vx_tok_unknown unknown = {{0}, 0};
    if (vx_tokenizer_load(path, &tok, &err) || vx_mtl_text_load(model, &t, &err) ||
        vx_mtl_text_to_ids(t, tok, text, language, &ids, &n, &unknown, &err)) {
        rc = cli_error(cmd, "%s", err.msg);
    } else {
        cli_warn_unknown(cmd, tok, &unknown);
        printf("%d", VX_CB_START_TEXT_TOKEN);
        for (size_t i = 0; i < n; i++) printf(" %d", ids[i]);
        printf(" %d\n", VX_CB_STOP_TEXT_TOKEN);
        if (fflush(stdout) != 0 || ferror(stdout)) rc = cli_error(cmd, "cannot write the ids to stdout");
    }
    free(ids);
    vx_mtl_text_free(t);
    vx_tokenizer_free(tok);
    return rc;
}
