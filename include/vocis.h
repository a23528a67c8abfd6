/* vocis — native text-to-speech inference (Chatterbox, VibeVoice).
 *
 * Public C API. Every handle is opaque; every fallible call returns a
 * vocis_status and leaves a one-line message retrievable with
 * vocis_errmsg() on the handle involved. The library keeps no global state.
 *
 * Typical use:
 *     vocis_model *m;
 *     if (vocis_model_open("chatterbox/", NULL, &m) != VOCIS_OK) {
 *         fprintf(stderr, "%s\n", vocis_errmsg(m));  // m is valid unless NULL (out of memory)
 *         vocis_model_close(m);
 *     }
 */
#ifndef VOCIS_H
#define VOCIS_H

#include <stddef.h>
#include <stdint.h>

/* Everything declared here is the shared library's interface: libvocis is
 * built with -fvisibility=hidden, and these declarations (only) are visible. */
#ifdef __GNUC__
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vocis_status {
    VOCIS_OK = 0,
    VOCIS_E_IO = 1,          /* file missing, unreadable or unwritable */
    VOCIS_E_FORMAT = 2,      /* malformed file contents (JSON, safetensors, pickle, WAV, ...) */
    VOCIS_E_SHAPE = 3,       /* tensor missing or of unexpected shape / dtype */
    VOCIS_E_ARG = 4,         /* invalid argument or option value */
    VOCIS_E_NOMEM = 5,       /* allocation failed */
    VOCIS_E_UNSUPPORTED = 6, /* valid input that this build does not handle */
    VOCIS_E_INTERNAL = 7,
    VOCIS_E_CANCELLED = 8,   /* a callback asked to stop */
    VOCIS_E_INVALID = 9      /* well-formed input that cannot be used (audio too short, silent, ...) */
} vocis_status;

/* Short constant name of a status ("io", "format", ...). */
const char *vocis_status_name(vocis_status st);

#define VOCIS_VERSION "0.3.0" /* the one source of the version: CMake reads it for the SONAME and vocis.pc */
/* The library's version string (VOCIS_VERSION of the build). */
const char *vocis_version(void);
/* One line: version, CPU features detected, the kernel level in use, the
 * OpenBLAS version and core, default threads, e.g.
 * "vocis 0.3.0 (cpu: avx2+fma+f16c avx512f+dq+bw+vl; kernels: avx512; openblas 0.3.21, core Haswell; threads: 2)". */
const char *vocis_version_info(void);

/* ---- model ------------------------------------------------------------- */

typedef struct vocis_model vocis_model;

/* Precision policy for vocis_open_options.precision, fixed at open for the whole model:
 *   VOCIS_PRECISION_EXACT  weights as stored, float32 activations: upstream's arithmetic
 *                          (seeded output reproduces upstream's audio);
 *   VOCIS_PRECISION_BF16   float32 weight matrices converted to bf16 once at open (half the
 *                          memory and bandwidth), float32 activations and accumulation;
 *   VOCIS_PRECISION_Q8     transformer linears (T3, Qwen2, diffusion head) as int8 with a float
 *                          scale per 32 weights, everything else as in BF16 (~0.56x bf16's bytes);
 *   VOCIS_PRECISION_DEFAULT (0): the environment's VOCIS_PRECISION (exact|bf16|q8|default) when set
 *                          (another value is refused at open), else per part: the LM in EXACT (bf16 is
 *                          faster but not sample-identical: a seed then draws other tokens), the S3Gen
 *                          flow in BF16 on CPUs with AVX512_BF16, HiFT in EXACT. */
enum {
    VOCIS_PRECISION_DEFAULT = 0,
    VOCIS_PRECISION_EXACT = 1,
    VOCIS_PRECISION_BF16 = 2,
    VOCIS_PRECISION_Q8 = 3
};

