#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vocis %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static int name_matches(const char *spec, const char *arg) {
    size_t n = strlen(arg);
    for (const char *p = spec; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, arg, n) == 0) return 1;
        if (!bar) break;
        p = bar + 1;
    }
    return 0;
}

static void print_help(const char *usage, const cli_opt *opts, int nopts) {
    printf("%s\n\nOptions:\n", usage);
    for (int i = 0; i < nopts; i++) {
        const char *arg = opts[i].kind == CLI_FLAG ? "" : opts[i].kind == CLI_STR ? " S" :
                          opts[i].kind == CLI_FLOAT ? " F" : " N";
        char left[64];
        snprintf(left, sizeof left, "%s%s", opts[i].name, arg);
        for (char *p = left; *p; p++)
            if (*p == '|') *p = ',';
        printf("  %-26s %s\n", left, opts[i].help);
    }
    printf("  %-26s %s\n", "--help,-h", "show this help");
}

int cli_parse(int argc, char **argv, const cli_opt *opts, int nopts, const char *usage) {
    const char *cmd = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_help(usage, opts, nopts);
            return 1;
        }
        const cli_opt *o = NULL;
        for (int k = 0; k < nopts && !o; k++)
            if (name_matches(opts[k].name, a)) o = &opts[k];
        if (!o) {
            if (a[0] == '-' && a[1]) cli_error(cmd, "unknown option '%s' (see --help)", a);
            else cli_error(cmd, "unexpected argument '%s' (see --help)", a);
            return 2;
        }
        if (o->kind == CLI_FLAG) {
            *(int *)o->dest = 1;
            continue;
        }
        if (i + 1 >= argc) {
            cli_error(cmd, "option %s needs a value", a);
            return 2;
        }
        const char *v = argv[++i];
        char *end = NULL;
        errno = 0;
        int bad = 0;
        double num = 0;
        switch (o->kind) {
        case CLI_STR: *(const char **)o->dest = v; break;
        case CLI_INT: {
            long x = strtol(v, &end, 10);
            bad = !*v || *end || errno || x < -2147483647L || x > 2147483647L;
            num = (double)x;
            if (!bad) *(int *)o->dest = (int)x;
            break;
        }
        case CLI_U64: {
            unsigned long long x = strtoull(v, &end, 10);
            bad = !*v || *end || errno || v[0] == '-';
            num = (double)x;
            if (!bad) *(uint64_t *)o->dest = (uint64_t)x;
            break;
        }
        case CLI_FLOAT: { /* range-checked as written (0.01 is in [0.01, 5] though (float)0.01 < 0.01) */
            double x = strtod(v, &end);
            bad = !*v || *end || errno || !isfinite((float)x);
            num = x;
            if (!bad) *(float *)o->dest = (float)x;
            break;
        }
        default: break;
        }
        if (bad) {
            cli_error(cmd, "option %s: invalid value '%s'", a, v);
            return 2;
        }
        if (o->kind != CLI_STR && o->min <= o->max && (num < o->min || num > o->max)) {
            cli_error(cmd, "option %s: value %s out of range [%.16g, %.16g]", a, v, o->min, o->max);
            return 2;
        }
    }
    return 0;
}
