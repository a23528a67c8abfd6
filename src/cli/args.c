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

/* Whether arg's first n characters are one of spec's '|'-separated names. */
static int name_matches(const char *spec, const char *arg, size_t n) {
    for (const char *p = spec; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, arg, n) == 0) return 1;
        if (!bar) break;
        p = bar + 1;
    }
    return 0;
}

/* Length of arg's option name: up to a '=' for "--name=value", else all of it. */
static size_t name_len(const char *arg) {
    const char *eq = arg[0] == '-' && arg[1] == '-' ? strchr(arg, '=') : NULL;
    return eq ? (size_t)(eq - arg) : strlen(arg);
}

static int is_help(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

static const cli_opt *find_opt(const cli_opt *opts, int nopts, const char *a) {
    if (a[0] != '-' || !a[1]) return NULL;
    const size_t n = name_len(a);
    for (int k = 0; k < nopts; k++)
        if (opts[k].kind != CLI_POS && name_matches(opts[k].name, a, n)) return &opts[k];
    return NULL;
}

static void print_help(const char *usage, const cli_opt *opts, int nopts) {
    printf("%s\n\nOptions:\n", usage);
    for (int i = 0; i < nopts; i++) {
        if (opts[i].kind == CLI_POS) continue;
        const char *arg = opts[i].kind == CLI_FLAG ? "" : opts[i].kind == CLI_STR || opts[i].kind == CLI_LIST ? " S" :
                          opts[i].kind == CLI_FLOAT ? " F" : " N";
        char left[64];
        snprintf(left, sizeof left, "%s%s", opts[i].name, arg);
        for (char *p = left; *p; p++)
            if (*p == '|') *p = ',';
        printf("  %-26s %s\n", left, opts[i].help);
    }
    printf("  %-26s %s\n", "--help,-h", "show this help");
}

/* Stores value v of option o (named a on the command line). 0, or 2 after an error. */
static int set_value(const char *cmd, const cli_opt *o, const char *a, const char *v) {
    char *end = NULL;
    errno = 0;
    int bad = 0;
    double num = 0;
    switch (o->kind) {
    case CLI_STR: *(const char **)o->dest = v; return 0;
    case CLI_LIST: {
        cli_list *l = o->dest;
        if (l->n == l->cap) return cli_error(cmd, "option %s given more than %d times", a, l->cap), 2;
        l->v[l->n++] = v;
        return 0;
    }
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
    if (bad) return cli_error(cmd, "option %s: invalid value '%s'", a, v), 2;
    if (o->min <= o->max && (num < o->min || num > o->max))
        return cli_error(cmd, "option %s: value %s out of range [%.16g, %.16g]", a, v, o->min, o->max), 2;
    return 0;
}

int cli_parse(int argc, char **argv, const cli_opt *opts, int nopts, const char *usage) {
    const char *cmd = argv[0];
    int next_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            print_help(usage, opts, nopts);
            return 1;
        }
        const cli_opt *o = find_opt(opts, nopts, a);
        if (!o && (a[0] != '-' || !a[1])) { /* a positional argument */
            while (next_pos < nopts && opts[next_pos].kind != CLI_POS) next_pos++;
            if (next_pos == nopts) return cli_error(cmd, "unexpected argument '%s' (see --help)", a), 2;
            *(const char **)opts[next_pos++].dest = a;
            continue;
        }
        const size_t n = name_len(a);
        if (!o) return cli_error(cmd, "unknown option '%.*s' (see --help)", (int)n, a), 2;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)n, a);
        const char *v = a[n] == '=' ? a + n + 1 : NULL;
        if (o->kind == CLI_FLAG) {
            if (v) return cli_error(cmd, "option %s takes no value", name), 2;
            *(int *)o->dest = 1;
            continue;
        }
        if (!v) {
            /* "--text -o a.wav": the next word is another option, not this one's value */
            if (i + 1 >= argc || find_opt(opts, nopts, argv[i + 1]) || is_help(argv[i + 1]))
                return cli_error(cmd, "option %s needs a value", name), 2;
            v = argv[++i];
        }
        if (set_value(cmd, o, name, v)) return 2;
    }
    return 0;
}

int cli_given(int argc, char **argv, const char *name) {
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-' && name_matches(name, argv[i], name_len(argv[i]))) return 1;
    return 0;
}

int64_t cli_seed(uint64_t seed) {
    return seed != UINT64_MAX ? (int64_t)seed : vx_draw_seed();
}

void cli_print_seed(const char *cmd, uint64_t given, int64_t used, int quiet) {
    if (given == UINT64_MAX && !quiet) fprintf(stderr, "vocis %s: seed %lld\n", cmd, (long long)used);
}
