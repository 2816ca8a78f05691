/*
 * diag.c — source files and caret diagnostics.
 *
 * Every message has the form
 *
 *   path:line:col: error: message
 *     the source line
 *     ^~~~~
 *
 * where `^` marks the first byte of the location and `~` the rest of its
 * range on that line. Tabs of the source line are kept in the caret line so
 * the caret lines up in any tab width; UTF-8 continuation bytes take no
 * column. Lines longer than SHOW_MAX bytes are shown as a window around the
 * location, with "..." where text was cut. Valid UTF-8 is shown as is (one
 * column per character); control bytes, C1 controls (U+0080..U+009F, which
 * terminals obey like ESC) and bytes that are not valid UTF-8 are shown as
 * \xHH, and the caret line counts their four columns.
 *
 * After max_errors errors one "too many errors" line is printed and later
 * errors, warnings and notes are only counted.
 */
#include "shortc.h"
#include "fileio.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    SHOW_MAX = 160,          /* longest source excerpt shown */
    SHOW_BEFORE = 60,        /* bytes kept before the location when cutting */
    FILE_MAX = 64 << 20,     /* largest source file accepted */
};

void diag_init(Diag *d, Arena *a, FILE *out) {
    memset(d, 0, sizeof *d);
    d->arena = a;
    d->out = out ? out : stderr;
    d->max_errors = 20;
    d->first_error = LOC_NONE;
}

Source *diag_add_source(Diag *d, const char *path, const char *text, size_t len) {
    Source *s = arena_alloc(d->arena, sizeof *s);
    Source **table = arena_alloc(d->arena, sizeof(Source *) * (size_t)(d->nsources + 1));
    if (!s || !table) return NULL;
    s->path = arena_strdup(d->arena, path);
    s->text = arena_strndup(d->arena, text, len);
    s->len = len;
    if (!s->path || !s->text) return NULL;
    if (d->nsources) memcpy(table, d->sources, sizeof(Source *) * (size_t)d->nsources);
    s->id = d->nsources;
    table[d->nsources++] = s;
    d->sources = table;
    return s;
}

static Source *load_error(Diag *d, const char *path, const char *why) {
    d->errors++;
    if (d->max_errors <= 0 || d->errors <= d->max_errors)
        fprintf(d->out, "%s: error: cannot read: %s\n", path, why);
    return NULL;
}

Source *diag_load_file(Diag *d, const char *path) {
    const char *why = NULL;
    size_t len = 0;
    char *buf = fio_read_file(path, FILE_MAX, &len, &why);
    if (!buf) return load_error(d, path, why == fio_too_large ? "file is larger than 64 MiB" : why);
    Source *s = diag_add_source(d, path, buf, len);
    free(buf);
    if (!s) return load_error(d, path, strerror(ENOMEM));
    return s;
}

static const Source *loc_source(const Diag *d, Loc loc) {
    if (loc.file < 0 || loc.file >= d->nsources) return NULL;
    return d->sources[loc.file];
}

static size_t clamp_offset(const Source *s, int off) {
    if (off < 0) return 0;
    return (size_t)off > s->len ? s->len : (size_t)off;
}

void diag_linecol(const Diag *d, Loc loc, int *line, int *col) {
    const Source *s = loc_source(d, loc);
    if (!s) {
        *line = 0;
        *col = 0;
        return;
    }
    size_t pos = clamp_offset(s, loc.begin);
    int ln = 1;
    size_t start = 0;
    for (size_t i = 0; i < pos; i++)
        if (s->text[i] == '\n') {
            ln++;
            start = i + 1;
        }
    *line = ln;
    *col = (int)(pos - start) + 1;
}

static bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

/* One displayed unit of a source line: the bytes t[i..i+n) and how they are shown. */
typedef struct ExcerptUnit {
    size_t n;     /* bytes of the source it covers */
    char text[8]; /* what is printed */
    int cols;     /* columns it takes (a tab counts as one and is kept in the caret line) */
} ExcerptUnit;

