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

static void expect_chapters(const char *text, int n, const char *const *want) {
    vx_chunks c;
    vx_err err = {0};
    CHECK(vx_split_chapters(text, &c, &err) == VOCIS_OK);
    CHECK_MSG(c.n == n, "'%.40s...': %d chapters, want %d", text, c.n, n);
    for (int i = 0; i < c.n && i < n; i++)
        CHECK_MSG(!strcmp(c.text[i], want[i]), "chapter %d: '%s' want '%s'", i, c.text[i], want[i]);
    vx_chunks_free(&c);
}

static void test_chapters(void) {
    /* no heading: one chapter, the text */
    expect_chapters("  Just text.\nMore.  ", 1, (const char *[]){"Just text.\nMore."});
    /* text before the first heading is the first chapter; headings are spoken, ended with a '.' */
    expect_chapters("Preface words.\n\nChapter 1\nIt began.\n\nCHAPTER II: The Storm\nRain.\n", 3,
                    (const char *[]){"Preface words.", "Chapter 1.\nIt began.", "CHAPTER II: The Storm.\nRain."});
    /* Markdown headings lose their #s; number words; an em dash; an existing closing mark is kept */
    expect_chapters("# Part One #\nA.\n## Chapter Twenty-One \xE2\x80\x94 Home\nB.\nChapter Three.\nC.", 3,
                    (const char *[]){"Part One.\nA.", "Chapter Twenty-One \xE2\x80\x94 Home.\nB.",
                                     "Chapter Three.\nC."});
    /* prose that mentions a chapter, "#hashtag", a lowercase "chapter" are not headings */
    expect_chapters("Chapter 3 of the book is long.\n#hashtag\nchapter 4\nEnd.", 1,
                    (const char *[]){"Chapter 3 of the book is long.\n#hashtag\nchapter 4\nEnd."});
    /* a form feed starts a chapter; empty chapters (blank, or two form feeds) are dropped */
    expect_chapters("\fOne.\f\n\f Two.\nChapter 5\n", 3, (const char *[]){"One.", "Two.", "Chapter 5."});
    expect_chapters(" \n\f\n", 0, NULL);
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    test_chapters();
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
