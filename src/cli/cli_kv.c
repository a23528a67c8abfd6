/* --kv f32|bf16 and --speculate: how the commands that run a transformer decode. */
#include <string.h>

#include "cli/cli.h"
#include "nn/speculate.h"
#include "vocis.h"

int cli_kv(const char *cmd, const char *s, int *out) {
    *out = VOCIS_KV_DEFAULT;
    if (!s) return 0;
    if (!strcmp(s, "f32")) *out = VOCIS_KV_F32;
    else if (!strcmp(s, "bf16")) *out = VOCIS_KV_BF16;
    else return cli_error(cmd, "option --kv: invalid value '%s' (f32 or bf16)", s), 2;
    return 0;
}

/* --speculate off|auto|N: T3's self-speculative decoding (vocis_t3_options.speculate). */
int cli_speculate(const char *cmd, const char *s, int *out) {
    *out = VOCIS_SPECULATE_AUTO;
    if (!s) return 0;
    if (vx_spec_parse(s, out))
        return cli_error(cmd, "option --speculate: invalid value '%s' (off, auto or 1..%d)", s, VOCIS_SPECULATE_MAX), 2;
    return 0;
}
