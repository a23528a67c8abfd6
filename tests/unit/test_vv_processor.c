/* VibeVoice processor: script parsing (upstream _parse_script rules), the
 * demo's text-file preparation (with its warnings), voice normalisation, and the whole prompt
 * against upstream's 01_processor golden output (tiny model folder). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/audio.h"
#include "io/jsonfile.h"
#include "io/safetensors.h"
#include "models/vibevoice/config.h"
#include "models/vibevoice/processor.h"
#include "testlib.h"

static int n_warn;
static void count_warn(void *user, const char *msg) {
    (void)user;
    (void)msg;
    n_warn++;
}

static vocis_status parse(const char *s, vx_vv_script *out, vx_err *err) {
    n_warn = 0;
    return vx_vv_script_parse(s, strlen(s), count_warn, NULL, out, err);
}

static void test_parse(void) {
    vx_vv_script s;
    vx_err err = {0};
    CHECK(parse("Speaker 1: Hello, welcome back to the show!\nSpeaker 2: Thanks, it's great to be here.\n", &s, &err) ==
          VOCIS_OK);
    CHECK(s.n_lines == 2 && s.n_speakers == 2 && s.max_speaker == 1 && n_warn == 0);
    if (s.n_lines == 2) {
        CHECK(s.lines[0].speaker == 0 && strcmp(s.lines[0].text, " Hello, welcome back to the show!") == 0);
        CHECK(s.lines[1].speaker == 1 && strcmp(s.lines[1].text, " Thanks, it's great to be here.") == 0);
    }
    vx_vv_script_free(&s);

    /* ids kept when one is 0; blank lines skipped; junk dropped with a warning;
     * case-insensitive, spaces around the colon, CRLF, tabs, empty text */
    CHECK(parse("\n  speaker 0 :  Hi there  \r\n\nnot a speaker line\nSPEAKER\t3:bye\nSpeaker 0:\n"
                "Speaker2: glued\nSpeaker 1 - dash\n",
                &s, &err) == VOCIS_OK);
    CHECK(n_warn == 3);
    CHECK(s.n_lines == 3 && s.n_speakers == 2 && s.max_speaker == 3);
    if (s.n_lines == 3) {
        CHECK(s.lines[0].speaker == 0 && strcmp(s.lines[0].text, " Hi there") == 0);
        CHECK(s.lines[1].speaker == 3 && strcmp(s.lines[1].text, " bye") == 0);
        CHECK(s.lines[2].speaker == 0 && strcmp(s.lines[2].text, " ") == 0);
    }
    vx_vv_script_free(&s);

    /* int() of the digits: leading zeros vanish; Unicode digits and
     * whitespace as Python's re; long s / Kelvin sign fold like re.IGNORECASE */
    CHECK(parse("Speaker 02: a\nSpeaker\xc2\xa0\xd9\xa3: b\n\xc5\xbfpea\xe2\x84\xaa"
                "er 5:\xe3\x80\x80"
                "c\xe2\x80\x83\n",
                &s, &err) == VOCIS_OK);
    CHECK(s.n_lines == 3 && n_warn == 0);
    if (s.n_lines == 3) {
        CHECK(s.lines[0].speaker == 1);
        CHECK(s.lines[1].speaker == 2);
        CHECK(s.lines[2].speaker == 4 && strcmp(s.lines[2].text, " c") == 0);
    }
    vx_vv_script_free(&s);

    err = (vx_err){0};
    CHECK(parse("just text\n\nmore text", &s, &err) == VOCIS_E_FORMAT);
    CHECK(strstr(err.msg, "script has no 'Speaker N:' lines") != NULL && n_warn == 0);
    CHECK(parse("", &s, &err) == VOCIS_E_FORMAT);
    CHECK(parse("Speaker 1: caf\xc3", &s, &err) == VOCIS_E_FORMAT);
    CHECK(strstr(err.msg, "UTF-8") != NULL);
    CHECK(parse("Speaker 99999999999999: x", &s, &err) == VOCIS_E_FORMAT);
}

static char warns[2048];
static void keep_warn(void *user, const char *msg) {
    (void)user;
    n_warn++;
    size_t l = strlen(warns);
    snprintf(warns + l, sizeof warns - l, "%s\n", msg);
}

static char *join(const char *txt, int *n_labels) {
    char *out = NULL;
    vx_err err = {0};
    n_warn = 0;
    warns[0] = '\0';
    CHECK_MSG(vx_vv_script_join(txt, strlen(txt), keep_warn, NULL, &out, n_labels, &err) == VOCIS_OK, "%s", err.msg);
    return out;
}

/* upstream demo's preparation: continuation lines join the turn, U+2019 -> '; what the demo drops or
 * would read aloud is warned about, naming the line */