/* Bytes of the valid, printable UTF-8 character at t[i] (before end), or 0 (an invalid or overlong
 * sequence, a surrogate, or a C1 control). */
static size_t utf8_char_len(const unsigned char *t, size_t i, size_t end) {
    unsigned char c = t[i];
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (n == 0 || i + n > end) return 0;
    for (size_t k = 1; k < n; k++)
        if (!is_continuation(t[i + k])) return 0;
    unsigned cp = n == 2 ? (c & 0x1Fu) << 6 | (t[i + 1] & 0x3Fu)
                  : n == 3 ? (c & 0x0Fu) << 12 | (t[i + 1] & 0x3Fu) << 6 | (t[i + 2] & 0x3Fu)
                           : (c & 0x07u) << 18 | (t[i + 1] & 0x3Fu) << 12 | (t[i + 2] & 0x3Fu) << 6 | (t[i + 3] & 0x3Fu);
    bool bad = cp < 0xA0 || (n == 3 && cp < 0x800) || (cp >= 0xD800 && cp <= 0xDFFF) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF));
    return bad ? 0 : n;
}

/* The unit of the line starting at t[i] (before end). */
static ExcerptUnit excerpt_unit(const unsigned char *t, size_t i, size_t end) {
    ExcerptUnit u = {.n = 1, .cols = 1};
    unsigned char c = t[i];
    if (c == '\t' || (c >= 0x20 && c < 0x7f)) {
        u.text[0] = (char)c;
    } else if (c >= 0x80 && (u.n = utf8_char_len(t, i, end)) > 0) {
        memcpy(u.text, t + i, u.n);
    } else {
        u.n = 1;
        u.cols = 4;
        snprintf(u.text, sizeof u.text, "\\x%02x", c);
    }
    return u;
}

/* The source line holding loc.begin and the caret line under it. */
static void show_excerpt(const Diag *d, Loc loc) {
    const Source *s = loc_source(d, loc);
    if (!s) return;
    const unsigned char *t = (const unsigned char *)s->text;
    size_t begin = clamp_offset(s, loc.begin);
    size_t end = clamp_offset(s, loc.end);
    if (end < begin) end = begin;
    size_t ls = begin, le = begin;
    while (ls > 0 && t[ls - 1] != '\n') ls--;
    while (le < s->len && t[le] != '\n') le++;
    if (le > ls && t[le - 1] == '\r') le--;
    if (begin > le) begin = le;   /* location on a stripped '\r' */
    size_t ws = ls, we = le;
    if (we - ws > SHOW_MAX) {
        if (begin - ws > SHOW_BEFORE) ws = begin - SHOW_BEFORE;
        while (ws > ls && ws < le && is_continuation(t[ws])) ws--;
        if (we - ws > SHOW_MAX) we = ws + SHOW_MAX;
    }
    const char *pre = ws > ls ? "..." : "";
    FILE *o = d->out;
    fputs(pre, o);
    for (size_t i = ws; i < we;) {
        ExcerptUnit u = excerpt_unit(t, i, we);
        fputs(u.text, o);
        i += u.n;
    }
    if (we < le) fputs("...", o);
    fputc('\n', o);
    fputs(*pre ? "   " : "", o);
    size_t i = ws;
    while (i < begin) {
        ExcerptUnit u = excerpt_unit(t, i, we);
        if (t[i] == '\t') fputc('\t', o);
        else fprintf(o, "%*s", u.cols, "");
        i += u.n;
    }
    fputc('^', o);
    int first = 1;
    while (i < end && i < we) {
        ExcerptUnit u = excerpt_unit(t, i, we);
        for (int k = first; k < u.cols; k++) fputc('~', o); /* the caret is the first unit's first column */
        first = 0;
        i += u.n;
    }
    fputc('\n', o);
}

static void emit(Diag *d, Loc loc, const char *kind, const char *fmt, va_list ap) {
    const Source *s = loc_source(d, loc);
    if (s) {
        int line, col;
        diag_linecol(d, loc, &line, &col);
        fprintf(d->out, "%s:%d:%d: %s: ", s->path, line, col, kind);
    } else {
        fprintf(d->out, "shortc: %s: ", kind);
    }
    vfprintf(d->out, fmt, ap);
    fputc('\n', d->out);
    show_excerpt(d, loc);
}

