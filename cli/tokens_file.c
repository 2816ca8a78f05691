/*
 * tokens_file.c — the token-file reader of `shortc run`, `eval` and
 * `generate`: whitespace-separated non-negative ids. Kept apart from the
 * driver so that the libFuzzer target tests/fuzz/fuzz_tokens.c runs it.
 */
#include "run_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints n bytes of s to f, every byte that is not printable ASCII as \xHH (a bad token file may be binary). */
static void print_escaped(FILE *f, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') fputc(c, f);
        else fprintf(f, "\\x%02x", c);
    }
}

int parse_tokens(const char *path, const char *text, size_t len, int32_t **out) {
    int cap = 64, n = 0;
    int32_t *t = malloc(sizeof *t * (size_t)cap);
    int ok = t != NULL;
    for (size_t i = 0; ok && i < len;) {
        while (i < len && isspace((unsigned char)text[i])) i++;
        if (i == len) break;
        size_t start = i;
        while (i < len && !isspace((unsigned char)text[i])) i++;
        char word[64];
        size_t wl = i - start;
        if (wl >= sizeof word || memchr(text + start, 0, wl)) {
            fprintf(stderr, "shortc: error: %s: token %d is longer than 63 bytes or holds a NUL byte\n", path, n + 1);
            ok = 0;
            break;
        }
        memcpy(word, text + start, wl);
        word[wl] = 0;
        char *end;
        errno = 0;
        long long v = strtoll(word, &end, 10);
        if (end == word || *end || (errno && errno != ERANGE) || v < 0 || errno == ERANGE || v > INT32_MAX) {
            bool digits = end != word && !*end && v >= 0; /* a number, too large for a token id */
            fprintf(stderr, "shortc: error: %s: token %d ('", path, n + 1);
            print_escaped(stderr, word, wl);
            fprintf(stderr, digits ? "') is out of range (token ids are at most %d)\n" : "') is not a non-negative integer\n",
                    INT32_MAX);
            ok = 0;
            break;
        }
        if (n == cap) {
            cap *= 2;
            int32_t *nt = realloc(t, sizeof *t * (size_t)cap);
            if (!nt) { ok = 0; break; }
            t = nt;
        }
        t[n++] = (int32_t)v;
    }
    if (!ok) { free(t); return -1; }
    if (n == 0) {
        fprintf(stderr, "shortc: error: %s: no tokens (the file is empty or only whitespace)\n", path);
        free(t);
        return -1;
    }
    *out = t;
    return n;
}
