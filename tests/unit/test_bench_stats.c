/* The statistics helper every `vocis bench` subcommand prints its repeated figures with
 * (src/cli/bench_util.c): min / median / max, and the `name: MEDIAN unit (min, max, n[; note])` line. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/bench_util.h"
#include "testlib.h"

/* What bench_print_stats writes to stdout, captured. */
static void capture(char *out, size_t cap, const char *name, const double *v, int n, double scale, int decimals,
                    const char *unit, const char *note) {
    fflush(stdout);
    FILE *tmp = tmpfile();
    const int saved = dup(1);
    CHECK(tmp && saved >= 0);
    if (!tmp || saved < 0) return;
    dup2(fileno(tmp), 1);
    if (note) bench_print_stats(name, v, n, scale, decimals, unit, "%s", note);
    else bench_print_stats(name, v, n, scale, decimals, unit, NULL);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(tmp);
    const size_t got = fread(out, 1, cap - 1, tmp);
    out[got] = 0;
    fclose(tmp);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    const double odd[5] = {3, 1, 5, 2, 4};
    bench_stats s = bench_stats_of(odd, 5);
    CHECK(s.min == 1 && s.median == 3 && s.max == 5 && s.n == 5);
    CHECK(odd[0] == 3 && odd[4] == 4); /* the input is left as it is */
    const double even[4] = {10, 40, 20, 30};
    s = bench_stats_of(even, 4);
    CHECK(s.min == 10 && s.median == 25 && s.max == 40 && s.n == 4);
    const double one = 7.5;
    s = bench_stats_of(&one, 1);
    CHECK(s.min == 7.5 && s.median == 7.5 && s.max == 7.5);
    double many[100]; /* more values than the helper's stack buffer */
    for (int i = 0; i < 100; i++) many[i] = (double)((i * 37) % 100);
    s = bench_stats_of(many, 100);
    CHECK(s.min == 0 && s.max == 99 && s.median == 49.5);

    char line[256];
    const double sec[3] = {0.0213, 0.0240, 0.0225};
    capture(line, sizeof line, "cfm_step", sec, 3, 1e3, 1, "ms", NULL);
    CHECK_MSG(!strcmp(line, "cfm_step: 22.5 ms (min 21.3, max 24.0, n=3)\n"), "got '%s'", line);
    capture(line, sizeof line, "rtf", sec, 3, 100, 2, "", "total / audio");
    CHECK_MSG(!strcmp(line, "rtf: 2.25 (min 2.13, max 2.40, n=3; total / audio)\n"), "got '%s'", line);
    capture(line, sizeof line, "decode", even, 4, 1, 0, "tokens/s", NULL);
    CHECK_MSG(!strcmp(line, "decode: 25 tokens/s (min 10, max 40, n=4)\n"), "got '%s'", line);
    /* --context N[,N...] of bench qwen2 / vibevoice */
    int64_t pos[8];
    CHECK(bench_parse_positions("1024,16384,32768,49152,65000", pos, 8, 65536) == 5);
    CHECK(pos[0] == 1024 && pos[1] == 16384 && pos[2] == 32768 && pos[3] == 49152 && pos[4] == 65000);
    CHECK(bench_parse_positions("7", pos, 8, 65536) == 1 && pos[0] == 7);
    CHECK(bench_parse_positions("65536", pos, 8, 65536) == 1);
    static const char *const bad[] = {"", ",", "1,", ",1", "1,,2", "0", "-5", "65537", "1x", "1 ,2", " 1", "+1",
                                      "1,2,3,4,5,6,7,8,9", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(bench_parse_positions(bad[i], pos, 8, 65536) == -1, "'%s' was accepted", bad[i]);
    CHECK(bench_parse_positions("1,2,3,4,5,6,7,8", pos, 8, 65536) == 8);
    return tl_finish("test_bench_stats");
}
