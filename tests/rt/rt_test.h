/* rt_test.h — tiny helpers shared by the runtime's C tests (tests/rt/). */
#ifndef RT_TEST_H
#define RT_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rt_test_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            rt_test_failures++;                                                      \
        }                                                                            \
    } while (0)

/* CHECK that haystack contains needle, printing both when it does not. */
#define CHECK_HAS(haystack, needle)                                                                        \
    do {                                                                                                   \
        const char *h_ = (haystack), *n_ = (needle);                                                       \
        if (!h_ || !strstr(h_, n_)) {                                                                      \
            fprintf(stderr, "%s:%d: expected \"%s\" in \"%s\"\n", __FILE__, __LINE__, n_, h_ ? h_ : "(null)"); \
            rt_test_failures++;                                                                            \
        }                                                                                                  \
    } while (0)

static inline int rt_test_done(const char *name) {
    if (rt_test_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, rt_test_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

static inline char *rt_test_read(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    fclose(f);
    if (buf) { buf[n] = 0; *len = (size_t)n; }
    return buf;
}

static inline void rt_test_write(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) { fprintf(stderr, "cannot write %s\n", path); rt_test_failures++; return; }
    fwrite(data, 1, len, f);
    fclose(f);
}

/* Flips every bit of the byte at offset off. */
static inline void rt_test_flip(const char *path, long off) {
    FILE *f = fopen(path, "r+b");
    if (!f) { rt_test_failures++; return; }
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
        rt_test_failures++;
    }
    return d;
}

/* Removes a directory made by rt_test_mkdtemp, with its contents. */
static inline void rt_test_rmdir(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) rt_test_failures++;
}

/* s with the first occurrence of from replaced by to (malloc'd); NULL (and a failure) if from is absent. */
static inline char *rt_test_replace(const char *s, const char *from, const char *to) {
    const char *at = strstr(s, from);
    if (!at) {
        fprintf(stderr, "rt_test_replace: '%s' not found\n", from);
        rt_test_failures++;
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
