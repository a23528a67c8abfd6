/* `vocis debug STAGE`: run one model stage on golden-named inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "base/threads.h"
#include "kernels/precision.h"
#include "models/stages.h"
#include "models/chatterbox/turbo.h"

typedef struct {
    const char *name;
    vx_stage_fn run;
    int needs_in; /* 1 when --in is required */
    const char *summary;
} stage;

static const stage stages[] = {
    {"t3-cond", vx_stage_t3_cond, 1,
     "T3 conditioning: speaker_emb, cond_prompt_speech_tokens, emotion_adv -> cond_emb"},
    {"t3-prefill", vx_stage_t3_prefill, 1,
     "T3 backbone over inputs_embeds -> hidden_after_layerN, final_norm_hidden, logits_last"},
    {"conds-pt", vx_stage_conds_pt, 0,
     "DIR/conds.pt as t3.* / gen.* tensors; with --in builtin_text_tokens also builtin_prefill_logits_last"},
    {"qwen2-prefill", vx_stage_qwen2_prefill, 1,
     "VibeVoice Qwen2 LM over inputs_embeds -> layerN_out, last_hidden_state, logits, kv_layerN_key/value"},
    {"vv-connectors", vx_stage_vv_connectors, 1,
     "VibeVoice speech connectors: acoustic_in and/or semantic_in -> acoustic_out, semantic_out"},
    {"vv-diffusion", vx_stage_vv_diffusion, 1,
     "VibeVoice diffusion head + DPM-Solver++ CFG sampler [--steps N] [--cfg-scale F] [--seed N] -> single_eps_*, sN_*"},
    {"vv-rt-preset", vx_stage_vv_rt_preset, 0,
     "VibeVoice-Realtime voice preset: --voice P.pt -> lm_*, tts_lm_*, neg_lm_*, neg_tts_lm_* (hidden, key_K, value_K)"},
    {"vv-rt-lm-lower", vx_stage_vv_rt_lm_lower, 1,
     "VibeVoice-Realtime lower LM on a text window over the preset: --voice P, window_ids -> layerK_out, kv_*"},
    {"vv-rt-lm-upper", vx_stage_vv_rt_lm_upper, 1,
     "VibeVoice-Realtime upper LM: --voice P, lm_hidden_in, speech_embed_in -> text_*, speech_*, neg_* (+ EOS)"},
    {"vv-rt-generate", vx_stage_vv_rt_generate, 0,
     "VibeVoice-Realtime generate(): --voice P --text T [--seed N | --in 08 noise] -> frame_*, step_eos_*, audio"},
    {"vv-generate", vx_stage_vv_generate, 0,
     "VibeVoice generate(): --script FILE --voice FILE... [--in 08 noise | --seed N] -> sequences, frame_*, audio"},
    {"s3gen-flow", vx_stage_s3gen_flow, 1,
     "S3Gen token->mel: speech_tokens, prompt_token, prompt_feat, embedding, z_noise -> mu, mel_out, est_*"},
    {"vv-processor", vx_stage_vv_processor, 0,
     "VibeVoice processor: --script FILE --voice FILE... -> input_ids, masks, speech_tensors"},
    {"vv-acoustic-encoder", vx_stage_vv_acoustic_encode, 1,
     "VibeVoice acoustic encoder: input_audio [B, L] -> mean, downsample_k_out, stage_k_out, head_out, sampled"},
    {"vv-acoustic-decoder", vx_stage_vv_acoustic_decode, 1,
     "VibeVoice acoustic decoder: latents [1, F, 64] -> audio_whole, audio_streaming (frame by frame)"},
    {"vv-semantic-encoder", vx_stage_vv_semantic_encode, 1,
     "VibeVoice semantic encoder: input_audio [L] -> features_whole, features_streaming (hop chunks)"},
    {"hift", vx_stage_hift, 1,
     "HiFT vocoder: mel_in, phase_uniform_sample, sine_noise_randn -> f0, source, wav_clamped, wav_trim_faded"},
    {"campplus", vx_stage_campplus, 1,
     "CAMPPlus x-vector: ref_16k_torchaudio -> fbank_meannorm (Kaldi fbank minus time-mean), xvector"},
    {"s3tokenizer", vx_stage_s3tokenizer, 1,
     "S3 speech tokenizer: ref_16k_torchaudio, ref_16k_soxr, ref_24k -> s3gen_*/t3cond_* log-mels and tokens"},
    {"voice-encoder", vx_stage_voice_encoder, 1,
     "Voice encoder: ref_16k_soxr -> trim_interval, mel, partials, partial_embeds, utt_embed, speaker_emb"},
    {"resample", vx_stage_resample, 1,
     "reference resampling: ref_24k -> ref_16k_soxr (librosa soxr_hq), ref_16k_torchaudio (sinc)"},
    {"ref-mel", vx_stage_ref_mel, 1, "S3Gen reference mel: ref_24k (first 10 s) -> mel [1, 80, M]"},
    {"t3-generate", vx_stage_turbo_t3_generate, 1,
     "Turbo/Nano T3.inference_turbo: speaker_emb, cond_prompt_speech_tokens --text T [--seed N | --greedy] -> tokens_sampled, logits"},
    {"loudnorm", vx_stage_turbo_loudnorm, 1,
     "Turbo reference loudness normalisation (pyloudnorm, -27 LUFS): ref_24k -> ref_24k_loudnorm"},
    {"source-long-tokenizer", vx_stage_source_long_tokenizer, 0,
     "S3 tokenizer long-audio path: --source FILE (16 kHz) -> mel_len, window_*, tokens (golden VC 07)"},
};
#define NSTAGES (int)(sizeof stages / sizeof stages[0])

