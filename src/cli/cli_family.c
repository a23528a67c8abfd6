/* Options that only one model family reads: a warning when the model at hand ignores one the user gave. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#define T3_KINDS "chatterbox, chatterbox-multilingual, chatterbox-turbo, chatterbox-nano"
#define CB_KINDS "chatterbox, chatterbox-multilingual"
#define TURBO_KINDS "chatterbox-turbo, chatterbox-nano"
#define VV_KINDS "vibevoice, vibevoice-realtime"

static const struct {
    const char *opt, *kinds; /* kinds: the model kinds (vocis_model_kind) that read it */
} family_opts[] = {
    {"--greedy", T3_KINDS},         {"--temperature", T3_KINDS},     {"--top-p", T3_KINDS},
    {"--repetition-penalty", T3_KINDS}, {"--max-tokens", T3_KINDS},  {"--cfm-steps", T3_KINDS},
    {"--chunk-chars", T3_KINDS},    {"--cfg-weight", CB_KINDS},      {"--exaggeration", CB_KINDS},
    {"--min-p", CB_KINDS},          {"--top-k", TURBO_KINDS},        {"--cfg-scale", VV_KINDS},
    {"--speculate", T3_KINDS},      {"--diffusion-steps", VV_KINDS}, {"--max-new-tokens", VV_KINDS}, {"--max-seconds", VV_KINDS},
};

static int kind_in(const char *kinds, const char *kind) {
    const size_t n = strlen(kind);
    for (const char *p = kinds; (p = strstr(p, kind)); p += n)
        if ((p == kinds || p[-1] == ' ') && (p[n] == ',' || !p[n])) return 1;
    return 0;
}

void cli_warn_other_family(const char *cmd, int argc, char **argv, const char *kind) {
    if (!*kind) return;
    for (size_t i = 0; i < sizeof family_opts / sizeof family_opts[0]; i++)
        if (!kind_in(family_opts[i].kinds, kind) && cli_given(argc, argv, family_opts[i].opt))
            fprintf(stderr, "vocis %s: warning: %s is ignored by %s models (it applies to %s)\n", cmd,
                    family_opts[i].opt, kind, family_opts[i].kinds);
}
