/* Prints the layout of the public structs of vocis.h that the Python
 * binding mirrors with ctypes (bindings/python/vocis/_lib.py):
 *   STRUCT size N
 *   STRUCT.FIELD OFFSET SIZE
 * test_abi.py fails when the Python mirror disagrees. A field added to a
 * struct in vocis.h changes its size, so the mirror must follow (add the
 * field here and in _lib.py). */
#include <stddef.h>
#include <stdio.h>

#include "vocis.h"

#define S(T) printf(#T " size %zu\n", sizeof(T))
#define F(T, f) printf(#T "." #f " %zu %zu\n", offsetof(T, f), sizeof(((T *)0)->f))

int main(void) {
    S(vocis_open_options);
    F(vocis_open_options, threads);
    F(vocis_open_options, config_path);
    F(vocis_open_options, precision);
    F(vocis_open_options, kv_cache);
    F(vocis_open_options, voice_cache_mb);

    S(vocis_clone_options);
    F(vocis_clone_options, exaggeration);

    S(vocis_t3_options);
    F(vocis_t3_options, temperature);
    F(vocis_t3_options, cfg_weight);
    F(vocis_t3_options, exaggeration);
    F(vocis_t3_options, min_p);
    F(vocis_t3_options, top_p);
    F(vocis_t3_options, repetition_penalty);
    F(vocis_t3_options, max_new_tokens);
    F(vocis_t3_options, greedy);
    F(vocis_t3_options, seed);
    F(vocis_t3_options, language);
    F(vocis_t3_options, on_token);
    F(vocis_t3_options, user);
    F(vocis_t3_options, top_k);
    F(vocis_t3_options, speculate);

    S(vocis_progress);
    F(vocis_progress, stage);
    F(vocis_progress, chunk);
    F(vocis_progress, n_chunks);
    F(vocis_progress, step);
    F(vocis_progress, n_steps);
    F(vocis_progress, text_tokens);
    F(vocis_progress, speech_tokens);

    S(vocis_vv_options);
    F(vocis_vv_options, cfg_scale);
    F(vocis_vv_options, diffusion_steps);
    F(vocis_vv_options, max_new_tokens);
    F(vocis_vv_options, max_seconds);
    F(vocis_vv_options, split_turns);

    S(vocis_speak_options);
    F(vocis_speak_options, t3);
    F(vocis_speak_options, vv);
    F(vocis_speak_options, cfm_steps);
    F(vocis_speak_options, max_chunk_chars);
    F(vocis_speak_options, crossfade_ms);
    F(vocis_speak_options, on_progress);
    F(vocis_speak_options, on_audio);
    F(vocis_speak_options, user);
    F(vocis_speak_options, on_warning);
    F(vocis_speak_options, stream_tokens);
    F(vocis_speak_options, checkpoint);
    F(vocis_speak_options, on_cue);

    S(vocis_cue);
    F(vocis_cue, index);
    F(vocis_cue, text);
    F(vocis_cue, speaker);
    F(vocis_cue, start);
    F(vocis_cue, end);
    F(vocis_cue, sample_rate);
    F(vocis_cue, exact);

    S(vocis_convert_options);
    F(vocis_convert_options, seed);
    F(vocis_convert_options, cfm_steps);
    F(vocis_convert_options, on_progress);
    F(vocis_convert_options, on_audio);
    F(vocis_convert_options, user);

    S(vocis_audio);
    F(vocis_audio, samples);
    F(vocis_audio, n);
    F(vocis_audio, sample_rate);
    return 0;
}