/* Storage of the transformer KV caches for vocis_open_options.kv_cache:
 *   VOCIS_KV_DEFAULT (0) float32, except a VibeVoice 1.5B / 7B generation whose caches may
 *                  grow past 16384 positions (its prompt + token cap): bf16 (a warning says so);
 *   VOCIS_KV_F32   float32 keys and values (upstream's arithmetic);
 *   VOCIS_KV_BF16  keys (after RoPE) and values rounded to bf16 as they are cached: half
 *                  the cache memory and bandwidth (long contexts), float32 attention
 *                  arithmetic; output close to, not identical with, float32.
 * Chatterbox (English, Multilingual) T3 and VibeVoice 1.5B / 7B take it; for
 * Turbo / Nano / Realtime models VOCIS_KV_BF16 is refused at open. */
enum { VOCIS_KV_DEFAULT = 0, VOCIS_KV_F32 = 1, VOCIS_KV_BF16 = 2 };

/* Fields are only ever added at the end; a zero-initialised field keeps the
 * behaviour from before it existed. */
typedef struct vocis_open_options {
    int threads;             /* worker threads; 0 = number of physical cores */
    const char *config_path; /* optional override file for hyper-parameters (NULL = none) */
    int precision;           /* VOCIS_PRECISION_*; 0 = default (exact unless VOCIS_PRECISION says otherwise) */
    int kv_cache;            /* VOCIS_KV_*; 0 = default (float32; long VibeVoice generations bf16) */
    /* Chatterbox T3: a voice's conditioning prefix (speaker, prompt speech
     * tokens, emotion) is computed once per (voice, exaggeration) and its
     * K/V reused by every later request and text chunk of that voice, with
     * the same bits as recomputing it. Memory bound in MiB, least recently
     * used voices dropped first: 0 = default (256), -1 = no cache. */
    int voice_cache_mb;
} vocis_open_options;

/* Counters of a model's voice-prefix cache (vocis_open_options.voice_cache_mb). */
typedef struct vocis_voice_cache_stats {
    int64_t hits, misses, entries, evictions;
    size_t bytes, max_bytes;
} vocis_voice_cache_stats;
/* All zero for a model without one (VibeVoice, voice conversion, -1). */
void vocis_voice_cache_stats_get(const vocis_model *m, vocis_voice_cache_stats *out);

/* Continuous batching of a model's concurrent calls (Chatterbox T3 families): the sequences in
 * its shared batch now, the batched forward steps run so far and the sequences they stepped
 * (rows / steps is the mean batch size). All zero for a model that batches nothing yet. */
typedef struct vocis_batch_stats {
    int active;
    int64_t steps, rows;
} vocis_batch_stats;
void vocis_batch_stats_get(const vocis_model *m, vocis_batch_stats *out);
/* How many concurrent speak calls the model steps together (the others wait for a slot): 1 for
 * a model that runs one call at a time (VibeVoice-Realtime, voice conversion). */
int vocis_model_batch_slots(const vocis_model *m);

/* Open a model folder (the Hugging Face release layout): Chatterbox
 * (t3_cfg.safetensors, ...) or VibeVoice 1.5B / 7B (config.json with
 * model_type "vibevoice", the safetensors shards, tokenizer.json). On failure *out is
 * still a handle carrying the error message (NULL only when out of memory);
 * close it with vocis_model_close. */
vocis_status vocis_model_open(const char *dir, const vocis_open_options *opts, vocis_model **out);
void vocis_model_close(vocis_model *m);
/* "chatterbox", "chatterbox-multilingual", "vibevoice", or "" for a handle that failed to open. */
const char *vocis_model_kind(const vocis_model *m);
/* Parts of a model for vocis_model_precision. */
enum { VOCIS_PART_LM = 0, VOCIS_PART_FLOW = 1, VOCIS_PART_VOCODER = 2 };
/* The precision (VOCIS_PRECISION_EXACT, _BF16 or _Q8) a part of the open model computes in, as
 * resolved at open: VOCIS_PART_LM the language model (T3; for VibeVoice everything it runs),
 * VOCIS_PART_FLOW Chatterbox's S3Gen flow, VOCIS_PART_VOCODER HiFT (under Q8 these two run in
 * BF16, which is what is returned). 0 when the model has no such part. */
