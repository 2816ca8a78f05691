/* PLACEHOLDER: replaced wholesale by the owner of this file. */
#include "shortc.h"
#include <stdlib.h>
#include <string.h>
void diag_init(Diag *d, Arena *a, FILE *out) { memset(d, 0, sizeof *d); d->arena = a; d->out = out ? out : stderr; d->max_errors = 20; }
Source *diag_add_source(Diag *d, const char *path, const char *text, size_t len) {
    Source *s = arena_alloc(d->arena, sizeof *s); s->path = arena_strdup(d->arena, path); s->text = arena_strndup(d->arena, text, len); s->len = len;
    Source **t = arena_alloc(d->arena, sizeof(Source *) * (size_t)(d->nsources + 1)); if (d->nsources) memcpy(t, d->sources, sizeof(Source *) * (size_t)d->nsources);
    s->id = d->nsources; t[d->nsources++] = s; d->sources = t; return s; }
Source *diag_load_file(Diag *d, const char *path) { (void)path; diag_plain_error(d, "placeholder"); return NULL; }
void diag_linecol(const Diag *d, Loc loc, int *line, int *col) { (void)d; (void)loc; *line = 0; *col = 0; }
void diag_error(Diag *d, Loc loc, const char *fmt, ...) { (void)loc; va_list ap; va_start(ap, fmt); vfprintf(d->out, fmt, ap); va_end(ap); fputc('\n', d->out); d->errors++; }
void diag_warning(Diag *d, Loc loc, const char *fmt, ...) { (void)loc; (void)fmt; d->warnings++; }
void diag_note(Diag *d, Loc loc, const char *fmt, ...) { (void)d; (void)loc; (void)fmt; }
void diag_plain_error(Diag *d, const char *fmt, ...) { va_list ap; va_start(ap, fmt); fputs("shortc: error: ", d->out); vfprintf(d->out, fmt, ap); va_end(ap); fputc('\n', d->out); d->errors++; }
const char *diag_suggest(const char *word, const char *const *c, int n) { (void)word; (void)c; (void)n; return NULL; }
