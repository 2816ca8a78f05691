/*
 * bench_compile.c — prints how long parse → CUDA takes and how many kernels
 * are emitted, for each .arch given (default: gpt2_small and gpt2_24l).
 * A benchmark that prints figures, not a timed test: the issues' goals are
 * read off its output (issue 18: gpt2_small ≤ 5 ms in process, the whole
 * `shortc MODEL.arch -o x.cu` process ≤ 25 ms; kernel count independent of
 * depth). In process: the median and max wall ms of a full compile and the
 * median CPU ms (the process's CPU time, steady on a shared machine). Whole
 * process: `shortc --version` and `shortc MODEL.arch -o x.cu` run as child
 * processes (posix_spawn), median wall ms and median CPU ms (the child's
 * user + system time). It also prints the bytes per token the generated
 * kernels move at T = segment (cost_kernel_traffic) against the minimum a
 * fused design moves, and what the same model moves compiled with --no-fuse.
 *
 *   bench_compile [--repeat N] [--shortc PATH] FILE.arch...
 *
 * --shortc names the command to time (default: the build's shortc); "none"
 * skips the whole-process figures.
 */
#define _GNU_SOURCE /* wait4 */
#include "shortc.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SHORTC_BIN
#define SHORTC_BIN "shortc"
#endif

extern char **environ;

static double clock_ms(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
static double now_ms(void) { return clock_ms(CLOCK_MONOTONIC); }

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

/* One full compile in memory; returns wall ms (and CPU ms in *cpu) or -1 on error. */
static double compile_once(const char *path, int *nkernels, int *nlaunches, int *nlayers, double *cpu) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = path};
    CompileResult cr;
    double t0 = now_ms(), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID), ms = -1;
    if (shortc_compile(&a, &d, &co, &cr)) {
        ms = now_ms() - t0;
        *cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
        *nkernels = cr.emit.nkernels;
        *nlaunches = cr.emit.nlaunches;
        *nlayers = cr.spec->n_layers;
    }
    compile_result_free(&cr);
    arena_free(&a);
    return ms;
}

/* Runs argv as a child process (stdout and stderr to /dev/null); wall ms, its CPU ms (user + system) in *cpu,
 * or -1 when it cannot be started or fails. */
static double run_once(char *const argv[], double *cpu) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    double t0 = now_ms();
    int err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) return -1;
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    double ms = now_ms() - t0;
    *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    return ms;
}

/* The median of n values (sorts them). */
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* Times argv run repeat times: median wall and CPU ms; false when a run fails. */
static bool time_process(char *const argv[], int repeat, double *t, double *c, double *wall, double *cpu) {
    for (int r = 0; r < repeat; r++)
        if ((t[r] = run_once(argv, &c[r])) < 0) return false;
    *wall = median(t, repeat);
    *cpu = median(c, repeat);
    return true;
}

/* The whole-process figures: `shortc --version` once, `shortc FILE -o x.cu` per file; false on a failure. */
static bool bench_process(const char *shortc, const char **files, int nfiles, int repeat, double *t, double *c) {
    char dir[] = "/tmp/bench_compile.XXXXXX", out[64];
    if (!mkdtemp(dir)) return false;
    snprintf(out, sizeof out, "%s/x.cu", dir);
    double wall, cpu;
    bool ok = time_process((char *[]){(char *)shortc, "--version", NULL}, repeat, t, c, &wall, &cpu);
    if (ok) printf("%-40s %9.3f %9.3f\n", "shortc --version", wall, cpu);
    for (int f = 0; ok && f < nfiles; f++) {
        ok = time_process((char *[]){(char *)shortc, (char *)files[f], "-o", out, NULL}, repeat, t, c, &wall, &cpu);
        const char *base = strrchr(files[f], '/');
        char what[80];
        snprintf(what, sizeof what, "shortc %s -o x.cu", base ? base + 1 : files[f]);
        if (ok) printf("%-40s %9.3f %9.3f\n", what, wall, cpu);
    }
    if (!ok) fprintf(stderr, "bench_compile: %s failed (--shortc none skips the whole-process figures)\n", shortc);
    unlink(out);
    rmdir(dir);
    return ok;
}

int main(int argc, char **argv) {
    int repeat = 50;
    const char *defaults[] = {SHORTC_SOURCE_DIR "/models/gpt2_small.arch", SHORTC_SOURCE_DIR "/models/gpt2_24l.arch"};
    const char **files = defaults;
    const char *shortc = SHORTC_BIN;
    int nfiles = 2;
    int first = 1;
    for (; first + 1 < argc; first += 2) {
        if (strcmp(argv[first], "--repeat") == 0) repeat = atoi(argv[first + 1]);
        else if (strcmp(argv[first], "--shortc") == 0) shortc = argv[first + 1];
        else break;
    }
    if (repeat < 1) repeat = 1;
    if (argc > first) {
        files = (const char **)(argv + first);
        nfiles = argc - first;
    }
    double *t = malloc(sizeof *t * (size_t)repeat), *c = malloc(sizeof *c * (size_t)repeat);
    if (!t || !c) return 1;
    printf("in process (goal: gpt2_small <= 5 ms)\n");
    printf("%-40s %7s %8s %9s %9s %9s %9s %12s %12s %12s\n", "model", "layers", "kernels", "launches", "median_ms",
           "max_ms", "cpu_ms", "kern_B/tok", "min_B/tok", "nofuse_B/tok");
    int rc = 0;
    for (int f = 0; f < nfiles && rc == 0; f++) {
        int nk = 0, nl = 0, layers = 0;
        for (int r = 0; r < repeat && rc == 0; r++)
            if ((t[r] = compile_once(files[f], &nk, &nl, &layers, &c[r])) < 0) {
                fprintf(stderr, "bench_compile: %s failed to compile\n", files[f]);
                rc = 1;
            }
        const char *base = strrchr(files[f], '/');
        double moved = 0, minimum = 0, umoved = 0, uminimum = 0;
        if (rc == 0 && (!traffic(files[f], false, &moved, &minimum) || !traffic(files[f], true, &umoved, &uminimum))) {
            fprintf(stderr, "bench_compile: %s: no cost figures\n", files[f]);
            rc = 1;
        }
        if (rc == 0) {
            double med = median(t, repeat), cpu = median(c, repeat);
            printf("%-40s %7d %8d %9d %9.3f %9.3f %9.3f %12.0f %12.0f %12.0f\n", base ? base + 1 : files[f], layers, nk,
                   nl, med, t[repeat - 1], cpu, moved, minimum, umoved);
        }
    }
    if (rc == 0 && strcmp(shortc, "none") != 0) {
        printf("whole process (goal: gpt2_small <= 25 ms)\n%-40s %9s %9s\n", "command", "median_ms", "cpu_ms");
        if (!bench_process(shortc, files, nfiles, repeat, t, c)) rc = 1;
    }
    free(t);
    free(c);
    return rc;
}