int vocis_model_precision(const vocis_model *m, int part);
const char *vocis_errmsg(const vocis_model *m);
void vocis_model_set_threads(vocis_model *m, int threads);

/* ---- text --------------------------------------------------------------- */

/* Text front end of the model: normalised text -> model token ids, including
 * the start/stop tokens that the model adds. *ids is malloc'd; free with vocis_free. */
vocis_status vocis_tokenize(vocis_model *m, const char *text, int32_t **ids, size_t *n);
/* Same for a language: Chatterbox-Multilingual needs one of its 23 codes
 * (any case; the language tag and the language's text steps are applied);
 * the English models take NULL, "" or "en". */
vocis_status vocis_tokenize_language(vocis_model *m, const char *text, const char *language, int32_t **ids,
                                     size_t *n);
/* The languages the model speaks, as "ar, da, de, ..., zh" for
 * Chatterbox-Multilingual; NULL for models without a language option. */
const char *vocis_model_languages(const vocis_model *m);
/* VOCIS_OK when `language` suits the model (see vocis_tokenize_language);
 * else VOCIS_E_ARG with a message listing the codes on the handle. */
vocis_status vocis_check_language(vocis_model *m, const char *language);

void vocis_free(void *p);

/* ---- voices (speaker conditioning) -------------------------------------- */

typedef struct vocis_voice vocis_voice;

/* Load a voice: a vocis voice / conditioning .safetensors file, a
 * Chatterbox conds.pt, or an audio recording (cloned with the defaults of
 * vocis_voice_clone; the kind is told from the file's contents). path ==
 * NULL loads the model's built-in voice (DIR/conds.pt). A voice file made by a
 * model of the other cloning recipe (English / Multilingual vs Turbo / Nano,
 * metadata vocis_model_kind) is refused with VOCIS_E_INVALID. Errors are
 * reported on the model handle. */
vocis_status vocis_voice_load(vocis_model *m, const char *path, vocis_voice **out);
void vocis_voice_free(vocis_voice *v);

/* Voice cloning (Chatterbox: upstream's prepare_conditionals, reproduced
 * exactly): a recording -> a voice carrying both the T3 and the S3Gen
 * conditioning. */
typedef struct vocis_clone_options {
    float exaggeration; /* emotion exaggeration stored in the voice; default 0.5 (upstream's) */
} vocis_clone_options;

void vocis_clone_options_default(vocis_clone_options *o);

/* Clone from an audio file (WAV/FLAC/OGG/... as libsndfile reads it, any
 * rate, any channel count; mixed to mono and resampled to 24 kHz as
 * librosa.load does). Only the first minute is read (upstream uses 6 s for
 * the T3 prompt, 10 s for S3Gen and the whole file for the speaker
 * embedding). Results are cached in the model handle by path, size and
 * modification time, so cloning the same file again is free.
 * opts may be NULL. Errors are reported on the model handle. */
vocis_status vocis_voice_clone(vocis_model *m, const char *audio_path, const vocis_clone_options *opts,
                               vocis_voice **out);
/* Same from mono samples in memory at sample_rate (not cached). */
vocis_status vocis_voice_clone_samples(vocis_model *m, const float *samples, size_t n, int sample_rate,
                                       const vocis_clone_options *opts, vocis_voice **out);
/* An advisory about how the voice was made (e.g. "the reference is 0.5 s
 * long; upstream recommends at least 5 s"), or "" when there is none. */
const char *vocis_voice_warning(const vocis_voice *v);

/* ---- Chatterbox T3: text -> speech tokens -------------------------------- */

