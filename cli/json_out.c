/* json_out.c — JSON strings for the `--json` outputs (json_out.h). */
#include "json_out.h"

#include <math.h>
#include <stdlib.h>

/* The length of the valid UTF-8 sequence at s[0..left), or 0 when it is not one (a lone or cut byte). */
static size_t utf8_len(const unsigned char *s, size_t left) {
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : 0;
    if (s[0] >= 0xf5 || n == 0 || n > left) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 4 && s[0] == 0xf0 && s[1] < 0x90) ||
        (n == 4 && s[0] == 0xf4 && s[1] >= 0x90) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0))
        return 0; /* overlong, past U+10FFFF, or a surrogate */
    return n;
}

void json_write_string(FILE *f, const char *s, size_t len) {
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = u[i];
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
        else if (c < 0x80) fputc(c, f);
        else {
            size_t n = utf8_len(u + i, len - i);
            if (n == 0) fputs("\\ufffd", f); /* not UTF-8 (a token can end inside a character) */
            else fwrite(u + i, 1, n, f), i += n - 1;
        }
    }
    fputc('"', f);
}

void json_write_double(FILE *f, double v) {
    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    char buf[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    fputs(buf, f);
}
