/* The smallest vocis program: text to a WAV file through the public C API.
 *
 *   cc speak.c $(pkg-config --cflags --libs vocis) -o speak
 *   ./speak MODEL_DIR "Hello from vocis." out.wav [SEED]
 */
#include <stdio.h>
#include <stdlib.h>

#include <vocis.h>

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s MODEL_DIR TEXT OUT.wav [SEED]\n", argv[0]);
        return 2;
    }
    fprintf(stderr, "%s\n", vocis_version_info());

    vocis_model *m;
    if (vocis_model_open(argv[1], NULL, &m) != VOCIS_OK) {
        fprintf(stderr, "speak: %s\n", vocis_errmsg(m)); /* the handle carries the message (NULL: no memory) */
        vocis_model_close(m);
        return 1;
    }
    vocis_speak_options o;
    vocis_speak_options_for_model(m, &o); /* this model's defaults (VibeVoice-Realtime has its own) */
    if (argc > 4) o.t3.seed = strtoll(argv[4], NULL, 10); /* same audio as `vocis speak --seed N` */

    vocis_audio a;
    int rc = 0;
    /* voice NULL = the model's built-in voice (Chatterbox: conds.pt) */
    if (vocis_speak(m, NULL, argv[2], &o, &a) != VOCIS_OK || vocis_audio_save(m, &a, argv[3], "wav") != VOCIS_OK) {
        fprintf(stderr, "speak: %s\n", vocis_errmsg(m));
        rc = 1;
    } else {
        printf("%s: %.2f s at %d Hz\n", argv[3], (double)a.n / a.sample_rate, a.sample_rate);
    }
    vocis_audio_free(&a);
    vocis_model_close(m);
    return rc;
}
