/* The public option structs' defaults (upstream's generate() defaults). */
#include <math.h>
#include <string.h>

#include "vocis.h"

void vocis_t3_options_default(vocis_t3_options *o) {
    memset(o, 0, sizeof *o);
    o->temperature = 0.8f;
    o->cfg_weight = 0.5f;
    o->exaggeration = NAN;
    o->min_p = 0.05f;
    o->top_p = NAN; /* the model's: English 1.0 (off), Turbo 0.95 */
    o->top_k = -1;  /* the model's: Turbo 1000 */
    o->repetition_penalty = 1.2f;
    o->max_new_tokens = 1000;
    o->seed = -1;
}

void vocis_speak_options_default(vocis_speak_options *o) {
    memset(o, 0, sizeof *o);
    vocis_t3_options_default(&o->t3);
    o->vv.cfg_scale = 1.3f;
    o->vv.diffusion_steps = 10;
    o->cfm_steps = 10;
    o->max_chunk_chars = 300;
    o->crossfade_ms = 40.0f;
}

void vocis_clone_options_default(vocis_clone_options *o) { o->exaggeration = 0.5f; }

void vocis_convert_options_default(vocis_convert_options *o) {
    memset(o, 0, sizeof *o);
    o->seed = -1;
    o->cfm_steps = 10;
}