typedef struct vocis_t3_options {
    float temperature;        /* default 0.8 */
    float cfg_weight;         /* default 0.5; 0 = conditional row only */
    float exaggeration;       /* default: the voice's stored value (NaN = keep) */
    float min_p;              /* default 0.05 */
    float top_p;              /* default NaN = the model's (English 1.0 = off, Turbo/Nano 0.95) */
    float repetition_penalty; /* default 1.2 */
    int max_new_tokens;       /* default 1000 */
    int greedy;               /* argmax instead of sampling */
    int64_t seed;             /* torch.manual_seed(seed) equivalent; < 0 = random */
    const char *language;     /* Chatterbox-Multilingual: one of its 23 codes (required); NULL otherwise */
    /* Progress: called after each generated token; return non-zero to cancel. */
    int (*on_token)(void *user, int step, int32_t token);
    void *user;
    int top_k;                /* Turbo/Nano top-k filter: default -1 = the model's (1000); 0 = off; English: unused */
    /* Self-speculative T3 decoding: a quantized draft of T3 proposes tokens
     * that the exact T3 checks in one forward. The tokens (and the seed's
     * reproduction of upstream) are those of plain decoding in every setting;
     * only the speed changes. VOCIS_SPECULATE_AUTO (0, the default): on for
     * an exact T3 (precision exact/default), k chosen from the measured
     * acceptance and costs; VOCIS_SPECULATE_OFF (-1); 1..VOCIS_SPECULATE_MAX:
     * that many proposals per round, at any precision. */
    int speculate;
} vocis_t3_options;
enum { VOCIS_SPECULATE_OFF = -1, VOCIS_SPECULATE_AUTO = 0, VOCIS_SPECULATE_MAX = 16 };

void vocis_t3_options_default(vocis_t3_options *o);

/* Generate speech tokens exactly as upstream T3.inference returns them
 * (including the final stop token when drawn). *tokens is malloc'd. */
vocis_status vocis_t3_generate(vocis_model *m, const vocis_voice *voice, const char *text,
                               const vocis_t3_options *opts, int32_t **tokens, size_t *n);

/* ---- speech synthesis (Chatterbox: T3 -> S3Gen flow -> HiFT) -------------- */

typedef struct vocis_progress {
    const char *stage; /* "t3", "s3gen", "hift" (Chatterbox); "vibevoice" (step = tokens generated,
                          n_steps = audio samples generated so far at 24 kHz) */
    int chunk, n_chunks; /* long text is synthesised in chunks (0-based) */
    int step, n_steps;   /* t3: tokens so far / max; s3gen, hift: 0 at start, n_steps when done */
    /* Totals of the whole call so far (every report carries them; the last one the final counts): */
    int text_tokens;   /* model text tokens read: Chatterbox the T3 text ids of the chunks begun (start /
                          stop included), VibeVoice the prompt's tokens without the voice placeholders,
                          Realtime the text tokens encoded so far */
    int speech_tokens; /* Chatterbox: T3 speech tokens drawn; VibeVoice: speech frames (133 ms) generated */
} vocis_progress;

/* A stretch of the output audio and the text spoken in it (vocis_speak_options.on_cue).
 * Chatterbox: one cue per text chunk, reported as soon as its audio is final; consecutive cues
 * meet in the middle of the crossfade that joins their chunks, the first starts at 0 and the last
 * ends at the end of the audio. VibeVoice (1.5B / 7B): one cue per script turn, reported when the
 * session (the whole script, or a --split-turns session) that speaks it ends. The model speaks a
 * session's turns in one stream without marking where a turn ends, so its audio is shared out over
 * its turns in proportion to their text's characters, each boundary then moved to the quietest
 * 133 ms frame near it (exact = 0); session boundaries are exact. */
typedef struct vocis_cue {
    int index;          /* 0-based, over the call */
    const char *text;   /* the chunk's / turn's text (UTF-8, as given: may hold newlines) */
    int speaker;        /* VibeVoice: the turn's speaker (0-based, in voice order); Chatterbox: -1 */
    int64_t start, end; /* samples of the output audio (sample_rate), start <= end */
    int sample_rate;
    int exact;          /* 1: both ends are where the audio of this text begins/ends (chunk, session) */
} vocis_cue;

