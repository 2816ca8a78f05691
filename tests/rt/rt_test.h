/* rt_test.h — helpers shared by the runtime's C tests (tests/rt/), on top of tests/check.h. */
#ifndef RT_TEST_H
#define RT_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"

/* A counting host allocator for srt_context_create (realloc semantics): live
 * blocks, new blocks, and fault injection — when fail_at >= 0 the fail_at-th
 * allocation request (0-based, reallocs included) returns NULL. */
typedef struct Counter {
    long live;     /* blocks allocated and not yet freed */
    long total;    /* new blocks handed out */
    long allocs;   /* allocation requests seen (numbering for fail_at) */
    long fail_at;  /* request to fail; -1: never */
} Counter;
#define COUNTER_INIT {0, 0, 0, -1}

static inline void *count_alloc(void *ud, void *p, size_t old, size_t n) {
    Counter *c = ud;
    (void)old;
    if (n == 0) {
        if (p) c->live--;
        free(p);
        return NULL;
    }
    if (c->fail_at >= 0 && c->allocs++ == c->fail_at) return NULL;
    void *q = realloc(p, n);
    if (q && !p) {
        c->live++;
        c->total++;
    }
    return q;
}

/* Writes a fixture file (a failure if it cannot). */
static inline void rt_test_write(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) { fprintf(stderr, "cannot write %s\n", path); check_failures++; return; }
    fwrite(data, 1, len, f);
    fclose(f);
}

/* Flips every bit of the byte at offset off. */
static inline void rt_test_flip(const char *path, long off) {
    FILE *f = fopen(path, "r+b");
    if (!f) { check_failures++; return; }
    fseek(f, off, SEEK_SET);
    int c = fgetc(f);
    fseek(f, off, SEEK_SET);
    fputc(c ^ 0xff, f);
    fclose(f);
}

/* A fresh directory /tmp/shortc_rt_<tag>.<6 random characters> in buf; NULL (and a failure) if it cannot. */
static inline char *rt_test_mkdtemp(char *buf, size_t len, const char *tag) {
    snprintf(buf, len, "/tmp/shortc_rt_%s.XXXXXX", tag); /* mkdtemp's template */
    char *d = mkdtemp(buf);
    if (!d) {
        fprintf(stderr, "cannot create a temporary directory\n");
        check_failures++;
    }
    return d;
}

/* Removes a directory made by rt_test_mkdtemp, with its contents. */
static inline void rt_test_rmdir(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) check_failures++;
}

/* s with the first occurrence of from replaced by to (malloc'd); NULL (and a failure) if from is absent. */
static inline char *rt_test_replace(const char *s, const char *from, const char *to) {
    const char *at = strstr(s, from);
    if (!at) {
        fprintf(stderr, "rt_test_replace: '%s' not found\n", from);
        check_failures++;
        return NULL;
    }
    size_t n = strlen(s) - strlen(from) + strlen(to);
    char *r = malloc(n + 1);
    size_t pre = (size_t)(at - s);
    memcpy(r, s, pre);
    strcpy(r + pre, to);
    strcat(r, at + strlen(from));
    return r;
}

#endif