static void test_join(void) {
    int nl = -1;
    char *out = join("intro line dropped\nmore intro\nSpeaker 1: Hello\nthere \xe2\x80\x99"
                     "friend\xe2\x80\x99\n\n"
                     "Speaker 2:\nlate text\nSpeaker 3:\nSpeaker 1 : spaced label\nSpeaker1: glued\n",
                     &nl);
    CHECK_MSG(out && strcmp(out, "Speaker 1: Hello there 'friend'\nSpeaker 2: late text\nSpeaker 1: spaced label") == 0,
              "got '%s'", out ? out : "(null)");
    CHECK(nl == 4 && n_warn == 3);
    CHECK_MSG(strstr(warns, "script line 1 (to 2) come before the first 'Speaker N:' line and are skipped: "
                            "'intro line dropped'") != NULL, "%s", warns);
    CHECK_MSG(strstr(warns, "script line 8 has no text after the label and is skipped: 'Speaker 3:'") != NULL, "%s",
              warns);
    CHECK_MSG(strstr(warns, "script line 10 is not a 'Speaker N:' label") && strstr(warns, "'Speaker1: glued'"), "%s",
              warns);
    free(out);

    /* the golden script is unchanged (bar the final newline): no warnings */
    out = join("Speaker 1: Hello, welcome back to the show!\nSpeaker 2: Thanks, it's great to be here.\n", &nl);
    CHECK(out &&
          !strcmp(out, "Speaker 1: Hello, welcome back to the show!\nSpeaker 2: Thanks, it's great to be here."));
    CHECK(nl == 2 && n_warn == 0);
    free(out);

    /* labels only: "" (the caller refuses it); no labels: n_labels 0 and no warning about the text */
    out = join("Speaker 1:\n\nSpeaker 2:  \n", &nl);
    CHECK(out && !*out && nl == 2 && n_warn == 2);
    free(out);
    out = join("just words\nmore words\n", &nl);
    CHECK(out && !*out && nl == 0 && n_warn == 0);
    free(out);

    CHECK(vx_vv_script_has_labels("x\n  speaker 2: y", 15) && vx_vv_script_has_labels("Speaker1: a", 11));
    CHECK(!vx_vv_script_has_labels("Speaker A: a", 12) && !vx_vv_script_has_labels("Speakers say: hi", 16));
    CHECK(!vx_vv_script_has_labels("Speaker: my guest", 17) && vx_vv_script_has_labels("x\nSpeaker 12b:", 14));
    CHECK(!vx_vv_script_has_labels("A speaker: no", 13) && !vx_vv_script_has_labels("plain text", 10));
}

static void test_normalize(void) {
    /* quiet tone: rms scaled to -25 dBFS */
    enum { N = 24000 };
    static float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)(0.01 * sin(2 * M_PI * 100 * i / 24000.0));
    vx_vv_normalize_voice(x, N, -25.0f, 1e-6f);
    double ss = 0;
    for (int i = 0; i < N; i++)
        ss += (double)x[i] * x[i];
    CHECK(fabs(sqrt(ss / N) - pow(10, -1.25)) < 1e-5);
    /* a spike that the rms scaling would push past 1: clipping guard */
    memset(x, 0, sizeof x);
    x[100] = 0.5f;
    x[200] = 0.001f;
    vx_vv_normalize_voice(x, N, -25.0f, 1e-6f);
    float mx = 0;
    for (int i = 0; i < N; i++)
        mx = fmaxf(mx, fabsf(x[i]));
    CHECK(mx <= 1.0f && mx > 0.999f);
}

static const vx_tensor *need(const vx_st_file *f, const char *name) {
    const vx_tensor *t = vx_st_find(f, name);
    CHECK_MSG(t != NULL, "golden tensor %s missing", name);
    return t;
}