/* VibeVoice knobs (upstream demo defaults). */
typedef struct vocis_vv_options {
    float cfg_scale;     /* classifier-free guidance of the diffusion head (1.3) */
    int diffusion_steps; /* DPM-Solver++ steps per speech frame (10) */
    int max_new_tokens;  /* 0 = upstream's cap, min(context − prompt, 2 × prompt) */
    float max_seconds;   /* > 0: stop once this much audio exists (0 = no limit) */
    /* A script whose prompt + generation cap (2 x prompt, or max_new_tokens) exceeds the model's
     * context is VOCIS_E_ARG before any work. split_turns != 0 speaks it instead in consecutive
     * sessions of whole turns that each fit, each prompted with all the voices, their audio
     * concatenated (not upstream's output): session k draws from seed + k, max_new_tokens caps each
     * session, max_seconds the whole; progress chunk / n_chunks count the sessions. */
    int split_turns;
} vocis_vv_options;

typedef struct vocis_speak_options {
    vocis_t3_options t3;  /* sampling knobs and seed (t3.on_token is not used here); t3.seed also seeds VibeVoice */
    vocis_vv_options vv;  /* VibeVoice only */
    int cfm_steps;        /* Euler steps of the flow matching (10) */
    int max_chunk_chars;  /* split text longer than this into sentence chunks (300; 0 = never) */
    float crossfade_ms;   /* overlap when joining chunks (40 ms) */
    /* Called as work progresses; return non-zero to cancel (VOCIS_E_CANCELLED). */
    int (*on_progress)(void *user, const vocis_progress *p);
    /* Called with audio as soon as it is final (once per chunk); return non-zero to cancel. */
    int (*on_audio)(void *user, const float *samples, size_t n, int sample_rate);
    void *user;
    /* Called with each one-line advisory of vocis_speak / vocis_speak_script / vocis_stream_*
     * (script lines joined or skipped, a voice cut to its first 600 s, characters the tokenizer
     * cannot represent, labels removed, ...); NULL = silent. */
    void (*on_warning)(void *user, const char *msg);
    /* Chatterbox (all T3 families): speech while T3 is still generating. 0 (default) = off: each
     * text chunk's audio is made once its tokens are all drawn (upstream's path). n > 0: S3Gen
     * runs every time enough tokens are there (first after n, then doubling chunks up to 100),
     * with upstream's streaming parts (flow finalize=False, HiFT cache_source, crossfaded
     * chunk joins), and on_audio gets each piece at once; VOCIS_STREAM_AUTO: the family's
     * default n. Same sample count as the path without, not the same samples (the flow of
     * early frames sees less context, the noise is drawn per frame). on_audio then runs from
     * T3's token callback: with concurrent calls on one model it may run on another caller's
     * thread, as on_progress may, and T3 waits while a piece is made. Ignored by VibeVoice. */
    int stream_tokens;
    /* Resumable long jobs (NULL = none): see vocis_checkpoint_options. */
    const struct vocis_checkpoint_options *checkpoint;
    /* Timed text (subtitles), NULL = none: called once per cue, in order; return non-zero to cancel.
     * A resumed job (checkpoint.resume_path) first reports again the cues made before its
     * checkpoint, so the caller gets the whole job's cues as from one uninterrupted run. */
    int (*on_cue)(void *user, const vocis_cue *cue);
} vocis_speak_options;
enum { VOCIS_STREAM_AUTO = -1 };

