#include "cli/cli.h"

int cmd_tokenize(int argc, char **argv) {
    (void)argc;
    return cli_error(argv[0], "not implemented yet");
}
