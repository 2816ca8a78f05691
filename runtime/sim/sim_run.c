/*
 * sim_run.c — srt_sim_run(): one kernel of an arbitrary CUDA source run on
 * the simulator through its driver table (compile, load, buffers in,
 * launch, buffers out), for `shortc sim` and other test drivers.
 */
#include "rt_internal.h"
#include "sim.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Everything one run holds, released by run_free. */
typedef struct SimRun {
    RtDriver d;            /* the simulator's driver table */
    CUmodule mod;          /* the loaded kernel object */
    CUdeviceptr *dev;      /* one device buffer per BUF argument (0 otherwise) */
    int ndev;              /* entries of dev */
} SimRun;

static void run_free(SimRun *r) {
    for (int i = 0; i < r->ndev; i++)
        if (r->dev[i]) r->d.memFree(r->dev[i]);
    free(r->dev);
    if (r->mod) r->d.moduleUnload(r->mod);
}

/* SRT_ERR_INVALID naming the kernels src has, when kernel is not one of them. */
static srt_status check_kernel(srt_context *ctx, const srt_sim_launch *l, const char *file) {
    char **names = NULL;
    int n = sim_scan_kernels(l->source, l->len, &names);
    if (n < 0) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    int found = 0;
    char list[1024] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        found |= strcmp(names[i], l->kernel) == 0;
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
        free(names[i]);
    }
    free(names);
    if (found) return SRT_OK;
    if (!l->kernel[0] && n > 0) return rt_error(ctx, SRT_ERR_INVALID, "%s: no kernel named; its kernels: %s", file, list);
    if (n == 0) return rt_error(ctx, SRT_ERR_INVALID, "%s: no __global__ function (kernel `%s' not found)", file, l->kernel);
    return rt_error(ctx, SRT_ERR_INVALID, "%s: no kernel `%s'; its kernels: %s", file, l->kernel, list);
}

/* Checks the arguments against the kernel's parameter letters (shortsim_abi.h). */
static srt_status check_args(srt_context *ctx, const srt_sim_launch *l, const char *kinds) {
    int np = (int)strlen(kinds);
    if (np != l->nargs)
        return rt_error(ctx, SRT_ERR_INVALID, "kernel %s has %d parameter%s but %d argument%s given", l->kernel,
                        np, np == 1 ? "" : "s", l->nargs, l->nargs == 1 ? " was" : "s were");
    static const char want[] = {[SRT_SIM_ARG_BUF] = 'p', [SRT_SIM_ARG_I32] = 'i', [SRT_SIM_ARG_U32] = 'u',
                                [SRT_SIM_ARG_F32] = 'f'};
    static const char *const what[] = {"a buffer", "an int32", "a uint32", "a float32"};
    for (int i = 0; i < np; i++) {
        const char *pk = kinds[i] == 'p' ? "a pointer" : kinds[i] == 'f' ? "float" : kinds[i] == 'i' ? "int"
                         : kinds[i] == 'u' ? "unsigned int" : "a type the simulator cannot pass";
        if ((unsigned)l->args[i].kind > SRT_SIM_ARG_F32 || want[l->args[i].kind] != kinds[i])
            return rt_error(ctx, SRT_ERR_INVALID, "kernel %s: parameter %d is %s but argument %d is %s", l->kernel,
                            i + 1, pk, i + 1,
                            (unsigned)l->args[i].kind <= SRT_SIM_ARG_F32 ? what[l->args[i].kind] : "unknown");
        if (l->args[i].kind == SRT_SIM_ARG_BUF && (!l->args[i].data || l->args[i].bytes == 0))
            return rt_error(ctx, SRT_ERR_INVALID, "kernel %s: buffer argument %d is empty", l->kernel, i + 1);
    }
    return SRT_OK;
}

