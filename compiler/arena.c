/*
 * arena.c — bump allocation for the compiler.
 *
 * Every AST node, spec, IR value and string the compiler makes comes from
 * one Arena and is released together by arena_free(); nothing is freed
 * one by one. Blocks grow geometrically; a request larger than a block
 * gets a block of its own.
 */
#include "shortc.h"

#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
    ArenaBlock *prev;   /* older block */
    size_t size;        /* usable bytes in data */
    size_t used;        /* bytes handed out */
    _Alignas(16) unsigned char data[]; /* storage */
};

enum { ARENA_MIN_BLOCK = 64 * 1024 };

void arena_init(Arena *a) {
    a->head = NULL;
    a->total = 0;
}

static ArenaBlock *arena_grow(Arena *a, size_t need) {
    size_t size = a->head ? a->head->size * 2 : ARENA_MIN_BLOCK;
    if (size < need) size = need;
    ArenaBlock *b = malloc(sizeof *b + size);
    if (!b) return NULL;
    b->prev = a->head;
    b->size = size;
    b->used = 0;
    a->head = b;
    return b;
}

void *arena_alloc(Arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    ArenaBlock *b = a->head;
    if (!b || b->size - b->used < n) {
        b = arena_grow(a, n);
        if (!b) return NULL;
    }
    void *p = b->data + b->used;
    b->used += n;
    a->total += n;
    memset(p, 0, n);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_strdup(Arena *a, const char *s) {
    return arena_strndup(a, s, strlen(s));
}

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *p = arena_alloc(a, (size_t)n + 1);
    if (!p) return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void arena_free(Arena *a) {
    ArenaBlock *b = a->head;
    while (b) {
        ArenaBlock *prev = b->prev;
        free(b);
        b = prev;
    }
    a->head = NULL;
    a->total = 0;
}

void ptrvec_push(Arena *a, PtrVec *v, void *p) {
    if (v->len == v->cap) {
        int cap = v->cap ? v->cap * 2 : 8;
        void **items = arena_alloc(a, sizeof(void *) * (size_t)cap);
        if (!items) return;
        if (v->len) memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = p;
}
