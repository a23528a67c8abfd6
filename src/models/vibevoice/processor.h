/* VibeVoice (1.5B / 7B) input processor, as upstream VibeVoiceProcessor
 * (vibevoice/processor/vibevoice_processor.py) for one script:
 *
 *   script text ──parse──► (speaker, text) lines ──┐
 *   voice audio (24 kHz) ──dB normalise──► ────────┴─► input_ids, speech_input_mask,
 *                                                       speech_tensors, speech_masks
 *
 * Token layout (each fragment tokenised separately, ids concatenated):
 *   " Transform the text ... respective speaker.\n"
 *   [" Voice input:\n"  then per voice i: " Speaker {i}:" <|vision_start|> <|vision_pad|> x ceil(n_i / ratio)
 *                                          <|vision_end|> "\n"]                    (only with voices)
 *   " Text input:\n"  then per line: " Speaker {id}:{text}\n"
 *   " Speech output:\n" <|vision_start|>
 * Voice i is labelled by its position in the list, so voices must be given in
 * the order of the (renumbered) speaker ids. */
#ifndef VX_VV_PROCESSOR_H
#define VX_VV_PROCESSOR_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "models/vibevoice/config.h"
#include "text/tokenizer.h"

/* Receives one-line warnings (e.g. a script line that is not "Speaker N: text"). */
typedef void (*vx_vv_warn_fn)(void *user, const char *msg);

/* ---- script ----------------------------------------------------------------- */

typedef struct vx_vv_line {
    int speaker; /* after renumbering (0-based when the script's ids all start at >= 1) */
    char *text;  /* " " + stripped text after the colon (may be just " ") */
} vx_vv_line;

typedef struct vx_vv_script {
    vx_vv_line *lines;
    int n_lines;
    int n_speakers;  /* distinct ids */
    int max_speaker; /* largest renumbered id */
} vx_vv_script;

/* upstream _parse_script: split on '\n'; each stripped non-empty line must
 * match ^Speaker\s+(\d+)\s*:\s*(.*)$ (case-insensitive, Unicode \s and \d as
 * Python's re); other lines are dropped with a warning (warn may be NULL).
 * When every id is >= 1, all ids are decremented by one. No matching line is
 * an error ("script has no 'Speaker N:' lines"); so is invalid UTF-8. */
vocis_status vx_vv_script_parse(const char *text, size_t len, vx_vv_warn_fn warn, void *warn_user, vx_vv_script *out,
                                vx_err *err);
void vx_vv_script_free(vx_vv_script *s);

/* The demo's text-file preparation (demo/inference_from_file.py,
 * parse_txt_script + join + replace), which vocis_speak_script applies:
 * a "Speaker N:" line (the processor's pattern, so "Speaker 1 :" too)
 * starts a turn; other lines join the current turn (space-joined); U+2019
 * becomes '. Where the demo is silent, warn (may be NULL) names the line:
 * text before the first label (dropped, as the demo does), a line that
 * looks meant as a label but is not one ("Speaker1:", "Speaker A:";
 * skipped, where the demo would read it aloud), a turn without text
 * (skipped, as the demo does). *out (malloc'd) is "Speaker N: text" lines
 * for vx_vv_script_parse, "" when no turn has text; *n_labels counts the
 * label lines (0: the text has none). */
vocis_status vx_vv_script_join(const char *text, size_t len, vx_vv_warn_fn warn, void *warn_user, char **out,
                               int *n_labels, vx_err *err);
/* For text arriving in pieces: does line text s[0..len) begin with a "Speaker N:" label
 * (the processor's pattern, after spaces)? 1: yes, *end = the byte after its colon; 0: no;
 * -1: s is too short to tell. */
int vx_vv_label_at(const char *s, size_t len, size_t *end);
/* 1 when some line is a "Speaker N:" label or one without the space ("Speaker1:"): the text is
 * then a script, not plain text ("Speaker: ..." alone stays plain text). */
int vx_vv_script_has_labels(const char *text, size_t len);

/* ---- processor ---------------------------------------------------------------- */

typedef struct vx_vv_processor {
    const vx_tokenizer *tok;     /* borrowed */
    int32_t speech_start_id;     /* <|vision_start|> */
    int32_t speech_end_id;       /* <|vision_end|> */
    int32_t speech_diffusion_id; /* <|vision_pad|> */
    int32_t eos_id;              /* <|endoftext|> */
    int32_t pad_id;              /* <|image_pad|>, -1 if the vocabulary lacks it (batch padding only) */
    int compress_ratio;          /* samples per speech token (3200) */
    int db_normalize;
    float target_dB_FS, eps; /* voice normalisation (-25, 1e-6) */
    int sampling_rate;       /* voices must be at this rate (24000) */
    int64_t max_positions;   /* longest allowed prompt (max_position_embeddings); 0 = no limit */
} vx_vv_processor;

/* Looks the special tokens up by name and takes the preprocessor settings and
 * max_position_embeddings from c. Fails when a special token is missing or
 * the tokenizer has more ids than the model's vocab_size. */
vocis_status vx_vv_processor_init(vx_vv_processor *p, const vx_tokenizer *tok, const vx_vv_config *c, vx_err *err);

typedef struct vx_vv_voice {
    const float *samples; /* mono, already at p->sampling_rate, not normalised */
    int64_t n;
} vx_vv_voice;

typedef struct vx_vv_inputs {
    int64_t n_tokens;
    int32_t *input_ids;         /* [n_tokens] */
    uint8_t *speech_input_mask; /* [n_tokens], 1 at the voice placeholders */
    int n_speakers;             /* distinct speakers of the script */
    int n_voices;               /* V: voices used (the first min(given, n_speakers)) */
    int64_t max_samples;        /* longest voice, in samples */
    int n_frames;               /* F = ceil(max_samples / compress_ratio) */
    float *speech_tensors;      /* [V, max_samples] normalised voices, zero right-padded */
    uint8_t *speech_masks;      /* [V, F], 1 on the ceil(n_i / ratio) valid frames */
    int64_t *voice_samples;     /* [V] n_i */
    int *voice_frames;          /* [V] ceil(n_i / ratio) */
} vx_vv_inputs;

/* Build the model inputs for one script. n_voices == 0 omits the voice
 * section (upstream's prompt without voice samples); 0 < n_voices <
 * n_speakers is an error; extra voices are ignored as upstream does.
 * A prompt longer than p->max_positions is an error. */
vocis_status vx_vv_process(const vx_vv_processor *p, const vx_vv_script *s, const vx_vv_voice *voices, int n_voices,
                           vx_vv_inputs *out, vx_err *err);
void vx_vv_inputs_free(vx_vv_inputs *in);

/* The length of the prompt vx_vv_process would build, in parts: *fixed = the tokens outside the
 * script lines (system prompt, voice section, headers, the final speech_start), line_tokens[i]
 * (s->n_lines of them) = line i's. Each line is tokenised on its own, so the prompt of any run of
 * s's lines with the same voices and speaker count is *fixed + their sum. */
vocis_status vx_vv_prompt_length(const vx_vv_processor *p, const vx_vv_script *s, const vx_vv_voice *voices,
                                 int n_voices, int64_t *fixed, int64_t *line_tokens, vx_err *err);

/* upstream AudioNormalizer: x *= 10^(target/20) / (rms + eps); then, if
 * max|x| > 1, x /= max|x| + eps. In place. n >= 1. */
void vx_vv_normalize_voice(float *x, int64_t n, float target_dB_FS, float eps);

#endif