/* Loads the kernel: compile (or cache), load, find, check the arguments. */
static srt_status load_kernel(srt_context *ctx, SimRun *r, const srt_sim_launch *l, const char *file, CUfunction *f) {
    const char *names[1] = {l->kernel};
    char base[256]; /* the file's name without directory and .cu: the compiler's diagnostics say BASE.cu */
    const char *slash = strrchr(file, '/');
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : file);
    size_t bl = strlen(base);
    if (bl > 3 && strcmp(base + bl - 3, ".cu") == 0) base[bl - 3] = 0;
    for (char *c = base; *c; c++) /* it goes into a #line string literal */
        if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-' && *c != '_') *c = '_';
    /* the simulator's prelude first (CUDA's built-ins), then the file with its own line numbers */
    char head[400];
    int hl = snprintf(head, sizeof head, "#include \"shortsim_prelude.h\"\n#line 1 \"%s.cu\"\n", base);
    char *src = malloc((size_t)hl + l->len + 1), *err = malloc(65536);
    if (!src || !err) {
        free(src);
        free(err);
        return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    }
    memcpy(src, head, (size_t)hl);
    memcpy(src + hl, l->source, l->len);
    src[hl + l->len] = 0;
    RtCompileRequest req = {.source = src, .len = (size_t)hl + l->len, .name = base, .arch = 80,
                            .cache_dir = l->cache_dir, .kernel_names = names, .nkernels = 1};
    RtCompiled out = {0};
    CUresult cr;
    srt_status st = rt_compile_and_load(&r->d, &req, &out, &r->mod, &cr, err, 65536);
    rt_compiled_release(&out);
    free(src);
    if (st != SRT_OK) {
        st = rt_error(ctx, st, "%s", err);
        free(err);
        return st;
    }
    free(err);
    if (cr != CUDA_SUCCESS) return rt_error(ctx, SRT_ERR_DRIVER, "%s", r->d.last_fault());
    if (r->d.moduleGetFunction(f, r->mod, l->kernel) != CUDA_SUCCESS)
        return rt_error(ctx, SRT_ERR_INVALID, "%s", r->d.last_fault());
    char sym[300];
    snprintf(sym, sizeof sym, "shortsim_params_%s", l->kernel);
    const char *const *kinds = dlsym(((SimModule *)r->mod)->handle, sym);
    if (!kinds || !*kinds) return rt_error(ctx, SRT_ERR_INVALID, "kernel %s: its parameters are unknown", l->kernel);
    return check_args(ctx, l, *kinds);
}

/* Device buffers in, the launch, buffers out. */
static srt_status launch(srt_context *ctx, SimRun *r, const srt_sim_launch *l, CUfunction f) {
    void **params = calloc((size_t)l->nargs + 1, sizeof *params);
    r->dev = calloc((size_t)l->nargs + 1, sizeof *r->dev);
    if (!params || !r->dev) {
        free(params);
        return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    }
    r->ndev = l->nargs;
    srt_status st = SRT_OK;
    for (int i = 0; i < l->nargs && st == SRT_OK; i++) {
        srt_sim_arg *a = &l->args[i];
        switch (a->kind) {
        case SRT_SIM_ARG_BUF:
            if (r->d.memAlloc(&r->dev[i], a->bytes) != CUDA_SUCCESS ||
                r->d.memcpyHtoD(r->dev[i], a->data, a->bytes) != CUDA_SUCCESS)
                st = rt_error(ctx, SRT_ERR_NOMEM, "cannot allocate a %zu-byte device buffer", a->bytes);
            params[i] = &r->dev[i];
            break;
        case SRT_SIM_ARG_I32: params[i] = &a->i32; break;
        case SRT_SIM_ARG_U32: params[i] = &a->u32; break;
        default: params[i] = &a->f32; break;
        }
    }
    SimFunc *sf = (SimFunc *)f;
    /* like a CUDA program, opt in to more than the default dynamic shared memory when asked */
    if (st == SRT_OK && (long long)l->smem > sf->max_dyn_smem &&
        r->d.funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)l->smem) != CUDA_SUCCESS)
        st = rt_error(ctx, SRT_ERR_SIM, "%s", r->d.last_fault());
    if (st == SRT_OK && r->d.launchKernel(f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                                          l->block[2], l->smem, NULL, params, NULL) != CUDA_SUCCESS)
        st = rt_error(ctx, SRT_ERR_SIM, "%s", r->d.last_fault());
    for (int i = 0; i < l->nargs && st == SRT_OK; i++)
        if (l->args[i].kind == SRT_SIM_ARG_BUF &&
            r->d.memcpyDtoH(l->args[i].data, r->dev[i], l->args[i].bytes) != CUDA_SUCCESS)
            st = rt_error(ctx, SRT_ERR_DRIVER, "%s", r->d.last_fault());
    free(params);
    return st;
}

srt_status srt_sim_run(srt_context *ctx, const srt_sim_launch *l) {
    if (!ctx) return SRT_ERR_INVALID;
    if (!l || !l->source || (l->nargs > 0 && !l->args) || l->nargs < 0)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_sim_run: bad arguments");
    const char *file = l->name && *l->name ? l->name : "kernel";
    srt_sim_launch named = *l;
    if (!named.kernel) named.kernel = "";
    srt_status st = check_kernel(ctx, &named, file);
    if (st != SRT_OK) return st;
    l = &named;
    SimRun r;
    memset(&r, 0, sizeof r);
    char err[512];
    st = rt_driver_sim(&r.d, l->threads, l->checked, err, sizeof err);
    if (st != SRT_OK) return rt_error(ctx, st, "%s", err);
    CUfunction f = NULL;
    st = load_kernel(ctx, &r, l, file, &f);
    if (st == SRT_OK) st = launch(ctx, &r, l, f);
    run_free(&r);
    return st;
}
