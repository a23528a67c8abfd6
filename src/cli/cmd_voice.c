/* `vocis voice`: create vocis voice files (cloned from a recording, or
 * converted from upstream's conds.pt). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "vocis.h"

static const char usage_create[] =
    "usage: vocis voice create --model DIR REF_AUDIO -o NAME.voice [--exaggeration F] [--threads N]\n"
    "       vocis voice create --from-conds conds.pt -o NAME.voice\n"
    "       vocis voice create --from-preset PRESET.pt -o NAME.voice [--model REALTIME_DIR]\n\n"
    "Clones a voice from a recording (WAV/FLAC/OGG or anything libsndfile reads; any rate and\n"
    "channel count; 5-10 s of clean speech works best) exactly as upstream's prepare_conditionals,\n"
    "or converts upstream's Conditionals (conds.pt). The voice file is a safetensors with\n"
    "speaker_emb [1,256], cond_prompt_speech_tokens [1,P], emotion_adv [1,1,1] (T3) and\n"
    "prompt_token [1,Tp], prompt_feat [1,Nm,80], embedding [1,192] (S3Gen), plus metadata\n"
    "(source file, duration, rate, exaggeration, vocis version). Use it with vocis speak --voice.\n"
    "--from-preset converts a VibeVoice-Realtime voice preset (upstream's\n"
    "demo/voices/streaming_model/NAME.pt: BF16 KV caches) into a safetensors of its flat tensors\n"
    "<entry>_last_hidden_state / _key_L / _value_L (entry lm, tts_lm, neg_lm, neg_tts_lm);\n"
    "with --model it is checked against that Realtime model.";

static int voice_create(int argc, char **argv) {
    const char *preset = NULL;
    const char *model = NULL, *conds = NULL, *out = NULL, *ref = NULL, *config = NULL, *precision = NULL;
    float exaggeration = 0.5f;
    int threads = 0;
    const cli_opt opts[] = {
        {"REF_AUDIO", CLI_POS, &ref, "", 0, -1},
        {"--model", CLI_STR, &model, "Chatterbox model folder (required to clone a recording)", 0, -1},
        {"--from-conds", CLI_STR, &conds, "convert a Chatterbox conds.pt (torch.save) instead", 0, -1},
        {"--from-preset", CLI_STR, &preset, "convert a VibeVoice-Realtime voice preset (.pt) instead", 0, -1},
        {"--out|-o", CLI_STR, &out, "voice file to write, e.g. NAME.voice (required)", 0, -1},
        {"--exaggeration", CLI_FLOAT, &exaggeration, "emotion exaggeration stored in the voice (0.5)", -100, 100},
        {"--config", CLI_STR, &config, "hyper-parameter override file", 0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), usage_create);
    if (r) return r == 1 ? 0 : 2;
    if (!out) return cli_error("voice create", "-o FILE is required"), 2;
    int prec;
    if (cli_precision("voice create", precision, &prec)) return 2;
    if (!!conds + !!ref + !!preset != 1)
        return cli_error("voice create",
                         "give either a reference recording or --from-conds conds.pt (or --from-preset PRESET.pt "
                         "for VibeVoice-Realtime)"), 2;
    if (ref && !model) return cli_error("voice create", "--model DIR is required to clone a recording"), 2;

    vocis_model *m = NULL;
    vocis_open_options oo = {threads, config, prec};
    /* Converting conds.pt needs no weights: an empty handle carries the error messages. */
    const int with_model = ref || (preset && model);
    vocis_status st = vocis_model_open(with_model ? model : "", with_model ? &oo : NULL, &m);
    if (!m) return cli_error("voice create", "out of memory");
    vocis_voice *v = NULL;
    int rc = 0;
    if (ref) {
        vocis_clone_options co;
        vocis_clone_options_default(&co);
        co.exaggeration = exaggeration;
        if (st == VOCIS_OK) st = vocis_voice_clone(m, ref, &co, &v);
        if (st == VOCIS_OK && *vocis_voice_warning(v))
            fprintf(stderr, "vocis voice create: warning: %s\n", vocis_voice_warning(v));
    } else if (preset) {
        if (!with_model || st == VOCIS_OK) st = vocis_voice_load_preset(m, preset, &v);
    } else {
        st = vocis_voice_load(m, conds, &v);
    }
    if (st != VOCIS_OK || vocis_voice_save(m, v, out) != VOCIS_OK) rc = cli_error("voice create", "%s", vocis_errmsg(m));
    else fprintf(stderr, "vocis voice create: wrote %s\n", out);
    vocis_voice_free(v);
    vocis_model_close(m);
    return rc;
}

int cmd_voice(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "%s\n", usage_create);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "create")) return voice_create(argc - 1, argv + 1);
    return cli_error("voice", "unknown subcommand '%s' (see vocis voice --help)", argv[1]), 2;
}