static void test_golden(void) {
    vx_err err = {0};
    vx_vv_config cfg;
    if (vx_vv_config_load(tl_path("vibevoice/model"), &cfg, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    vx_tokenizer *tok = NULL;
    if (vx_tokenizer_load(tl_path("vibevoice/model/tokenizer.json"), &tok, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    vx_vv_processor p;
    CHECK_MSG(vx_vv_processor_init(&p, tok, &cfg, &err) == VOCIS_OK, "%s", err.msg);
    CHECK(p.speech_start_id == 447 && p.speech_end_id == 448 && p.speech_diffusion_id == 449);
    CHECK(p.eos_id == 438 && p.pad_id == 450);

    char *text = NULL;
    size_t len = 0;
    vx_vv_script s = {0};
    CHECK(vx_read_file(tl_path("vibevoice/inputs/script.txt"), 1 << 20, &text, &len, &err) == VOCIS_OK);
    CHECK(text && vx_vv_script_parse(text, len, NULL, NULL, &s, &err) == VOCIS_OK);
    free(text);

    float *w[3] = {0};
    vx_vv_voice v[3];
    const char *names[3] = {"vibevoice/inputs/voice_0.wav", "vibevoice/inputs/voice_1.wav",
                            "vibevoice/inputs/voice_0.wav"};
    for (int i = 0; i < 3; i++) {
        CHECK_MSG(vx_audio_read(tl_path(names[i]), 24000, &w[i], &v[i].n, &err) == VOCIS_OK, "%s", err.msg);
        v[i].samples = w[i];
    }
    vx_st_file *g = NULL;
    CHECK_MSG(vx_st_open(tl_path("vibevoice/golden/01_processor.safetensors"), &g, &err) == VOCIS_OK, "%s", err.msg);
    vx_vv_inputs in;
    /* three voices for two speakers: the third is ignored, as upstream */
    CHECK_MSG(vx_vv_process(&p, &s, v, 3, &in, &err) == VOCIS_OK, "%s", err.msg);
    if (g && in.input_ids) {
        const vx_tensor *ids = need(g, "input_ids"), *sim = need(g, "speech_input_mask");
        const vx_tensor *st = need(g, "speech_tensors"), *sm = need(g, "speech_masks");
        const vx_tensor *raw0 = need(g, "voice_0_raw");
        if (ids && sim && st && sm && raw0) {
            CHECK(in.n_tokens == ids->shape[1]);
            int bad = 0;
            for (int64_t i = 0; i < in.n_tokens && in.n_tokens == ids->shape[1]; i++) {
                bad += in.input_ids[i] != ((const int64_t *)ids->data)[i];
                bad += in.speech_input_mask[i] != ((const int32_t *)sim->data)[i];
            }
            CHECK_MSG(bad == 0, "%d id/mask mismatches", bad);
            CHECK(in.n_voices == 2 && st->shape[0] == 2 && in.max_samples == st->shape[1]);
            CHECK(in.n_frames == sm->shape[1] && in.voice_frames[0] == 19 && in.voice_frames[1] == 24);
            if (in.max_samples == st->shape[1] && in.n_voices == 2) {
                CHECK_CLOSE(in.speech_tensors, (const float *)st->data, (size_t)(2 * in.max_samples), 1e-6);
                for (int64_t i = 0; i < 2 * in.n_frames; i++)
                    CHECK(in.speech_masks[i] == ((const int32_t *)sm->data)[i]);
            }
            CHECK(v[0].n == raw0->shape[0]);
            if (v[0].n == raw0->shape[0]) CHECK_CLOSE(w[0], (const float *)raw0->data, (size_t)v[0].n, 0);
        }
    }
    vx_vv_inputs_free(&in);

    /* errors: fewer voices than speakers; prompt over the position limit */
    err = (vx_err){0};
    CHECK(vx_vv_process(&p, &s, v, 1, &in, &err) == VOCIS_E_ARG);
    CHECK_MSG(strstr(err.msg, "2 speakers") && strstr(err.msg, "1 voice"), "%s", err.msg);
    vx_vv_processor q = p;
    q.max_positions = 100;
    err = (vx_err){0};
    CHECK(vx_vv_process(&q, &s, v, 2, &in, &err) == VOCIS_E_ARG);
    CHECK_MSG(strstr(err.msg, "112 tokens") && strstr(err.msg, "max_position_embeddings 100"), "%s", err.msg);
    q.max_positions = 112;
    CHECK(vx_vv_process(&q, &s, v, 2, &in, &err) == VOCIS_OK);
    vx_vv_inputs_free(&in);

    /* no voices: the voice section is left out */
    CHECK(vx_vv_process(&p, &s, NULL, 0, &in, &err) == VOCIS_OK);
    CHECK(in.n_voices == 0 && in.speech_tensors == NULL && in.n_tokens == 112 - 60);
    if (in.input_ids) CHECK(in.input_ids[in.n_tokens - 1] == p.speech_start_id);
    vx_vv_inputs_free(&in);

    /* a tokenizer with more ids than the model embeds */
    vx_vv_config small = cfg;
    small.vocab_size = 400;
    err = (vx_err){0};
    CHECK(vx_vv_processor_init(&q, tok, &small, &err) == VOCIS_E_FORMAT);
    CHECK_MSG(strstr(err.msg, "vocab_size") != NULL, "%s", err.msg);

    vx_vv_script_free(&s);
    for (int i = 0; i < 3; i++)
        free(w[i]);
    vx_st_close(g);
    vx_tokenizer_free(tok);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    test_parse();
    test_join();
    test_normalize();
    test_golden();
    return tl_finish("test_vv_processor");
}