/* A job that can be killed and resumed: Chatterbox text of several chunks (vocis_speak with
 * out == NULL, its audio going to on_audio) and VibeVoice scripts (vocis_speak /
 * vocis_speak_script; --split-turns sessions too; out then holds only the audio made after the
 * resume point). A fixed seed (t3.seed >= 0) is required. path: at each chunk boundary
 * (Chatterbox) or speech frame (VibeVoice) once every_s seconds of audio (0 = 60) were emitted
 * since the last one, the whole generation state is written there atomically (Chatterbox: the
 * chunk, random stream, crossfade tail, counters; VibeVoice: both CFG branches' KV caches, the
 * σ-VAE decoder and semantic encoder caches, tokens, position, random stream, session).
 * resume_path: the state to continue from; it must be of the same model files and the same job
 * (text, voices, seed, every option that changes the audio), else VOCIS_E_ARG; a damaged /
 * truncated / foreign file or another format version is VOCIS_E_FORMAT; nothing reaches
 * on_audio before it is accepted. on_checkpoint(user, samples, resuming): resuming 1 before
 * generation continues (the caller's output must then hold exactly the first `samples` samples
 * of the run); resuming 0 just before a checkpoint at `samples` samples is saved (make the
 * output durable, e.g. fsync). Non-zero fails the call. The audio is then sample-identical to
 * one uninterrupted run. VibeVoice-Realtime and text streaming refuse it (VOCIS_E_UNSUPPORTED). */
typedef struct vocis_checkpoint_options {
    const char *path;
    double every_s;
    const char *resume_path;
    int (*on_checkpoint)(void *user, int64_t samples, int resuming);
} vocis_checkpoint_options;

void vocis_speak_options_default(vocis_speak_options *o);
/* The defaults for model m: as vocis_speak_options_default, except on
 * VibeVoice-Realtime, whose demo uses cfg_scale 1.5 and 5 diffusion steps. */
void vocis_speak_options_for_model(const vocis_model *m, vocis_speak_options *o);

typedef struct vocis_audio {
    float *samples; /* mono, [-1, 1] */
    size_t n;
    int sample_rate; /* 24000 for Chatterbox */
} vocis_audio;

/* Synthesise `text` with `voice`.
 * Chatterbox: voice NULL = the built-in voice; the voice must carry the S3Gen
 * reference (prompt_token, prompt_feat, embedding).
 * VibeVoice: the voice is a recording (vocis_voice_load of an audio file); a
 * text without "Speaker N:" lines is spoken as "Speaker 1: text"; a script
 * with several speakers needs vocis_speak_script. on_audio receives each
 * 133 ms frame as soon as it is decoded.
 * out may be NULL: the audio then reaches on_audio only, and Chatterbox keeps
 * no more than one chunk's (a book-length text in bounded memory).
 * Text that is empty or only whitespace is VOCIS_E_ARG ("text is empty"); a
 * synthesis that produces no audio is an error (VOCIS_E_INVALID), never an
 * empty success. */
vocis_status vocis_speak(vocis_model *m, const vocis_voice *voice, const char *text,
                         const vocis_speak_options *opts, vocis_audio *out);

/* VibeVoice: a script of "Speaker N: text" lines with one voice per speaker,
 * in speaker order (voice i is "Speaker i+1" after upstream's renumbering).
 * As upstream's demo, a line without a label continues the current turn;
 * lines that cannot be used are skipped with a warning (opts->on_warning).
 * Voices shorter than 0.5 s or silent are VOCIS_E_INVALID; each is read up
 * to its first 600 s (a longer one is cut, with a warning).
 * With voices == NULL / n_voices == 0 the prompt has no voice section. */
vocis_status vocis_speak_script(vocis_model *m, const vocis_voice *const *voices, int n_voices, const char *script,
                                const vocis_speak_options *opts, vocis_audio *out);
void vocis_audio_free(vocis_audio *a);

/* ---- VibeVoice-Realtime-0.5B: speech while the text is still arriving ------
 * The voice is a preset (upstream's demo/voices/streaming_model/NAME.pt, or a
 * vocis voice file converted from one; vocis_voice_load takes either on a
 * Realtime model). Text goes in as it arrives, in any pieces; a window of 5
 * text tokens runs (6 speech frames, 133 ms each, to opts.on_audio as soon as
 * decoded) once its tokens are final, so the audio equals that of the whole
 * text given at once. The model has one voice: a "Speaker N:" label at the
 * start of a line is removed (one warning through opts->on_warning).
 * Errors are reported on the model handle. */
