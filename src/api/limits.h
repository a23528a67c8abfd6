/* The numeric speech options that both `vocis speak` (src/cli/cmd_speak.c) and
 * `vocis serve` (src/server/proto.c) take: one name pair and one inclusive
 * range per knob, so that both front ends refuse and accept the same values. */
#ifndef VX_LIMITS_H
#define VX_LIMITS_H

#include <stdint.h>

typedef enum {
    VX_LIM_SEED,
    VX_LIM_TEMPERATURE,
    VX_LIM_EXAGGERATION,
    VX_LIM_CFG_WEIGHT,
    VX_LIM_MIN_P,
    VX_LIM_TOP_P,
    VX_LIM_TOP_K,
    VX_LIM_REPETITION_PENALTY,
    VX_LIM_MAX_TOKENS,
    VX_LIM_CFM_STEPS,
    VX_LIM_CFG_SCALE,
    VX_LIM_DIFFUSION_STEPS,
    VX_LIM_COUNT
} vx_limit_id;

typedef struct vx_limit {
    const char *json; /* request field of POST /v1/audio/speech */
    const char *cli;  /* option of vocis speak */
    double min, max;  /* inclusive */
    int integer;      /* 1: whole numbers only */
} vx_limit;

extern const vx_limit vx_limits[VX_LIM_COUNT];

/* A random seed in [0, 2^53) (the table's seed range), for a request that gives none:
 * the CLI prints it and the server returns it, so that the take can be made again. */
int64_t vx_draw_seed(void);

#endif
