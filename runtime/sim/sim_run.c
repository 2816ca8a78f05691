/*
 * sim_run.c — srt_sim_run(): one kernel of an arbitrary CUDA source run on
 * the simulator through its driver table (compile, load, buffers in,
 * launch, buffers out), for `shortc sim` and other test drivers. The file
 * is compiled unchanged, the prelude included first by the compiler, so
 * its diagnostics quote the user's own lines; #include searches the file's
 * directory and the launch's include directories.
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

/* SRT_ERR_INVALID naming the kernels src has, when kernel is not one of them, or saying why it
 * cannot be run: in a namespace, a template, or overloaded (the simulator finds kernels by their plain name). */
static srt_status check_kernel(srt_context *ctx, const srt_sim_launch *l, const char *file) {
    char **names = NULL;
    int *bodies = NULL;
    int n = sim_scan_kernels(l->source, l->len, &names, &bodies);
    if (n < 0) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    int found = -1;
    char list[1024] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], l->kernel) == 0) found = i;
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
    }
    srt_status st = SRT_OK;
    if (found >= 0 && strstr(l->kernel, "::"))
        st = rt_error(ctx, SRT_ERR_INVALID,
                      "%s: kernel `%s' is in a namespace; the simulator runs kernels declared at global scope "
                      "(or in extern \"C\"): move it out, or add a global kernel that calls it",
                      file, l->kernel);
    else if (found >= 0 && (bodies[found] & SIM_KERNEL_TEMPLATE))
        st = rt_error(ctx, SRT_ERR_INVALID, "%s: kernel `%s' is a template; the simulator runs kernels with a plain "
                      "name: add a non-template kernel that calls the instantiation you want", file, l->kernel);
    else if (found >= 0 && (bodies[found] & ~SIM_KERNEL_TEMPLATE) > 1)
        st = rt_error(ctx, SRT_ERR_INVALID, "%s: kernel `%s' is overloaded (%d definitions); the simulator needs a "
                      "kernel name with one definition", file, l->kernel, bodies[found] & ~SIM_KERNEL_TEMPLATE);
    else if (found < 0 && !l->kernel[0] && n > 0)
        st = rt_error(ctx, SRT_ERR_INVALID, "%s: no kernel named; its kernels: %s", file, list);
    else if (found < 0 && n == 0)
        st = rt_error(ctx, SRT_ERR_INVALID, "%s: no __global__ function (kernel `%s' not found)", file, l->kernel);
    else if (found < 0)
        st = rt_error(ctx, SRT_ERR_INVALID, "%s: no kernel `%s'; its kernels: %s", file, l->kernel, list);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    free(bodies);
    return st;
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

/* The include directories of the compile: the file's own directory, then the launch's, all absolute
 * (the compiler runs in a build directory); dirs[i] point into store. */
static srt_status include_dirs(srt_context *ctx, const srt_sim_launch *l, const char *file, char store[][1024],
                               const char **dirs, int *n) {
    if (l->ninclude_dirs < 0 || l->ninclude_dirs > 15 || (l->ninclude_dirs > 0 && !l->include_dirs))
        return rt_error(ctx, SRT_ERR_INVALID, "srt_sim_run: 0 to 15 include directories");
    char own[1024];
    const char *slash = strrchr(file, '/');
    if (!slash) snprintf(own, sizeof own, ".");
    else snprintf(own, sizeof own, "%.*s", slash == file ? 1 : (int)(slash - file), file);
    *n = 0;
    for (int i = -1; i < l->ninclude_dirs; i++) {
        const char *d = i < 0 ? own : l->include_dirs[i];
        if (!d || rt_abs_path(d, store[*n], 1024) != 0)
            return rt_error(ctx, SRT_ERR_INVALID, "include directory '%s' is not usable", d ? d : "(null)");
        dirs[*n] = store[*n];
        (*n)++;
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
    char dir_store[16][1024];
    const char *dirs[16];
    int ndirs = 0;
    srt_status st = include_dirs(ctx, l, file, dir_store, dirs, &ndirs);
    if (st != SRT_OK) return st;
    char *err = malloc(65536);
    if (!err) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    /* the file unchanged (its lines are the compiler's lines), the simulator's prelude included first */
    RtCompileRequest req = {.source = l->source, .len = l->len, .name = base, .arch = 80, .cache_dir = l->cache_dir,
                            .kernel_names = names, .nkernels = 1, .sim_prelude = 1, .include_dirs = dirs,
                            .ninclude_dirs = ndirs};
    RtCompiled out = {0};
    CUresult cr;
    st = rt_compile_and_load(&r->d, &req, &out, &r->mod, &cr, err, 65536);
    if (l->cache_note && l->cache_note_len) snprintf(l->cache_note, l->cache_note_len, "%s", out.note);
    rt_compiled_release(&out);
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