/* False once the error limit has been passed (messages are then only counted). */
static bool reporting(const Diag *d) { return d->max_errors <= 0 || d->errors <= d->max_errors; }

/* Counts an error; returns whether it is to be printed. */
static bool count_error(Diag *d, Loc loc) {
    d->errors++;
    if (reporting(d)) return true;
    if (d->errors == d->max_errors + 1) {
        const Source *s = loc_source(d, loc);
        int line, col;
        diag_linecol(d, loc, &line, &col);
        if (s)
            fprintf(d->out, "%s:%d:%d: error: too many errors (%d); the rest are not shown\n", s->path, line,
                    col, d->max_errors);
        else
            fprintf(d->out, "shortc: error: too many errors (%d); the rest are not shown\n", d->max_errors);
    }
    return false;
}

void diag_error(Diag *d, Loc loc, const char *fmt, ...) {
    if (d->first_error.file < 0 && loc_source(d, loc)) d->first_error = loc;
    if (!count_error(d, loc)) return;
    va_list ap;
    va_start(ap, fmt);
    emit(d, loc, "error", fmt, ap);
    va_end(ap);
}

void diag_warning(Diag *d, Loc loc, const char *fmt, ...) {
    d->warnings++;
    if (!reporting(d)) return;
    va_list ap;
    va_start(ap, fmt);
    emit(d, loc, "warning", fmt, ap);
    va_end(ap);
}

void diag_note(Diag *d, Loc loc, const char *fmt, ...) {
    if (!reporting(d)) return;
    va_list ap;
    va_start(ap, fmt);
    emit(d, loc, "note", fmt, ap);
    va_end(ap);
}

void diag_plain_error(Diag *d, const char *fmt, ...) {
    if (!count_error(d, LOC_NONE)) return;
    va_list ap;
    va_start(ap, fmt);
    emit(d, LOC_NONE, "error", fmt, ap);
    va_end(ap);
}

/*
 * Optimal-string-alignment distance (Levenshtein plus adjacent
 * transpositions), case-insensitive, giving up above `limit`.
 */
static int edit_distance(const char *a, const char *b, int limit) {
    size_t n = strlen(a), m = strlen(b);
    if ((n > m ? n - m : m - n) > (size_t)limit || m > 255) return limit + 1;
    int rows[3][256];
    int *pp = rows[0], *p = rows[1], *c = rows[2];
    for (size_t j = 0; j <= m; j++) p[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        c[0] = (int)i;
        int best = c[0];
        for (size_t j = 1; j <= m; j++) {
            int ai = tolower((unsigned char)a[i - 1]), bj = tolower((unsigned char)b[j - 1]);
            int cost = ai != bj;
            int v = p[j - 1] + cost;
            if (p[j] + 1 < v) v = p[j] + 1;
            if (c[j - 1] + 1 < v) v = c[j - 1] + 1;
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == bj && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            c[j] = v;
            if (v < best) best = v;
        }
        if (best > limit) return limit + 1;
        int *t = pp;
        pp = p;
        p = c;
        c = t;
    }
    return p[m];
}

/*
 * The closest candidate within min(2, max(1, len/3)) edits (so short words
 * need a near match), ties going to the earlier candidate; NULL if none.
 */
const char *diag_suggest(const char *word, const char *const *candidates, int n) {
    if (!word || !*word) return NULL;
    int len = (int)strnlen(word, 1024);
    int limit = len / 3;
    if (limit < 1) limit = 1;
    if (limit > 2) limit = 2;
    const char *best = NULL;
    int best_d = limit + 1;
    for (int i = 0; i < n; i++) {
        if (!candidates[i] || strcmp(word, candidates[i]) == 0) continue;
        int dist = edit_distance(word, candidates[i], limit);
        if (dist < best_d) {
            best_d = dist;
            best = candidates[i];
        }
    }
    return best;
}
