/* The speculation controller (nn/speculate.h): the setting's parser, fixed
 * and off settings, and the auto policy's choices under simulated costs —
 * it must pick speculation when acceptance is high and the draft cheap, and
 * run (almost) only plain steps when acceptance is poor, so that poor
 * acceptance costs at most a few percent of plain speed. */
#include <stdint.h>
#include <string.h>

#include "nn/speculate.h"
#include "testlib.h"

/* Simulates `tokens` tokens under auto with the given costs (seconds per
 * plain step, per draft step, verify extra per proposal) and a fraction
 * `accept` of proposals matching (independent draws); returns the
 * total time. */
static double simulate(double t_plain, double t_draft, double t_row, double accept, int tokens, vx_spec_ctl *c) {
    vx_spec_ctl_init(c, VX_SPEC_AUTO);
    double t = 0;
    uint64_t lcg = 12345;
    int done = 0;
    while (done < tokens) {
        int k = vx_spec_ctl_k(c);
        if (k == 0) {
            vx_spec_ctl_plain(c, t_plain);
            t += t_plain;
            done++;
            continue;
        }
        int acc = 0; /* each proposal matches with probability `accept`, independently */
        while (acc < k) {
            lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
            if ((double)(lcg >> 11) * 0x1p-53 >= accept) break;
            acc++;
        }
        double d = k * t_draft, v = t_plain + k * t_row;
        vx_spec_ctl_round(c, k, acc, acc + 1, d, v);
        t += d + v;
        done += acc + 1;
    }
    return t;
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    int s = 99;
    CHECK(vx_spec_parse("off", &s) == 0 && s == VX_SPEC_OFF);
    CHECK(vx_spec_parse("auto", &s) == 0 && s == VX_SPEC_AUTO);
    CHECK(vx_spec_parse("5", &s) == 0 && s == 5);
    CHECK(vx_spec_parse("0", &s) == -1 && s == 5);
    CHECK(vx_spec_parse("17", &s) == -1);
    CHECK(vx_spec_parse("3x", &s) == -1);
    CHECK(vx_spec_parse("", &s) == -1);
    CHECK(vx_spec_parse(NULL, &s) == -1);
    CHECK(!strcmp(vx_spec_name(VX_SPEC_OFF), "off") && !strcmp(vx_spec_name(7), "7"));

    vx_spec_ctl c;
    vx_spec_ctl_init(&c, VX_SPEC_OFF);
    CHECK(vx_spec_ctl_k(&c) == 0);
    vx_spec_ctl_init(&c, 3);
    CHECK(vx_spec_ctl_k(&c) == 3);
    vx_spec_ctl_round(&c, 3, 1, 2, 0.3, 1.0);
    CHECK(vx_spec_ctl_k(&c) == 3);
    CHECK(c.proposed == 3 && c.accepted == 1 && c.tokens == 2 && c.rounds == 1);

    /* good draft: speculation wins clearly, k > 1 */
    double plain = 0.07 * 2000;
    double t = simulate(0.07, 0.015, 0.004, 0.9, 2000, &c);
    CHECK_MSG(t < plain / 1.8, "high acceptance: %.2f s vs %.2f plain", t, plain);
    CHECK(c.rounds > 0 && vx_spec_tokens_per_verify(&c) > 3.0);

    /* useless draft: within 3 % of plain */
    t = simulate(0.07, 0.03, 0.01, 0.0, 5000, &c);
    CHECK_MSG(t < 0.07 * 5000 * 1.03, "no acceptance: %.2f s vs %.2f plain", t, 0.07 * 5000);
    CHECK(vx_spec_accept_rate(&c) == 0);

    /* expensive draft, moderate acceptance: never much slower than plain */
    t = simulate(0.07, 0.06, 0.01, 0.5, 5000, &c);
    CHECK_MSG(t < 0.07 * 5000 * 1.03, "costly draft: %.2f s vs %.2f plain", t, 0.07 * 5000);
    return tl_finish("test_speculate");
}
