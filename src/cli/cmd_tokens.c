#include "cli/cli.h"

int cmd_tokens(int argc, char **argv) {
    (void)argc;
    return cli_error(argv[0], "not implemented yet");
}
