/*
 * escape.c — the one escaping of input text (paths, names, .arch statement
 * text) placed in a comment of generated source, and its inverse.
 *
 * The result is printable ASCII without a backslash or "??" (and without a
 * space unless asked to keep them, so that a path stays one word): no
 * byte of it can end a `//` comment (a newline, a carriage return, a
 * backslash or the trigraph ??/ before the line end), close a block comment
 * (every '/' after a '*' is escaped too) or be invalid UTF-8. Everything else
 * becomes \xNN.
 */
#include <stdio.h>

#include "shortc_common.h"

/* Whether byte i of s is written as \xNN. */
static int needs_escape(const unsigned char *s, size_t i, int keep_space) {
    unsigned char c = s[i];
    if (c == ' ') return !keep_space;
    if (c < 0x20 || c >= 0x7f || c == '\\') return 1;
    if (c == '?' && s[i + 1] == '?') return 1;   /* a trigraph starts with ?? */
    if (c == '/' && i > 0 && s[i - 1] == '*') return 1;
    return 0;
}

size_t shortc_escape_comment(const char *text, int keep_space, char *out, size_t cap) {
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    size_t n = 0;
    for (size_t i = 0; s[i]; i++) {
        char one[5] = {(char)s[i], 0};
        if (needs_escape(s, i, keep_space)) snprintf(one, sizeof one, "\\x%02x", s[i]);
        for (const char *p = one; *p; p++, n++)
            if (n + 1 < cap) out[n] = *p;
    }
    if (cap) out[n < cap ? n : cap - 1] = '\0';
    return n;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

size_t shortc_unescape_comment(const char *text, size_t len, char *out) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\\' && i + 3 < len && text[i + 1] == 'x' &&
            hex_digit(text[i + 2]) >= 0 && hex_digit(text[i + 3]) >= 0) {
            out[n++] = (char)(hex_digit(text[i + 2]) * 16 + hex_digit(text[i + 3]));
            i += 3;
        } else {
            out[n++] = text[i];
        }
    }
    out[n] = '\0';
    return n;
}
