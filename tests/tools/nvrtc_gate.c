/*
 * nvrtc_gate — compiles an emitted .cu with NVRTC for real GPU architectures
 * and reports what ptxas says about every kernel (docs/checks.md).
 *
 *   nvrtc_gate [--arch sm_XX]... [--model NAME] [--opt NVRTC_OPTION]... [--sass] FILE.cu
 *   nvrtc_gate --version          prints `nvrtc MAJOR.MINOR`
 *
 * Archs default to sm_80 and sm_90; each is compiled once. Prints one row per
 * (kernel, arch), sorted by kernel then by arch as given:
 *
 *   [model] kernel arch regs smem spill_st spill_ld stack
 *
 * (the model column only with --model). regs: registers per thread; smem:
 * static shared memory in bytes (dynamic shared memory is a launch parameter
 * and not known here); spill_st/spill_ld: spill stores/loads in bytes; stack:
 * stack frame in bytes. Numbers come from NVRTC's log with
 * --ptxas-options=-v, read by ptxas_parse_log (compiler/kernel_facts.c, shared
 * with `shortc report --kernels`).
 *
 * With --sass the table is instead the SASS instruction mix of each kernel
 * (cuobjdump -sass of the cubin, cli/sass_tool.c; counted by sass_count_mix):
 *
 *   [model] kernel arch mma ffma hfma ldg16 ldg32 ldg64 ldg128 ldgsts lds ldsm sts shfl bar ldl stl
 *
 * With --loop the table is the main loop of each kernel from the same SASS (the innermost loop holding an
 * MMA, sass_count_mix) beside what ptxas said:
 *
 *   [model] kernel arch regs spill_st spill_ld loop_mma loop_other loop_local
 *
 * (loop_local: the loop's LDL/STL, counted among loop_other).
 *
 * --keep DIR (with --sass or --loop) also writes each arch's cubin as DIR/ARCH.cubin.
 *
 * --sass-out FILE keeps the ptxas table (stdout, exit status 1 on spills) and also writes the
 * --sass table of the same compile (without the model column) to FILE, so that the baseline,
 * tensor-core and vector gates share one NVRTC compile per model (tests/gate/gate_compile.sh).
 * Without cuobjdump FILE holds one line, `# skipped: REASON`.
 *
 * Exit status: 0 fine; 1 some kernel (or a device function it calls) spills;
 * 2 a compile error (the log is printed) or a log this tool cannot read;
 * 3 usage or I/O error; 4 --sass without cuobjdump (a message says where it
 * was looked for). No GPU is needed: NVRTC runs on the host.
 */
#define _GNU_SOURCE /* memmem */
#include <nvrtc.h>

#include "sass_tool.h" /* cli/sass_tool.c */
#include "shortc.h"    /* ptxas_parse_log, sass_count_mix (compiler/kernel_facts.c) */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SHORTC_CUDA_INCLUDE
#define SHORTC_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

#define MAX_ARCHS 8
#define MAX_OPTS 16

