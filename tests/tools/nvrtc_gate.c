/*
 * nvrtc_gate — compiles an emitted .cu with NVRTC for real GPU architectures
 * and reports what ptxas says about every kernel (docs/checks.md).
 *
 *   nvrtc_gate [--arch sm_XX]... [--model NAME] [--opt NVRTC_OPTION]... FILE.cu
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
 * --ptxas-options=-v.
 *
 * Exit status: 0 fine; 1 some kernel (or a device function it calls) spills;
 * 2 a compile error (the log is printed) or a log this tool cannot read;
 * 3 usage or I/O error. No GPU is needed: NVRTC runs on the host.
 */
#define _GNU_SOURCE /* memmem */
#include <nvrtc.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SHORTC_CUDA_INCLUDE
#define SHORTC_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

#define MAX_ARCHS 8
#define MAX_OPTS 16

/* What ptxas reported for one function at one arch. */
typedef struct FuncInfo {
    char name[256];    /* symbol (extern "C" kernels: their plain name) */
    bool entry;        /* a __global__ kernel (else a non-inlined device function) */
    int regs;          /* registers per thread (entries only) */
    int smem;          /* static shared memory bytes (entries only) */
    int spill_st;      /* spill store bytes */
    int spill_ld;      /* spill load bytes */
    int stack;         /* stack frame bytes */
    int arch;          /* index into the arch list */
} FuncInfo;

/* Every function of every arch, in log order. */
typedef struct FuncTable {
    FuncInfo *items;   /* malloc'd storage */
    int len;           /* entries in use */
    int cap;           /* entries allocated */
} FuncTable;

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

static FuncInfo *func_get(FuncTable *t, const char *name, int arch) {
    for (int i = 0; i < t->len; i++)
        if (t->items[i].arch == arch && strcmp(t->items[i].name, name) == 0) return &t->items[i];
    if (t->len == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 32;
        FuncInfo *ni = realloc(t->items, sizeof *ni * (size_t)t->cap);
        if (!ni) { fprintf(stderr, "nvrtc_gate: out of memory\n"); exit(3); }
        t->items = ni;
    }
    FuncInfo *f = &t->items[t->len++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->arch = arch;
    return f;
}

/* Copies the text between the first pair of single quotes after `key` into out. */
static bool quoted_after(const char *line, const char *key, char *out, size_t cap) {
    const char *p = strstr(line, key);
    if (!p) return false;
    p = strchr(p + strlen(key), '\'');
    if (!p) return false;
    const char *e = strchr(p + 1, '\'');
    if (!e || (size_t)(e - p - 1) >= cap) return false;
    memcpy(out, p + 1, (size_t)(e - p - 1));
    out[e - p - 1] = '\0';
    return true;
}

/* The integer just before `unit` in line ("512 bytes smem" -> 512); -1 if absent. */
static int number_before(const char *line, const char *unit) {
    const char *p = strstr(line, unit);
    if (!p) return -1;
    const char *q = p;
    while (q > line && q[-1] == ' ') q--;
    const char *e = q;
    while (q > line && q[-1] >= '0' && q[-1] <= '9') q--;
    if (q == e) return -1;
    return atoi(q);
}

/*
 * Reads ptxas -v lines from an NVRTC log:
 *   ptxas info    : Compiling entry function 'K' for 'sm_80'
 *   ptxas info    : Function properties for K
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 32 registers, used 1 barriers, 16 bytes smem, 384 bytes cmem[0]
 * Returns the number of entry functions seen, or -1 on a line it cannot read.
 */
static int parse_log(const char *log, int arch, FuncTable *t) {
    char name[256];
    FuncInfo *cur = NULL;
    int entries = 0;
    const char *line = log;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        char buf[1024];
        if (n >= sizeof buf) n = sizeof buf - 1;
        memcpy(buf, line, n);
        buf[n] = '\0';
        line = nl ? nl + 1 : line + n;
        if (strncmp(buf, "ptxas", 5) != 0) continue;
        if (strstr(buf, "Compiling entry function")) {
            if (!quoted_after(buf, "Compiling entry function", name, sizeof name)) return -1;
            cur = func_get(t, name, arch);
            cur->entry = true;
            entries++;
        } else if (strstr(buf, "Function properties for ")) {
            const char *p = strstr(buf, "Function properties for ") + strlen("Function properties for ");
            snprintf(name, sizeof name, "%s", p);
            cur = func_get(t, name, arch);
        } else if (strstr(buf, "bytes stack frame")) {
            if (!cur) return -1;
            int st = number_before(buf, "bytes stack frame");
            int ss = number_before(buf, "bytes spill stores");
            int sl = number_before(buf, "bytes spill loads");
            if (st < 0 || ss < 0 || sl < 0) return -1;
            cur->stack = st;
            cur->spill_st = ss;
            cur->spill_ld = sl;
        } else if (strstr(buf, "Used ") && strstr(buf, " registers")) {
            if (!cur) return -1;
            const char *p = strstr(buf, "Used ");
            cur->regs = atoi(p + 5);
            int sm = number_before(buf, "bytes smem");
            cur->smem = sm < 0 ? 0 : sm;
        }
    }
    return entries;
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
    const FuncInfo *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->arch - y->arch;
}

