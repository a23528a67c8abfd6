/* The shared ranges of the speech knobs (see limits.h). */
#include "api/limits.h"

#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Seeds stop at 2^53 - 1: the largest integer that every JSON client carries
 * exactly, so that a seed the server reports can be sent back or given to
 * `vocis speak --seed`. */
const vx_limit vx_limits[VX_LIM_COUNT] = {
    [VX_LIM_SEED] = {"seed", "--seed", 0, 9007199254740991.0, 1},
    [VX_LIM_TEMPERATURE] = {"temperature", "--temperature", 0.01, 5, 0},
    [VX_LIM_EXAGGERATION] = {"exaggeration", "--exaggeration", 0, 2, 0},
    [VX_LIM_CFG_WEIGHT] = {"cfg_weight", "--cfg-weight", 0, 5, 0},
    [VX_LIM_MIN_P] = {"min_p", "--min-p", 0, 1, 0},
    [VX_LIM_TOP_P] = {"top_p", "--top-p", 0, 1, 0},
    [VX_LIM_TOP_K] = {"top_k", "--top-k", 0, 1000000, 1},
    [VX_LIM_REPETITION_PENALTY] = {"repetition_penalty", "--repetition-penalty", 0.5, 5, 0},
    [VX_LIM_MAX_TOKENS] = {"max_new_tokens", "--max-tokens", 1, 4096, 1},
    [VX_LIM_CFM_STEPS] = {"cfm_steps", "--cfm-steps", 1, 100, 1},
    [VX_LIM_CFG_SCALE] = {"cfg_scale", "--cfg-scale", 0, 10, 0},
    [VX_LIM_DIFFUSION_STEPS] = {"diffusion_steps", "--diffusion-steps", 1, 100, 1},
};

int64_t vx_draw_seed(void) {
    uint64_t r;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) { /* no entropy source: time and pid */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 40);
    }
    return (int64_t)(r >> 11);
}