static void usage(FILE *f) {
    fprintf(f,
            "usage: vocis debug STAGE --model DIR [--in IN.safetensors] --out OUT.safetensors [--threads N]\n"
            "                   [--precision exact|bf16] [stage options]\n\n"
            "Runs one model stage on tensors read by their golden names from --in and writes\n"
            "every output tensor, under golden names and shapes, to --out.\n\nstages:\n");
    for (int i = 0; i < NSTAGES; i++) fprintf(f, "  %-20s %s\n", stages[i].name, stages[i].summary);
}

int cmd_debug(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const stage *s = NULL;
    for (int i = 0; i < NSTAGES; i++)
        if (strcmp(argv[1], stages[i].name) == 0) s = &stages[i];
    if (!s) return cli_error("debug", "unknown stage '%s' (see vocis debug --help)", argv[1]), 2;

    /* Common options are taken here; everything else goes to the stage. */
    const char *model = NULL, *in = NULL, *out = NULL, *precision = "exact";
    int threads = 0;
    char *rest[256];
    int nrest = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = strcmp(a, "--model") == 0 ? &model : strcmp(a, "--in") == 0 ? &in :
                           strcmp(a, "--out") == 0 ? &out : strcmp(a, "--precision") == 0 ? &precision : NULL;
        if (dst || strcmp(a, "--threads") == 0) {
            if (i + 1 >= argc) return cli_error("debug", "option %s needs a value", a), 2;
            if (dst) *dst = argv[++i];
            else {
                char *end;
                long t = strtol(argv[++i], &end, 10);
                if (*end || t < 1 || t > 256) return cli_error("debug", "option --threads: invalid value '%s'", argv[i]), 2;
                threads = (int)t;
            }
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (nrest < 256) {
            rest[nrest++] = argv[i];
        }
    }
    if (!model) return cli_error("debug", "--model DIR is required"), 2;
    int prec;
    if (cli_precision("debug", precision, &prec)) return 2;
    if (!out) return cli_error("debug", "--out FILE is required"), 2;
    if (s->needs_in && !in) return cli_error("debug", "stage %s needs --in FILE", s->name), 2;

    vx_err err = {0};
    vx_st_file *inf = NULL;
    if (in && vx_st_open(in, &inf, &err) != VOCIS_OK) return cli_error("debug", "%s", err.msg);
    vx_st_writer *w = vx_st_writer_new();
    vx_stage_args args = {model, inf, w, threads > 0 ? threads : vx_default_threads(), nrest, rest,
                          vx_precision_resolve(prec)};
    vocis_status st = w ? s->run(&args, &err) : vx_fail(&err, VOCIS_E_NOMEM, "out of memory");
    if (st == VOCIS_OK) st = vx_st_writer_save(w, out, &err);
    vx_st_writer_free(w);
    vx_st_close(inf);
    if (st != VOCIS_OK) return cli_error("debug", "%s: %s", s->name, err.msg);
    return 0;
}
