/*
 * check.h — the assertion helpers every C test program shares: CHECK and
 * CHECK_HAS count failures instead of stopping, so one run reports them all;
 * check_done() prints the summary and gives the exit status.
 */
#ifndef SHORTC_TESTS_CHECK_H
#define SHORTC_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int check_failures; /* failed checks so far in this program */

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            check_failures++;                                                        \
        }                                                                            \
    } while (0)

/* CHECK that haystack contains needle, printing both when it does not. */
#define CHECK_HAS(haystack, needle)                                                                        \
    do {                                                                                                   \
        const char *h_ = (haystack), *n_ = (needle);                                                       \
        if (!h_ || !strstr(h_, n_)) {                                                                      \
            fprintf(stderr, "%s:%d: expected \"%s\" in \"%s\"\n", __FILE__, __LINE__, n_, h_ ? h_ : "(null)"); \
            check_failures++;                                                                              \
        }                                                                                                  \
    } while (0)

/* Prints "<name>: ok" or the failure count; returns the exit status. */
static inline int check_done(const char *name) {
    if (check_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

/* CPU seconds of this process, for the bound tests (labelled timing): unlike the wall clock, not
 * stretched by other work on a shared machine. */
static inline double check_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Whole file, NUL-terminated (malloc'd), length in *len (if len); NULL if unreadable. */
static inline char *check_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len) *len = (size_t)n;
    }
    return buf;
}

#endif /* SHORTC_TESTS_CHECK_H */
