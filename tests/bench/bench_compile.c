/*
 * bench_compile.c — prints how long parse → CUDA takes and how many kernels
 * are emitted, for each .arch given (default: gpt2_small and gpt2_24l).
 * A benchmark that prints figures, not a timed test: the targets
 * (≤ 20 ms, kernel count independent of depth) are read off its output.
 * It also prints the bytes per token the generated kernels move at T =
 * segment (cost_kernel_traffic) against the minimum a fused design moves,
 * and what the same model moves compiled with --no-fuse.
 *
 *   bench_compile [--repeat N] FILE.arch...
 */
#define _POSIX_C_SOURCE 200809L
#include "shortc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Kernel bytes per token of path at T = segment (moved, and the minimum), fused or not; false on error. */
static bool traffic(const char *path, bool no_fuse, double *moved, double *minimum) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = path, .stop = COMPILE_STOP_AFTER_PASSES, .no_fuse = no_fuse};
    CompileResult cr;
    bool ok = shortc_compile(&a, &d, &co, &cr) && cr.graph;
    if (ok) {
        int T = cr.graph->spec->segment;
        cost_kernel_traffic(cr.graph, T, moved, minimum);
        *moved /= T;
        *minimum /= T;
    }
    compile_result_free(&cr);
    arena_free(&a);
    return ok;
}

/* One full compile in memory; returns ms or -1 on error. */
static double compile_once(const char *path, int *nkernels, int *nlaunches, int *nlayers) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = path};
    CompileResult cr;
    double t0 = now_ms(), ms = -1;
    if (shortc_compile(&a, &d, &co, &cr)) {
        ms = now_ms() - t0;
        *nkernels = cr.emit.nkernels;
        *nlaunches = cr.emit.nlaunches;
        *nlayers = cr.spec->n_layers;
    }
    compile_result_free(&cr);
    arena_free(&a);
    return ms;
}

int main(int argc, char **argv) {
    int repeat = 50;
    const char *defaults[] = {SHORTC_SOURCE_DIR "/models/gpt2_small.arch", SHORTC_SOURCE_DIR "/models/gpt2_24l.arch"};
    const char **files = defaults;
    int nfiles = 2;
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--repeat") == 0) {
        repeat = atoi(argv[2]);
        first = 3;
    }
    if (repeat < 1) repeat = 1;
    if (argc > first) {
        files = (const char **)(argv + first);
        nfiles = argc - first;
    }
    double *t = malloc(sizeof *t * (size_t)repeat);
    if (!t) return 1;
    printf("%-40s %7s %8s %9s %9s %9s %12s %12s %12s\n", "model", "layers", "kernels", "launches", "median_ms", "max_ms",
           "kern_B/tok", "min_B/tok", "nofuse_B/tok");
    for (int f = 0; f < nfiles; f++) {
        int nk = 0, nl = 0, layers = 0;
        for (int r = 0; r < repeat; r++) {
            t[r] = compile_once(files[f], &nk, &nl, &layers);
            if (t[r] < 0) {
                fprintf(stderr, "bench_compile: %s failed to compile\n", files[f]);
                free(t);
                return 1;
            }
        }
        qsort(t, (size_t)repeat, sizeof *t, cmp_double);
        const char *base = strrchr(files[f], '/');
        double moved = 0, minimum = 0, umoved = 0, uminimum = 0;
        if (!traffic(files[f], false, &moved, &minimum) || !traffic(files[f], true, &umoved, &uminimum)) {
            fprintf(stderr, "bench_compile: %s: no cost figures\n", files[f]);
            free(t);
            return 1;
        }
        printf("%-40s %7d %8d %9d %9.3f %9.3f %12.0f %12.0f %12.0f\n", base ? base + 1 : files[f], layers, nk, nl,
               t[repeat / 2], t[repeat - 1], moved, minimum, umoved);
    }
    free(t);
    return 0;
}
