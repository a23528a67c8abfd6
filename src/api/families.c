/* The model families vocis knows, in the order their folders are told apart:
 * the more specific first (a Turbo or Multilingual folder also holds files of
 * the English one; a Realtime folder has VibeVoice's config.json). */
#include "api/family.h"
#include "api/internal.h"

static const vx_family *const families[] = {
    &vx_family_turbo, &vx_family_mtl, &vx_family_chatterbox, &vx_family_vc, &vx_family_rt, &vx_family_vv,
};

const char *vx_family_kind(const vocis_model *m) {
    return m->family->kind ? m->family->kind(m) : m->family->kind_name;
}

const vx_family *vx_family_of_folder(const char *dir) {
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (families[i]->detect(dir)) return families[i];
    return NULL;
}

const vx_family *const *vx_family_list(int *n) {
    *n = (int)(sizeof families / sizeof families[0]);
    return families;
}