/* Most functions (kernels and device functions, all archs) one run reads. */
#define MAX_FUNCS 4096

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = (n + 65536 + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    bool err = ferror(f);
    fclose(f);
    if (err) { free(buf); return NULL; }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/*
 * The `// from FILE:LINE` comment nearest above the definition of kernel
 * `name` in the .cu (for messages); "" when there is none.
 */
static void arch_line_of(const char *cu, const char *name, char *out, size_t cap) {
    out[0] = '\0';
    size_t nlen = strlen(name);
    for (const char *p = strstr(cu, name); p; p = strstr(p + 1, name)) {
        if (p[nlen] != '(' && p[nlen] != ' ') continue;
        /* must be a definition: `__global__` earlier on the same line */
        const char *bol = p;
        while (bol > cu && bol[-1] != '\n') bol--;
        if (!memmem(bol, (size_t)(p - bol), "__global__", 10)) continue;
        const char *best = NULL;
        for (const char *q = strstr(cu, "// from "); q && q < bol; q = strstr(q + 1, "// from ")) best = q;
        if (!best) return;
        best += strlen("// from ");
        size_t k = 0;
        while (best[k] && best[k] != ' ' && best[k] != '\n' && k + 1 < cap) { out[k] = best[k]; k++; }
        out[k] = '\0';
        return;
    }
}

static int cmp_func(const void *a, const void *b) {
    const KernelFacts *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->arch - y->arch;
}

static void usage(void) {
    fprintf(stderr, "usage: nvrtc_gate [--arch sm_XX]... [--model NAME] [--opt NVRTC_OPTION]... "
                    "[--sass|--loop [--keep DIR]|--sass-out FILE] FILE.cu\n");
}

/* Where --keep writes each arch's cubin (DIR/ARCH.cubin); NULL: nowhere. */
static const char *keep_dir;

/* Writes cubin (len bytes) of arch into keep_dir; false with the error printed. */
static bool keep_cubin(const char *arch, const char *cubin, size_t len) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.cubin", keep_dir, arch);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(cubin, 1, len, f) == len;
    if (f && fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "nvrtc_gate: cannot write %s\n", path);
    return ok;
}

/* The SASS mix of prog's cubin into funcs (arch index a); false with the error printed. */
static bool count_sass(nvrtcProgram prog, const char *tool, int a, const char *arch, KernelFacts *funcs, int nfuncs) {
    size_t len = 0;
    char err[2048];
    char *cubin = nvrtcGetCUBINSize(prog, &len) == NVRTC_SUCCESS && len ? malloc(len) : NULL;
    if (cubin && keep_dir && (nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS || !keep_cubin(arch, cubin, len))) {
        free(cubin);
        return false;
    }
    char *text = cubin && nvrtcGetCUBIN(prog, cubin) == NVRTC_SUCCESS ? sass_disassemble(tool, cubin, len, err, sizeof err)
                                                                       : NULL;
    int found = text ? sass_count_mix(text, a, funcs, nfuncs) : -1;
    if (!cubin) fprintf(stderr, "nvrtc_gate: no cubin for %s\n", arch);
    else if (!text) fprintf(stderr, "nvrtc_gate: %s\n", err);
    else if (found <= 0) fprintf(stderr, "nvrtc_gate: %s: no kernel in the SASS listing of %s\n", tool, arch);
    free(text);
    free(cubin);
    return found > 0;
}

/* The --sass table, into out: one row per kernel and arch. */
static void print_sass(FILE *out, const KernelFacts *funcs, int nfuncs, const char *const *archs, const char *model) {
    if (model) fprintf(out, "%-20s ", "# model");
    fprintf(out, "%-48s %-6s %5s %5s %5s %5s %5s %5s %6s %6s %5s %5s %5s %5s %5s %5s %5s\n",
            model ? "kernel" : "# kernel", "arch", "mma", "ffma", "hfma", "ldg16", "ldg32", "ldg64", "ldg128",
            "ldgsts", "lds", "ldsm", "sts", "shfl", "bar", "ldl", "stl");
    for (int i = 0; i < nfuncs; i++) {
        const KernelFacts *f = &funcs[i];
        const SassMix *m = &f->sass;
        if (!f->entry || !f->has_sass) continue;
        if (model) fprintf(out, "%-20s ", model);
        fprintf(out, "%-48s %-6s %5d %5d %5d %5d %5d %5d %6d %6d %5d %5d %5d %5d %5d %5d %5d\n", f->name,
                archs[f->arch], m->mma, m->ffma, m->hfma, m->ld_global_16, m->ld_global_32, m->ld_global_64,
                m->ld_global_128, m->cp_async, m->ld_shared, m->ldsm, m->st_shared, m->shfl, m->bar, m->ld_local,
                m->st_local);
    }
}

