/* --kv f32|bf16: the KV-cache storage of the commands that run a transformer. */
#include <string.h>

#include "cli/cli.h"
#include "vocis.h"

int cli_kv(const char *cmd, const char *s, int *out) {
    *out = VOCIS_KV_DEFAULT;
    if (!s) return 0;
    if (!strcmp(s, "f32")) *out = VOCIS_KV_F32;
    else if (!strcmp(s, "bf16")) *out = VOCIS_KV_BF16;
    else return cli_error(cmd, "option --kv: invalid value '%s' (f32 or bf16)", s), 2;
    return 0;
}
