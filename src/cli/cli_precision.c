/* --precision for every command that loads a model. */
#include <stdio.h>

#include "cli.h"
#include "kernels/precision.h"

int cli_precision(const char *cmd, const char *s, int *out) {
    *out = 0;
    int p = s ? vx_precision_parse(s) : VX_PREC_DEFAULT;
    if (p < 0) {
        cli_error(cmd, "option --precision: invalid value '%s' (exact, bf16 or q8)", s);
        return 2;
    }
    vx_err err = {0};
    if (vx_precision_check(p, &err)) { /* the default: checks VOCIS_PRECISION */
        cli_error(cmd, "%s%s", p == VX_PREC_DEFAULT ? "" : "option --precision: ", err.msg);
        return 2;
    }
    *out = p;
    return 0;
}