/*
 * The --sass-out file: the --sass table without the model column (what the SASS gates read), or
 * `# skipped: REASON` when no cuobjdump was found (have_tool false); false with the error printed.
 */
static bool write_sass_file(const char *path, bool have_tool, const KernelFacts *funcs, int nfuncs,
                            const char *const *archs) {
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "nvrtc_gate: cannot write %s\n", path); return false; }
    if (have_tool) print_sass(f, funcs, nfuncs, archs, NULL);
    else fprintf(f, "# skipped: %s\n", sass_tool_missing);
    bool ok = !ferror(f);
    if (fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "nvrtc_gate: cannot write %s\n", path);
    return ok;
}

/* The --loop table: one row per kernel and arch. */
static void print_loop(const KernelFacts *funcs, int nfuncs, const char *const *archs, const char *model) {
    if (model) printf("%-20s ", "# model");
    printf("%-48s %-6s %5s %8s %8s %8s %10s %10s\n", model ? "kernel" : "# kernel", "arch", "regs", "spill_st",
           "spill_ld", "loop_mma", "loop_other", "loop_local");
    for (int i = 0; i < nfuncs; i++) {
        const KernelFacts *f = &funcs[i];
        if (!f->entry || !f->has_sass) continue;
        if (model) printf("%-20s ", model);
        printf("%-48s %-6s %5d %8d %8d %8d %10d %10d\n", f->name, archs[f->arch], f->regs, f->spill_st, f->spill_ld,
               f->sass.loop_mma, f->sass.loop_other, f->sass.loop_local);
    }
}

