#include <string.h>

#include "testlib.h"
#include "text/sentences.h"

static void expect(const char *text, size_t max, int n, const char *const *want) {
    vx_chunks c;
    vx_err err = {0};
    CHECK(vx_split_text(text, max, &c, &err) == VOCIS_OK);
    CHECK_MSG(c.n == n, "'%.40s...': %d chunks, want %d", text, c.n, n);
    for (int i = 0; i < c.n && i < n; i++) CHECK_MSG(!strcmp(c.text[i], want[i]), "chunk %d: '%s' want '%s'", i, c.text[i], want[i]);
    vx_chunks_free(&c);
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    /* short text: one chunk, untouched (apart from trimming) */
    expect("Hello there. How are you?", 300, 1, (const char *[]){"Hello there. How are you?"});
    /* sentence packing */
    expect("One two. Three four! Five six?", 12, 3, (const char *[]){"One two.", "Three four!", "Five six?"});
    expect("One two. Three four! Five six?", 20, 2, (const char *[]){"One two. Three four!", "Five six?"});
    /* abbreviations, initials, numbers and quotes do not end sentences */
    expect("Dr. Smith paid 3.14 dollars. J. R. Tolkien wrote books.", 30, 2,
           (const char *[]){"Dr. Smith paid 3.14 dollars.", "J. R. Tolkien wrote books."});
    expect("He said \"stop.\" Then he left.", 16, 2, (const char *[]){"He said \"stop.\"", "Then he left."});
    expect("Wait\xE2\x80\xA6 what? Yes.", 8, 3, (const char *[]){"Wait\xE2\x80\xA6", "what?", "Yes."});
    /* an over-long sentence is cut at a comma, then at spaces */
    expect("alpha beta, gamma delta epsilon zeta.", 20, 3,
           (const char *[]){"alpha beta,", "gamma delta epsilon", "zeta."});
    expect("a, bb cc dd ee ff gg.", 12, 2, (const char *[]){"a, bb cc dd", "ee ff gg."}); /* comma too early */
    expect("aaaa bbbb cccc dddd", 9, 2, (const char *[]){"aaaa bbbb", "cccc dddd"});
    expect("abcdefghij", 4, 3, (const char *[]){"abcd", "efgh", "ij"});
    /* UTF-8 counted in characters: 5 x 'é' fits in 5 */
    expect("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 5, 1, (const char *[]){"\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"});
    expect("   ", 300, 0, NULL);
    return tl_finish("test_sentences");
}
