/* The public handles' insides, shared by the src/api/ files (not installed). */
#ifndef VX_API_INTERNAL_H
#define VX_API_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "vocis.h"
#include "base/err.h"
#include "base/rng.h"
#include "models/chatterbox/clone.h"
#include "models/chatterbox/conds.h"
#include "models/chatterbox/config.h"
#include "models/chatterbox/hift.h"
#include "models/chatterbox/s3gen_flow.h"
#include "models/chatterbox/t3.h"
#include "models/vibevoice/generate.h"
#include "text/tokenizer.h"

struct vocis_model {
    char dir[4096];
    int threads;
    vx_err err;
    vx_cb_config cfg;
    vx_tokenizer *tok;
    vx_t3 t3;
    int has_t3;
    /* S3Gen, loaded on first use */
    vx_weights *s3gen_w;
    vx_s3gen_flow *flow;
    vx_hift *hift;
    /* VibeVoice (when the folder holds one) */
    vx_vv_model *vv;
    /* voice cloning, loaded on first use; clones of files cached by path + size + mtime */
    vx_cb_cloner cloner;
    int has_cloner;
    pthread_mutex_t clone_lock;
    struct clone_entry *clones;
    int nclones;
};

/* Where a voice came from (saved as metadata of a voice file). */
typedef struct voice_source {
    char name[256];      /* file name of the recording, "" if not cloned */
    double seconds;      /* its duration (of what was read) */
    int sample_rate;     /* its rate */
    char warning[256];   /* advisory, "" when none */
} voice_source;

struct vocis_voice {
    vx_cb_conds conds;
    voice_source src;
    char *audio_path; /* VibeVoice: the recording, read at synthesis */
};

#define CLONE_CACHE_MAX 16
typedef struct clone_entry {
    char path[4096];
    int64_t size, mtime_ns;
    vx_cb_conds conds;
    voice_source src;
} clone_entry;

/* 1 when DIR/NAME exists. */
int vx_api_file_exists(const char *dir, const char *name);
/* Loads S3Gen (flow + HiFT) / the cloning networks on first use. */
vocis_status vx_api_load_s3gen(vocis_model *m);
vocis_status vx_api_load_cloner(vocis_model *m);
/* torch.manual_seed(o->seed), or a random seed when o->seed < 0. */
void vx_api_seed_rng(vx_rng *rng, const vocis_t3_options *o);
/* vocis_speak for a VibeVoice model (vocis_vv.c). */
vocis_status vx_api_vv_speak(vocis_model *m, const vocis_voice *voice, const char *text,
                             const vocis_speak_options *opts, vocis_audio *out);

#endif
