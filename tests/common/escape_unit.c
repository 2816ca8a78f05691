/*
 * escape_unit.c — common/escape.c: input text escaped for a comment of
 * generated source can neither end a `//` comment (newline, carriage return,
 * a backslash or the trigraph ??/ before the line end) nor close a block
 * comment, is plain ASCII, and decodes back to the input.
 */
#include "../check.h"
#include "shortc_common.h"

/* Escapes s, checks the result is safe, and that it decodes back to s. */
static void roundtrip(const char *s, int keep_space) {
    char out[512], back[512];
    size_t n = shortc_escape_comment(s, keep_space, out, sizeof out);
    CHECK(n == strlen(out));
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)out[i];
        CHECK(c >= 0x20 && c < 0x7f);
        CHECK(keep_space || c != ' ');
        if (c == '\\') CHECK(out[i + 1] == 'x');   /* never a line splice */
    }
    CHECK(!strstr(out, "??"));
    CHECK(!strstr(out, "*/"));
    shortc_unescape_comment(out, n, back);
    CHECK(strcmp(back, s) == 0);
}

int main(void) {
    const char *cases[] = {"models/gpt2_small.arch", "e.arch\nextern \"C\" int x;\n#define X ", "a\rb", "c*/d", "?\?/",
                           "x\\", "\\\\", "\xff\xfe.arch", "with space", "??\?/", "*//", "\x7f", "", "\\x41"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        roundtrip(cases[i], 0);
        roundtrip(cases[i], 1);
    }
    char out[64];
    shortc_escape_comment("x\\", 0, out, sizeof out);
    CHECK(strcmp(out, "x\\x5c") == 0);
    shortc_escape_comment("a b\n", 1, out, sizeof out);
    CHECK(strcmp(out, "a b\\x0a") == 0);
    CHECK(shortc_escape_comment("abcdef", 0, out, 4) == 6 && strcmp(out, "abc") == 0);   /* truncated, NUL-terminated */
    CHECK(shortc_escape_comment("??", 0, NULL, 0) == 5);
    return check_done("escape_unit");
}