static void usage(void) {
    fprintf(stderr, "usage: nvrtc_gate [--arch sm_XX]... [--model NAME] [--opt NVRTC_OPTION]... FILE.cu\n");
}

int main(int argc, char **argv) {
    const char *archs[MAX_ARCHS];
    int narchs = 0;
    const char *extra[MAX_OPTS];
    int nextra = 0;
    const char *model = NULL, *path = NULL;
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
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else { usage(); return 3; }
    }
    if (!path) { usage(); return 3; }
    if (narchs == 0) { archs[0] = "sm_80"; archs[1] = "sm_90"; narchs = 2; }

    size_t len = 0;
    char *src = read_file(path, &len);
    if (!src) { fprintf(stderr, "nvrtc_gate: cannot read '%s'\n", path); return 3; }

    FuncTable table = {0};
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
            int entries = parse_log(log, a, &table);
            if (entries <= 0) {
                fprintf(stderr, "nvrtc_gate: %s: %s: no kernel found in the ptxas report (unexpected log format?)\n%s\n",
                        path, archs[a], log);
                rc = 2;
            }
        }
        free(log);
        nvrtcDestroyProgram(&prog);
    }

    if (rc == 0) {
        qsort(table.items, (size_t)table.len, sizeof *table.items, cmp_func);
        if (model) printf("%-20s ", "# model");
        printf("%-48s %-6s %5s %6s %8s %8s %6s\n", model ? "kernel" : "# kernel", "arch", "regs", "smem",
               "spill_st", "spill_ld", "stack");
        for (int i = 0; i < table.len; i++) {
            const FuncInfo *f = &table.items[i];
            if (!f->entry) continue;
            if (model) printf("%-20s ", model);
            printf("%-48s %-6s %5d %6d %8d %8d %6d\n", f->name, archs[f->arch], f->regs, f->smem, f->spill_st,
                   f->spill_ld, f->stack);
        }
        for (int i = 0; i < table.len; i++) {
            const FuncInfo *f = &table.items[i];
            if (f->spill_st == 0 && f->spill_ld == 0) continue;
            char where[512];
            arch_line_of(src, f->name, where, sizeof where);
            fprintf(stderr, "%s: error: %s '%s' spills registers at %s: %d bytes stored, %d bytes loaded (%s)\n",
                    where[0] ? where : path, f->entry ? "kernel" : "device function", f->name, archs[f->arch],
                    f->spill_st, f->spill_ld, path);
            rc = 1;
        }
    }
    free(table.items);
    free(src);
    return rc;
}