typedef struct vocis_stream vocis_stream;
/* opts NULL: vocis_speak_options_for_model. t3.seed seeds the noise; vv.* are the knobs
 * (max_new_tokens 0 = upstream's cap, max_seconds > 0 stops early). */
vocis_status vocis_stream_open(vocis_model *m, const vocis_voice *voice, const vocis_speak_options *opts,
                               vocis_stream **out);
vocis_status vocis_stream_push(vocis_stream *s, const char *text, size_t len);
/* End of text: runs to the end of speech; out (may be NULL) receives all kept audio. */
vocis_status vocis_stream_finish(vocis_stream *s, vocis_audio *out);
/* 1 once speech has ended (end-of-speech classifier or length cap): more text changes nothing. */
int vocis_stream_done(const vocis_stream *s);
void vocis_stream_close(vocis_stream *s);
/* Loads a Realtime voice preset (.pt or vocis voice file) with any model
 * handle (checked against the model when it is a Realtime one), e.g. to
 * convert it with vocis_voice_save. */
vocis_status vocis_voice_load_preset(vocis_model *m, const char *path, vocis_voice **out);

/* ---- voice conversion (Chatterbox: upstream's ChatterboxVC) ----------- */

typedef struct vocis_convert_options {
    int64_t seed;  /* torch.manual_seed(seed) equivalent; < 0 = random */
    int cfm_steps; /* flow-matching Euler steps (10) */
    /* stages "s3tokenizer", "s3gen", "hift" (0 at start, 1 when done) */
    int (*on_progress)(void *user, const vocis_progress *p);
    /* the converted audio, once it is final; return non-zero to cancel */
    int (*on_audio)(void *user, const float *samples, size_t n, int sample_rate);
    void *user;
} vocis_convert_options;

void vocis_convert_options_default(vocis_convert_options *o);

/* Longest source vocis converts: the flow attends over the whole utterance at
 * once (upstream has no chunking), so time grows with the square of it. */
#define VOCIS_CONVERT_MAX_SECONDS 120

/* Say the speech of the recording at source_path (any format, rate, channel
 * count; tokenised whole as upstream, the >30 s long-audio path included) in
 * the target voice: a voice handle (a recording through vocis_voice_load /
 * vocis_voice_clone, a voice file, a conds.pt) or NULL for the model's
 * built-in voice (DIR/conds.pt). Works on a Chatterbox folder and on a
 * voice-conversion folder (s3gen.safetensors + conds.pt only). 24 kHz out. */
vocis_status vocis_convert(vocis_model *m, const char *source_path, const vocis_voice *target,
                           const vocis_convert_options *opts, vocis_audio *out);

/* Write audio to a file: format "wav" (16-bit PCM), "f32" (32-bit float
 * WAV), "flac", "ogg" (Vorbis), "mp3" or "opus"; NULL = the one the path's
 * extension names (.wav .flac .ogg .mp3 .opus), else wav. Same samples, same
 * bytes: no timestamps, a fixed Ogg serial, one float -> int16 rounding.
 * A regular file is replaced atomically through a unique temporary in its
 * folder (a failure leaves the old file; its permission bits are kept), a
 * symlink's target is written, a device or named pipe is written through.
 * Path "-" writes raw PCM to stdout (s16le, or f32le for "f32"). Errors are
 * reported on the model handle. */
vocis_status vocis_audio_save(vocis_model *m, const vocis_audio *a, const char *path, const char *format);

/* Save a voice as a vocis voice file (safetensors: speaker_emb,
 * cond_prompt_speech_tokens, emotion_adv, prompt_token, prompt_feat, embedding;
 * metadata: vocis_version, vocis_model_kind (the kind of the model that cloned it,
 * else of m) and, for a cloned voice, source file name,
 * source_seconds (the recording's whole duration), used_seconds (the part
 * cloned: at most the first minute), source_sample_rate and exaggeration). */
vocis_status vocis_voice_save(vocis_model *m, const vocis_voice *voice, const char *path);

#ifdef __cplusplus
}
#endif
#ifdef __GNUC__
#pragma GCC visibility pop
#endif
#endif