int main(int argc, char **argv) {
    const char *archs[MAX_ARCHS];
    int narchs = 0;
    const char *extra[MAX_OPTS];
    int nextra = 0;
    const char *model = NULL, *path = NULL;
    const char *sass_out = NULL; /* --sass-out FILE: the SASS table of the same compile, beside the ptxas table */
    bool sass = false, loop = false;
    char tool[1024] = "";
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        int major = 0, minor = 0;
        if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return 3;
        printf("nvrtc %d.%d\n", major, minor);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc && narchs < MAX_ARCHS) archs[narchs++] = argv[++i];
        else if (strcmp(argv[i], "--opt") == 0 && i + 1 < argc && nextra < MAX_OPTS) extra[nextra++] = argv[++i];
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) model = argv[++i];
        else if (strcmp(argv[i], "--sass") == 0) sass = true;
        else if (strcmp(argv[i], "--loop") == 0) sass = loop = true;
        else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc) keep_dir = argv[++i];
        else if (strcmp(argv[i], "--sass-out") == 0 && i + 1 < argc) sass_out = argv[++i];
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else { usage(); return 3; }
    }
    if (!path || (sass_out && (sass || keep_dir))) { usage(); return 3; }
    if (narchs == 0) { archs[0] = "sm_80"; archs[1] = "sm_90"; narchs = 2; }
    if (sass && !sass_tool_find(tool, sizeof tool)) {
        fprintf(stderr, "nvrtc_gate: SASS check skipped: %s\n", sass_tool_missing);
        return 4;
    }
    /* --sass-out without cuobjdump: the ptxas table all the same, the file says why it has no SASS */
    bool sass_too = sass_out && sass_tool_find(tool, sizeof tool);

    size_t len = 0;
    char *src = read_file(path, &len);
    if (!src) { fprintf(stderr, "nvrtc_gate: cannot read '%s'\n", path); return 3; }

    KernelFacts *funcs = calloc(MAX_FUNCS, sizeof *funcs);
    int nfuncs = 0;
    if (!funcs) { fprintf(stderr, "nvrtc_gate: out of memory\n"); free(src); return 3; }
    int rc = 0;
    for (int a = 0; a < narchs && rc == 0; a++) {
        char arch_opt[64], inc_opt[1024];
        snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s", archs[a]);
        snprintf(inc_opt, sizeof inc_opt, "-I%s", SHORTC_CUDA_INCLUDE);
        const char *opts[3 + MAX_OPTS] = {arch_opt, inc_opt, "--ptxas-options=-v"};
        int nopts = 3;
        for (int i = 0; i < nextra; i++) opts[nopts++] = extra[i];

        nvrtcProgram prog;
        nvrtcResult r = nvrtcCreateProgram(&prog, src, path, 0, NULL, NULL);
        if (r != NVRTC_SUCCESS) {
            fprintf(stderr, "nvrtc_gate: nvrtcCreateProgram: %s\n", nvrtcGetErrorString(r));
            rc = 2;
            break;
        }
        r = nvrtcCompileProgram(prog, nopts, opts);
        size_t log_len = 0;
        nvrtcGetProgramLogSize(prog, &log_len);
        char *log = malloc(log_len + 1);
        if (!log) { fprintf(stderr, "nvrtc_gate: out of memory\n"); return 3; }
        log[0] = '\0';
        if (log_len) nvrtcGetProgramLog(prog, log);
        log[log_len] = '\0';
        size_t cubin_len = 0;
        if (r == NVRTC_SUCCESS) nvrtcGetCUBINSize(prog, &cubin_len);
        if (r != NVRTC_SUCCESS || cubin_len == 0) {
            fprintf(stderr, "nvrtc_gate: %s: compile for %s failed: %s\n%s\n", path, archs[a],
                    nvrtcGetErrorString(r), log);
            rc = 2;
        } else {
            int entries = ptxas_parse_log(log, a, funcs, &nfuncs, MAX_FUNCS);
            if (entries <= 0) {
                fprintf(stderr, "nvrtc_gate: %s: %s: no kernel found in the ptxas report (unexpected log format?)\n%s\n",
                        path, archs[a], log);
                rc = 2;
            } else if ((sass || sass_too) && !count_sass(prog, tool, a, archs[a], funcs, nfuncs)) {
                rc = 2;
            }
        }
        free(log);
        nvrtcDestroyProgram(&prog);
    }

    if (rc == 0 && sass) {
        qsort(funcs, (size_t)nfuncs, sizeof *funcs, cmp_func);
        if (loop) print_loop(funcs, nfuncs, archs, model);
        else print_sass(stdout, funcs, nfuncs, archs, model);
    } else if (rc == 0) {
        qsort(funcs, (size_t)nfuncs, sizeof *funcs, cmp_func);
        if (model) printf("%-20s ", "# model");
        printf("%-48s %-6s %5s %6s %8s %8s %6s\n", model ? "kernel" : "# kernel", "arch", "regs", "smem",
               "spill_st", "spill_ld", "stack");
        for (int i = 0; i < nfuncs; i++) {
            const KernelFacts *f = &funcs[i];
            if (!f->entry) continue;
            if (model) printf("%-20s ", model);
            printf("%-48s %-6s %5d %6d %8d %8d %6d\n", f->name, archs[f->arch], f->regs, f->smem, f->spill_st,
                   f->spill_ld, f->stack);
        }
        for (int i = 0; i < nfuncs; i++) {
            const KernelFacts *f = &funcs[i];
            if (f->spill_st == 0 && f->spill_ld == 0) continue;
            char where[512];
            arch_line_of(src, f->name, where, sizeof where);
            fprintf(stderr, "%s: error: %s '%s' spills registers at %s: %d bytes stored, %d bytes loaded (%s)\n",
                    where[0] ? where : path, f->entry ? "kernel" : "device function", f->name, archs[f->arch],
                    f->spill_st, f->spill_ld, path);
            rc = 1;
        }
        /* a spill (rc 1) still leaves a whole SASS table: the SASS gates judge it on their own */
        if (sass_out && !write_sass_file(sass_out, sass_too, funcs, nfuncs, archs)) rc = 3;
    }
    free(funcs);
    free(src);
    return rc;
}
