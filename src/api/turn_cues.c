/* VibeVoice turns in a session's audio: proportional shares snapped to pauses (turn_cues.h). */
#include "api/turn_cues.h"

int64_t vx_turn_weight(const char *text) {
    int64_t n = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        n += (*p & 0xC0) != 0x80 && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r';
    return n > 0 ? n : 1;
}

/* The quietest frame in [lo, hi] (ties: the one nearest to want). */
static int64_t quietest(const float *energy, int64_t lo, int64_t hi, int64_t want) {
    int64_t best = lo;
    for (int64_t f = lo + 1; f <= hi; f++) {
        const int64_t d = f > want ? f - want : want - f, db = best > want ? best - want : want - best;
        if (energy[f] < energy[best] || (energy[f] == energy[best] && d < db)) best = f;
    }
    return best;
}

void vx_turn_bounds(const int64_t *weight, int n_turns, const float *energy, int64_t n_frames, int64_t *ends) {
    if (n_turns < 1) return;
    double total = 0;
    for (int i = 0; i < n_turns; i++) total += (double)weight[i];
    /* the proportional estimate of each end */
    double cum = 0;
    for (int i = 0; i < n_turns; i++) {
        cum += (double)weight[i];
        ends[i] = (int64_t)((double)n_frames * cum / total + 0.5);
    }
    ends[n_turns - 1] = n_frames;
    int64_t prev = 0, prev_est = 0;
    for (int i = 0; i + 1 < n_turns; i++) {
        const int64_t est = ends[i], next_est = ends[i + 1];
        const int64_t left = est - prev_est, right = next_est - est, shorter = left < right ? left : right;
        int64_t reach = shorter / 3;
        if (reach < 1) reach = 1;
        if (reach > VX_TURN_SNAP_FRAMES) reach = VX_TURN_SNAP_FRAMES;
        int64_t lo = est - reach, hi = est + reach;
        if (lo < prev + 1) lo = prev + 1; /* every turn keeps a frame while there are frames */
        if (hi > n_frames - 1) hi = n_frames - 1;
        prev_est = est;
        ends[i] = lo <= hi ? quietest(energy, lo, hi, est) : (lo < n_frames ? lo : n_frames);
        prev = ends[i];
    }
}
