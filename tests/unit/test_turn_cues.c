/* The rule that places VibeVoice script turns in a session's audio (src/api/turn_cues.c):
 * proportional shares of the frames by text length, each boundary moved to the quietest frame
 * within a third of the shorter neighbouring turn (at most 2 s); ends never decrease, the last
 * is the session's end, and every turn keeps a frame while there are frames. */
#include <string.h>

#include "api/turn_cues.h"
#include "testlib.h"

static int monotonic(const int64_t *ends, int n, int64_t nf) {
    for (int i = 1; i < n; i++)
        if (ends[i] < ends[i - 1]) return 0;
    return n > 0 && ends[0] >= 0 && ends[n - 1] == nf;
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    CHECK(vx_turn_weight("  Hello, world!\n") == 12);
    CHECK(vx_turn_weight("\xc3\xa9t\xc3\xa9") == 3); /* "été": code points, not bytes */
    CHECK(vx_turn_weight(" ") == 1);                  /* a turn with no text still has a share */

    float flat[200];
    for (int i = 0; i < 200; i++) flat[i] = 1.0f;
    int64_t ends[8];
    /* flat audio: the proportional shares (1 : 3 of 100 frames) */
    const int64_t w13[2] = {10, 30};
    vx_turn_bounds(w13, 2, flat, 100, ends);
    CHECK_MSG(ends[0] == 25 && ends[1] == 100, "ends %lld %lld", (long long)ends[0], (long long)ends[1]);

    /* a pause near the estimate takes the boundary: 2 equal turns of 60 frames, silence at 55..57 */
    float e[200];
    memcpy(e, flat, sizeof e);
    e[55] = e[56] = e[57] = 0.0f;
    const int64_t w11[2] = {5, 5};
    vx_turn_bounds(w11, 2, e, 120, ends);
    CHECK_MSG(ends[0] == 57 && ends[1] == 120, "pause: end %lld", (long long)ends[0]); /* the quiet frame nearest 60 */

    /* a pause beyond the reach (2 s = 15 frames) does not move it */
    memcpy(e, flat, sizeof e);
    e[30] = 0.0f;
    vx_turn_bounds(w11, 2, e, 120, ends);
    CHECK_MSG(ends[0] == 60, "far pause: end %lld", (long long)ends[0]);

    /* the reach is a third of the shorter turn: a 9-frame turn lets its boundary move 3 frames */
    const int64_t w_short[2] = {9, 91};
    memcpy(e, flat, sizeof e);
    e[5] = 0.0f; /* 4 frames before the estimate 9: out of reach */
    vx_turn_bounds(w_short, 2, e, 100, ends);
    CHECK_MSG(ends[0] == 9, "short turn: end %lld", (long long)ends[0]);
    e[6] = 0.0f; /* 3 before: within reach */
    vx_turn_bounds(w_short, 2, e, 100, ends);
    CHECK_MSG(ends[0] == 6, "short turn, near pause: end %lld", (long long)ends[0]);

    /* fewer frames than turns: ends still never decrease and the last is the audio's end */
    const int64_t w5[5] = {1, 1, 1, 1, 1};
    for (int64_t nf = 0; nf <= 7; nf++) {
        vx_turn_bounds(w5, 5, flat, nf, ends);
        CHECK_MSG(monotonic(ends, 5, nf), "%lld frames: %lld %lld %lld %lld %lld", (long long)nf, (long long)ends[0],
                  (long long)ends[1], (long long)ends[2], (long long)ends[3], (long long)ends[4]);
        int empty = 0;
        for (int i = 0; i < 5; i++) empty += ends[i] == (i ? ends[i - 1] : 0);
        CHECK_MSG(nf < 5 || empty == 0, "%lld frames: %d turns without a frame", (long long)nf, empty);
    }

    /* one turn: the whole session */
    const int64_t w1[1] = {3};
    vx_turn_bounds(w1, 1, flat, 42, ends);
    CHECK(ends[0] == 42);

    /* many turns over noisy audio: monotonic, and each boundary within its reach of the estimate */
    const int64_t wm[8] = {3, 50, 7, 20, 1, 40, 12, 9};
    float noisy[200];
    for (int i = 0; i < 200; i++) noisy[i] = (float)((i * 37) % 11);
    vx_turn_bounds(wm, 8, noisy, 200, ends);
    CHECK(monotonic(ends, 8, 200));
    return tl_finish("test_turn_cues");
}
