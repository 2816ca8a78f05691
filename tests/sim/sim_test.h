/* sim_test.h — helpers shared by the simulator's C tests (tests/sim/), on top of tests/check.h. */
#ifndef SIM_TEST_H
#define SIM_TEST_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_driver.h"
#include "sim.h"
#include "../check.h"

/* CHECK that a driver call succeeded, printing the simulator fault if not. */
#define CHECK_CU(call)                                                                                  \
    do {                                                                                                \
        CUresult r_ = (call);                                                                           \
        if (r_ != CUDA_SUCCESS) {                                                                       \
            fprintf(stderr, "%s:%d: %s -> %d (%s)\n", __FILE__, __LINE__, #call, (int)r_, sim_last_fault()); \
            check_failures++;                                                                           \
        }                                                                                               \
    } while (0)

/* The cache directory for tests: $SHORTC_CACHE or /tmp. */
static inline const char *sim_test_cache(void) {
    const char *e = getenv("SHORTC_CACHE");
    return e && *e ? e : "/tmp/shortc-sim-test-cache";
}

/* Appends the file at path to *s (length *n); false when it cannot be read. */
static inline bool sim_test_append(char **s, size_t *n, const char *path) {
    size_t k = 0;
    char *t = check_read_file(path, &k);
    char *ns = t ? realloc(*s, *n + k + 2) : NULL;
    if (!ns) {
        fprintf(stderr, "cannot read %s\n", path);
        free(t);
        return false;
    }
    memcpy(ns + *n, t, k);
    ns[*n + k] = '\n';
    ns[*n + k + 1] = '\0';
    *s = ns;
    *n += k + 1;
    free(t);
    return true;
}

/* templates/prelude.cuh, then templates/<extra> when extra is not NULL, then
 * tests/sim/kernels/<file>, as an emitted .cu would be (malloc'd). */
static inline char *sim_test_source_with(const char *extra, const char *file, size_t *len) {
    char path[1024];
    char *s = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/templates/prelude.cuh", SHORTC_SOURCE_DIR);
    bool ok = sim_test_append(&s, &n, path);
    if (ok && extra) {
        snprintf(path, sizeof path, "%s/templates/%s", SHORTC_SOURCE_DIR, extra);
        ok = sim_test_append(&s, &n, path);
    }
    snprintf(path, sizeof path, "%s/tests/sim/kernels/%s", SHORTC_SOURCE_DIR, file);
    if (!ok || !sim_test_append(&s, &n, path)) {
        free(s);
        return NULL;
    }
    *len = n;
    return s;
}
static inline char *sim_test_source(const char *file, size_t *len) { return sim_test_source_with(NULL, file, len); }

/* Compiles templates/prelude.cuh [+ templates/<extra>] + tests/sim/kernels/<file> for kernels names[n] and loads it through d. */
static inline CUmodule sim_test_module_with(RtDriver *d, const char *extra, const char *file, const char *const *names,
                                            int n, int arch, RtCompiled *out) {
    size_t len = 0;
    char *src = sim_test_source_with(extra, file, &len);
    if (!src) {
        check_failures++;
        return NULL;
    }
    RtCompileRequest req = {.source = src, .len = len, .name = "simtest", .arch = arch, .cache_dir = sim_test_cache(), .kernel_names = names, .nkernels = n};
    static char err[65536];
    RtCompiled local;
    if (!out) out = &local;
    srt_status st = d->compile_module(&req, out, err, sizeof err);
    free(src);
    if (st != SRT_OK) {
        fprintf(stderr, "compile failed (%d): %s\n", (int)st, err);
        check_failures++;
        return NULL;
    }
    CUmodule m = NULL;
    CUresult r = d->moduleLoadData(&m, out->image);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "moduleLoadData: %d %s\n", (int)r, d->last_fault());
        check_failures++;
        m = NULL;
    }
    if (out == &local) rt_compiled_release(&local);
    return m;
}

static inline CUmodule sim_test_module(RtDriver *d, const char *file, const char *const *names, int n, int arch,
                                       RtCompiled *out) {
    return sim_test_module_with(d, NULL, file, names, n, arch, out);
}

static inline CUfunction sim_test_fn(RtDriver *d, CUmodule m, const char *name) {
    CUfunction f = NULL;
    if (!m || d->moduleGetFunction(&f, m, name) != CUDA_SUCCESS) {
        fprintf(stderr, "kernel %s not found: %s\n", name, d->last_fault());
        check_failures++;
        return NULL;
    }
    return f;
}

/* One named case of a test program. */
typedef struct SimTestCase {
    const char *name;   /* the argument that selects it */
    void (*fn)(void);   /* runs it, counting failures in check_failures */
} SimTestCase;

/*
 * Runs the n cases (only the one named `only` when it is not NULL), each after
 * before_each() when that is not NULL, printing "name: ok" or "name: FAILED";
 * returns check_done(prog), or 2 when no case has that name.
 */
static inline int sim_test_run_cases(const char *prog, const SimTestCase *cases, size_t n, const char *only,
                                     void (*before_each)(void)) {
    int ran = 0;
    for (size_t i = 0; i < n; i++) {
        if (only && strcmp(only, cases[i].name) != 0) continue;
        int before = check_failures;
        if (before_each) before_each();
        cases[i].fn();
        printf("%s: %s\n", cases[i].name, check_failures == before ? "ok" : "FAILED");
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "no case named %s\n", only ? only : "");
        return 2;
    }
    return check_done(prog);
}

/* Deterministic pseudo-random floats in [-1, 1). */
static inline void sim_test_fill(float *x, size_t n, unsigned seed) {
    unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(s >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
}

#endif /* SIM_TEST_H */
