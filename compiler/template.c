/*
 * template.c — the kernel templates embedded from templates/NAME.cuh and their
 * instantiation: `{{KEY}}` substitution plus line-level `{{#if KEY}}` /
 * `{{#else}}` / `{{#endif}}` selection (docs/emission.md). Strict: every
 * placeholder in emitted text needs a value and every value must be
 * referred to by the template, so a misspelt key is caught at once.
 *
 * Also the growable text buffer used by the emitter.
 */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* StrBuf                                                              */
/* ------------------------------------------------------------------ */

static bool sb_reserve(StrBuf *b, size_t extra) {
    if (b->oom) return false;
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void sb_put(StrBuf *b, const char *s, size_t n) {
    if (!sb_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void sb_puts(StrBuf *b, const char *s) { sb_put(b, s, strlen(s)); }

void sb_printf(StrBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        sb_put(b, small, (size_t)n);
        return;
    }
    if (!sb_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *sb_take(StrBuf *b, size_t *len) {
    if (b->oom || !sb_reserve(b, 0)) {
        free(b->p);
        memset(b, 0, sizeof *b);
        if (len) *len = 0;
        return NULL;
    }
    char *p = b->p;
    p[b->len] = '\0';
    if (len) *len = b->len;
    memset(b, 0, sizeof *b);
    return p;
}

/* ------------------------------------------------------------------ */
/* Placeholder values                                                  */
/* ------------------------------------------------------------------ */

void tmpl_set(TmplArgs *t, const char *key, const char *val) {
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->kv[i].key, key) == 0) {
            t->kv[i].val = val;
            return;
        }
    if (t->n < TMPL_MAX_KV) t->kv[t->n++] = (TmplKV){key, val};
    else t->n = TMPL_MAX_KV + 1; /* overflow: template_render reports it */
}

void tmpl_setf(Arena *a, TmplArgs *t, const char *key, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char buf[256];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tmpl_set(t, key, arena_strdup(a, buf));
}

const char *tmpl_get(const TmplArgs *t, const char *key) {
    for (int i = 0; i < t->n && i < TMPL_MAX_KV; i++)
        if (strcmp(t->kv[i].key, key) == 0) return t->kv[i].val;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Templates                                                           */
/* ------------------------------------------------------------------ */

const ShortcTemplate *template_find(const char *name) {
    for (int i = 0; i < shortc_ntemplates; i++)
        if (strcmp(shortc_templates[i].name, name) == 0) return &shortc_templates[i];
    return NULL;
}

static bool is_key_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* Index of key [s, s+n) in kv, or -1. */
static int find_key(const TmplKV *kv, int nkv, const char *s, size_t n) {
    for (int i = 0; i < nkv; i++)
        if (strncmp(kv[i].key, s, n) == 0 && kv[i].key[n] == '\0') return i;
    return -1;
}

/* State of one template_render_text call. */
typedef struct Render {
    Diag *d;           /* where the first error goes */
    const char *name;  /* template name for messages */
    int line;          /* current template line (1-based; 0: after the end) */
    const TmplKV *kv;  /* the values */
    int nkv;           /* entries in kv */
    bool *used;        /* per kv: referred to somewhere in the template */
    bool failed;       /* an error was reported */
} Render;

/* Reports the first problem of a rendering; fmt has exactly one %.*s, filled with a[0, alen). */
static void render_error(Render *r, const char *fmt, const char *a, size_t alen) {
    if (r->failed) return; /* one message per template */
    r->failed = true;
    char what[160];
    snprintf(what, sizeof what, fmt, (int)alen, a);
    if (r->line > 0) diag_plain_error(r->d, "internal error: template %s:%d: %s", r->name, r->line, what);
    else diag_plain_error(r->d, "internal error: template %s: %s", r->name, what);
}

/* If the trimmed line is a directive `{{#WORD ARG}}`, returns true and sets word/arg. */
static bool directive(const char *s, const char *e, const char **word, size_t *wlen, const char **arg, size_t *alen) {
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
    if (e - s < 5 || strncmp(s, "{{#", 3) != 0 || strncmp(e - 2, "}}", 2) != 0) return false;
    s += 3;
    e -= 2;
    *word = s;
    while (s < e && *s != ' ') s++;
    *wlen = (size_t)(s - *word);
    while (s < e && *s == ' ') s++;
    *arg = s;
    *alen = (size_t)(e - s);
    return true;
}

/* Scans (and, when emitting, substitutes) the placeholders of one line. */
static void render_line(Render *r, const char *s, const char *e, bool emit, StrBuf *out) {
    const char *p = s;
    while (p < e) {
        const char *open = NULL;
        for (const char *q = p; q + 1 < e; q++)
            if (q[0] == '{' && q[1] == '{') {
                open = q;
                break;
            }
        if (!open) break;
        const char *k = open + 2, *ke = k;
        while (ke < e && is_key_char(*ke)) ke++;
        if (ke == k || ke + 1 >= e || ke[0] != '}' || ke[1] != '}') {
            if (emit) render_error(r, "malformed placeholder '%.*s'", open, (size_t)(e - open) > 40 ? 40 : (size_t)(e - open));
            p = open + 2;
            continue;
        }
        int i = find_key(r->kv, r->nkv, k, (size_t)(ke - k));
        if (i >= 0) r->used[i] = true;
        if (emit) {
            sb_put(out, p, (size_t)(open - p));
            if (i >= 0) sb_puts(out, r->kv[i].val);
            else render_error(r, "placeholder {{%.*s}} has no value", k, (size_t)(ke - k));
        }
        p = ke + 2;
    }
    if (emit) sb_put(out, p, (size_t)(e - p));
}

enum { MAX_NEST = 8 };

bool template_render(Diag *d, const char *name, const TmplKV *kv, int nkv, StrBuf *out) {
    const ShortcTemplate *t = template_find(name);
    if (!t) {
        diag_plain_error(d, "internal error: no template named '%s'", name);
        return false;
    }
    return template_render_text(d, name, t->text, t->len, kv, nkv, out);
}

bool template_render_text(Diag *d, const char *name, const char *text, size_t len, const TmplKV *kv, int nkv,
                          StrBuf *out) {
    if (nkv > TMPL_MAX_KV) {
        diag_plain_error(d, "internal error: template %s: more than %d placeholder values", name, TMPL_MAX_KV);
        return false;
    }
    bool used[TMPL_MAX_KV] = {false};
    Render r = {.d = d, .name = name, .kv = kv, .nkv = nkv, .used = used};
    /* Conditional stack: whether the enclosing section emits, whether this branch emits, whether #else was seen. */
    bool outer[MAX_NEST], active[MAX_NEST], seen_else[MAX_NEST];
    int depth = 0;
    bool emitting = true;
    size_t start_len = out->len;
    const char *s = text, *end = text + len;
    while (s < end) {
        r.line++;
        const char *e = memchr(s, '\n', (size_t)(end - s));
        const char *next = e ? e + 1 : end;
        if (!e) e = end;
        const char *ns = s;
        while (ns < e && (*ns == ' ' || *ns == '\t')) ns++;
        const char *word, *arg;
        size_t wlen, alen;
        if (e - ns >= 3 && strncmp(ns, "//!", 3) == 0) {
            /* template documentation: dropped */
        } else if (directive(s, e, &word, &wlen, &arg, &alen)) {
            if (wlen == 2 && strncmp(word, "if", 2) == 0) {
                int i = alen ? find_key(kv, nkv, arg, alen) : -1;
                bool on = false;
                if (i >= 0) {
                    used[i] = true;
                    if (strcmp(kv[i].val, "1") == 0) on = true;
                    else if (strcmp(kv[i].val, "0") != 0 && emitting)
                        render_error(&r, "flag {{#if %.*s}} must be 0 or 1", arg, alen);
                } else if (emitting) {
                    render_error(&r, "flag {{#if %.*s}} has no value", arg, alen);
                }
                if (depth == MAX_NEST) {
                    render_error(&r, "conditionals nested too deeply%.*s", "", 0);
                    break;
                }
                outer[depth] = emitting;
                active[depth] = on;
                seen_else[depth] = false;
                depth++;
                emitting = emitting && on;
            } else if (wlen == 4 && strncmp(word, "else", 4) == 0 && alen == 0) {
                if (depth == 0 || seen_else[depth - 1]) {
                    render_error(&r, "{{#else}} without {{#if}}%.*s", "", 0);
                    break;
                }
                seen_else[depth - 1] = true;
                emitting = outer[depth - 1] && !active[depth - 1];
            } else if (wlen == 5 && strncmp(word, "endif", 5) == 0 && alen == 0) {
                if (depth == 0) {
                    render_error(&r, "{{#endif}} without {{#if}}%.*s", "", 0);
                    break;
                }
                depth--;
                emitting = outer[depth];
            } else {
                render_error(&r, "unknown directive '%.*s'", ns, (size_t)(e - ns));
                break;
            }
        } else {
            render_line(&r, s, e, emitting, out);
            if (emitting && e < end) sb_put(out, "\n", 1);
        }
        s = next;
    }
    if (!r.failed && depth != 0) {
        r.line = 0;
        render_error(&r, "{{#if}} without {{#endif}} at the end%.*s", "", 0);
    }
    for (int i = 0; i < nkv && !r.failed; i++)
        if (!used[i]) {
            r.line = 0;
            render_error(&r, "value for {{%.*s}} is not used by the template", kv[i].key, strlen(kv[i].key));
        }
    if (!r.failed && out->oom) {
        diag_plain_error(d, "emit: out of memory");
        r.failed = true;
    }
    if (r.failed) {
        out->len = start_len;
        if (out->p) out->p[start_len] = '\0';
    }
    return !r.failed;
}
