/* vocis command-line tool: dispatches to one subcommand. */
#include "cli/cli.h"
#include "vocis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"speak", cmd_speak, "text to speech (Chatterbox family, VibeVoice) to a WAV/FLAC/OGG file or raw PCM"},
    {"info", cmd_info, "say which model a folder holds (and its languages)"},
    {"convert", cmd_convert, "Chatterbox voice conversion: say a recording in another voice"},
    {"voice", cmd_voice, "create vocis voice files: clone a recording, or convert a conds.pt"},
    {"tokenize", cmd_tokenize, "print the model's text token ids for a text"},
    {"tokens", cmd_tokens, "Chatterbox T3: generate speech tokens for a text"},
    {"debug", cmd_debug, "run one model stage on golden-named tensors (for tests)"},
    {"bench", cmd_bench, "benchmarks on synthetic random-weight models"},
    {"serve", cmd_serve, "OpenAI-compatible HTTP speech server (streaming, voices, web page)"},
};

static void usage(FILE *f) {
    fprintf(f, "usage: vocis COMMAND [options]   (vocis help COMMAND, or vocis COMMAND --help, for details)\n"
               "       vocis --version           (version, CPU features and kernels in use)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

static const command *find_command(const char *name) {
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) return &commands[i];
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "help") == 0 && argc > 2) { /* vocis help CMD = vocis CMD --help */
        const command *c = find_command(argv[2]);
        if (!c) return fprintf(stderr, "vocis help: unknown command '%s' (see vocis --help)\n", argv[2]), 2;
        char *help_argv[] = {argv[2], "--help", NULL};
        return c->run(2, help_argv);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("%s\n", vocis_version_info()); /* "vocis 0.3.0 (cpu: ...; kernels: ...; ...)" */
        return 0;
    }
    const command *c = find_command(argv[1]);
    if (c) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "vocis: unknown command '%s' (see vocis --help)\n", argv[1]);
    return 2;
}
